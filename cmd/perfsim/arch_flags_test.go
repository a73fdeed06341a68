package main

import (
	"strings"
	"testing"
)

// TestSimulate_archFlags: an inference flag the model's architecture has
// no use for is refused (a CNN's --input, --output, --kv,
// --max-num-tokens, --attention; an encoder's --output, --kv,
// --max-num-tokens), and an encoder's scenario says its tokens and warns
// beyond its trained context. They had been ignored: resnet50 --attention
// fa2 even printed "FlashAttention-2", and bert-large ran 2048 tokens
// (its context is 512) without saying how many.
func TestSimulate_archFlags(t *testing.T) {
	for _, tt := range []struct {
		model string
		flags []string
	}{
		{"resnet50", []string{"--input", "100", "--output", "5", "--kv", "fp8", "--max-num-tokens", "100", "--attention", "fa2"}},
		{"vit-b16", []string{"--input", "100", "--output", "5"}},
		{"bert-large", []string{"--output", "5", "--kv", "fp8"}},
	} {
		_, stderr, code := perfsim(t, append([]string{"simulate", "--hw", "h100", "--model", tt.model}, tt.flags...)...)
		for i := 0; i < len(tt.flags); i += 2 {
			if code != 2 || !strings.Contains(stderr, tt.flags[i]+":") {
				t.Errorf("%s %v: exit %d, %s not named: %s", tt.model, tt.flags, code, tt.flags[i], stderr)
			}
		}
	}
	out, stderr, code := perfsim(t, "simulate", "--hw", "h100", "--model", "bert-large", "--input", "1024")
	if code != 0 || !strings.Contains(out, "1024 tokens") || !strings.Contains(stderr, "trained context of 512") {
		t.Errorf("bert-large --input 1024: exit %d:\n%s%s", code, out, stderr)
	}
}
