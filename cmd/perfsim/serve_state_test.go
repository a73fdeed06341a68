package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestServe_stateTokens: a hybrid model's table and JSON say what one
// running sequence's fixed state takes of the KV cache (nemotron-h-8b
// at TP 2 under SGLang: 24.7 MiB of state per device at 8 KiB per token
// of attention KV, 3,162 tokens); a model of attention alone says
// nothing new.
func TestServe_stateTokens(t *testing.T) {
	for _, c := range []struct {
		model string
		want  int
	}{{"nemotron-h-8b", 3162}, {"llama3-8b", 0}} {
		args := []string{"serve", "--hw", "h100", "--model", c.model, "--tp", "2", "--engine", "sglang", "--requests", "50", "--rate", "5", "--input", "512", "--output", "64"}
		out, errOut, code := perfsim(t, append(args, "--format", "json")...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.model, code, errOut)
		}
		var j struct {
			State *int `json:"kv_state_tokens_per_sequence"`
		}
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatal(err)
		}
		got := 0
		if j.State != nil {
			got = *j.State
		}
		if got != c.want || (c.want == 0) != (j.State == nil) {
			t.Errorf("%s: kv_state_tokens_per_sequence %v, want %d", c.model, got, c.want)
		}
		table, _, _ := perfsim(t, args...)
		if said := strings.Contains(table, "each running sequence's state takes"); said != (c.want > 0) {
			t.Errorf("%s: the table says the state per sequence: %v, want %v:\n%s", c.model, said, c.want > 0, table)
		}
	}
}
