package workloads

import (
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestArch_badInput: the bad inputs, each an error naming the key.
func TestArch_badInput(t *testing.T) {
	base := "name = \"m\"\nkind = \"decoder\"\nlayers = 4\nd_model = 512\nheads = 8\nvocab = 1000\nnorm = \"rmsnorm\"\nactivation = \"swiglu\"\nmax_context = 4096\n"
	tests := []struct {
		name, extra, key, want string
	}{
		{"inconsistent MLA dims", "ffn = 1024\nkv_lora_rank = 64\nqk_nope_head_dim = 32\nqk_rope_head_dim = 16\nv_head_dim = 32\nhead_dim = 64\n", "head_dim", "is not qk_nope_head_dim"},
		{"MLA with a bad rank still checks its sizes", "ffn = 1024\nkv_lora_rank = -5\nqk_nope_head_dim = 32\nv_head_dim = 32\n", "qk_rope_head_dim", "missing"},
		{"MLA without its rank", "ffn = 1024\nqk_nope_head_dim = 32\n", "kv_lora_rank", "missing"},
		{"window over the context", "ffn = 1024\nwindow = 8192\n", "window", "larger than the context"},
		{"top-k over the experts", "experts = 4\ntop_k = 5\nexpert_ffn = 256\n", "top_k", "more than experts"},
		{"layer types of the wrong length", "ffn = 1024\nwindow = 128\nlayer_types = [\"sliding\", \"full\"]\n", "layer_types", "2 entries for 4 layers"},
		{"unknown layer type", "ffn = 1024\nlayer_types = [\"full\", \"full\", \"full\", \"fancy\"]\n", "layer_types", "unknown kind"},
		{"sliding without a window", "ffn = 1024\nlayer_types = [\"full\", \"sliding\", \"full\", \"sliding\"]\n", "window", "missing"},
		{"mamba without a state", "ffn = 1024\nlayer_types = [\"full\", \"mamba\", \"full\", \"mamba\"]\n", "ssm_state", "missing"},
		{"first dense beyond the layers", "ffn = 1024\nexperts = 4\ntop_k = 2\nexpert_ffn = 256\nfirst_dense_layers = 5\n", "first_dense_layers", "more than the 4 layers"},
		{"unknown expert type", "experts = 4\ntop_k = 2\nexpert_ffn = 256\nexpert_weights = \"fp5\"\n", "expert_weights", "unknown data type"},
		{"deltanet without heads", "ffn = 1024\nlayer_types = [\"deltanet\", \"deltanet\", \"deltanet\", \"full\"]\nlinear_key_head_dim = 64\n", "linear_value_heads", "missing"},
		{"deltanet key heads not dividing", "ffn = 1024\nlayer_types = [\"deltanet\", \"deltanet\", \"deltanet\", \"full\"]\nlinear_value_heads = 8\nlinear_key_heads = 3\nlinear_key_head_dim = 64\n", "linear_key_heads", "does not divide linear_value_heads 8"},
		{"linear keys without deltanet layers", "ffn = 1024\nlinear_value_heads = 8\nlinear_key_head_dim = 64\n", "linear_value_heads", "no layer is \"deltanet\""},
		{"shared expert gate without shared experts", "experts = 4\ntop_k = 2\nexpert_ffn = 256\nshared_expert_gate = true\n", "shared_expert_gate", "without shared_experts"},
	}
	for _, tt := range tests {
		_, err := Load(strings.NewReader(base+tt.extra), "m.toml")
		if err == nil || !strings.Contains(err.Error(), "m.toml:") || !strings.Contains(err.Error(), tt.key+": ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want m.toml:LINE: %s: ...%s", tt.name, err, tt.key, tt.want)
		}
	}
	// TP that does not divide the linear-attention heads is a phase error.
	qn := mustResolve(t, "qwen3-next-80b-a3b")
	if _, err := qn.Ops(Phase{Kind: Decode, Batch: 1, Context: 10, TP: 32}); err == nil || !strings.Contains(err.Error(), "linear_key_heads") {
		t.Errorf("tp 32 over 16 key heads: err = %v", err)
	}
	// EP that does not divide the experts is a phase error.
	m := mustResolve(t, "mixtral-8x7b")
	if _, err := m.Ops(Phase{Kind: Decode, Batch: 1, Context: 10, TP: 1, EP: 3}); err == nil || !strings.Contains(err.Error(), "experts") {
		t.Errorf("ep 3 over 8 experts: err = %v", err)
	}
}

// TestMoE_expertParallel: with EP across data-parallel attention
// replicas (DeepSeek's layout) each rank holds experts/EP, routes its
// tokens by an all-to-all dispatch and combine, and its grouped GEMMs
// see the group's tokens over its experts.
func TestMoE_expertParallel(t *testing.T) {
	m := mustResolve(t, "deepseek-v3")
	ops := mustOps(t, m, Phase{Kind: Decode, Batch: 32, Context: 1000, TP: 1, EP: 8})
	var dispatch, gemm bool
	for _, o := range ops {
		switch o.Name {
		case "moe.dispatch":
			dispatch = true
		case "expert.down":
			g := o.Kernel.(model.GroupedGEMM)
			// 32 tokens on each of 8 replicas, top-8 of 256: 256·8/8 =
			// 256 rows a rank, over the expected distinct experts among
			// its 32 under uniform routing of the group's 256 tokens.
			want := model.ExpectedExperts(256, 8, 256) / 8
			gemm = g.Rows == 256 && g.Experts == want
			if !gemm {
				t.Errorf("expert.down rows %d over %v experts, want 256 over %v", g.Rows, g.Experts, want)
			}
		}
	}
	if !dispatch || !gemm {
		t.Errorf("ep 8: dispatch %v, expert GEMMs %v", dispatch, gemm)
	}
	// Weights per device: the 656 B expert parameters split 8 ways, the
	// other 14.6 B whole on every rank; the experts ship in fp8
	// (expert_weights), one byte each.
	one, eight := m.WeightBytesPerDevice(model.BF16, 1, 1), m.WeightBytesPerDevice(model.BF16, 1, 8)
	experts := float64(58) * 256 * 3 * 7168 * 2048
	if got, want := float64(one-eight), experts*7/8; got != want {
		t.Errorf("weights per device %v at ep 8, %v at ep 1: %v less, want 7/8 of the experts' %v", float64(eight), float64(one), got, experts)
	}
}

// TestDelta_ops: Qwen3-Next's decode step on one of two ranks runs the
// gated delta rule in its 36 linear layers over half the heads, full
// attention in the other 12 with the gated query projection, and the
// shared expert's gate in all 48.
func TestDelta_ops(t *testing.T) {
	m := mustResolve(t, "qwen3-next-80b-a3b")
	ops := mustOps(t, m, Phase{Kind: Decode, Batch: 4, Context: 1000, TP: 2})
	seen := map[string]model.Op{}
	for _, o := range ops {
		seen[o.Name] = o
	}
	rule, ok := seen["gdn.rule"].Kernel.(model.Scan)
	if !ok || seen["gdn.rule"].Count != 36 || !rule.Delta || rule.Heads != 16 || rule.Groups != 8 || rule.State != 128 || rule.HeadDim != 128 || rule.Batch != 4 || rule.Tokens != 1 {
		t.Errorf("gdn.rule: %+v, count %d", seen["gdn.rule"].Kernel, seen["gdn.rule"].Count)
	}
	// q_proj doubles with the gate: 8 query heads of 2·256, 1 KV head of 256 each for k and v.
	if g, ok := seen["attn.qkv"].Kernel.(model.GEMM); !ok || g.N != 8*512+2*256 || seen["attn.qkv"].Count != 12 {
		t.Errorf("attn.qkv: %+v, count %d", seen["attn.qkv"].Kernel, seen["attn.qkv"].Count)
	}
	// in_proj_qkvz: q and k of 8 key heads of 128, v and z of 16 value heads of 128.
	if g, ok := seen["gdn.in_proj_qkvz"].Kernel.(model.GEMM); !ok || g.N != 2*8*128+2*16*128 || g.M != 4 {
		t.Errorf("gdn.in_proj_qkvz: %+v", seen["gdn.in_proj_qkvz"].Kernel)
	}
	for _, name := range []string{"attn.output_gate", "shared.expert_gate", "shared.expert_scale", "gdn.in_proj_ba", "gdn.norm", "gdn.out_proj"} {
		if _, ok := seen[name]; !ok {
			t.Errorf("no %s op", name)
		}
	}
	if c := seen["shared.expert_gate"].Count; c != 48 {
		t.Errorf("shared.expert_gate in %d layers, want 48", c)
	}
}
