package workloads

import (
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestAttentionGEMMs_windowAndValues: the GEMM view of an attention
// (perfsim gemms, the catalog's MACs) spans a sliding window's keys, not
// the whole cache, and multiplies the scores by values of the value
// width: gpt-oss's sliding decode had listed Q·Kᵀ over all 4,001 cached
// keys where its window reads 128, and DeepSeek-V3's scores·V an output
// of 192 (the query–key width) where its values are 128 wide (512, the
// latent, when decoding). The non-causal MACs then equal the kernel's
// pairs × (head + value width).
func TestAttentionGEMMs_windowAndValues(t *testing.T) {
	for _, tt := range []struct {
		name      string
		a         model.Attention
		span, out int // keys a query spans (qk N, pv K); pv N
	}{
		{"gpt-oss sliding decode", model.Attention{Batch: 8, Heads: 32, KVHeads: 4, QLen: 1, KVLen: 4001, HeadDim: 64, Window: 128, Causal: true}, 128, 64},
		{"gpt-oss full decode", model.Attention{Batch: 8, Heads: 32, KVHeads: 4, QLen: 1, KVLen: 4001, HeadDim: 64, Causal: true}, 4001, 64},
		{"window wider than the cache", model.Attention{Batch: 1, Heads: 8, KVHeads: 8, QLen: 1, KVLen: 100, HeadDim: 128, Window: 4096, Causal: true}, 100, 128},
		{"mla prefill", model.Attention{Batch: 1, Heads: 16, KVHeads: 16, QLen: 1024, KVLen: 1024, HeadDim: 192, VDim: 128, Causal: true}, 1024, 128},
		{"mla decode, latent", model.Attention{Batch: 4, Heads: 16, KVHeads: 1, QLen: 1, KVLen: 2, HeadDim: 576, VDim: 512, Latent: true, Causal: true}, 2, 512},
	} {
		qk, pv := AttentionGEMMs(tt.a)
		if qk.M != tt.a.QLen || qk.K != tt.a.HeadDim || qk.N != tt.span || pv.M != tt.a.QLen || pv.K != tt.span || pv.N != tt.out {
			t.Errorf("%s: qk %d×%d×%d, pv %d×%d×%d; want %d×%d×%d and %d×%d×%d", tt.name, qk.M, qk.K, qk.N, pv.M, pv.K, pv.N,
				tt.a.QLen, tt.a.HeadDim, tt.span, tt.a.QLen, tt.span, tt.out)
		}
		nc := tt.a
		nc.Causal = false
		macs := float64(qk.Batch) * (float64(qk.M)*float64(qk.K)*float64(qk.N) + float64(pv.M)*float64(pv.K)*float64(pv.N))
		if want := nc.Pairs() * float64(nc.Batch*nc.Heads) * float64(nc.HeadDim+nc.ValueDim()); macs != want {
			t.Errorf("%s: %v MACs, want the non-causal kernel's %v", tt.name, macs, want)
		}
	}
}

// TestExpandAttention_slidingNamed: a sliding layer's products are named
// apart from the full layers' (gpt-oss's gemms table had listed two
// identical-looking attn.qk rows of 4,001 and 128 keys).
func TestExpandAttention_slidingNamed(t *testing.T) {
	m := mustResolve(t, "gpt-oss-120b")
	names := map[string]int{}
	for _, o := range ExpandAttention(mustOps(t, m, Phase{Kind: Decode, Batch: 8, Context: 4000, TP: 2})) {
		if g, ok := o.Kernel.(model.GEMM); ok && (o.Name == "attn.qk" || o.Name == "attn.qk.sliding") {
			names[o.Name] = g.N
		}
	}
	if names["attn.qk"] != 4001 || names["attn.qk.sliding"] != 128 {
		t.Errorf("attention products %v, want attn.qk over 4001 keys and attn.qk.sliding over 128", names)
	}
}
