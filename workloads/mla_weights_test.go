package workloads

import (
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestMLA_replicatedDownProjections: under tensor parallelism every rank
// holds MLA's two down-projections whole, the queries' q_a (7168 × 1536)
// as well as the latent's kv_a (7168 × 576), as vLLM builds them
// (deepseek_v2.py: ReplicatedLinear, or one fused_qkv_a_proj with TP
// disabled) and as the ops price them (mla.q_a is the full GEMM on every
// rank). The weights per device had split q_a over TP: 0.55 GB of fp8
// short on each of 8 ranks. At TP 8 the rank holds an eighth of
// everything else, so it holds 7/8 of the two whole on top of an eighth
// of the model.
func TestMLA_replicatedDownProjections(t *testing.T) {
	m := mustResolve(t, "deepseek-v3")
	for _, w := range []model.DType{model.FP8, model.BF16} {
		one, eight := float64(m.WeightBytesPerDevice(w, 1, 1)), float64(m.WeightBytesPerDevice(w, 8, 1))
		whole := 61 * 7168 * float64(1536+512+64) * w.Size()
		if got, want := eight-one/8, whole*7/8; got != want {
			t.Errorf("%v: a rank of 8 holds %.0f bytes over an eighth of the model, want 7/8 of q_a and kv_a's %.0f: %.0f", w, got, whole, want)
		}
	}
}
