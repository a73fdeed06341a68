package main

import (
	"strings"
	"testing"
)

// TestSimulate_attentionFlag: --attention fa2 prices FlashAttention-2 and
// says so on the scenario line; a kernel not known, or a device without a
// FlashAttention-2 measurement, is a usage error naming the flag.
func TestSimulate_attentionFlag(t *testing.T) {
	out, stderr, code := perfsim(t, "simulate", "--hw", "b200", "--model", "vit-l16", "--batch", "32", "--exec", "eager", "--attention", "fa2")
	if code != 0 || !strings.Contains(out, "; FlashAttention-2") {
		t.Errorf("exit %d, stderr %q; want the scenario line to name FlashAttention-2:\n%s", code, stderr, out)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--hw", "b200", "--attention", "fa3"}, `--attention: unknown attention kernel "fa3" (want engine or fa2)`},
		{[]string{"--hw", "a100", "--attention", "fa2"}, `--attention: no FlashAttention-2 measurement for A100 80GB SXM (measured: B200, H100 SXM)`},
	} {
		out, stderr, code := perfsim(t, append([]string{"simulate", "--model", "vit-l16"}, tt.args...)...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q (stdout %d bytes)", tt.args, code, stderr, tt.want, len(out))
		}
	}
}

// TestSimulate_attentionRecorded: every output says when FlashAttention-2
// priced the attention: an LLM's inference scenario line, the JSON
// scenario and the CSV's scenario rows; the default engine kernel adds
// nothing.
func TestSimulate_attentionRecorded(t *testing.T) {
	args := []string{"simulate", "--hw", "h100", "--model", "llama3-8b", "--input", "512", "--output", "16", "--attention", "fa2"}
	for _, tt := range []struct {
		format, want string
	}{
		{"table", "KV cache bf16; FlashAttention-2\n"},
		{"json", `"attention": "fa2"`},
		{"csv", "scenario.attention,fa2"},
	} {
		out, stderr, code := perfsim(t, append(args, "--format", tt.format)...)
		if code != 0 || !strings.Contains(out, tt.want) {
			t.Errorf("%s: exit %d, stderr %q; want %q in:\n%s", tt.format, code, stderr, tt.want, out)
		}
	}
	out, _, _ := perfsim(t, "simulate", "--hw", "h100", "--model", "llama3-8b", "--input", "512", "--output", "16", "--format", "json")
	if strings.Contains(out, `"attention": "`) {
		t.Errorf("the engine kernel is recorded:\n%s", out)
	}
}
