package main

import (
	"strings"
	"testing"
)

// TestServe_explicitZero: an explicitly given --kv-tokens 0 or
// --scheduler-steps 0 is a usage error naming the flag, not a silent
// "the default" (the default is what leaving the flag out means).
func TestServe_explicitZero(t *testing.T) {
	base := []string{"serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "1", "--requests", "20"}
	for _, flag := range []string{"--kv-tokens", "--scheduler-steps"} {
		_, errOut, code := perfsim(t, append(append([]string{}, base...), flag, "0")...)
		if code != 2 || !strings.Contains(errOut, flag) {
			t.Errorf("%s 0: exit %d, stderr %q; want exit 2 naming %s", flag, code, errOut, flag)
		}
	}
}
