package workloads

import (
	"math"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestCatalog_paramCounts checks the parameter counts of today's catalog
// entries, computed from their configs, as exact integers (our counts
// from the config.json values, every weight tensor of the HF modeling
// code), and against the published figures to their precision. Active
// counts state their convention: "with" includes every embedding; "no
// input embedding" leaves out the token table a token reads one row of
// (the LM head stays: it is a GEMM), which is how DeepSeek-V3's "37 B"
// and gpt-oss's 5.1 B are counted; "non-embedding" leaves out the input
// embedding and the untied LM head, two vocab × d_model tables (Qwen3-Next's
// card: 79 B non-embedding of 80 B).
func TestCatalog_paramCounts(t *testing.T) {
	tests := []struct {
		name            string
		total           float64 // exact, our count
		published       float64 // the model card's figure
		precision       float64 // to which it is given
		active          float64 // exact, 0 for dense
		activePublished float64
		noInputEmbed    bool // the published active count leaves out the input embedding
		nonEmbedding    bool // ... and the untied LM head too
	}{
		// Issue 13 quotes 9,241,705,984 (HF google/gemma-2-9b safetensors).
		{"gemma2-9b", 9241705984, 9241705984, 1, 0, 0, false, false},
		// Issue 13 quotes 3,821,079,552 (HF microsoft/Phi-3-mini-4k-instruct).
		{"phi3-mini", 3821079552, 3821079552, 1, 0, 0, false, false},
		// 671 B total without the MTP module; 37 B activated (DeepSeek-V3
		// report): 37.552 B with embeddings, 36.626 B without the input one
		// (issue 13: 37.55 B and 36.63 B).
		{"deepseek-v3", 671026419200, 671e9, 1e9, 37552297472, 36.63e9, true, false},
		// gpt-oss model card: 116.83 B total, 5.13 B active (without the
		// input embedding); 20.91 B and 3.61 B.
		{"gpt-oss-120b", 116829156672, 116.83e9, 0.01e9, 5711982912, 5.13e9, true, false},
		{"gpt-oss-20b", 20914757184, 20.91e9, 0.01e9, 4187440704, 3.61e9, true, false},
		// Qwen3 report: 30.5 B / 3.3 B (issue: 3.35 B, with embeddings);
		// 235 B / 22 B; 8.2 B; 32.8 B.
		{"qwen3-30b-a3b", 30532122624, 30.5e9, 0.1e9, 3353032704, 3.35e9, false, false},
		{"qwen3-235b-a22b", 235093634560, 235e9, 1e9, 22190763520, 22e9, false, false},
		{"qwen3-8b", 8190735360, 8.2e9, 0.1e9, 0, 0, false, false},
		{"qwen3-32b", 32762123264, 32.8e9, 0.1e9, 0, 0, false, false},
		// Qwen2.5 model cards: 7.61 B (truncated: 6.53 B without the two
		// embedding tables, 7.6156 B with), 72.7 B.
		{"qwen2.5-7b", 7615616512, 7.615e9, 0.01e9, 0, 0, false, false},
		{"qwen2.5-72b", 72706203648, 72.7e9, 0.1e9, 0, 0, false, false},
		// Llama 3.1 model card: 8 B, 70 B (8,030,261,248 and 70,553,706,496).
		{"llama3.1-8b", 8030261248, 8030261248, 1, 0, 0, false, false},
		{"llama3.1-70b", 70553706496, 70553706496, 1, 0, 0, false, false},
		{"llama3.3-70b", 70553706496, 70553706496, 1, 0, 0, false, false},
		// Gemma 3 27B: the text model, 27.0 B (the 27.4 B of the card adds the vision tower).
		{"gemma3-27b", 27009346304, 27.0e9, 0.1e9, 0, 0, false, false},
		// Phi-4 report: 14 B (14.66 B); Mistral Small 3: 24 B (23.57 B).
		{"phi-4", 14659507200, 14.7e9, 0.1e9, 0, 0, false, false},
		{"mistral-small-24b", 23572403200, 24e9, 1e9, 0, 0, false, false},
		// Mixtral 8x22B: 141 B total, 39 B active (Mistral AI).
		{"mixtral-8x22b", 140630071296, 141e9, 1e9, 39161468928, 39e9, false, false},
		// Mamba-2 2.7B; Nemotron-H 8B.
		{"mamba2-2.7b", 2702599680, 2.7e9, 0.1e9, 0, 0, false, false},
		{"nemotron-h-8b", 8100852736, 8.1e9, 0.1e9, 0, 0, false, false},
		// Qwen3-Next-80B-A3B model card: 80 B total, 3 B activated, 79 B
		// non-embedding (79,052,061,440); activated without the two
		// tables 3,252,599,552 ("3 B"); with them 3.87 B.
		{"qwen3-next-80b-a3b", 79674391296, 80e9, 1e9, 3874929408, 3e9, false, true},
	}
	for _, tt := range tests {
		m := mustResolve(t, tt.name)
		if got := m.Params(); got != tt.total {
			t.Errorf("%s: %.0f parameters, want %.0f", tt.name, got, tt.total)
		}
		if math.Abs(m.Params()-tt.published) > tt.precision/2+0.5 {
			t.Errorf("%s: %.0f parameters, published %.4g (±%.2g)", tt.name, m.Params(), tt.published, tt.precision/2)
		}
		if tt.active == 0 {
			if m.ActiveParams() != m.Params() {
				t.Errorf("%s: dense, but %.0f active of %.0f", tt.name, m.ActiveParams(), m.Params())
			}
			continue
		}
		if got := m.ActiveParams(); got != tt.active {
			t.Errorf("%s: %.0f active, want %.0f", tt.name, got, tt.active)
		}
		a := m.ActiveParams()
		if tt.noInputEmbed {
			a -= m.EmbeddingParams()
		}
		if tt.nonEmbedding {
			a -= 2 * m.EmbeddingParams() // untied: the LM head is as large as the embedding
		}
		if math.Abs(a-tt.activePublished) > tt.precision/2+0.5 {
			t.Errorf("%s: %.0f active (input embedding left out: %v), published %.4g", tt.name, a, tt.noInputEmbed, tt.activePublished)
		}
	}
}

// TestCatalog_nonEmbedding: Qwen3-Next-80B-A3B's card gives 79 B
// non-embedding parameters: the total less the embedding and the untied
// LM head, 79,052,061,440.
func TestCatalog_nonEmbedding(t *testing.T) {
	m := mustResolve(t, "qwen3-next-80b-a3b")
	if got := m.Params() - 2*m.EmbeddingParams(); got != 79052061440 || math.Round(got/1e9) != 79 {
		t.Errorf("qwen3-next-80b-a3b: %.0f non-embedding parameters, want 79,052,061,440 (79 B)", got)
	}
}

// TestKVBytes: the KV cache per token and per sequence of today's
// attention variants.
func TestKVBytes(t *testing.T) {
	// DeepSeek-V3 in bf16: (512 + 64) × 61 layers × 2 bytes (issue 13).
	ds := mustResolve(t, "deepseek-v3")
	if got := ds.KVBytesPerToken(model.BF16); got != 70272 {
		t.Errorf("deepseek-v3 KV per token = %v bytes, want 70,272", float64(got))
	}
	// The latent does not shrink with TP: every rank holds it whole.
	if a, b := ds.KVBytes(1000, 1, model.BF16), ds.KVBytes(1000, 8, model.BF16); a != b || a != 70272*1000 {
		t.Errorf("deepseek-v3 KV of 1000 tokens: %v at tp 1, %v at tp 8; want 70,272,000 both", float64(a), float64(b))
	}
	// Mistral 7B v0.1 at 32k holds its 4,096-token window.
	mi := mustResolve(t, "mistral-7b-v0.1")
	if got, want := mi.KVBytes(32768, 1, model.BF16), 4096*mi.KVBytesPerToken(model.BF16); got != want {
		t.Errorf("mistral-7b-v0.1 at 32k: %v, want 4,096 tokens' %v", float64(got), float64(want))
	}
	// gpt-oss-120b: 18 full layers grow, 18 sliding ones stop at 128.
	g := mustResolve(t, "gpt-oss-120b")
	per := 2.0 * 8 * 64 * 2 // bytes per token per layer
	if got, want := float64(g.KVBytes(8192, 1, model.BF16)), 18*8192*per+18*128*per; got != want {
		t.Errorf("gpt-oss-120b at 8k: %v, want %v", got, want)
	}
	// TP beyond the 8 KV heads: each of 16 ranks keeps one head, half the
	// cache of tp 8, not a sixteenth of tp 1.
	l := mustResolve(t, "llama3-70b")
	if a, b := l.KVBytes(100, 8, model.BF16), l.KVBytes(100, 16, model.BF16); a != b {
		t.Errorf("llama3-70b: KV per rank %v at tp 8, %v at tp 16; replicated heads keep it", float64(a), float64(b))
	}
	// Qwen3-Next-80B-A3B: 12 full layers of 2 KV heads of 256 grow by
	// 24,576 bytes a token; the 36 Gated DeltaNet layers hold a constant
	// state of 32 heads of 128 × 128 and three rows of the 8,192
	// convolution channels: 36 × 1,097,728 = 39,518,208 bytes in bf16.
	qn := mustResolve(t, "qwen3-next-80b-a3b")
	if got := qn.KVBytesPerToken(model.BF16); got != 24576 {
		t.Errorf("qwen3-next-80b-a3b KV per token = %v, want 24,576", float64(got))
	}
	for _, tok := range []int{10, 100000} {
		if got, want := float64(qn.KVBytes(tok, 1, model.BF16)), float64(tok)*24576+39518208; got != want {
			t.Errorf("qwen3-next-80b-a3b at %d tokens: %v, want %v", tok, got, want)
		}
	}
	// TP 2 halves both: the heads are split.
	if got, want := float64(qn.KVBytes(1000, 2, model.BF16)), (1000*24576+39518208)/2.0; got != want {
		t.Errorf("qwen3-next-80b-a3b at tp 2: %v, want %v", got, want)
	}
	// Mamba-2: a constant state, whatever the length.
	mb := mustResolve(t, "mamba2-2.7b")
	if a, b := mb.KVBytes(10, 1, model.BF16), mb.KVBytes(100000, 1, model.BF16); a != b || a == 0 || mb.KVBytesPerToken(model.BF16) != 0 {
		t.Errorf("mamba2-2.7b: state %v at 10 tokens, %v at 100k, per token %v", float64(a), float64(b), float64(mb.KVBytesPerToken(model.BF16)))
	}
}
