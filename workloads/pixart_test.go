package workloads

import (
	"strings"
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
	if got := mustResolve(t, "t5-v1.1-xxl-encoder").Params(); got != t5+32*64 {
		t.Errorf("t5-v1.1-xxl-encoder: %.0f parameters, want HF's %.0f", got, t5+32*64)
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

// TestPixArtSigmaEagerPasses: the small eager kernels of a PixArt-Σ
// forward (xDiT 0.4.5's xFuserPixArtTransformer2DWrapper and
// xFuserPatchEmbedWrapper, diffusers' BasicTransformerBlock), each with
// its bytes at CFG batch 2 in bf16: the tensors shared by the batch (the
// position table, the scale_shift_tables) read once, each sample's own
// once.
func TestPixArtSigmaEagerPasses(t *testing.T) {
	const h, tok, b, e = 1152.0, 4096.0, 2.0, 2.0 // width, tokens, batch, bytes per bf16
	type pass struct {
		kind                 string
		count                int
		elems, read, written float64 // bytes
	}
	want := map[string]pass{
		// torch.cat of the one-patch list copies the table, once a forward.
		"pos_embed.cat": {"copy", 1, tok * h, tok * h * e, tok * h * e},
		// latent + pos_embed: every sample's patches, the table once.
		"pos_embed.add": {"add", 1, b * tok * h, (b*tok*h + tok*h) * e, b * tok * h * e},
		// scale_shift_table[None] + timestep.reshape(B, 6, -1), a block.
		"block*.ada": {"add", 28, b * 6 * h, (b*6*h + 6*h) * e, b * 6 * h * e},
		// 1 + scale_msa and 1 + scale_mlp in every block (one kernel shape,
		// listed under the first), 1 + scale at the end.
		"block*.scale_msa.plus1": {"scalar", 28 * 2, b * h, b * h * e, b * h * e},
		"final.scale.plus1":      {"scalar", 1, b * h, b * h * e, b * h * e},
		// scale_shift_table[None] + embedded_timestep[:, None]: (B, 2, 1152).
		"final.ada": {"add.broadcast", 1, b * 2 * h, (b*h + 2*h) * e, b * 2 * h * e},
		// reshape of the einsum-permuted (B, 64, 64, 2, 2, 8) output.
		"unpatchify": {"copy", 1, b * 8 * 128 * 128, b * 8 * 128 * 128 * e, b * 8 * 128 * 128 * e},
	}
	got := map[string]int{}
	for _, op := range mustOps(t, mustResolve(t, "pixart-sigma-xl2-transformer"), Phase{Kind: Prefill, Batch: 2, Act: model.BF16, Weights: model.BF16}) {
		name := op.Name
		if rest, ok := strings.CutPrefix(name, "block"); ok {
			name = "block*" + rest[strings.IndexByte(rest, '.'):]
		}
		w, ok := want[name]
		if !ok {
			continue
		}
		got[name] += op.Count
		k, ok := op.Kernel.(model.Elementwise)
		if !ok {
			t.Errorf("%s: %T, want an elementwise pass", op.Name, op.Kernel)
			continue
		}
		if k.Kind != w.kind || k.Elements != w.elems || float64(k.Read) != w.read || float64(k.Written) != w.written {
			t.Errorf("%s: %s of %.0f elements, %.0f B read, %.0f B written; want %s of %.0f, %.0f, %.0f",
				op.Name, k.Kind, k.Elements, float64(k.Read), float64(k.Written), w.kind, w.elems, w.read, w.written)
		}
	}
	for name, w := range want {
		if got[name] != w.count {
			t.Errorf("%s: %d kernels a forward, want %d", name, got[name], w.count)
		}
	}
}
