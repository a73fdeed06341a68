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

// A Ceiling is a horizontal roof: a compute peak.
type Ceiling struct {
	Name string  // "bf16 matrix"
	Rate float64 // FLOP/s
}

// A RoofPoint is an op (or a class of ops) on a roofline.
type RoofPoint struct {
	Label     string  // what it is: "ffn", "attention"; points with one Label share a colour
	Group     string  // the scenario it belongs to: "prefill b=1"; points with one Group share a marker
	Intensity float64 // FLOP/byte
	Rate      float64 // attained FLOP/s
	Share     float64 // fraction of its group's time, in [0, 1]; sizes the marker
}

// Roofline is the data of a roofline chart.
type Roofline struct {
	Title     string
	Bandwidth float64   // memory bandwidth, B/s
	Peaks     []Ceiling // compute peaks, one per precision in use
	// Attainable are the calibrated ceilings (peak × compute efficiency)
	// and AttainableBandwidth the calibrated bandwidth; zero for none.
	Attainable          []Ceiling
	AttainableBandwidth float64
	Points              []RoofPoint
}

// Marker radii, in points, of a point with no share and with all of it.
const (
	minRadius = 3.5
	maxRadius = 13
)

// sizeKey are the shares the legend shows marker sizes for.
var sizeKey = []float64{0.05, 0.5}

// radius maps a share of time in [0, 1] to a marker radius; area grows
// with the share.
func radius(share float64) vg.Length {
	share = math.Max(0, math.Min(1, share))
	return vg.Points(minRadius + (maxRadius-minRadius)*math.Sqrt(share))
}

// ridge returns the intensity at which rate meets the bandwidth diagonal.
func ridge(rate, bw float64) float64 { return rate / bw }

// Chart builds the roofline: log-log axes of arithmetic intensity
// (FLOP/byte) against attained FLOP/s; a horizontal ceiling per peak; the
// bandwidth diagonal up to the highest peak; each ridge point marked with a
// dotted drop line and its intensity; the calibrated (attainable) ceilings
// dashed; and the points, coloured by Label, shaped by Group, sized by
// Share. Points with an intensity or rate ≤ 0 (no FLOPs, no bytes) cannot
// go on log axes: they are left out and named in Skipped.
//
// Recorded series: "bandwidth", "peak <name>", "ridge <name>" (one
// point), "attainable bandwidth", "attainable <name>", "ridge attainable
// <name>", and "points <group>" (intensity, rate) in input order.
func (r Roofline) Chart() (*Chart, error) {
	var errs []error
	if !positive(r.Bandwidth) {
		errs = append(errs, fmt.Errorf("chart: roofline bandwidth %v is not positive", r.Bandwidth))
	}
	if len(r.Peaks) == 0 {
		errs = append(errs, errors.New("chart: roofline has no compute peak"))
	}
	for _, c := range append(append([]Ceiling(nil), r.Peaks...), r.Attainable...) {
		if !positive(c.Rate) {
			errs = append(errs, fmt.Errorf("chart: roofline ceiling %q: rate %v is not positive", c.Name, c.Rate))
		}
	}
	if len(r.Attainable) > 0 && !positive(r.AttainableBandwidth) {
		errs = append(errs, errors.New("chart: roofline has attainable ceilings but no attainable bandwidth"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}

	c := &Chart{Title: r.Title, Legend: newLegend()}
	var pts []RoofPoint
	for _, p := range r.Points {
		if !positive(p.Intensity) || !positive(p.Rate) {
			c.Skipped = append(c.Skipped, fmt.Sprintf("%s (%s)", p.Label, p.Group))
			continue
		}
		pts = append(pts, p)
	}

	// The ranges: whole decades around the points and the ridges.
	top := 0.0
	for _, pk := range r.Peaks {
		top = math.Max(top, pk.Rate)
	}
	xlo, xhi := math.Inf(1), 0.0
	ylo := math.Inf(1)
	for _, pk := range r.Peaks {
		xhi = math.Max(xhi, ridge(pk.Rate, r.Bandwidth))
	}
	for _, p := range pts {
		xlo, xhi = math.Min(xlo, p.Intensity), math.Max(xhi, p.Intensity)
		ylo = math.Min(ylo, p.Rate)
	}
	if math.IsInf(xlo, 1) {
		xlo = ridge(top, r.Bandwidth) / 1000
	}
	xlo = decadeBelow(xlo / 1.5)
	xhi = decadeAbove(xhi * 4)
	ylo = decadeBelow(math.Min(ylo/1.5, r.Bandwidth*xlo))
	yhi := top * 4

	p := newPanel("", "arithmetic intensity (FLOP/byte)", "attained performance (FLOP/s)")
	setLog(&p.X, xlo, xhi)
	setLog(&p.Y, ylo, yhi)
	p.Add(gridLines())

	var notes []note
	var obstacles []plotter.XYs
	obstacle := func(xys plotter.XYs) {
		t := make(plotter.XYs, len(xys))
		for i, xy := range xys {
			t[i] = plotter.XY{X: lg(xy.X), Y: lg(xy.Y)}
		}
		obstacles = append(obstacles, t)
	}
	roof := draw.LineStyle{Color: color.Gray{Y: 30}, Width: vg.Points(2)}
	diag := plotter.XYs{{X: xlo, Y: r.Bandwidth * xlo}, {X: ridge(top, r.Bandwidth), Y: top}}
	c.record("bandwidth", diag)
	addLine(p, diag, roof, true, true)
	obstacle(diag)
	c.Legend.Add("peaks, "+SIUnit(r.Bandwidth, "B/s"), lineThumb(roof))

	below := func(x, y float64) anchor { return anchor{X: lg(x), Y: lg(y), XAlign: draw.XRight, YAlign: draw.YTop} }
	above := func(x, y float64) anchor {
		return anchor{X: lg(x), Y: lg(y), XAlign: draw.XRight, YAlign: draw.YBottom}
	}
	for _, pk := range r.Peaks {
		x := ridge(pk.Rate, r.Bandwidth)
		ceil := plotter.XYs{{X: x, Y: pk.Rate}, {X: xhi, Y: pk.Rate}}
		c.record("peak "+pk.Name, ceil)
		c.record("ridge "+pk.Name, plotter.XYs{{X: x, Y: pk.Rate}})
		addLine(p, ceil, roof, true, true)
		obstacle(ceil)
		drop := draw.LineStyle{Color: color.Gray{Y: 120}, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(1.5), vg.Points(2.5)}}
		addLine(p, plotter.XYs{{X: x, Y: ylo}, {X: x, Y: pk.Rate}}, drop, true, true)
		notes = append(notes,
			note{Text: pk.Name + " " + SIUnit(pk.Rate, "FLOP/s"), At: []anchor{above(xhi, pk.Rate), below(xhi, pk.Rate),
				{X: lg(x), Y: lg(pk.Rate), XAlign: draw.XLeft, YAlign: draw.YBottom}}},
			note{Text: "ridge " + trim(x) + " FLOP/B", Rotate: true, At: []anchor{
				{X: lg(x), Y: lg(ylo), XAlign: draw.XLeft, YAlign: draw.YBottom},
				{X: lg(x), Y: lg(ylo), XAlign: draw.XLeft, YAlign: draw.YTop}}})
	}
	if len(r.Attainable) > 0 {
		att := draw.LineStyle{Color: color.RGBA{0x9C, 0x27, 0x27, 0xFF}, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(6), vg.Points(3)}}
		atop := 0.0
		for _, a := range r.Attainable {
			atop = math.Max(atop, a.Rate)
		}
		ad := plotter.XYs{{X: xlo, Y: r.AttainableBandwidth * xlo}, {X: ridge(atop, r.AttainableBandwidth), Y: atop}}
		c.record("attainable bandwidth", ad)
		addLine(p, ad, att, true, true)
		obstacle(ad)
		for _, a := range r.Attainable {
			x := ridge(a.Rate, r.AttainableBandwidth)
			ceil := plotter.XYs{{X: x, Y: a.Rate}, {X: xhi, Y: a.Rate}}
			c.record("attainable "+a.Name, ceil)
			c.record("ridge attainable "+a.Name, plotter.XYs{{X: x, Y: a.Rate}})
			addLine(p, ceil, att, true, true)
			obstacle(ceil)
		}
		c.Legend.Add("attainable, "+SIUnit(r.AttainableBandwidth, "B/s"), lineThumb(att))
		for _, a := range r.Attainable {
			c.Legend.Add(" "+a.Name+" "+SIUnit(a.Rate, "FLOP/s"), lineThumb{})
		}
	}

	// Points: a colour per label, a shape per group, in first-seen order.
	labels, groups := firstSeen(pts, func(p RoofPoint) string { return p.Label }), firstSeen(pts, func(p RoofPoint) string { return p.Group })
	mk := &markers{Notes: notes, Lines: obstacles, Text: textStyle(noteSize+1, false)}
	for _, g := range groups {
		var xys plotter.XYs
		for _, pt := range pts {
			if pt.Group != g {
				continue
			}
			xys = append(xys, plotter.XY{X: pt.Intensity, Y: pt.Rate})
			sty := draw.GlyphStyle{Color: colorOf(indexOf(labels, pt.Label)), Radius: radius(pt.Share), Shape: shapes[indexOf(groups, g)%len(shapes)]}
			mk.Points = append(mk.Points, marker{X: lg(pt.Intensity), Y: lg(pt.Rate), Style: sty, Label: pt.Label})
		}
		c.record("points "+g, xys)
	}
	p.Add(mk)
	for i, g := range groups {
		c.Legend.Add(g, glyphThumb{draw.GlyphStyle{Color: color.Gray{Y: 150}, Radius: vg.Points(5), Shape: shapes[i%len(shapes)]}})
	}
	for i, l := range labels {
		c.Legend.Add(l, glyphThumb{draw.GlyphStyle{Color: colorOf(i), Radius: vg.Points(5), Shape: draw.CircleGlyph{}}})
	}
	// The key to marker size: area grows with the share of the phase's
	// time (radius).
	c.Legend.Add("marker area: share of its phase's time", lineThumb{})
	for _, sh := range sizeKey {
		c.Legend.Add(fmt.Sprintf(" %.0f%%", 100*sh), glyphThumb{draw.GlyphStyle{Color: color.Gray{Y: 150}, Radius: radius(sh), Shape: draw.CircleGlyph{}}})
	}
	c.Panels = []*plot.Plot{p}
	return c, nil
}

// addLine adds a polyline in style s to p, whose axes are log when
// logX, logY.
func addLine(p *plot.Plot, xys plotter.XYs, s draw.LineStyle, logX, logY bool) *plotter.Line {
	t := make(plotter.XYs, len(xys))
	for i, xy := range xys {
		t[i] = xy
		if logX {
			t[i].X = lg(xy.X)
		}
		if logY {
			t[i].Y = lg(xy.Y)
		}
	}
	l, err := plotter.NewLine(t)
	if err != nil {
		panic("chart: " + err.Error()) // the callers pass finite points
	}
	l.LineStyle = s
	p.Add(l)
	return l
}

// lineThumb is a legend thumbnail of a line style.
type lineThumb draw.LineStyle

func (l lineThumb) Thumbnail(c *draw.Canvas) {
	if l.Width == 0 {
		return // a text-only legend line
	}
	y := c.Center().Y
	c.StrokeLine2(draw.LineStyle(l), c.Min.X, y, c.Max.X, y)
}

// firstSeen returns the distinct keys of xs in order of first appearance.
func firstSeen[T any](xs []T, key func(T) string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range xs {
		if k := key(x); !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

func indexOf(xs []string, s string) int {
	for i, x := range xs {
		if x == s {
			return i
		}
	}
	return -1
}
