package chart

import (
	"errors"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A LinePoint is one point of a line, with an optional label (a batch
// size).
type LinePoint struct {
	X, Y  float64
	Label string
	// Unfit marks a point that could not run (a model that does not fit
	// in memory): drawn where its times would put it, as a hollow cross
	// off the line, with a legend entry saying so.
	Unfit bool
}

// maxMarked is the most points a joined line draws a marker on each of.
const maxMarked = 40

// A Line is a named series of points, drawn in order.
type Line struct {
	Name   string
	Points []LinePoint
	// Scatter draws the points as marks alone, not joined: a set whose
	// order means nothing (the candidates of a plan).
	Scatter bool
	// Reference draws a dashed line without markers: a bound, not data
	// (an SLO).
	Reference bool
}

// Lines is the data of a line chart: a line per series, its points
// marked and labelled.
type Lines struct {
	Title          string
	XLabel, YLabel string
	Lines          []Line
	LogX, LogY     bool
	// XTicks, when given, are the x axis's labelled ticks (data units),
	// in place of the automatic ones: the GPU counts of a scaling chart.
	XTicks []float64
}

// Chart builds the line chart. Points that are not finite, or ≤ 0 on a
// log axis, are left out and named in Skipped.
//
// Recorded series: one per line, by its name, with the points on the
// line; "<name> (does not fit)" with its Unfit points, when it has any.
func (l Lines) Chart() (*Chart, error) {
	if len(l.Lines) == 0 {
		return nil, errors.New("chart: no lines")
	}
	c := &Chart{Title: l.Title, Legend: newLegend()}
	p := newPanel("", l.XLabel, l.YLabel)
	p.Add(gridLines())
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	var kept [][]LinePoint
	for _, ln := range l.Lines {
		var pts []LinePoint
		for _, pt := range ln.Points {
			if !finite(pt.X) || !finite(pt.Y) || (l.LogX && pt.X <= 0) || (l.LogY && pt.Y <= 0) {
				c.Skipped = append(c.Skipped, fmt.Sprintf("%s: %s", ln.Name, pt.Label))
				continue
			}
			pts = append(pts, pt)
			xlo, xhi = math.Min(xlo, pt.X), math.Max(xhi, pt.X)
			ylo, yhi = math.Min(ylo, pt.Y), math.Max(yhi, pt.Y)
		}
		kept = append(kept, pts)
	}
	if math.IsInf(xlo, 1) {
		return nil, errors.New("chart: no line has a point that can be drawn")
	}
	if l.LogX {
		setLog(&p.X, xlo/1.5, xhi*1.5)
	} else {
		p.X.Tick.Marker = siTicks{}
		p.X.Min, p.X.Max = math.Min(0, xlo), xhi*1.08
	}
	if len(l.XTicks) > 0 {
		p.X.Tick.Marker = valueTicks{values: l.XTicks, log: l.LogX}
	}
	if l.LogY {
		setLog(&p.Y, ylo/1.5, yhi*1.5)
	} else {
		p.Y.Tick.Marker = siTicks{}
		p.Y.Min, p.Y.Max = math.Min(0, ylo), yhi*1.08
	}
	mk := &markers{Text: textStyle(noteSize, false)}
	anyUnfit := false
	for i, ln := range l.Lines {
		var raw, xys, unfit plotter.XYs
		// A joined line of many points (a time series) is drawn as a
		// line alone, its labelled points still marked: a marker on
		// each would bury the lines.
		marked := ln.Scatter || (!ln.Reference && len(kept[i]) <= maxMarked)
		for _, pt := range kept[i] {
			x, y := pt.X, pt.Y
			if l.LogX {
				x = lg(x)
			}
			if l.LogY {
				y = lg(y)
			}
			if pt.Unfit {
				unfit = append(unfit, plotter.XY{X: pt.X, Y: pt.Y})
				mk.Points = append(mk.Points, marker{X: x, Y: y, Label: pt.Label,
					Style: draw.GlyphStyle{Color: colorOf(i), Radius: vg.Points(4.5), Shape: draw.CrossGlyph{}}})
				continue
			}
			raw = append(raw, plotter.XY{X: pt.X, Y: pt.Y})
			xys = append(xys, plotter.XY{X: x, Y: y})
			if marked || pt.Label != "" {
				mk.Points = append(mk.Points, marker{X: x, Y: y, Label: pt.Label,
					Style: draw.GlyphStyle{Color: colorOf(i), Radius: vg.Points(3.5), Shape: shapes[i%len(shapes)]}})
			}
		}
		c.record(ln.Name, raw)
		c.Data[len(c.Data)-1].Joined = !ln.Scatter
		c.Data[len(c.Data)-1].Marked = marked
		if len(unfit) > 0 {
			c.record(ln.Name+" (does not fit)", unfit)
			anyUnfit = true
		}
		glyph := glyphThumb{draw.GlyphStyle{Color: colorOf(i), Radius: vg.Points(3.5), Shape: shapes[i%len(shapes)]}}
		if ln.Scatter {
			c.Legend.Add(ln.Name, glyph)
			continue
		}
		style := draw.LineStyle{Color: colorOf(i), Width: vg.Points(2)}
		if ln.Reference {
			style.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		}
		if len(xys) > 0 {
			addLine(p, xys, style, false, false)
		}
		if !marked {
			c.Legend.Add(ln.Name, lineThumb(style))
			continue
		}
		c.Legend.Add(ln.Name, lineThumb(style), glyph)
	}
	if anyUnfit {
		c.Legend.Add("does not fit in memory (times as if it did)", glyphThumb{draw.GlyphStyle{Color: color.Gray{Y: 90}, Radius: vg.Points(4.5), Shape: draw.CrossGlyph{}}})
	}
	p.Add(mk)
	c.Panels = append(c.Panels, p)
	return c, nil
}

// noValue fills a heat map cell without a value: darker than any colour
// of the scale's neutral middle.
var noValue = color.Gray{Y: 150}

// Heatmap is a grid of values, coloured on a diverging scale around a
// neutral value: a speedup of A over B, 1 meaning a tie.
type Heatmap struct {
	Title          string
	XLabel, YLabel string
	Cols, Rows     []string    // the category labels of the columns and rows (bottom to top)
	Values         [][]float64 // [row][col]; NaN where there is no value (e.g. a model that does not fit)
	// Neutral is the value coloured white; colours diverge with
	// log2(value/Neutral), red above, blue below. 0 means 1.
	Neutral float64
	// Above and Below name what the red and blue ends mean, for the
	// legend ("H200 faster"); Missing what a cell without a value means
	// ("does not fit"; "no value" when empty).
	Above, Below, Missing string
}

// Chart builds the heat map: coloured cells, each with its value, and a
// legend of the colour scale. Cells without a value (NaN, or ≤ 0, which a
// ratio's log scale cannot take) are grey and marked "–".
//
// Recorded series: "row <name>" with (column index, value) for each row.
func (h Heatmap) Chart() (*Chart, error) {
	if len(h.Rows) == 0 || len(h.Cols) == 0 || len(h.Values) != len(h.Rows) {
		return nil, fmt.Errorf("chart: heat map %q needs a row of values per row label (%d rows, %d labels) and columns", h.Title, len(h.Values), len(h.Rows))
	}
	for i, r := range h.Values {
		if len(r) != len(h.Cols) {
			return nil, fmt.Errorf("chart: heat map %q: row %q has %d values for %d columns", h.Title, h.Rows[i], len(r), len(h.Cols))
		}
	}
	neutral := h.Neutral
	if neutral <= 0 {
		neutral = 1
	}
	ok := func(v float64) bool { return positive(v) }
	// The scale spans the largest |log2| in the data, at least 2^0.5.
	span := 0.5
	for _, r := range h.Values {
		for _, v := range r {
			if ok(v) {
				span = math.Max(span, math.Abs(math.Log2(v/neutral)))
			}
		}
	}
	cmap := moreland.SmoothBlueRed()
	cmap.SetMin(-span)
	cmap.SetMax(span)
	colorAt := func(v float64) color.Color {
		if !ok(v) {
			return noValue
		}
		x := math.Max(-span, math.Min(span, math.Log2(v/neutral)))
		clr, err := cmap.At(x)
		if err != nil {
			return noValue
		}
		return clr
	}
	c := &Chart{Title: h.Title, Legend: newLegend()}
	p := newPanel("", h.XLabel, h.YLabel)
	p.X.Tick.Marker = nominalTicks(h.Cols)
	p.Y.Tick.Marker = nominalTicks(h.Rows)
	p.X.Tick.Length, p.Y.Tick.Length = 0, 0
	p.X.Padding, p.Y.Padding = 0, 0
	if cols, rotate, _ := fitLabels(h.Cols, 1); rotate {
		p.X.Tick.Label.Rotation = slant
		p.X.Tick.Label.XAlign = draw.XRight
	} else {
		p.X.Tick.Marker = nominalTicks(cols)
	}
	for i, r := range h.Values {
		var xys plotter.XYs
		for j, v := range r {
			xys = append(xys, plotter.XY{X: float64(j), Y: v})
		}
		c.record("row "+h.Rows[i], xys)
	}
	p.Add(&cellGrid{
		Cols: len(h.Cols), Rows: len(h.Rows),
		Fill: func(col, row int) color.Color { return colorAt(h.Values[row][col]) },
		Text: func(col, row int) (string, color.Color) {
			v := h.Values[row][col]
			if !ok(v) {
				return "–", color.White
			}
			clr := color.Color(color.Black)
			if math.Abs(math.Log2(v/neutral)) > 0.6*span {
				clr = color.White
			}
			return trim(v), clr
		},
		Style: textStyle(noteSize, false),
	})
	p.X.Min, p.X.Max = -0.5, float64(len(h.Cols))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(h.Rows))-0.5
	// The legend: the scale at a few values, top to bottom.
	steps := []float64{span, span / 2, 0, -span / 2, -span}
	for i, s := range steps {
		v := neutral * math.Pow(2, s)
		name := trim(v)
		switch {
		case i == 0 && h.Above != "":
			name += " (" + h.Above + ")"
		case i == len(steps)-1 && h.Below != "":
			name += " (" + h.Below + ")"
		}
		c.Legend.Add(name, &bars{Color: colorAt(v)})
	}
	missing := h.Missing
	if missing == "" {
		missing = "no value"
	}
	c.Legend.Add("– "+missing, &bars{Color: noValue})
	c.Panels = append(c.Panels, p)
	return c, nil
}

// valueTicks labels the given values (data units; on a log axis, placed
// at their logarithms), with %g.
type valueTicks struct {
	values []float64
	log    bool
}

func (v valueTicks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for _, x := range v.values {
		at := x
		if v.log {
			if !(x > 0) {
				continue
			}
			at = lg(x)
		}
		if at >= min-1e-9 && at <= max+1e-9 {
			ts = append(ts, plot.Tick{Value: at, Label: fmt.Sprintf("%g", x)})
		}
	}
	return ts
}
