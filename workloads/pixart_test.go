package workloads

import (
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestPixArtSigma: PixArt-Σ XL/2's transformer and its T5 text encoder,
// counted term by term from diffusers' PixArtTransformer2DModel and HF's
// T5EncoderModel, with the attention shapes a 1024x1024 step runs.
func TestPixArtSigma(t *testing.T) {
	const h, ff = 1152.0, 4608.0
	lin := func(in, out float64) float64 { return in*out + out } // with bias
	block := 6*h +                                               // scale_shift_table (not counted below)
		4*lin(h, h) + // self-attention q, k, v, out
		4*lin(h, h) + // cross-attention q, k, v (from the projected caption), out
		lin(h, ff) + lin(ff, h) // MLP
	diffusers := 4*4*h + h + // 2x2 patch embedding with bias
		lin(256, h) + lin(h, h) + // timestep embedder
		lin(h, 6*h) + // adaLN-single
		lin(4096, h) + lin(h, h) + // caption projection
		28*block +
		2*h + lin(h, 2*2*8) // final scale_shift_table, proj_out
	if diffusers != 610856096 {
		t.Fatalf("hand count %.0f, want diffusers' 610,856,096", diffusers)
	}
	// The scale-shift tables are inputs of the layer graph: not counted.
	if got, want := mustResolve(t, "pixart-sigma-xl2-transformer").Params(), diffusers-28*6*h-2*h; got != want {
		t.Errorf("pixart-sigma-xl2-transformer: %.0f parameters, want %.0f", got, want)
	}
	const d, dff, vocab = 4096.0, 10240.0, 32128.0
	t5 := vocab*d + 24*(4*d*d+3*d*dff+2*d) + d // embedding, blocks (q, k, v, o; wi_0, wi_1, wo; two RMSNorms), final norm
	if t5+32*64 != 4762310656 {
		t.Fatalf("hand count %.0f with the relative bias, want HF's 4,762,310,656", t5+32*64)
	}
	if got := mustResolve(t, "t5-v1.1-xxl-encoder").Params(); got != t5 {
		t.Errorf("t5-v1.1-xxl-encoder: %.0f parameters, want %.0f (no relative bias)", got, t5)
	}
	// Per step at CFG batch 2: self-attention over the 4,096 tokens and
	// cross-attention to the 300 caption tokens, 16 heads of 72, in each
	// of the 28 blocks; every modulation a broadcast pass.
	self, cross, mods := 0, 0, 0
	for _, op := range mustOps(t, mustResolve(t, "pixart-sigma-xl2-transformer"), Phase{Kind: Prefill, Batch: 2}) {
		if a, ok := op.Kernel.(model.Attention); ok && a.QLen == 4096 && a.HeadDim == 72 && a.Heads == 16 && a.Batch == 2 {
			switch a.KVLen {
			case 4096:
				self += op.Count
			case 300:
				cross += op.Count
			}
		}
		if e, ok := op.Kernel.(model.Elementwise); ok && (e.Kind == "mul.broadcast" || e.Kind == "add.broadcast") && e.Elements == 2*h*4096 {
			mods += op.Count
		}
	}
	// Each block: two scales, two shifts and two gates; then the final
	// scale and shift.
	if self != 28 || cross != 28 || mods != 28*6+2 {
		t.Errorf("a step runs %d self-attentions, %d cross-attentions and %d broadcast modulations; want 28, 28 and %d", self, cross, mods, 28*6+2)
	}
}
