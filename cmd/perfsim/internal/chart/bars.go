package chart

import (
	"errors"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A Stack is one layer of a stacked bar chart: a value per category.
type Stack struct {
	Name   string
	Values []float64
}

// A Level is a reference line across a bar chart, such as a capacity.
type Level struct {
	Name  string
	Value float64
}

// Bars is one panel of bars: a bar per category, each a stack of layers.
type Bars struct {
	Title          string // the panel's title ("prefill (TTFT)")
	XLabel, YLabel string // the category and value axes' labels, with units
	Categories     []string
	Stacks         []Stack // bottom to top; with Log, exactly one
	Levels         []Level // reference lines, dashed
	// Log puts the values on a log axis; the bars then rise from the
	// axis minimum, and values ≤ 0 are left out (Chart.Skipped).
	Log bool
	// Horizontal draws bars left to right, categories top to bottom.
	Horizontal bool
	// Totals prints each bar's total at its end, formatted by SI.
	Totals bool
}

// StackedBars builds a chart of bar panels side by side under one title.
// Stacks with the same name in different panels share a colour and a
// legend entry. Values must be finite and, stacked, not negative.
//
// Recorded series: "<panel title>/<stack name>" with (category index,
// value) per category, and "<panel title>/total" with the bar totals;
// "<panel title>/level <name>" for each level.
func StackedBars(title string, panels ...Bars) (*Chart, error) {
	var errs []error
	for _, b := range panels {
		if len(b.Categories) == 0 {
			errs = append(errs, fmt.Errorf("chart: bars %q: no categories", b.Title))
		}
		if len(b.Stacks) == 0 {
			errs = append(errs, fmt.Errorf("chart: bars %q: no values", b.Title))
		}
		if b.Log && len(b.Stacks) > 1 {
			errs = append(errs, fmt.Errorf("chart: bars %q: stacked bars cannot go on a log axis", b.Title))
		}
		for _, s := range b.Stacks {
			if len(s.Values) != len(b.Categories) {
				errs = append(errs, fmt.Errorf("chart: bars %q: stack %q has %d values for %d categories", b.Title, s.Name, len(s.Values), len(b.Categories)))
			}
			for i, v := range s.Values {
				if !finite(v) || (!b.Log && v < 0) {
					errs = append(errs, fmt.Errorf("chart: bars %q: stack %q: value %v at %q is not a finite non-negative number", b.Title, s.Name, v, b.Categories[min(i, len(b.Categories)-1)]))
				}
			}
		}
		for _, l := range b.Levels {
			if !finite(l.Value) || (b.Log && l.Value <= 0) {
				errs = append(errs, fmt.Errorf("chart: bars %q: level %q: value %v cannot be drawn", b.Title, l.Name, l.Value))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}

	c := &Chart{Title: title, Legend: newLegend()}
	var names []string
	for _, b := range panels {
		for _, s := range b.Stacks {
			if indexOf(names, s.Name) < 0 {
				names = append(names, s.Name)
			}
		}
	}
	levelStyle := draw.LineStyle{Color: color.RGBA{0xC0, 0x1C, 0x28, 0xFF}, Width: vg.Points(1.8), Dashes: []vg.Length{vg.Points(7), vg.Points(3)}}
	var levelNames []string
	for _, b := range panels {
		p := c.barPanel(b, names, levelStyle, len(panels))
		c.Panels = append(c.Panels, p)
		for _, l := range b.Levels {
			if indexOf(levelNames, l.Name) < 0 {
				levelNames = append(levelNames, l.Name)
			}
		}
	}
	// The legend lists layers top to bottom, as the bars stack them.
	for i := len(names) - 1; i >= 0 && len(names) > 1; i-- {
		c.Legend.Add(names[i], &bars{Color: colorOf(i)})
	}
	for _, n := range levelNames {
		c.Legend.Add(n, lineThumb(levelStyle))
	}
	return c, nil
}

// barPanel draws one panel; names fixes the colours.
func (c *Chart) barPanel(b Bars, names []string, levelStyle draw.LineStyle, panels int) *plot.Plot {
	xl, yl := b.XLabel, b.YLabel
	if b.Horizontal {
		xl, yl = yl, xl
	}
	p := newPanel(b.Title, xl, yl)
	n := len(b.Categories)
	// pos maps a category to its position on the category axis: left to
	// right, or top to bottom when horizontal.
	pos := func(i int) float64 {
		if b.Horizontal {
			return float64(n - 1 - i)
		}
		return float64(i)
	}
	catAxis, valAxis := &p.X, &p.Y
	if b.Horizontal {
		catAxis, valAxis = &p.Y, &p.X
	}
	labels := make([]string, n)
	for i, cat := range b.Categories {
		labels[int(pos(i))] = cat
	}
	rotate := false
	pad := 0.0
	if !b.Horizontal {
		labels, rotate, pad = fitLabels(labels, panels)
	}
	c.leftPad = append(c.leftPad, vg.Points(pad))
	catAxis.Tick.Marker = nominalTicks(labels)
	catAxis.Min, catAxis.Max = -0.6, float64(n)-0.4
	catAxis.Tick.Width = 0
	catAxis.Tick.Length = 0
	catAxis.Padding = 0
	if rotate {
		catAxis.Tick.Label.Rotation = slant
		catAxis.Tick.Label.XAlign = draw.XRight
		catAxis.Tick.Label.YAlign = draw.YTop
	}

	totals := make([]float64, n)
	lo, hi := math.Inf(1), 0.0
	for _, s := range b.Stacks {
		for i, v := range s.Values {
			if b.Log && v <= 0 {
				c.Skipped = append(c.Skipped, fmt.Sprintf("%s: %s at %s", b.Title, s.Name, b.Categories[i]))
				continue
			}
			totals[i] += v
			if v > 0 {
				lo = math.Min(lo, v)
			}
		}
	}
	for _, t := range totals {
		hi = math.Max(hi, t)
	}
	for _, l := range b.Levels {
		hi = math.Max(hi, l.Value)
		if l.Value > 0 {
			lo = math.Min(lo, l.Value)
		}
	}
	if b.Log {
		if math.IsInf(lo, 1) {
			lo, hi = 1, 10
		}
		setLog(valAxis, decadeBelow(lo/1.5), decadeAbove(hi*1.5))
		valAxis.Min = lg(decadeBelow(lo / 1.5))
		// Room for the total labels at the bars' ends.
		valAxis.Max = math.Max(valAxis.Max, lg(hi)+0.25*(lg(hi)-valAxis.Min))
	} else {
		if hi <= 0 {
			hi = 1
		}
		valAxis.Min, valAxis.Max = 0, hi*1.12
		valAxis.Tick.Marker = siTicks{}
	}
	grid := gridLines()
	if b.Horizontal {
		grid.Horizontal.Color = nil
	} else {
		grid.Vertical.Color = nil
	}
	p.Add(grid)

	width := 0.7
	base := make([]float64, n)
	for _, s := range b.Stacks {
		layer := &bars{Width: width, Color: colorOf(indexOf(names, s.Name)), Horizontal: b.Horizontal,
			Line: draw.LineStyle{Color: color.White, Width: vg.Points(0.5)}}
		var xys plotter.XYs
		for i, v := range s.Values {
			xys = append(xys, plotter.XY{X: float64(i), Y: v})
			if b.Log {
				if v <= 0 {
					continue
				}
				layer.Bars = append(layer.Bars, bar{Cat: pos(i), Base: valAxis.Min, Top: lg(v)})
				continue
			}
			layer.Bars = append(layer.Bars, bar{Cat: pos(i), Base: base[i], Top: base[i] + v})
			base[i] += v
		}
		c.record(b.Title+"/"+s.Name, xys)
		p.Add(layer)
	}
	var tot plotter.XYs
	for i, t := range totals {
		tot = append(tot, plotter.XY{X: float64(i), Y: t})
	}
	c.record(b.Title+"/total", tot)
	for _, l := range b.Levels {
		v := l.Value
		if b.Log {
			v = lg(v)
		}
		xys := plotter.XYs{{X: catAxis.Min, Y: v}, {X: catAxis.Max, Y: v}}
		if b.Horizontal {
			xys = plotter.XYs{{X: v, Y: catAxis.Min}, {X: v, Y: catAxis.Max}}
		}
		addLine(p, xys, levelStyle, false, false)
		c.record(b.Title+"/level "+l.Name, plotter.XYs{{X: 0, Y: l.Value}})
	}
	if b.Totals {
		var ns []note
		for i, t := range totals {
			if b.Log && t <= 0 {
				continue
			}
			v := t
			if b.Log {
				v = lg(t)
			}
			a := anchor{X: pos(i), Y: v, XAlign: draw.XCenter, YAlign: draw.YBottom}
			if b.Horizontal {
				a = anchor{X: v, Y: pos(i), XAlign: draw.XLeft, YAlign: draw.YCenter}
			}
			ns = append(ns, note{Text: SI(t), At: []anchor{a}})
		}
		p.Add(&markers{Notes: ns, Text: textStyle(noteSize+1, false)})
	}
	return p
}

// fitLabels makes category labels fit side by side under a panel that
// is one of panels across a default-size chart: as they are, else broken
// into two lines at a space, else (rotate) slanted, with pad points more
// room at the panel's left where a slanted label would run past it.
func fitLabels(labels []string, panels int) (out []string, rotate bool, pad float64) {
	// The chart's width less its margins and a legend column, shared by
	// the panels, each less its value axis.
	avail := (float64(DefaultWidth.Points())-20-130-16*float64(panels-1))/float64(panels) - 40
	slot := avail / float64(len(labels))
	sty := textStyle(tickSize, false)
	widest := func(ls []string) float64 {
		w := 0.0
		for _, l := range ls {
			w = math.Max(w, float64(sty.Width(l).Points()))
		}
		return w
	}
	if widest(labels) < slot*0.95 {
		return labels, false, 0
	}
	out = make([]string, len(labels))
	for i, l := range labels {
		out[i] = wrap(l)
	}
	if widest(out) < slot*0.95 {
		return out, false, 0
	}
	// Slanted, a label runs from its tick down to the left, past the
	// panel's value axis (some 40 points) and the slots before its tick
	// (the axis starts 0.6 of a slot before the first): beyond them it
	// would run off the page or into the panel at its left ("H100 HBM4
	// (what-if of H100 SXM) b=1", fourth of six, lost its first letter).
	// The panel moves right by the most any label needs, a third more for
	// the slots the move narrows.
	sin, cos := math.Sincos(slant)
	for i, l := range labels {
		reach := float64(sty.Width(l).Points())*cos + float64(sty.Height(l).Points())*sin
		pad = math.Max(pad, reach-(40+(float64(i)+0.6)*slot))
	}
	if pad > 0 {
		pad = 4 + pad*4/3
	}
	return labels, true, pad
}

// slant is the angle slanted category labels are drawn at.
const slant = math.Pi / 6

// wrap breaks s into two lines at the space nearest its middle.
func wrap(s string) string {
	best := -1
	for i, r := range s {
		if r == ' ' && (best < 0 || abs(i-len(s)/2) < abs(best-len(s)/2)) {
			best = i
		}
	}
	if best < 0 {
		return s
	}
	return s[:best] + "\n" + s[best+1:]
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}
