package main

import (
	"strings"
	"testing"
)

// TestSimulate_tpSplitsMixers: a tensor-parallel degree that does not
// split a model's Mamba-2 heads is a --tp error, exit 2, as for attention
// heads: mamba2-2.7b (80 heads, no attention) at --tp 3 had run into the
// prefill and failed with exit 1, "sim: mamba2-2.7b prefill: workloads:
// mamba2-2.7b prefill: 3 does not divide ssm_heads (tp) 80".
func TestSimulate_tpSplitsMixers(t *testing.T) {
	for _, tt := range []struct {
		model, tp, want string
	}{
		{"mamba2-2.7b", "3", "--tp: tensor parallelism 3 does not divide the 80 Mamba-2 heads"},
		{"mamba2-2.7b", "32", "--tp: tensor parallelism 32 does not divide the 80 Mamba-2 heads"},
	} {
		_, stderr, code := perfsim(t, "simulate", "--hw", "h100", "--model", tt.model, "--tp", tt.tp)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%s --tp %s: exit %d, stderr %q; want 2 and %q", tt.model, tt.tp, code, stderr, tt.want)
		}
	}
}
