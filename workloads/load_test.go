package workloads

// Loading models: catalog names, model directories, HF config.json and
// model TOML files, and the errors of bad ones.

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHF(t *testing.T) {
	tests := []struct {
		file   string
		params float64
		source string
	}{
		{"llama2-7b.json", 6738415616, "as the catalog"},
		{"mistral-7b.json", 7241732096, "HF mistralai/Mistral-7B-v0.1 safetensors total"},
		{"mixtral-8x7b.json", 46702792704, "as the catalog"},
		{"qwen2-7b.json", 7615616512, "HF Qwen/Qwen2-7B safetensors total"},
		{"gpt2.json", 124439808, "HF openai-community/gpt2"},
		{"pythia-160m.json", 162322944, "Biderman et al. 2023, Pythia, Table 1 total parameters"},
		{"gemma-2b.json", 2506172416, "HF google/gemma-2b safetensors total"},
		{"bert-large.json", 335141888, "as the catalog (BertModel with pooler)"},
		{"bert-base-mlm.json", 109514298, "HF google-bert/bert-base-uncased BertForMaskedLM"},
		{"vit-base.json", 86389248, "HF google/vit-base-patch16-224-in21k ViTModel with pooler"},
	}
	for _, tt := range tests {
		m, err := Resolve(filepath.Join("testdata", "hf", tt.file))
		if err != nil {
			t.Errorf("%s: %v", tt.file, err)
			continue
		}
		if m.Params() != tt.params {
			t.Errorf("%s: Params() = %.0f, want %.0f (%s)", tt.file, m.Params(), tt.params, tt.source)
		}
	}
	_, err := Resolve(filepath.Join("testdata", "hf", "t5.json"))
	if !errors.Is(err, ErrUnsupportedArchitecture) || !strings.Contains(err.Error(), "T5ForConditionalGeneration") || !strings.Contains(err.Error(), "LlamaForCausalLM") {
		t.Errorf("t5: err = %v, want unsupported architecture naming it and the supported ones", err)
	}
	// Missing sizes are named by the config.json keys this architecture
	// reads (GPT-2's n_layer, n_embd), not by the TOML schema's.
	_, err = Resolve(filepath.Join("testdata", "hf", "missing-sizes.json"))
	for _, want := range []string{"missing-sizes.json: n_layer: missing", "missing-sizes.json: n_embd: missing", "missing-sizes.json: n_head: missing"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing-sizes.json: err = %v, want it to contain %q", err, want)
		}
	}
	_, err = Resolve(filepath.Join("testdata", "hf", "bad-sizes.json"))
	for _, want := range []string{"num_hidden_layers: want an integer, got the string \"thirty-two\"", "intermediate_size", "num_key_value_heads", "bad-sizes.json:"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bad-sizes.json: err = %v, want it to mention %q", err, want)
		}
	}
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		file string
		want []string
	}{
		{"transformer.toml", []string{
			"transformer.toml:3: layers: must be positive", "d_model: 1000 is not divisible by heads 16",
			"transformer.toml:6: kv_heads: heads 16 is not divisible by kv_heads 5", "norm: unknown norm \"batchnorm\"",
			"activation: unknown activation \"swish\"", "top_k: 8 is more than experts 4"}},
		{"cnn.toml", []string{
			"cnn.toml:11: layer[0].stride: must be positive, got 0", "layer[1].kernel: 11 (dilation 1) is larger than the padded input 6x6",
			"layer[2].groups: 5 does not divide the 16 input channels", "layer[2].activation: unknown activation \"swishy\"",
			"layer[3].from: no earlier layer is named \"nowhere\""}},
		{"unknown-key.toml", []string{"unknown-key.toml:9: hiden_size: unknown key"}},
		{"too-large.toml", []string{"over the limit", "too large"}},
		{"overflow.toml", []string{"d_model", "too large"}},
		{"missing-sizes.toml", []string{"missing-sizes.toml: layers: missing", "missing-sizes.toml: d_model: missing",
			"missing-sizes.toml: ffn: missing", "missing-sizes.toml: vocab: missing"}},
		{"wrong-types.toml", []string{
			`wrong-types.toml:3: kind: want a string, found the integer 3`,
			`wrong-types.toml:4: layers: want an integer, found the string "2"`,
			`wrong-types.toml:10: bias: want true or false, found the string "yes"`}},
	}
	for _, tt := range tests {
		_, err := Resolve(filepath.Join("testdata", "bad", tt.file))
		if err == nil {
			t.Errorf("%s: no error", tt.file)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error\n%v\nlacks %q", tt.file, err, w)
			}
		}
	}
	if _, err := Resolve("no-such-model"); !errors.Is(err, ErrUnknownModel) || !strings.Contains(err.Error(), "llama3-8b") {
		t.Errorf("Resolve(no-such-model) = %v, want ErrUnknownModel listing the catalog", err)
	}
}

func TestResolve_dirAndSuggestion(t *testing.T) {
	hf := t.TempDir()
	src, err := os.ReadFile("testdata/hf/llama2-7b.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hf, "config.json"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := LoadFile("testdata/hf/llama2-7b.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Resolve(hf)
	if err != nil {
		t.Fatalf("Resolve(a model directory): %v", err)
	}
	if got.Params() != want.Params() || got.Shape() != want.Shape() {
		t.Errorf("the directory gives %v parameters, its config.json %v", got.Params(), want.Params())
	}
	empty := t.TempDir()
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "model.safetensors"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A config.json that is a directory had read "has no config.json
	// (it holds config.json)".
	dirCfg := t.TempDir()
	if err := os.Mkdir(filepath.Join(dirCfg, "config.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		arg, want string
	}{
		{empty, "is empty"},
		{other, "has no config.json (it holds model.safetensors)"},
		{dirCfg, "its config.json is a directory, not a file"},
		{"lama3-8b", `did you mean "llama3-8b"?`},
		{"llama-3-70b", `did you mean "llama3-70b"?`},
		{"quantum-9000", "not in the catalog"},
	} {
		_, err := Resolve(tc.arg)
		if err == nil || !errors.Is(err, ErrUnknownModel) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Resolve(%q) = %v, want an ErrUnknownModel saying %q", tc.arg, err, tc.want)
		}
	}
}

// TestLoad_typesAndValues: a key of the wrong type (vocab = 1e308, a
// float) is reported with the other keys' value errors, not instead of
// them: every problem at once.
func TestLoad_typesAndValues(t *testing.T) {
	_, err := Resolve(filepath.Join("testdata", "bad", "types-and-values.toml"))
	for _, want := range []string{
		"types-and-values.toml:10: vocab: want an integer, found the float 1e+308",
		"types-and-values.toml:5: layers: got 0: want a positive size",
		"types-and-values.toml:9: ffn: must be positive, got -1",
		"types-and-values.toml:12: norm: unknown norm",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error\n%v\nlacks %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "vocab: missing") {
		t.Errorf("the wrongly typed key is also reported missing:\n%v", err)
	}
}

// TestLoad_zeroAndDerived: a size written as 0 is said as given, at its
// line ("layers: missing" had been said of `layers = 0`), and a negative
// ffn that an MoE model's expert_ffn defaults to is reported once, at
// ffn's line (it had also been blamed on expert_ffn, a key not in the
// file, with no line).
func TestLoad_zeroAndDerived(t *testing.T) {
	src := `name = "x"
kind = "decoder"
layers = 0
d_model = 1024
heads = 8
ffn = -3
vocab = 1000
experts = 8
top_k = 2
`
	_, err := Load(strings.NewReader(src), "z.toml")
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{"z.toml:3: layers: got 0: want a positive size", "z.toml:6: ffn: must be positive, got -3"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	for _, not := range []string{"layers: missing", "expert_ffn"} {
		if strings.Contains(msg, not) {
			t.Errorf("error %q says %q", msg, not)
		}
	}
}

// TestLoad_unknownLayerKeys: an unknown key in a [[layer]] names its
// layer and line; two layers' unknown keys had both been put at the
// first one's line, each as "layer.bogus".
func TestLoad_unknownLayerKeys(t *testing.T) {
	src := `name = "c"
kind = "cnn"
image_size = 8
channels = 3

[[layer]]
name = "c1"
op = "conv"
out = 4
kernel = 3
padding = 1

[[layer]]
name = "c2"
op = "conv"
out = 4
kernel = 3
padding = 1
bogus = 1

[[layer]]
name = "c3"
op = "conv"
out = 4
kernel = 3
padding = 1
bogus = 2
`
	_, err := Load(strings.NewReader(src), "u.toml")
	for _, want := range []string{"u.toml:19: layer[1].bogus: unknown key", "u.toml:27: layer[2].bogus: unknown key"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}
