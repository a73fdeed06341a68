package main

import (
	"strings"
	"testing"
)

// TestNotFit_trainingHint: a training run that does not fit is told what
// would help and is not in force already: ZeRO shards only over the
// data-parallel (and context-parallel) ranks, so at --dp 1 it needs
// --dp; a setting already given is not suggested again. It had said "try
// --zero 3, --recompute full or more devices" to a run on one H100 with
// --zero 3 --recompute full.
func TestNotFit_trainingHint(t *testing.T) {
	base := []string{"simulate", "--hw", "h100", "--model", "llama3-8b", "--mode", "training", "--seq", "2048", "--global-batch", "1"}
	for _, tc := range []struct {
		extra     []string
		want, not []string
	}{
		{nil, []string{"--dp with --zero 3", "--recompute full", "more devices"}, nil},
		{[]string{"--zero", "3", "--recompute", "full"}, []string{"--dp with --zero 3", "more devices"}, []string{"--recompute full", "try --zero 3"}},
		{[]string{"--recompute", "full"}, []string{"--dp with --zero 3"}, []string{"--recompute full"}},
	} {
		_, stderr, code := perfsim(t, append(append([]string(nil), base...), tc.extra...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.extra, code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: %q lacks %q", tc.extra, stderr, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(stderr, n) {
				t.Errorf("%v: %q suggests %q, already in force", tc.extra, stderr, n)
			}
		}
	}
	// Everything in force: only more devices.
	_, stderr, _ := perfsim(t, "simulate", "--system", "dgx-h100", "--model", "llama3.1-405b", "--mode", "training", "--seq", "4096", "--dp", "2", "--zero", "3", "--recompute", "full", "--global-batch", "2")
	if !strings.Contains(stderr, "; try more devices;") {
		t.Errorf("zero 3 at dp 2, full recomputation: %q, want only more devices suggested", stderr)
	}
	// With data parallelism, --zero 3 alone is the way.
	_, stderr, _ = perfsim(t, "simulate", "--system", "dgx-h100", "--model", "llama3-70b", "--mode", "training", "--seq", "4096", "--dp", "8", "--global-batch", "8")
	if !strings.Contains(stderr, "try --zero 3,") {
		t.Errorf("dp 8: %q, want --zero 3 suggested", stderr)
	}
}
