package sim_test

import (
	"math"
	"sort"
	"strconv"
	"testing"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// TestDecode_llama70bTP4Measured: one rank of Llama 3 70B at TP 4, timed
// on one H100 (kernels/torch/llama_decode.py, 2026-11-26: random bf16
// weights, CUDA graphs, no all-reduce). Its GEMMs alone (the four
// projections of 80 layers and the LM head's shard) took 12.65-13.17 ms
// at batch 1-32; perfsim's decode GEMMs on the catalog's H100 are 13.24-
// 13.41 ms, 2-5% over, and must stay within 10% of them. The vLLM 0.6
// rows of issue 11 (this model on four H100s) miss their median TPOT by
// about 20%, and docs/serving.md finds a third of the step outside the
// kernels perfsim prices: this holds the largest of them to a GPU. The
// attention (PyTorch's scaled_dot_product_attention, not vLLM's paged
// kernel) and the whole unfused step are logged.
func TestDecode_llama70bTP4Measured(t *testing.T) {
	rows := measuredRows(t, "llama70b-tp4-decode-h100-2026-11-26.csv")
	type key struct {
		part         string
		batch, input int
	}
	meas := map[key]float64{}
	for _, row := range rows[1:] {
		b, _ := strconv.Atoi(row[2])
		c, _ := strconv.Atoi(row[3])
		s, err := strconv.ParseFloat(row[4], 64)
		if err != nil {
			t.Fatalf("bad row %v", row)
		}
		meas[key{row[0], b, c}] = s
	}
	sys, w := load(t, "h100", "llama3-70b", 4)
	var keys []key
	for k := range meas {
		if k.part == "gemms" {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].input < keys[j].input || keys[i].input == keys[j].input && keys[i].batch < keys[j].batch
	})
	for _, k := range keys {
		gemms := meas[k]
		sc := sim.Default()
		sc.TP, sc.Batch, sc.Input, sc.Output = 4, k.batch, k.input, 2
		rep, err := sim.Run(sys, w, sc)
		if err != nil {
			t.Fatal(err)
		}
		var g, attn, comm float64
		for _, o := range rep.Inference.Decode.Ops {
			switch o.Class {
			case model.ClassQKV, model.ClassOutProj, model.ClassFFN, model.ClassLogits:
				g += float64(o.Time)
			case model.ClassAttention:
				attn += float64(o.Time)
			case model.ClassComm:
				comm += float64(o.Time)
			}
		}
		tpot := float64(rep.Inference.TPOT)
		t.Logf("batch %d, context %d: GEMMs %.2f ms, measured %.2f (%+.1f%%); attention %.2f, measured %.2f; step less its all-reduces %.2f, the unfused PyTorch step %.2f",
			k.batch, k.input, 1e3*g, 1e3*gemms, 100*(g/gemms-1), 1e3*attn, 1e3*meas[key{"attention", k.batch, k.input}], 1e3*(tpot-comm), 1e3*meas[key{"step", k.batch, k.input}])
		if math.Abs(g/gemms-1) > 0.10 {
			t.Errorf("batch %d, context %d: decode GEMMs %.2f ms, measured %.2f ms: more than 10%% apart", k.batch, k.input, 1e3*g, 1e3*gemms)
		}
	}
	if len(keys) != 6 {
		t.Errorf("%d measured GEMM rows, want 6", len(keys))
	}
}
