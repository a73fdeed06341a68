package main

import (
	"strings"
	"testing"
)

// TestGPUCount: tables say "1 GPU", not "1 GPUs" (serve's layout line,
// plan serve's best and --max-rate deployment lines).
func TestGPUCount(t *testing.T) {
	for n, want := range map[int]string{1: "1 GPU", 2: "2 GPUs", 16: "16 GPUs"} {
		if got := gpuCount(n); got != want {
			t.Errorf("gpuCount(%d) = %q, want %q", n, got, want)
		}
	}
	out, _, code := perfsim(t, "serve", "--hw", "h100", "--model", "llama3-8b", "--input", "256", "--output", "16", "--requests", "20", "--rate", "5")
	if code != 0 || !strings.Contains(out, "tp 1 × pp 1 × dp 1 = 1 GPU\n") {
		t.Errorf("serve's layout line: %s", out)
	}
}
