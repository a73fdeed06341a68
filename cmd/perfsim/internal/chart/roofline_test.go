package chart

import (
	"io"
	"math"
	"testing"

	"gonum.org/v1/plot/plotter"
)

// h100 is an H100 SXM: bf16 989.4 TFLOP/s dense, fp8 1978.9 TFLOP/s, 3.35 TB/s
// (NVIDIA H100 datasheet), for test data only.
func h100Roofline() Roofline {
	return Roofline{
		Title:     "Roofline — H100 SXM, llama3-70b, prefill 2048 / decode 2048+128, batch 1",
		Bandwidth: 3.35e12,
		Peaks:     []Ceiling{{"bf16", 989.4e12}, {"fp32 vector", 66.9e12}},
		Points: []RoofPoint{
			{"qkv_proj", "prefill b=1", 1500, 700e12, 0.10},
			{"attention", "prefill b=1", 900, 500e12, 0.15},
			{"out_proj", "prefill b=1", 1400, 690e12, 0.08},
			{"ffn", "prefill b=1", 1800, 720e12, 0.6},
			{"norm", "prefill b=1", 0.6, 1.8e12, 0.02},
			{"elementwise", "prefill b=1", 0.4, 1.2e12, 0.03},
			{"logits", "prefill b=1", 1700, 650e12, 0.02},
			{"embedding", "prefill b=1", 0, 0, 0.001},
			{"qkv_proj", "decode b=1", 1, 3.0e12, 0.1},
			{"attention", "decode b=1", 1.1, 2.5e12, 0.05},
			{"out_proj", "decode b=1", 1, 3.0e12, 0.08},
			{"ffn", "decode b=1", 1, 3.1e12, 0.7},
			{"norm", "decode b=1", 0.6, 0.1e12, 0.03},
			{"elementwise", "decode b=1", 0.4, 0.05e12, 0.02},
			{"logits", "decode b=1", 1, 2.9e12, 0.02},
		},
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

func TestRooflineData(t *testing.T) {
	r := h100Roofline()
	r.Attainable = []Ceiling{{"bf16", 0.8 * 989.4e12}}
	r.AttainableBandwidth = 2.9e12
	c, err := r.Chart()
	if err != nil {
		t.Fatal(err)
	}
	// The ridge of a peak is where it meets the diagonal: peak/bandwidth
	// (989.4e12/3.35e12 = 295.3 FLOP/B, by hand).
	ridge, _ := c.Series("ridge bf16")
	if len(ridge) != 1 || !near(ridge[0].X, 989.4e12/3.35e12) || !near(ridge[0].Y, 989.4e12) {
		t.Errorf("ridge bf16 = %v, want (%v, 989.4e12)", ridge, 989.4e12/3.35e12)
	}
	diag, _ := c.Series("bandwidth")
	for _, p := range diag {
		if !near(p.Y, 3.35e12*p.X) {
			t.Errorf("bandwidth diagonal point %v is not on y = 3.35e12·x", p)
		}
	}
	if top := diag[len(diag)-1]; !near(top.Y, 989.4e12) {
		t.Errorf("the diagonal ends at %v, want the highest peak", top)
	}
	peak, _ := c.Series("peak fp32 vector")
	if len(peak) != 2 || peak[0].Y != 66.9e12 || peak[1].Y != 66.9e12 || !near(peak[0].X, 66.9e12/3.35e12) {
		t.Errorf("peak fp32 vector = %v", peak)
	}
	att, ok := c.Series("ridge attainable bf16")
	if !ok || !near(att[0].X, 0.8*989.4e12/2.9e12) {
		t.Errorf("ridge attainable bf16 = %v", att)
	}
	// Points keep their values; the zero-FLOP embedding is left out.
	pre, _ := c.Series("points prefill b=1")
	if len(pre) != 7 || pre[0] != (plotter.XY{X: 1500, Y: 700e12}) {
		t.Errorf("points prefill b=1 = %v, want 7 points starting (1500, 7e14)", pre)
	}
	if len(c.Skipped) != 1 || c.Skipped[0] != "embedding (prefill b=1)" {
		t.Errorf("Skipped = %v, want the embedding", c.Skipped)
	}
	dump(t, "roofline", c)
}

func TestRooflineBad(t *testing.T) {
	tests := []struct {
		name string
		r    Roofline
	}{
		{"no bandwidth", Roofline{Peaks: []Ceiling{{"bf16", 1e15}}}},
		{"no peaks", Roofline{Bandwidth: 1e12}},
		{"zero peak", Roofline{Bandwidth: 1e12, Peaks: []Ceiling{{"bf16", 0}}}},
		{"attainable without bandwidth", Roofline{Bandwidth: 1e12, Peaks: []Ceiling{{"bf16", 1e15}}, Attainable: []Ceiling{{"bf16", 1e14}}}},
	}
	for _, tt := range tests {
		if _, err := tt.r.Chart(); err == nil {
			t.Errorf("%s: Chart() succeeded", tt.name)
		}
	}
	// Only points a log axis cannot show: a chart of the roofs alone.
	r := Roofline{Bandwidth: 1e12, Peaks: []Ceiling{{"bf16", 1e15}}, Points: []RoofPoint{{Label: "comm", Intensity: 0, Rate: 0}, {Label: "x", Intensity: math.Inf(1), Rate: 1}}}
	c, err := r.Chart()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Skipped) != 2 {
		t.Errorf("Skipped = %v, want both points", c.Skipped)
	}
	if err := Write(io.Discard, c, DefaultWidth, DefaultHeight, "svg"); err != nil {
		t.Error(err)
	}
}
