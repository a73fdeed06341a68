package chart

import (
	"math"
	"testing"
)

func breakdownData() (Bars, Bars) {
	cats := []string{"A100 SXM", "H100 SXM", "H200 SXM", "MI300X"}
	pre := Bars{Title: "prefill (TTFT)", XLabel: "hardware", YLabel: "time (ms)", Categories: cats, Totals: true,
		Stacks: []Stack{
			{"qkv_proj", []float64{60, 25, 24, 20}},
			{"attention", []float64{40, 18, 17, 15}},
			{"out_proj", []float64{50, 20, 20, 17}},
			{"ffn", []float64{300, 120, 118, 100}},
			{"elementwise", []float64{10, 5, 4, 4}},
		}}
	dec := Bars{Title: "decode (TPOT)", XLabel: "hardware", YLabel: "time (ms)", Categories: cats, Totals: true,
		Stacks: []Stack{
			{"qkv_proj", []float64{5, 3, 2, 1.8}},
			{"attention", []float64{2, 1.2, 0.9, 0.8}},
			{"out_proj", []float64{4, 2.4, 1.7, 1.5}},
			{"ffn", []float64{30, 18, 13, 11}},
			{"elementwise", []float64{1, 0.6, 0.5, 0.4}},
			{"communication", []float64{0, 0, 0, 0.2}},
		}}
	return pre, dec
}

func TestBarsReview(t *testing.T) {
	pre, dec := breakdownData()
	c, err := StackedBars("Time by op class — llama3-70b, batch 8, 2048 in / 128 out, bf16", pre, dec)
	if err != nil {
		t.Fatal(err)
	}
	dump(t, "breakdown", c)

	mem := Bars{XLabel: "batch size", YLabel: "memory (GiB)", Categories: []string{"1", "2", "4", "8", "16", "32", "64"}, Totals: true,
		Stacks: []Stack{
			{"weights", []float64{15, 15, 15, 15, 15, 15, 15}},
			{"KV cache", []float64{0.25, 0.5, 1, 2, 4, 8, 16}},
			{"activations", []float64{0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4}},
			{"reserve", []float64{2, 2, 2, 2, 2, 2, 2}},
		},
		Levels: []Level{{"capacity 80 GB", 74.5}}}
	c, err = StackedBars("Memory — H100 SXM, llama3-8b, 4096 context, bf16", mem)
	if err != nil {
		t.Fatal(err)
	}
	dump(t, "memory", c)

	g := Bars{XLabel: "GEMM", YLabel: "MACs", Log: true, Horizontal: true, Totals: true,
		Categories: []string{"embedding (one-hot)", "X·WQ (per head)", "X·WK (per head)", "X·WV (per head)", "Q·Kᵀ (all heads)", "QK·V (per head)", "output projection", "FFN up", "FFN down", "logits"},
		Stacks:     []Stack{{"MACs", []float64{1.28849e12, 3221225472, 3221225472, 3221225472, 51539607552, 536870912, 3.09238e11, 1.23695e12, 1.23695e12, 1.28849e12}}}}
	c, err = StackedBars("MACs per GEMM — gpt3-175b, sequence 2048", g)
	if err != nil {
		t.Fatal(err)
	}
	dump(t, "gemms", c)
}

func TestLinesReview(t *testing.T) {
	var ls []Line
	for i, hw := range []string{"A100 SXM", "H100 SXM", "H200 SXM"} {
		var pts []LinePoint
		for _, b := range []int{1, 2, 4, 8, 16, 32, 64, 128, 256} {
			tpot := (20 + 0.2*float64(b)) / float64(i+1) * 1e-3
			pts = append(pts, LinePoint{X: tpot * 1e3, Y: float64(b) / tpot / 8, Label: itoa(b)})
		}
		ls = append(ls, Line{hw, pts})
	}
	c, err := Lines{Title: "Throughput vs latency — llama3-70b, tp 8, 2048 in / 128 out", XLabel: "TPOT (ms)", YLabel: "output tokens/s per GPU", Lines: ls, LogY: true}.Chart()
	if err != nil {
		t.Fatal(err)
	}
	dump(t, "sweep", c)

	rows := []string{"512", "1k", "2k", "4k", "8k", "16k", "32k"}
	cols := []string{"1", "2", "4", "8", "16", "32", "64", "128", "256"}
	vals := make([][]float64, len(rows))
	for i := range rows {
		for j := range cols {
			v := 1.2 + 0.05*float64(i) + 0.04*float64(j)
			if i+j > 12 {
				v = math.NaN()
			}
			vals[i] = append(vals[i], v)
		}
	}
	c, err = Heatmap{Title: "Speedup of H200 over H100 — llama3-70b, tp 8", XLabel: "batch size", YLabel: "context (tokens)", Cols: cols, Rows: rows, Values: vals, Above: "H200 faster", Below: "H100 faster"}.Chart()
	if err != nil {
		t.Fatal(err)
	}
	dump(t, "heatmap", c)
}

func itoa(i int) string { return SI(float64(i)) }
