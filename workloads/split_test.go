package workloads

import (
	"errors"
	"testing"
)

// TestSplitError checks that Ops returns a *SplitError, found with
// errors.As, for a dimension tensor parallelism does not split, and none
// for other bad input (an EP that does not divide the experts, a batch of
// zero), the phase's message unchanged.
func TestSplitError(t *testing.T) {
	dense := mustResolve(t, "llama3-70b")
	moe := mustResolve(t, "deepseek-v3")
	for _, tc := range []struct {
		name  string
		m     *Model
		ph    Phase
		split *SplitError // the first SplitError; nil: none
		msg   string
	}{
		{"heads", dense, Phase{Kind: Prefill, Batch: 1, Seq: 8, TP: 128},
			&SplitError{Field: "heads", Size: 64, TP: 128},
			"workloads: llama3-70b prefill: 128 does not divide heads (tp) 64"},
		{"heads, kv_heads and ffn", dense, Phase{Kind: Prefill, Batch: 1, Seq: 8, TP: 3},
			&SplitError{Field: "heads", Size: 64, TP: 3},
			"workloads: llama3-70b prefill: 3 does not divide heads (tp) 64; tp 3 neither divides the 8 kv_heads nor is a multiple of them (to replicate them); 3 does not divide ffn (tp) 28672"},
		{"batch and tp", dense, Phase{Kind: Decode, Batch: 0, Context: 8, TP: 128},
			&SplitError{Field: "heads", Size: 64, TP: 128},
			"workloads: llama3-70b decode: batch 0 must be positive; 128 does not divide heads (tp) 64"},
		{"ep not a split", moe, Phase{Kind: Prefill, Batch: 1, Seq: 8, EP: 3},
			nil, "workloads: deepseek-v3 prefill: 3 does not divide experts (ep) 256"},
		{"batch zero", dense, Phase{Kind: Prefill, Batch: 0, Seq: 8},
			nil, "workloads: llama3-70b prefill: batch 0 must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.m.Ops(tc.ph)
			if err == nil {
				t.Fatal("Ops: no error")
			}
			if err.Error() != tc.msg {
				t.Errorf("error:\n got %q\nwant %q", err, tc.msg)
			}
			var se *SplitError
			found := errors.As(err, &se)
			switch {
			case tc.split == nil && found:
				t.Errorf("errors.As found %+v, want no SplitError", *se)
			case tc.split != nil && !found:
				t.Errorf("errors.As found no SplitError, want %+v", *tc.split)
			case found && (se.Field != tc.split.Field || se.Size != tc.split.Size || se.TP != tc.split.TP):
				t.Errorf("SplitError{%q, %d, %d}, want {%q, %d, %d}", se.Field, se.Size, se.TP, tc.split.Field, tc.split.Size, tc.split.TP)
			}
		})
	}
}
