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
		router := 58 * (7168*256 + 256) * 2.0 // bf16, whole too (TestMoE_routerReplicated)
		if got, want := eight-one/8, (whole+router)*7/8; got != want {
			t.Errorf("%v: a rank of 8 holds %.0f bytes over an eighth of the model, want 7/8 of q_a and kv_a's %.0f: %.0f", w, got, whole, want)
		}
	}
}

// TestMoE_routerReplicated: the router of every MoE layer is whole on
// every tensor-parallel rank and stays in the model's 16-bit type (vLLM
// builds it as a ReplicatedLinear with quant_config None: Mixtral,
// Qwen3-MoE, DeepSeek-V2/V3; gpt-oss's is a plain bf16 Linear), as the
// ops price it (moe.router is the full d_model × experts GEMM on every
// rank). The weights per device had split it over TP and stored it in
// --weights. Mixtral 8x7B at TP 8 (8 KV heads: nothing else whole):
// a rank holds an eighth of the model and 7/8 of the 32 routers.
func TestMoE_routerReplicated(t *testing.T) {
	m := mustResolve(t, "mixtral-8x7b")
	router := 32 * 4096 * 8.0
	for _, w := range []model.DType{model.FP8, model.BF16} {
		one, eight := float64(m.WeightBytesPerDevice(w, 1, 1)), float64(m.WeightBytesPerDevice(w, 8, 1))
		if got, want := eight-one/8, router*2*7/8; got != want {
			t.Errorf("%v: a rank of 8 holds %.0f bytes over an eighth of the model, want 7/8 of the routers' %.0f in bf16: %.0f", w, got, router*2, want)
		}
	}
	// In fp8 the routers are the 16-bit part beside the embedding and LM head.
	vocab := 2 * 32000 * 4096.0
	if got, want := float64(m.WeightBytes(model.FP8)), (m.Params()-router-vocab)*1+(router+vocab)*2; got != want {
		t.Errorf("fp8 weights %.0f bytes, want %.0f: routers, embedding and LM head in bf16", got, want)
	}
}

// TestMoE_routerGEMM16: under fp8 weights the router GEMM reads its bf16
// weights on the bf16 residual stream, as memory stores them
// (TestMoE_routerReplicated); it had read them as fp8.
func TestMoE_routerGEMM16(t *testing.T) {
	m := mustResolve(t, "mixtral-8x7b")
	for _, o := range mustOps(t, m, Phase{Kind: Decode, Batch: 4, Context: 100, TP: 2, Weights: model.FP8, Act: model.FP8, KV: model.FP8, Comm: model.BF16}) {
		if o.Name != "moe.router" {
			continue
		}
		g := o.Kernel.(model.GEMM)
		if g.A != model.BF16 || g.B != model.BF16 || g.C != model.BF16 || g.N != 8 || g.K != 4096 {
			t.Errorf("moe.router %+v, want 4096 × 8 in bf16", g)
		}
		return
	}
	t.Error("no moe.router op")
}
