package workloads

import (
	"strings"
	"testing"
)

// TestLoadHF_nonFiniteAndOnce: a size written as NaN or Infinity (which
// Python's json writes, read as null) is an error at its key: read as
// null it had taken the key's default without a word ("hidden_size": NaN
// read "missing", "num_key_value_heads": -Infinity as one KV head per
// head); and a size reported at its config.json key is not reported
// again at the model's ("hidden_size: want a whole number, got 4096.5"
// had come with "d_model: missing: want a positive size").
func TestLoadHF_nonFiniteAndOnce(t *testing.T) {
	const cfg = `{"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":4096,"intermediate_size":14336,` +
		`"num_attention_heads":32,"num_key_value_heads":8,"num_hidden_layers":32,"vocab_size":128256,"max_position_embeddings":8192,"rms_norm_eps":1e-5}`
	for _, tt := range []struct{ from, to, want string }{
		{`"hidden_size":4096`, `"hidden_size":NaN`, "c.json:1: hidden_size: want an integer, got NaN"},
		{`"num_key_value_heads":8`, `"num_key_value_heads":-Infinity`, "c.json:1: num_key_value_heads: want an integer, got -Infinity"},
		{`"hidden_size":4096`, `"hidden_size":4096.5`, "c.json:1: hidden_size: want a whole number, got 4096.5"},
		{`"hidden_size":4096`, `"hidden_size":1e30`, "c.json:1: hidden_size: 1e30 is over the limit"},
	} {
		src := strings.Replace(cfg, tt.from, tt.to, 1)
		_, err := LoadHF(strings.NewReader(src), "c.json")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.to, err, tt.want)
			continue
		}
		if n := strings.Count(err.Error(), "\n") + 1; n != 1 {
			t.Errorf("%s: %d problems, want 1:\n%v", tt.to, n, err)
		}
	}
	// A list's non-finite value (Mamba-2's time_step_limit) is still read.
	if _, err := LoadHF(strings.NewReader(strings.Replace(cfg, `"rms_norm_eps":1e-5`, `"rms_norm_eps":1e-5,"time_step_limit":[0.0,Infinity]`, 1)), "c.json"); err != nil {
		t.Errorf("time_step_limit [0, Infinity]: %v", err)
	}
}
