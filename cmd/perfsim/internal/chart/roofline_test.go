package chart

import "testing"

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

func TestRooflineReview(t *testing.T) {
	c, err := h100Roofline().Chart()
	if err != nil {
		t.Fatal(err)
	}
	dump(t, "roofline", c)
}
