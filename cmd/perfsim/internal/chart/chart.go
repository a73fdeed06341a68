package chart

import (
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The default size of a chart: 8×5 in, a slide's content area.
const (
	DefaultWidth  = 8 * vg.Inch
	DefaultHeight = 5 * vg.Inch
)

// Type sizes, chosen to read on a projected slide.
const (
	titleSize  = 15
	panelSize  = 12
	labelSize  = 12
	tickSize   = 11
	legendSize = 11
	noteSize   = 9
)

// A Series is a named set of points a chart drew, in data units.
type Series struct {
	Name string
	XYs  plotter.XYs
	// Joined says the points were drawn joined by a line.
	Joined bool
	// Marked says each point was drawn with a marker.
	Marked bool
}

// A Chart is a figure: a title, one or more panels side by side, and a
// legend in a column at the right. Data records the numbers drawn.
type Chart struct {
	Title  string
	Panels []*plot.Plot
	// Weights are the panels' relative widths; nil means equal.
	Weights []float64
	Legend  plot.Legend
	// Data holds every series drawn, by name, in drawing order.
	Data []Series
	// Skipped names the points left out, e.g. because a log axis cannot
	// show a value ≤ 0.
	Skipped []string
	// leftPad is the room each panel (by index; none past its end)
	// leaves at its left for its slanted labels (fitLabels).
	leftPad []vg.Length
}

// Series returns the series named name.
func (c *Chart) Series(name string) (plotter.XYs, bool) {
	for _, s := range c.Data {
		if s.Name == name {
			return s.XYs, true
		}
	}
	return nil, false
}

func (c *Chart) record(name string, xys plotter.XYs) {
	c.Data = append(c.Data, Series{Name: name, XYs: xys})
}

// joined returns whether the series named name was drawn joined by a line.
func (c *Chart) joined(name string) bool {
	for _, s := range c.Data {
		if s.Name == name {
			return s.Joined
		}
	}
	return false
}

// marked returns whether the series named name was drawn with a marker
// at each point.
func (c *Chart) marked(name string) bool {
	for _, s := range c.Data {
		if s.Name == name {
			return s.Marked
		}
	}
	return false
}

// Draw draws the chart on dc, filling it.
func (c *Chart) Draw(dc draw.Canvas) {
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	pad := vg.Points(10)
	dc = draw.Crop(dc, pad, -pad, pad, -pad)

	if c.Title != "" {
		sty := textStyle(titleSize, true)
		sty.XAlign = draw.XCenter
		sty.YAlign = draw.YTop
		dc.FillText(sty, vg.Point{X: dc.Center().X, Y: dc.Max.Y}, c.Title)
		dc.Max.Y -= sty.Rectangle(c.Title).Size().Y + vg.Points(8)
	}

	lr := c.Legend.Rectangle(dc)
	if w := lr.Max.X - lr.Min.X; w > 0 {
		col := dc
		col.Min.X = dc.Max.X - w
		col.Max.Y -= vg.Points(4)
		c.Legend.Draw(col)
		dc.Max.X -= w + vg.Points(14)
	}

	weights := c.Weights
	if len(weights) != len(c.Panels) {
		weights = make([]float64, len(c.Panels))
		for i := range weights {
			weights[i] = 1
		}
	}
	var sum float64
	for _, w := range weights {
		sum += w
	}
	gap := vg.Points(16)
	avail := dc.Max.X - dc.Min.X - gap*vg.Length(len(c.Panels)-1)
	x := dc.Min.X
	for i, p := range c.Panels {
		w := avail * vg.Length(weights[i]/sum)
		sub := dc
		sub.Min.X, sub.Max.X = x, x+w
		if i < len(c.leftPad) {
			sub.Min.X += min(c.leftPad[i], w/3)
		}
		p.Draw(sub)
		x += w + gap
	}
}

// textStyle returns the chart's text style at size points. Titles are
// not bold: gonum/plot v0.17's PDF backend cannot find the bold face
// ("undefined font: liberationserif-bold B"), and a chart must look the
// same in every format; they stand out by size instead.
func textStyle(size vg.Length, bold bool) text.Style {
	if bold {
		size += 1
	}
	return text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, size), Handler: plot.DefaultTextHandler}
}

// newPanel returns a plot styled for a slide, with the given panel title
// and axis labels.
func newPanel(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.BackgroundColor = nil
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = panelSize
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = labelSize
		a.Label.Padding = vg.Points(4)
		a.Tick.Label.Font.Size = tickSize
		a.Padding = vg.Points(2)
	}
	return p
}

// newLegend returns a legend for the right-hand column.
func newLegend() plot.Legend {
	l := plot.NewLegend()
	l.Top, l.Left = true, true
	l.TextStyle.Font.Size = legendSize
	l.Padding = vg.Points(3)
	l.ThumbnailWidth = vg.Points(18)
	return l
}

// gridLines returns light grid lines for p.
func gridLines() *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 225}
	g.Horizontal.Color = color.Gray{Y: 225}
	g.Vertical.Width = vg.Points(0.5)
	g.Horizontal.Width = vg.Points(0.5)
	return g
}

// Palette is the chart colours, in order: Tableau 10 (Tableau Software,
// "Tableau 10" palette, 2016), then three darker tones for charts with
// more than ten series.
var Palette = []color.RGBA{
	{0x4E, 0x79, 0xA7, 0xFF}, // blue
	{0xF2, 0x8E, 0x2B, 0xFF}, // orange
	{0xE1, 0x57, 0x59, 0xFF}, // red
	{0x76, 0xB7, 0xB2, 0xFF}, // teal
	{0x59, 0xA1, 0x4F, 0xFF}, // green
	{0xED, 0xC9, 0x48, 0xFF}, // yellow
	{0xB0, 0x7A, 0xA1, 0xFF}, // purple
	{0xFF, 0x9D, 0xA7, 0xFF}, // pink
	{0x9C, 0x75, 0x5F, 0xFF}, // brown
	{0xBA, 0xB0, 0xAC, 0xFF}, // grey
	{0x1F, 0x3A, 0x5F, 0xFF}, // navy
	{0x6B, 0x8E, 0x23, 0xFF}, // olive
	{0x50, 0x50, 0x50, 0xFF}, // dark grey
}

// colorOf returns the i-th palette colour, cycling.
func colorOf(i int) color.RGBA { return Palette[i%len(Palette)] }

// positive reports whether v can go on a log axis.
func positive(v float64) bool { return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }

// finite reports whether v is a finite number.
func finite(v float64) bool { return !math.IsInf(v, 0) && !math.IsNaN(v) }

// decadeBelow and decadeAbove round v > 0 down and up to powers of ten.
func decadeBelow(v float64) float64 { return math.Pow(10, math.Floor(math.Log10(v)+1e-9)) }
func decadeAbove(v float64) float64 { return math.Pow(10, math.Ceil(math.Log10(v)-1e-9)) }

// SI formats v with an SI prefix and up to three significant digits, as
// tick labels want: 1e12 → "1T", 2.5e-3 → "2.5m", 0.1 → "0.1".
func SI(v float64) string {
	if v == 0 || !finite(v) {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	a := math.Abs(v)
	for _, p := range []struct {
		s string
		m float64
	}{{"E", 1e18}, {"P", 1e15}, {"T", 1e12}, {"G", 1e9}, {"M", 1e6}, {"k", 1e3}} {
		if a >= p.m {
			return trim(v/p.m) + p.s
		}
	}
	if a >= 0.01 {
		return trim(v)
	}
	for _, p := range []struct {
		s string
		m float64
	}{{"m", 1e-3}, {"µ", 1e-6}, {"n", 1e-9}} {
		if a >= p.m {
			return trim(v/p.m) + p.s
		}
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// SIUnit formats v with an SI prefix and a unit: 989.4e12, "FLOP/s" →
// "989 TFLOP/s".
func SIUnit(v float64, unit string) string {
	s := SI(v)
	i := len(s)
	for i > 0 && (s[i-1] < '0' || s[i-1] > '9') && s[i-1] != '.' {
		i--
	}
	return s[:i] + " " + s[i:] + unit
}

// trim formats v with three significant digits and no exponent.
func trim(v float64) string {
	s := strconv.FormatFloat(v, 'g', 3, 64)
	if strings.ContainsAny(s, "e") {
		s = strconv.FormatFloat(v, 'f', -1, 64)
	}
	return s
}

// Log axes. gonum/plot's LogScale panics on values ≤ 0 and, in v0.17,
// reserves room for an axis label at the arithmetic midpoint of the range
// (near the top decade), which wastes an inch of a log-log chart. So log
// axes here are linear axes over log10 of the data: the plotters get
// lg(v), logTicks labels the decades with SI values, and the values ≤ 0
// that log10 cannot take are filtered out before (Chart.Skipped).

// lg returns log10(v) for a plotter on a log axis.
func lg(v float64) float64 { return math.Log10(v) }

// logTicks marks each decade of an axis in log10 units with an SI label
// and the 2–9 multiples with minor ticks; with at most two decades in
// range it labels 2 and 5 too.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	if !finite(min) || !finite(max) || max <= min {
		return nil
	}
	lo, hi := int(math.Floor(min+1e-9)), int(math.Ceil(max-1e-9))
	few := max-min <= 2.5
	var ts []plot.Tick
	for e := lo; e <= hi; e++ {
		for m := 1; m <= 9; m++ {
			v := float64(e) + math.Log10(float64(m))
			if v < min-1e-9 || v > max+1e-9 {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || few && (m == 2 || m == 5) {
				t.Label = SI(float64(m) * math.Pow(10, float64(e)))
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// siTicks labels about five round values (1, 2, 2.5 or 5 times a power
// of ten apart) with SI labels, with an unlabelled minor tick between.
type siTicks struct{}

func (siTicks) Ticks(min, max float64) []plot.Tick {
	if !finite(min) || !finite(max) || max <= min {
		return nil
	}
	raw := (max - min) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ts []plot.Tick
	for i := math.Ceil(min/step - 1e-9); i*step <= max+1e-9*step; i++ {
		v := i * step
		if math.Abs(v) < 1e-12*step {
			v = 0
		}
		ts = append(ts, plot.Tick{Value: v, Label: SI(v)})
		if m := v + step/2; m <= max {
			ts = append(ts, plot.Tick{Value: m})
		}
	}
	return ts
}

// setLog makes a a log axis from lo to hi (data units, > 0): its values
// are log10 of the data, its ticks SI labels of the data.
func setLog(a *plot.Axis, lo, hi float64) {
	a.Tick.Marker = logTicks{}
	a.Min, a.Max = lg(lo), lg(hi)
}

// nominalTicks labels integer positions 0..len(names)-1.
type nominalTicks []string

func (n nominalTicks) Ticks(min, max float64) []plot.Tick {
	ts := make([]plot.Tick, len(n))
	for i, s := range n {
		ts[i] = plot.Tick{Value: float64(i), Label: s}
	}
	return ts
}
