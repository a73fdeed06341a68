package main

import (
	"strings"
	"testing"
)

// TestSimulate_dropoutUnfused: --dropout and --unfused-attention reach the
// training step (slower), its JSON, CSV and table say them, and each is
// refused where it would price nothing, naming its flag.
func TestSimulate_dropoutUnfused(t *testing.T) {
	base := []string{"simulate", "--hw", "a100", "--model", "gpt3-2.7b", "--mode", "training", "--seq", "2048", "--global-batch", "2"}
	step := func(extra ...string) string {
		out, stderr, code := perfsim(t, append(append(append([]string(nil), base...), extra...), "--format", "json")...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, stderr)
		}
		return out
	}
	plain, set := step(), step("--dropout", "0.1", "--unfused-attention")
	for _, k := range []string{`"dropout": 0.1`, `"unfused_attention": true`} {
		if !strings.Contains(set, k) || strings.Contains(plain, k) {
			t.Errorf("%s: want it in the JSON with the flags only", k)
		}
	}
	if stepOf(t, set) <= stepOf(t, plain) {
		t.Errorf("step with dropout and the unfused core %v, without %v: want slower", stepOf(t, set), stepOf(t, plain))
	}
	out, _, _ := perfsim(t, append(append([]string(nil), base...), "--dropout", "0.1", "--unfused-attention")...)
	if !strings.Contains(out, "unfused attention, dropout 0.1") {
		t.Errorf("the table does not say the settings:\n%s", out)
	}
	csv, _, _ := perfsim(t, append(append([]string(nil), base...), "--dropout", "0.1", "--unfused-attention", "--format", "csv")...)
	if !strings.Contains(csv, "dropout") || !strings.Contains(csv, "unfused_attention") {
		t.Errorf("the CSV does not say the settings:\n%s", csv)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"simulate", "--hw", "a100", "--model", "gpt3-2.7b", "--dropout", "0.1"}, "--dropout: only for --mode training"},
		{[]string{"simulate", "--hw", "a100", "--model", "gpt3-2.7b", "--unfused-attention"}, "--unfused-attention: only for --mode training"},
		{append(append([]string(nil), base...), "--dropout", "1"), "--dropout: want a probability"},
		{append(append([]string(nil), base...), "--dropout", "NaN"), "--dropout: want a probability"},
		{[]string{"simulate", "--hw", "a100", "--model", "resnet50", "--mode", "training", "--unfused-attention"}, "--unfused-attention: prices a transformer's training step"},
	} {
		_, stderr, code := perfsim(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", tc.args[4:], code, stderr, tc.want)
		}
	}
}
