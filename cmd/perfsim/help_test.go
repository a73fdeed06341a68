package main

import (
	"sort"
	"strings"
	"testing"
)

// TestHelp_everyCommand: "perfsim CMD --help" and "perfsim help CMD"
// print the command's usage and exit 0 for every command, as pflag's
// help does; none reports the help request as an error (sensitivity
// did: "perfsim: sensitivity: pflag: help requested", exit 2).
func TestHelp_everyCommand(t *testing.T) {
	var names []string
	for name := range commands() {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, args := range [][]string{{name, "--help"}, {"help", name}} {
			out, stderr, code := perfsim(t, args...)
			if code != 0 {
				t.Errorf("%v: exit %d, want 0: %s", args, code, stderr)
			}
			if all := out + stderr; !strings.Contains(all, "Usage") || strings.Contains(all, "help requested") {
				t.Errorf("%v: no usage, or the help request reported as an error:\n%s", args, all)
			}
		}
	}
}

// TestSensitivity_flags: a positional argument is refused rather than
// ignored, and every flag problem is reported at once.
func TestSensitivity_flags(t *testing.T) {
	_, stderr, code := perfsim(t, "sensitivity", "--hw", "h100", "--model", "llama3-8b", "extra")
	if code != 2 || !strings.Contains(stderr, `unexpected argument "extra"`) {
		t.Errorf("positional argument: exit %d: %s", code, stderr)
	}
	_, stderr, code = perfsim(t, "sensitivity", "--hw", "h100", "--model", "llama3-8b", "--step", "0", "--slo-tpot", "0s")
	if code != 2 || !strings.Contains(stderr, "--step") || !strings.Contains(stderr, "--slo-tpot") {
		t.Errorf("two bad flags: exit %d, want both named: %s", code, stderr)
	}
}
