package workloads

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestHF_today: the config.json files of 14 models a new user tries
// (testdata/hf/today/README.md) load with the catalog entry's exact
// parameter count, or are refused saying what is missing.
func TestHF_today(t *testing.T) {
	tests := []struct {
		file    string
		catalog string  // the catalog entry of the same model
		params  float64 // when there is none
		refused string  // a refusal's message
	}{
		{file: "gemma-2-9b.json", catalog: "gemma2-9b"},
		{file: "gemma-3-27b-it.json", catalog: "gemma3-27b"},
		{file: "phi-3-mini-4k.json", catalog: "phi3-mini"},
		{file: "phi-4.json", catalog: "phi-4"},
		{file: "deepseek-v3.json", catalog: "deepseek-v3"},
		{file: "qwen3-8b.json", catalog: "qwen3-8b"},
		{file: "qwen3-30b-a3b.json", catalog: "qwen3-30b-a3b"},
		// Falcon-7B: 6,921,720,704 (tiiuae/falcon-7b: 7 B; the count of
		// its safetensors).
		{file: "falcon-7b.json", params: 6921720704},
		// Mamba-Codestral 7B: 7.29 B (our count: 64 Mamba-2 layers of
		// 4096 with 8 groups, untied 32,768-token embeddings).
		{file: "mamba-codestral-7b.json", params: 7285403648},
		{file: "jamba-v0.1.json", refused: "Mamba-1"},
		{file: "gpt-oss-120b.json", catalog: "gpt-oss-120b"},
		{file: "llama-3.1-8b.json", catalog: "llama3.1-8b"},
		{file: "mistral-7b-v0.1.json", catalog: "mistral-7b-v0.1"},
		{file: "nemotron-h-8b.json", catalog: "nemotron-h-8b"},
		{file: "qwen3-next-80b-a3b.json", catalog: "qwen3-next-80b-a3b"},
	}
	for _, tt := range tests {
		path := filepath.Join("testdata", "hf", "today", tt.file)
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := LoadHF(f, path)
		f.Close()
		if tt.refused != "" {
			if err == nil || !strings.Contains(err.Error(), tt.refused) || !errors.Is(err, ErrUnsupportedArchitecture) {
				t.Errorf("%s: err = %v, want a refusal naming %q", tt.file, err, tt.refused)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.file, err)
			continue
		}
		want := tt.params
		if tt.catalog != "" {
			c := mustResolve(t, tt.catalog)
			want = c.Params()
			if a, b := m.ActiveParams(), c.ActiveParams(); a != b {
				t.Errorf("%s: %.0f active, the catalog's %s %.0f", tt.file, a, tt.catalog, b)
			}
			if a, b := m.KVBytes(40000, 1, 2), c.KVBytes(40000, 1, 2); a != b {
				t.Errorf("%s: KV of 40k tokens %v, the catalog's %v", tt.file, float64(a), float64(b))
			}
		}
		if m.Params() != want {
			t.Errorf("%s: %.0f parameters, want %.0f", tt.file, m.Params(), want)
		}
		for _, w := range m.Warnings() {
			t.Logf("%s: warning: %v", tt.file, w)
		}
	}
}

// TestHF_unknownKeys: keys the reader does not know are listed in one
// warning, and a key that changes the cost and is not modelled is refused.
func TestHF_unknownKeys(t *testing.T) {
	src := `{"architectures": ["Qwen3ForCausalLM"], "hidden_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 16,
	"num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 3072, "vocab_size": 1000, "max_position_embeddings": 4096,
	"fancy_new_thing": 3, "another_one": true}`
	m, err := LoadHF(strings.NewReader(src), "x/config.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Warnings()) != 1 || !strings.Contains(m.Warnings()[0].Error(), "another_one, fancy_new_thing") {
		t.Errorf("warnings = %v, want one listing another_one, fancy_new_thing", m.Warnings())
	}
	bad := `{"architectures": ["DeepseekV3ForCausalLM"], "hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8,
	"kv_lora_rank": 64, "q_lora_rank": 0, "qk_nope_head_dim": 32, "qk_rope_head_dim": 16, "v_head_dim": 32,
	"intermediate_size": 2048, "n_routed_experts": 8, "num_experts_per_tok": 9, "moe_intermediate_size": 256,
	"moe_layer_freq": 2, "vocab_size": 1000, "max_position_embeddings": 4096}`
	_, err = LoadHF(strings.NewReader(bad), "y/config.json")
	for _, want := range []string{"moe_layer_freq", "num_experts_per_tok"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want one naming %s", err, want)
		}
	}
}

// TestHF_qwen3Next: Qwen3-Next's layer types come from layer_types when
// given, else from full_attention_interval, and its bad values are
// errors naming the key.
func TestHF_qwen3Next(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "hf", "today", "qwen3-next-80b-a3b.json"))
	if err != nil {
		t.Fatal(err)
	}
	base, err := LoadHF(strings.NewReader(string(src)), "config.json")
	if err != nil {
		t.Fatal(err)
	}
	// An explicit list equal to the interval's gives the same model.
	var types []string
	for i := 0; i < 48; i++ {
		if (i+1)%4 == 0 {
			types = append(types, `"full_attention"`)
		} else {
			types = append(types, `"linear_attention"`)
		}
	}
	listed := strings.Replace(string(src), `"full_attention_interval": 4,`, `"layer_types": [`+strings.Join(types, ", ")+`],`, 1)
	m, err := LoadHF(strings.NewReader(listed), "config.json")
	if err != nil || m.Params() != base.Params() || m.KVBytes(1000, 1, 2) != base.KVBytes(1000, 1, 2) {
		t.Errorf("layer_types listed: err %v, params %v against %v", err, m.Params(), base.Params())
	}
	tests := []struct{ from, to, key, want string }{
		{`"full_attention_interval": 4,`, `"layer_types": ["linear_attention", "sliding_attention"],`, "layer_types", "unknown layer type"},
		{`"full_attention_interval": 4,`, `"full_attention_interval": 0,`, "full_attention_interval", "positive"},
		{`"shared_expert_intermediate_size": 512,`, `"shared_expert_intermediate_size": 300,`, "shared_expert_intermediate_size", "not a multiple"},
		{`"linear_num_key_heads": 16,`, `"linear_num_key_heads": 12,`, "linear_num_key_heads", "does not divide"},
	}
	for _, tt := range tests {
		bad := strings.Replace(string(src), tt.from, tt.to, 1)
		_, err := LoadHF(strings.NewReader(bad), "config.json")
		if err == nil || !strings.Contains(err.Error(), "config.json:") || !strings.Contains(err.Error(), tt.key+": ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s → %s: err = %v, want config.json:LINE: %s: ...%s", tt.from, tt.to, err, tt.key, tt.want)
		}
	}
}

// TestHF_layerTypesWideWindow: a window at least the context long
// changes nothing, but its layer_types are still checked: a list of the
// wrong length or with an unknown entry was accepted silently there
// (issue 13's bad input), and a valid one prices as full attention.
func TestHF_layerTypesWideWindow(t *testing.T) {
	cfg := func(types string) string {
		return `{"architectures": ["MistralForCausalLM"], "hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8,
	"num_key_value_heads": 4, "intermediate_size": 4096, "vocab_size": 1000, "max_position_embeddings": 4096,
	"sliding_window": 8192` + types + `}`
	}
	for _, tt := range []struct{ types, want string }{
		{`, "layer_types": ["full_attention"]`, "1 entries for 4 layers"},
		{`, "layer_types": ["full_attention", "x", "full_attention", "full_attention"]`, "unknown layer type x"},
	} {
		_, err := LoadHF(strings.NewReader(cfg(tt.types)), "w/config.json")
		if err == nil || !strings.Contains(err.Error(), "layer_types") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want one naming layer_types: %s", tt.types, err, tt.want)
		}
	}
	plain, err := LoadHF(strings.NewReader(cfg("")), "w/config.json")
	if err != nil {
		t.Fatal(err)
	}
	listed, err := LoadHF(strings.NewReader(cfg(`, "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"]`)), "w/config.json")
	if err != nil {
		t.Fatal(err)
	}
	if plain.Params() != listed.Params() || plain.KVBytesPerToken(model.BF16) != listed.KVBytesPerToken(model.BF16) {
		t.Errorf("listed layer types changed the model: %v against %v parameters, %v against %v KV bytes per token",
			listed.Params(), plain.Params(), listed.KVBytesPerToken(model.BF16), plain.KVBytesPerToken(model.BF16))
	}
}

// TestHF_quantizationNotApplied: a quantization_config perfsim does not
// apply (an AWQ 4-bit Llama) is warned about as such, naming the flag
// that prices it; it had been listed among "keys not read (none is known
// to change the cost)", which 4-bit weights do.
func TestHF_quantizationNotApplied(t *testing.T) {
	src := `{"architectures": ["LlamaForCausalLM"], "hidden_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8,
	"num_key_value_heads": 8, "intermediate_size": 4096, "vocab_size": 1000, "max_position_embeddings": 4096,
	"quantization_config": {"quant_method": "awq", "bits": 4}}`
	m, err := LoadHF(strings.NewReader(src), "q/config.json")
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, w := range m.Warnings() {
		all = append(all, w.Error())
	}
	text := strings.Join(all, "\n")
	if !strings.Contains(text, "quantization_config") || !strings.Contains(text, "--weights") || strings.Contains(text, "none is known to change the cost): quantization_config") {
		t.Errorf("warnings:\n%s", text)
	}
}

// TestHF_severalArchitectures: a config.json listing several different
// architectures is read as the first, and says so (it was silent).
func TestHF_severalArchitectures(t *testing.T) {
	src := `{"architectures": ["LlamaForCausalLM", "MistralForCausalLM"], "hidden_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8,
	"num_key_value_heads": 8, "intermediate_size": 4096, "vocab_size": 1000, "max_position_embeddings": 4096}`
	m, err := LoadHF(strings.NewReader(src), "a/config.json")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range m.Warnings() {
		found = found || strings.Contains(w.Error(), "architectures") && strings.Contains(w.Error(), "LlamaForCausalLM")
	}
	if !found {
		t.Errorf("no warning naming the architecture read: %v", m.Warnings())
	}
}

// TestHF_name: a config.json's model is named by its directory, any other
// JSON file by its own name; "_name_or_path" wins over both. Every file
// under testdata/hf/today had been named "today", their directory, so a
// sweep over two of them printed two rows named alike.
func TestHF_name(t *testing.T) {
	src := `{"architectures": ["LlamaForCausalLM"], %s"hidden_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8,
	"num_key_value_heads": 8, "intermediate_size": 4096, "vocab_size": 1000, "max_position_embeddings": 4096}`
	for _, tc := range []struct{ file, extra, want string }{
		{"models/llama-x/config.json", "", "llama-x"},
		{"models/llama-x/CONFIG.JSON", "", "llama-x"},
		{"today/phi-4.json", "", "phi-4"},
		{"phi-4.json", "", "phi-4"},
		{"config.json", "", "config"},
		{"today/phi-4.json", `"_name_or_path": "microsoft/phi-4", `, "microsoft/phi-4"},
	} {
		m, err := LoadHF(strings.NewReader(strings.Replace(src, "%s", tc.extra, 1)), tc.file)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if m.Name() != tc.want {
			t.Errorf("%s %s: name %q, want %q", tc.file, tc.extra, m.Name(), tc.want)
		}
	}
}

// TestHF_wideWindowWarned: a sliding_window at least the context long is
// priced as full attention, which is what such a window computes, and
// the loader says so in its warnings (issue 13: nothing that changes the
// cost is dropped silently; it had been read so without a word). A
// window shorter than the context, and one use_sliding_window turns off
// (Qwen2's 131072 over a 32k context), are not warned about.
func TestHF_wideWindowWarned(t *testing.T) {
	cfg := func(extra string) string {
		return `{"architectures": ["MistralForCausalLM"], "hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8,
	"num_key_value_heads": 4, "intermediate_size": 4096, "vocab_size": 1000, "max_position_embeddings": 4096` + extra + `}`
	}
	qwen := func(extra string) string {
		return strings.Replace(cfg(extra), "MistralForCausalLM", "Qwen2ForCausalLM", 1)
	}
	for _, tt := range []struct {
		name, src string
		want      string // "" for no window warning
	}{
		{"wider", cfg(`, "sliding_window": 8192`), "w/config.json: sliding_window: 8192 is not shorter than the context of 4096 tokens (max_position_embeddings): priced as full attention, which a window that long computes"},
		{"equal", cfg(`, "sliding_window": 4096`), "sliding_window: 4096 is not shorter than the context of 4096 tokens"},
		{"listed", cfg(`, "sliding_window": 8192, "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"]`), "sliding_window: 8192 is not shorter"},
		{"shorter", cfg(`, "sliding_window": 1024`), ""},
		{"off", qwen(`, "sliding_window": 131072, "use_sliding_window": false`), ""},
	} {
		m, err := LoadHF(strings.NewReader(tt.src), "w/config.json")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var got []string
		for _, w := range m.Warnings() {
			if strings.Contains(w.Error(), "sliding_window") {
				got = append(got, w.Error())
			}
		}
		switch {
		case tt.want == "" && len(got) > 0:
			t.Errorf("%s: warned %q", tt.name, got)
		case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want)):
			t.Errorf("%s: warnings %q, want one with %q", tt.name, got, tt.want)
		}
	}
}

// TestHF_nonPositiveSizes: a size the reader would default, or pass
// over, when 0 or less is an error at its line when the file gives it so
// (num_key_value_heads 0 had been read as multi-head attention, doubling
// the KV cache of Llama 3.1 8B without a word; head_dim 0 as
// hidden_size / heads; chunk_size 0 as 256); the Mamba-2 and window keys
// are named as the file names them (gpt-oss's sliding_window -1 had been
// 'window: must be positive' without a line), and a positive value is
// never said to be missing (num_local_experts 0 had made gpt-oss say
// 'intermediate_size: got 2880: want a positive size').
func TestHF_nonPositiveSizes(t *testing.T) {
	for _, tt := range []struct {
		file, key string
		value     any
		want      string
		not       string
	}{
		{"llama-3.1-8b.json", "num_key_value_heads", 0, "num_key_value_heads: got 0: want a positive size", ""},
		{"gemma-2-9b.json", "head_dim", 0, "head_dim: got 0: want a positive size", ""},
		{"mamba-codestral-7b.json", "chunk_size", 0, "chunk_size: got 0: want a positive size", ""},
		{"mamba-codestral-7b.json", "conv_kernel", -1, "conv_kernel: got -1: want a positive size", "ssm_conv"},
		{"nemotron-h-8b.json", "mamba_num_heads", -1, "mamba_num_heads: got -1: want a positive size", "ssm_heads"},
		{"gpt-oss-120b.json", "sliding_window", -1, "sliding_window: got -1: want a window of tokens", "window: must be positive"},
		{"gpt-oss-120b.json", "num_local_experts", 0, "num_local_experts: got 0: want a positive size", "got 2880"},
		{"qwen3-30b-a3b.json", "intermediate_size", -1, "intermediate_size: got -1: want a positive size", ""},
	} {
		src, err := os.ReadFile(filepath.Join("testdata", "hf", "today", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile(`("` + tt.key + `"\s*:\s*)[^,\n}]+`)
		if !re.Match(src) {
			t.Fatalf("%s has no %s", tt.file, tt.key)
		}
		b := re.ReplaceAll(src, []byte(fmt.Sprintf("${1}%v", tt.value)))
		_, err = LoadHF(bytes.NewReader(b), tt.file)
		if err == nil {
			t.Errorf("%s %s=%v: no error", tt.file, tt.key, tt.value)
			continue
		}
		if !regexp.MustCompile(regexp.QuoteMeta(tt.file) + `:\d+: ` + regexp.QuoteMeta(tt.want)).MatchString(err.Error()) {
			t.Errorf("%s %s=%v: error %q lacks %q at a line", tt.file, tt.key, tt.value, err, tt.want)
		}
		if tt.not != "" && strings.Contains(err.Error(), tt.not) {
			t.Errorf("%s %s=%v: error %q says %q", tt.file, tt.key, tt.value, err, tt.not)
		}
	}
}

// TestHF_notAnObject: a config.json that is not a JSON object says what
// it holds; it had said Go's "json: cannot unmarshal array into Go value
// of type map[string]interface {}", or a bare "EOF" for an empty file.
func TestHF_notAnObject(t *testing.T) {
	for _, tt := range []struct{ src, want string }{
		{"[1, 2]", "c.json: not a JSON object: it holds a JSON array"},
		{"", "c.json: not a JSON object: the file is empty or cut short"},
		{`{"hidden_size": `, "c.json: not a JSON object: the file is empty or cut short"},
	} {
		_, err := LoadHF(strings.NewReader(tt.src), "c.json")
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "interface") {
			t.Errorf("%q: error %v, want %q", tt.src, err, tt.want)
		}
	}
}
