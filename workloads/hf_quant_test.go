package workloads

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHF_quantizationConfig: a quantization_config changes the cost, so
// what it says is applied or a warning says it is not. DeepSeek-V3's and
// gpt-oss's readers apply fp8 and mxfp4 to the experts; another method in
// those files (an AWQ DeepSeek, an fp8 gpt-oss) had been dropped without a
// word, the experts priced in bf16. DeepSeek-V3's fp8 covers every linear
// layer (its report: "FP8 for GEMMs in Linear operators", the embedding,
// output head and gating kept wider), and only the experts take it from
// the file: a warning says the others are priced in --weights.
func TestHF_quantizationConfig(t *testing.T) {
	read := func(name string, q map[string]any) map[string]any {
		return todayConfig(t, name, func(raw map[string]any) {
			if q != nil {
				raw["quantization_config"] = q
			}
		})
	}
	for _, tt := range []struct {
		name   string
		raw    map[string]any
		expert string   // the experts' type
		want   []string // in one warning naming quantization_config; none when empty
	}{
		{"deepseek fp8", read("deepseek-v3.json", nil), "fp8", []string{"quantization_config", "fp8", "--weights fp8"}},
		{"deepseek awq", read("deepseek-v3.json", map[string]any{"quant_method": "awq", "bits": 4}), "", []string{"quantization_config", `"awq" is not applied`}},
		{"gpt-oss mxfp4", read("gpt-oss-120b.json", nil), "mxfp4", nil},
		{"gpt-oss fp8", read("gpt-oss-120b.json", map[string]any{"quant_method": "fp8"}), "", []string{"quantization_config", `"fp8" is not applied`}},
	} {
		b, err := json.Marshal(tt.raw)
		if err != nil {
			t.Fatal(err)
		}
		m, err := LoadHF(strings.NewReader(string(b)), "q/config.json")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if m.cfg.ExpertWeights != tt.expert {
			t.Errorf("%s: expert_weights %q, want %q", tt.name, m.cfg.ExpertWeights, tt.expert)
		}
		var got []string
		for _, w := range m.Warnings() {
			if strings.Contains(w.Error(), "quantization_config") {
				got = append(got, w.Error())
			}
		}
		if len(tt.want) == 0 {
			if len(got) > 0 {
				t.Errorf("%s: warned %q", tt.name, got)
			}
			continue
		}
		if len(got) != 1 {
			t.Errorf("%s: %d warnings about quantization_config (%q), want one", tt.name, len(got), got)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(got[0], w) {
				t.Errorf("%s: warning %q, want it to say %q", tt.name, got[0], w)
			}
		}
	}
}

// TestHF_layerListsBad: a bad entry in Nemotron-H's hybrid_override_pattern
// is one error at its line (a MoE layer 'E' had also left two
// lineless "layer_types: entry 51: unknown kind" errors behind it), and
// Qwen3-MoE's mlp_only_layers naming a layer the model has not is an
// error at its line (layer 60 of 48 had been dropped without a word).
func TestHF_layerListsBad(t *testing.T) {
	read := func(name string, edit func(map[string]any)) string {
		b, err := json.MarshalIndent(todayConfig(t, name, edit), "", " ")
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tt := range []struct {
		name, src string
		want      string
	}{
		{"nemotron E", read("nemotron-h-8b.json", func(r map[string]any) {
			p := r["hybrid_override_pattern"].(string)
			r["hybrid_override_pattern"] = p[:len(p)-1] + "E"
		}), "hybrid_override_pattern: character 51 is 'E'"},
		{"mlp_only_layers", read("qwen3-30b-a3b.json", func(r map[string]any) { r["mlp_only_layers"] = []any{0, 1, 60} }),
			"mlp_only_layers: layer 60 of 48"},
		{"mlp_only_layers negative", read("qwen3-30b-a3b.json", func(r map[string]any) { r["mlp_only_layers"] = []any{-1} }),
			"mlp_only_layers: layer -1 of 48"},
	} {
		_, err := LoadHF(strings.NewReader(tt.src), "l/config.json")
		if err == nil {
			t.Errorf("%s: loaded", tt.name)
			continue
		}
		lines := strings.Split(err.Error(), "\n")
		if len(lines) != 1 || !strings.Contains(lines[0], tt.want) || !strings.HasPrefix(lines[0], "workloads: l/config.json:") {
			t.Errorf("%s: error %q, want one at its line with %q", tt.name, err, tt.want)
		}
	}
}

// TestHF_quantizationHint: the warning for a quantization_config that is
// not applied names the --weights that prices it: Qwen3-30B-A3B-FP8's
// fp8 had been told "e.g. --weights int4 for 4-bit weights".
func TestHF_quantizationHint(t *testing.T) {
	for _, tt := range []struct {
		q    string
		want string
	}{
		{`{"quant_method": "fp8", "weight_block_size": [128, 128]}`, "--weights fp8"},
		{`{"quant_method": "awq", "bits": 4, "group_size": 128}`, "--weights int4"},
		{`{"quant_method": "gptq", "bits": 8}`, "--weights int8"},
		{`{"quant_method": "mxfp4"}`, "--weights mxfp4"},
		{`{"quant_method": "modelopt", "quant_algo": "NVFP4"}`, "--weights fp4"},
		{`{"quant_method": "bitsandbytes"}`, "--weights"},
	} {
		src := `{"architectures": ["Qwen3ForCausalLM"], "hidden_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 16,
	"num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 3072, "vocab_size": 1000, "max_position_embeddings": 4096,
	"quantization_config": ` + tt.q + `}`
		m, err := LoadHF(strings.NewReader(src), "x/config.json")
		if err != nil {
			t.Fatal(err)
		}
		var got string
		for _, w := range m.Warnings() {
			if strings.Contains(w.Error(), "quantization_config") {
				got = w.Error()
			}
		}
		if !strings.Contains(got, "is not applied") || !strings.Contains(got, tt.want) || (tt.want != "--weights int4" && strings.Contains(got, "int4")) {
			t.Errorf("%s: warning %q, want one naming %s", tt.q, got, tt.want)
		}
	}
}

// todayConfig reads testdata/hf/today/name as JSON and edits it.
func todayConfig(t *testing.T, name string, edit func(map[string]any)) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "hf", "today", name))
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	edit(raw)
	return raw
}
