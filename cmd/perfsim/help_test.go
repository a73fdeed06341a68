package main

import (
	"os"
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

// TestHelp_commandColumn: "perfsim help" lists every command with its
// summary starting in one column, the longest name's width plus two
// (sensitivity, 11 letters, had overrun the 10-wide column and run into
// its summary: "sensitivity how TTFT ...").
func TestHelp_commandColumn(t *testing.T) {
	out, _, code := perfsim(t, "help")
	if code != 0 {
		t.Fatalf("perfsim help: exit %d", code)
	}
	cmds := commands()
	col := -1
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || !strings.HasPrefix(line, "  ") {
			continue
		}
		c, ok := cmds[fields[0]]
		if !ok {
			continue
		}
		at := strings.Index(line, c.summary)
		if at < 0 || strings.TrimSpace(line[:at]) != fields[0] || !strings.HasSuffix(line[:at], "  ") {
			t.Errorf("%q: the summary is not set off by two spaces or more", line)
		}
		if col >= 0 && at != col {
			t.Errorf("%q: summary at column %d, others at %d", line, at, col)
		}
		col = at
	}
	if col < 0 {
		t.Fatalf("perfsim help lists no command:\n%s", out)
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

// TestDocGo_everyCommand: the package comment of cmd/perfsim (doc.go,
// what go doc shows) lists every command perfsim has; it had listed 9 of
// 14 (no serve, plan, sensitivity, mlperf or completion).
func TestDocGo_everyCommand(t *testing.T) {
	data, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(strings.TrimPrefix(line, "//\t")); strings.HasPrefix(line, "//\t") && len(f) > 1 {
			listed[f[0]] = true
		}
	}
	for name := range commands() {
		if !listed[name] {
			t.Errorf("doc.go does not list the command %q", name)
		}
	}
}

// TestSetFlag_clockKeepsPeaks: --set's help says that clock and
// compute_units leave the matrix peaks as they are (they change the
// per-unit rates and times a kernel reads): --set clock=0.99GHz on an
// H100, half its clock, slows a bf16 prefill by 2.8%, not by half, and
// nothing had said why.
func TestSetFlag_clockKeepsPeaks(t *testing.T) {
	out, stderr, _ := perfsim(t, "simulate", "--help")
	if help := out + stderr; !strings.Contains(help, "clock and compute_units keep the peaks") {
		t.Errorf("simulate --help: --set does not say clock and compute_units keep the peaks:\n%s", help)
	}
}
