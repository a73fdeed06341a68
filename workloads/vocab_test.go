package workloads

import (
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestVocabOps: under fp8 weights a decoder's embedding gather and LM
// head run in bf16 (model.VocabType) while its layers' GEMMs run in fp8;
// in bf16 nothing changes.
func TestVocabOps(t *testing.T) {
	m := mustResolve(t, "llama3-8b")
	for _, c := range []struct{ w, act, head model.DType }{
		{model.FP8, model.FP8, model.BF16},
		{model.INT4, model.BF16, model.BF16},
		{model.BF16, model.BF16, model.BF16},
	} {
		ops := mustOps(t, m, Phase{Kind: Decode, Batch: 4, Context: 100, Weights: c.w, Act: c.act, KV: model.BF16})
		seen := 0
		for _, o := range ops {
			switch o.Name {
			case "lm_head":
				g := o.Kernel.(model.GEMM)
				if g.A != c.head || g.B != c.head || g.C != c.head {
					t.Errorf("%v weights: lm_head %v×%v→%v, want %v", c.w, g.A, g.B, g.C, c.head)
				}
				seen++
			case "embed.tokens":
				if g := o.Kernel.(model.Gather); g.DType != c.head {
					t.Errorf("%v weights: embedding gather in %v, want %v", c.w, g.DType, c.head)
				}
				seen++
			case "ffn.up":
				if g := o.Kernel.(model.GEMM); g.B != c.w {
					t.Errorf("%v weights: ffn.up weights in %v", c.w, g.B)
				}
			}
		}
		if seen != 2 {
			t.Errorf("%v weights: found %d of lm_head and embed.tokens", c.w, seen)
		}
	}
}

// TestLogitsGather: at TP > 1 an inference pass all-gathers the sampled
// rows' logits across the TP ranks in the LM head's 16-bit output type;
// at TP 1 and in training there is no gather.
func TestLogitsGather(t *testing.T) {
	m := mustResolve(t, "llama3-8b") // vocabulary 128256
	for _, c := range []struct {
		ph   Phase
		want model.Bytes // 0: no gather
	}{
		{Phase{Kind: Decode, Batch: 16, Context: 100, TP: 4}, model.Bytes(16 * 128256 * 2)},
		{Phase{Kind: Decode, Batch: 16, Context: 100, TP: 4, Weights: model.FP8, Act: model.FP8, KV: model.FP8}, model.Bytes(16 * 128256 * 2)},
		{Phase{Kind: Prefill, Batch: 3, Seq: 64, TP: 2}, model.Bytes(3 * 128256 * 2)},
		{Phase{Kind: Decode, Batch: 16, Context: 100, TP: 1}, 0},
		{Phase{Kind: TrainForward, Batch: 2, Seq: 64, TP: 2}, 0},
	} {
		var got model.Bytes
		for _, o := range mustOps(t, m, c.ph) {
			if o.Name == "logits.gather" {
				k := o.Kernel.(model.Collective)
				if k.Kind != model.AllGather || k.Ranks != c.ph.TP || o.Class != model.ClassLogits {
					t.Errorf("%s tp %d: logits.gather %+v, class %v", c.ph.Kind, c.ph.TP, k, o.Class)
				}
				got = k.Size
			}
		}
		if got != c.want {
			t.Errorf("%s tp %d %v: logits gathered %v, want %v", c.ph.Kind, c.ph.TP, c.ph.Weights, got, c.want)
		}
	}
}
