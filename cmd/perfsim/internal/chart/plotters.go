package chart

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A marker is one glyph at a data point, with an optional text label.
type marker struct {
	X, Y  float64
	Style draw.GlyphStyle
	Label string
}

// A note is text placed at the first of its candidate anchors where it
// overlaps nothing already drawn: a ceiling's name, a ridge point.
type note struct {
	Text   string
	Color  color.Color // nil for black
	Rotate bool        // vertical, reading upward
	At     []anchor
}

// An anchor is a point in the plot's coordinates and how text aligns to
// it. The text keeps a small gap from the point, on the side it is
// aligned away from.
type anchor struct {
	X, Y   float64
	XAlign draw.XAlignment
	YAlign draw.YAlignment
}

// markers draws glyphs, then notes, then the glyphs' labels, each label
// where it overlaps neither a glyph nor a note nor another label nor the
// plot's edge: right of its glyph, else left, above, below, diagonally. A
// label that fits nowhere is dropped (the colour and the legend still name
// the point); a note that fits nowhere goes at its first anchor. Placement
// happens at draw time on the real canvas, so it is exact at any size.
type markers struct {
	Points []marker
	Notes  []note
	// Lines are polylines (in the plot's coordinates) that notes and
	// labels must not cross: the roofs.
	Lines   []plotter.XYs
	Text    text.Style
	Dropped int // labels dropped at the last draw
}

// textRect returns where sty draws s at pt (rotations 0 and π/2 only).
func textRect(sty text.Style, s string, pt vg.Point) vg.Rectangle {
	r := sty.Rectangle(s)
	w, h := r.Max.X-r.Min.X, r.Max.Y-r.Min.Y
	x0 := pt.X + w*vg.Length(sty.XAlign)
	y0 := pt.Y + h*vg.Length(sty.YAlign)
	if sty.Rotation != 0 { // a quarter turn about pt
		return vg.Rectangle{Min: vg.Point{X: pt.X - (y0 - pt.Y) - h, Y: pt.Y + (x0 - pt.X)}, Max: vg.Point{X: pt.X - (y0 - pt.Y), Y: pt.Y + (x0 - pt.X) + w}}
	}
	return vg.Rectangle{Min: vg.Point{X: x0, Y: y0}, Max: vg.Point{X: x0 + w, Y: y0 + h}}
}

func (m *markers) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	pts := make([]vg.Point, len(m.Points))
	var taken []vg.Rectangle
	for i, mk := range m.Points {
		pts[i] = vg.Point{X: tx(mk.X), Y: ty(mk.Y)}
		r := mk.Style.Rectangle()
		taken = append(taken, vg.Rectangle{Min: pts[i].Add(r.Min), Max: pts[i].Add(r.Max)})
	}
	// The lines, as a chain of small boxes every 2 points along them.
	for _, l := range m.Lines {
		for k := 1; k < len(l); k++ {
			a := vg.Point{X: tx(l[k-1].X), Y: ty(l[k-1].Y)}
			b := vg.Point{X: tx(l[k].X), Y: ty(l[k].Y)}
			n := int(math.Hypot(float64(b.X-a.X), float64(b.Y-a.Y))/2) + 1
			for j := 0; j <= n; j++ {
				f := vg.Length(float64(j) / float64(n))
				p := vg.Point{X: a.X + (b.X-a.X)*f, Y: a.Y + (b.Y-a.Y)*f}
				taken = append(taken, vg.Rectangle{Min: vg.Point{X: p.X - 1, Y: p.Y - 1}, Max: vg.Point{X: p.X + 1, Y: p.Y + 1}})
			}
		}
	}
	// Large glyphs first, so that small ones stay visible on top.
	order := make([]int, len(m.Points))
	for i := range order {
		order[i] = i
	}
	for i := 1; i < len(order); i++ { // insertion sort: stable and deterministic
		for j := i; j > 0 && m.Points[order[j]].Style.Radius > m.Points[order[j-1]].Style.Radius; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	for _, i := range order {
		if c.Contains(pts[i]) {
			c.DrawGlyph(m.Points[i].Style, pts[i])
		}
	}

	gap := vg.Points(3)
	for _, n := range m.Notes {
		var first *vg.Point
		var firstSty text.Style
		placed := false
		for _, a := range n.At {
			sty := m.Text
			if n.Color != nil {
				sty.Color = n.Color
			}
			sty.XAlign, sty.YAlign = a.XAlign, a.YAlign
			pt := vg.Point{X: tx(a.X), Y: ty(a.Y)}
			// Keep a gap on the side the text extends away from.
			dx := gap * vg.Length(1+2*float64(a.XAlign)) // left: +gap, right: −gap, centre: 0
			dy := gap * vg.Length(1+2*float64(a.YAlign)) // bottom: +gap, top: −gap
			if n.Rotate {
				sty.Rotation = math.Pi / 2
				pt.X, pt.Y = pt.X-dy, pt.Y+dx
			} else {
				pt.X, pt.Y = pt.X+dx, pt.Y+dy
			}
			r := textRect(sty, n.Text, pt)
			if first == nil {
				first, firstSty = &vg.Point{X: pt.X, Y: pt.Y}, sty
			}
			if !inside(c.Rectangle, r) || overlapsAny(r, taken, -1) {
				continue
			}
			c.FillText(sty, pt, n.Text)
			taken = append(taken, r)
			placed = true
			break
		}
		if !placed && first != nil {
			c.FillText(firstSty, *first, n.Text)
			taken = append(taken, textRect(firstSty, n.Text, *first))
		}
	}

	m.Dropped = 0
	for i, mk := range m.Points {
		if mk.Label == "" || !c.Contains(pts[i]) {
			continue
		}
		sty := m.Text
		sty.XAlign, sty.YAlign = draw.XLeft, draw.YBottom
		box := sty.Rectangle(mk.Label)
		w, h := box.Max.X-box.Min.X, box.Max.Y-box.Min.Y
		g := mk.Style.Radius + vg.Points(2)
		cands := []vg.Point{
			{X: pts[i].X + g, Y: pts[i].Y - h/2},           // right
			{X: pts[i].X - g - w, Y: pts[i].Y - h/2},       // left
			{X: pts[i].X - w/2, Y: pts[i].Y + g},           // above
			{X: pts[i].X - w/2, Y: pts[i].Y - g - h},       // below
			{X: pts[i].X + g*0.7, Y: pts[i].Y + g*0.7},     // above right
			{X: pts[i].X + g*0.7, Y: pts[i].Y - g*0.7 - h}, // below right
			{X: pts[i].X - g*0.7 - w, Y: pts[i].Y + g*0.7}, // above left
			{X: pts[i].X - g*0.7 - w, Y: pts[i].Y - g*0.7 - h},
		}
		placed := false
		for _, at := range cands {
			r := vg.Rectangle{Min: at, Max: vg.Point{X: at.X + w, Y: at.Y + h}}
			if !inside(c.Rectangle, r) || overlapsAny(r, taken, i) {
				continue
			}
			c.FillText(sty, at, mk.Label)
			taken = append(taken, r)
			placed = true
			break
		}
		if !placed {
			m.Dropped++
		}
	}
}

// inside reports whether r lies within outer.
func inside(outer, r vg.Rectangle) bool {
	return r.Min.X >= outer.Min.X && r.Min.Y >= outer.Min.Y && r.Max.X <= outer.Max.X && r.Max.Y <= outer.Max.Y
}

// overlapsAny reports whether r overlaps any rectangle of rs but own (the
// label's own glyph, which the candidate positions already clear).
func overlapsAny(r vg.Rectangle, rs []vg.Rectangle, own int) bool {
	for j, o := range rs {
		if j == own {
			continue
		}
		if r.Min.X < o.Max.X && o.Min.X < r.Max.X && r.Min.Y < o.Max.Y && o.Min.Y < r.Max.Y {
			return true
		}
	}
	return false
}

func (m *markers) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, ymin = math.Inf(1), math.Inf(1)
	xmax, ymax = math.Inf(-1), math.Inf(-1)
	for _, p := range m.Points {
		xmin, xmax = math.Min(xmin, p.X), math.Max(xmax, p.X)
		ymin, ymax = math.Min(ymin, p.Y), math.Max(ymax, p.Y)
	}
	return
}

func (m *markers) GlyphBoxes(p *plot.Plot) []plot.GlyphBox {
	bs := make([]plot.GlyphBox, len(m.Points))
	for i, mk := range m.Points {
		bs[i] = plot.GlyphBox{
			X:         p.X.Norm(mk.X),
			Y:         p.Y.Norm(mk.Y),
			Rectangle: mk.Style.Rectangle(),
		}
	}
	return bs
}

// A bar is one rectangle of a bar chart, in data units: at category
// position Cat (0, 1, ...), shifted by Offset (in category widths), from
// Base to Top on the value axis.
type bar struct {
	Cat, Offset float64
	Base, Top   float64
}

// bars draws rectangles of one colour: a stack layer, or a plain bar
// series. Unlike gonum's BarChart it takes an explicit base, so that bars
// on a log axis start at the axis minimum rather than at 0 (which a log
// axis cannot show).
type bars struct {
	Bars       []bar
	Width      float64 // in category units
	Color      color.Color
	Line       draw.LineStyle
	Horizontal bool
}

func (b *bars) Plot(c draw.Canvas, p *plot.Plot) {
	tc, tv := p.Transforms(&c)
	if b.Horizontal {
		tc, tv = tv, tc
	}
	for _, br := range b.Bars {
		base := br.Base
		if b.Horizontal {
			base = math.Max(base, p.X.Min)
		} else {
			base = math.Max(base, p.Y.Min)
		}
		c0 := tc(br.Cat + br.Offset - b.Width/2)
		c1 := tc(br.Cat + br.Offset + b.Width/2)
		v0, v1 := tv(base), tv(br.Top)
		var pts []vg.Point
		if b.Horizontal {
			pts = []vg.Point{{X: v0, Y: c0}, {X: v0, Y: c1}, {X: v1, Y: c1}, {X: v1, Y: c0}}
		} else {
			pts = []vg.Point{{X: c0, Y: v0}, {X: c0, Y: v1}, {X: c1, Y: v1}, {X: c1, Y: v0}}
		}
		c.FillPolygon(b.Color, pts)
		if b.Line.Width > 0 {
			c.StrokeLines(b.Line, append(pts, pts[0]))
		}
	}
}

func (b *bars) DataRange() (xmin, xmax, ymin, ymax float64) {
	cmin, cmax := math.Inf(1), math.Inf(-1)
	vmin, vmax := math.Inf(1), math.Inf(-1)
	for _, br := range b.Bars {
		cmin = math.Min(cmin, br.Cat+br.Offset-b.Width/2)
		cmax = math.Max(cmax, br.Cat+br.Offset+b.Width/2)
		vmin = math.Min(vmin, math.Min(br.Base, br.Top))
		vmax = math.Max(vmax, math.Max(br.Base, br.Top))
	}
	if b.Horizontal {
		return vmin, vmax, cmin, cmax
	}
	return cmin, cmax, vmin, vmax
}

// Thumbnail draws a filled square for the legend.
func (b *bars) Thumbnail(c *draw.Canvas) {
	h := c.Max.Y - c.Min.Y
	r := vg.Rectangle{Min: vg.Point{X: c.Min.X + vg.Points(3), Y: c.Min.Y + h*0.1}, Max: vg.Point{X: c.Max.X - vg.Points(3), Y: c.Max.Y - h*0.1}}
	c.FillPolygon(b.Color, []vg.Point{r.Min, {X: r.Min.X, Y: r.Max.Y}, r.Max, {X: r.Max.X, Y: r.Min.Y}})
}

// glyphThumb is a legend thumbnail of one glyph.
type glyphThumb struct{ draw.GlyphStyle }

func (g glyphThumb) Thumbnail(c *draw.Canvas) {
	c.DrawGlyph(g.GlyphStyle, c.Center())
}

// diamondGlyph is a filled diamond.
type diamondGlyph struct{}

func (diamondGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetColor(sty.Color)
	r := sty.Radius * 1.25
	var p vg.Path
	p.Move(vg.Point{X: pt.X, Y: pt.Y + r})
	p.Line(vg.Point{X: pt.X + r, Y: pt.Y})
	p.Line(vg.Point{X: pt.X, Y: pt.Y - r})
	p.Line(vg.Point{X: pt.X - r, Y: pt.Y})
	p.Close()
	c.Fill(p)
}

// outlined draws a filled glyph with a thin dark outline, so that
// overlapping markers of one colour stay distinct.
type outlined struct{ fill, line draw.GlyphDrawer }

func (o outlined) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	o.fill.DrawGlyph(c, sty, pt)
	c.SetLineStyle(draw.LineStyle{Color: color.Gray{Y: 50}, Width: vg.Points(0.6)})
	o.line.DrawGlyph(c, draw.GlyphStyle{Color: color.Gray{Y: 50}, Radius: sty.Radius}, pt)
}

// diamondLine is the outline of diamondGlyph.
type diamondLine struct{}

func (diamondLine) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius * 1.25
	c.StrokeLines(draw.LineStyle{Color: sty.Color, Width: vg.Points(0.6)}, []vg.Point{
		{X: pt.X, Y: pt.Y + r}, {X: pt.X + r, Y: pt.Y}, {X: pt.X, Y: pt.Y - r}, {X: pt.X - r, Y: pt.Y}, {X: pt.X, Y: pt.Y + r},
	})
}

// shapes are the glyphs that tell groups apart (prefill, decode, ...).
var shapes = []draw.GlyphDrawer{
	outlined{draw.CircleGlyph{}, draw.RingGlyph{}},
	outlined{draw.PyramidGlyph{}, draw.TriangleGlyph{}},
	outlined{draw.BoxGlyph{}, draw.SquareGlyph{}},
	outlined{diamondGlyph{}, diamondLine{}},
}

// cellGrid draws a heat map as filled cells with centred text.
type cellGrid struct {
	Cols, Rows int
	Fill       func(col, row int) color.Color
	Text       func(col, row int) (string, color.Color)
	Style      text.Style
}

func (g *cellGrid) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	for r := 0; r < g.Rows; r++ {
		for col := 0; col < g.Cols; col++ {
			x0, x1 := tx(float64(col)-0.5), tx(float64(col)+0.5)
			y0, y1 := ty(float64(r)-0.5), ty(float64(r)+0.5)
			pts := []vg.Point{{X: x0, Y: y0}, {X: x0, Y: y1}, {X: x1, Y: y1}, {X: x1, Y: y0}}
			c.FillPolygon(g.Fill(col, r), pts)
			c.StrokeLines(draw.LineStyle{Color: color.White, Width: vg.Points(1)}, append(pts, pts[0]))
			s, clr := g.Text(col, r)
			if s == "" {
				continue
			}
			sty := g.Style
			sty.Color = clr
			sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
			if sty.Rectangle(s).Max.X-sty.Rectangle(s).Min.X > x1-x0-vg.Points(2) {
				continue // the cell is too narrow for its number
			}
			c.FillText(sty, vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}, s)
		}
	}
}

func (g *cellGrid) DataRange() (xmin, xmax, ymin, ymax float64) {
	return -0.5, float64(g.Cols) - 0.5, -0.5, float64(g.Rows) - 0.5
}
