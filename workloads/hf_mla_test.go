package workloads

import (
	"strconv"
	"strings"
	"testing"
)

// TestHF_mlaKeys: an MLA or MoE problem in a config.json names the
// config's own key (first_k_dense_replace, not first_dense_layers) at
// its line, and a key given as 0 or a negative number is not called
// "missing": the message says the value and what was expected.
func TestHF_mlaKeys(t *testing.T) {
	base := map[string]string{
		"hidden_size": "1024", "num_hidden_layers": "4", "num_attention_heads": "8",
		"kv_lora_rank": "64", "q_lora_rank": "0", "qk_nope_head_dim": "32", "qk_rope_head_dim": "16", "v_head_dim": "32",
		"intermediate_size": "2048", "n_routed_experts": "8", "num_experts_per_tok": "2", "moe_intermediate_size": "256",
		"vocab_size": "1000", "max_position_embeddings": "4096", "first_k_dense_replace": "1", "n_shared_experts": "1",
	}
	src := func(key, v string) string {
		var b strings.Builder
		b.WriteString("{\"architectures\": [\"DeepseekV3ForCausalLM\"]")
		for _, k := range []string{"hidden_size", "num_hidden_layers", "num_attention_heads", "kv_lora_rank", "q_lora_rank",
			"qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "intermediate_size", "n_routed_experts", "num_experts_per_tok",
			"moe_intermediate_size", "vocab_size", "max_position_embeddings", "first_k_dense_replace", "n_shared_experts"} {
			val := base[k]
			if k == key {
				val = v
			}
			b.WriteString(",\n\"" + k + "\": " + val)
		}
		return b.String() + "\n}\n"
	}
	if _, err := LoadHF(strings.NewReader(src("", "")), "d/config.json"); err != nil {
		t.Fatalf("the base config: %v", err)
	}
	for _, tt := range []struct {
		key, v string
		line   int
		want   []string
	}{
		{"first_k_dense_replace", "9", 16, []string{"9 is more than the 4 layers"}},
		{"first_k_dense_replace", "-1", 16, []string{"-1"}},
		{"qk_rope_head_dim", "0", 8, []string{"got 0"}},
		{"qk_rope_head_dim", "-5", 8, []string{"got -5"}},
		{"v_head_dim", "0", 9, []string{"got 0"}},
		{"kv_lora_rank", "-5", 5, []string{"got -5"}},
		{"n_routed_experts", "-5", 11, []string{"got -5"}},
		{"moe_intermediate_size", "0", 13, []string{"got 0"}},
		{"n_shared_experts", "-5", 17, []string{"got -5"}},
	} {
		_, err := LoadHF(strings.NewReader(src(tt.key, tt.v)), "d/config.json")
		if err == nil {
			t.Errorf("%s %s: no error", tt.key, tt.v)
			continue
		}
		want := append([]string{"d/config.json:" + strconv.Itoa(tt.line) + ": " + tt.key + ":"}, tt.want...)
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %s: %v; want %q", tt.key, tt.v, err, w)
			}
		}
		if strings.Contains(err.Error(), "missing") {
			t.Errorf("%s %s: %v; the key is given, not missing", tt.key, tt.v, err)
		}
	}
}
