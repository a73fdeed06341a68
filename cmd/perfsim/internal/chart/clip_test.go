package chart

import (
	"bytes"
	"image/png"
	"testing"
)

// TestStackedBars_slantedLabelsInside: slanted category labels stay on
// the page. A breakdown of a what-if beside its base ("H100 HBM4
// (what-if of H100 SXM) b=1", the fourth of six bars in two panels) had
// its first slanted label run off the left edge, its first letter cut.
func TestStackedBars_slantedLabelsInside(t *testing.T) {
	cats := []string{"H100 SXM b=1", "H100 SXM b=8", "H100 SXM b=64",
		"H100 HBM4 (what-if of H100 SXM) b=1", "H100 HBM4 (what-if of H100 SXM) b=8", "H100 HBM4 (what-if of H100 SXM) b=64"}
	vals := []float64{0.05, 0.36, 2.9, 0.04, 0.34, 2.7}
	// The breakdown's eight op classes, each with its legend entry.
	var stacks []Stack
	for _, name := range []string{"embedding", "qkv_proj", "attention", "out_proj", "ffn", "norm", "elementwise", "logits"} {
		stacks = append(stacks, Stack{Name: name, Values: vals})
	}
	panel := func(title string) Bars {
		return Bars{Title: title, XLabel: "hardware and batch size", YLabel: "time (s)", Categories: cats, Stacks: stacks, Totals: true}
	}
	c, err := StackedBars("Time by op class", panel("prefill (TTFT)"), panel("decode (TPOT, per token)"))
	if err != nil {
		t.Fatal(err)
	}
	dump(t, "slanted_labels", c)
	var buf bytes.Buffer
	if err := Write(&buf, c, DefaultWidth, DefaultHeight, "png"); err != nil {
		t.Fatal(err)
	}
	im, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	b := im.Bounds()
	for x := b.Min.X; x < b.Min.X+4; x++ {
		for y := b.Min.Y; y < b.Max.Y; y++ {
			if r, g, bl, _ := im.At(x, y).RGBA(); (r+g+bl)/3 < 0xc000 {
				t.Fatalf("ink at (%d, %d), on the page's edge: a label runs off it", x, y)
			}
		}
	}
}
