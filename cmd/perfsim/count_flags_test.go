package main

import (
	"strings"
	"testing"
)

// TestCountSuffixes_everywhere: the token counts simulate reads with a
// suffix (--input 128k) are read the same way by sweep's lists, maxmodel,
// sensitivity and gemms, which had answered "1k" with 'must be an
// integer' or 'is not a whole number'.
func TestCountSuffixes_everywhere(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "--hw", "h100", "--model", "llama3-8b", "--input", "1k,2Ki", "--format", "csv"}, ",2048,128,"},
		{[]string{"sweep", "--hw", "h100", "--model", "llama3-8b", "--input", "1k..4kx2", "--format", "csv"}, ",4000,128,"},
		{[]string{"maxmodel", "--hw", "h100", "--mode", "inference", "--input", "4k", "--output", "1k"}, "4000 tokens in and 1000 out"},
		{[]string{"maxmodel", "--hw", "h100", "--seq", "4Ki"}, "× 4096 tokens"},
		{[]string{"sensitivity", "--hw", "h100", "--model", "llama3-8b", "--input", "1k", "--output", "64"}, "1000 tokens in"},
		{[]string{"gemms", "--model", "llama3-8b", "--seq", "1k"}, "seq 1000"},
	} {
		out, stderr, code := perfsim(t, tt.args...)
		if code != 0 || !strings.Contains(out, tt.want) {
			t.Errorf("%v: exit %d, output lacks %q: %s%s", tt.args, code, tt.want, firstLines(out, 3), stderr)
		}
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
