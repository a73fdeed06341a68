package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// perfsim runs the CLI in-process and returns stdout, stderr and the exit status.
func perfsim(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

// perfsimJSON runs the CLI in-process, fails the test unless it exits 0,
// decodes its stdout as JSON into v, and returns stdout.
func perfsimJSON(t *testing.T, v any, args ...string) string {
	t.Helper()
	out, errOut, code := perfsim(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return out
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/perfsim -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test ./cmd/perfsim -update rewrites it):\n%s", name, diff(string(want), got))
	}
}

// diff returns a line diff of want and got, short enough to read.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	n := max(len(w), len(g))
	shown := 0
	for i := 0; i < n && shown < 20; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			b.WriteString("line " + strconv.Itoa(i+1) + ":\n  want: " + wl + "\n  got:  " + gl + "\n")
			shown++
		}
	}
	return b.String()
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		args []string
		code int
	}{
		{nil, 2},
		{[]string{"nosuch"}, 2},
		{[]string{"help"}, 0},
		{[]string{"version"}, 0},
		{[]string{"version", "--help"}, 0},
		{[]string{"version", "--nosuchflag"}, 2},
		{[]string{"version", "extra"}, 2},
	}
	for _, tt := range tests {
		_, stderr, code := perfsim(t, tt.args...)
		if code != tt.code {
			t.Errorf("perfsim %v exited %d, want %d (stderr %q)", tt.args, code, tt.code, stderr)
		}
		if code != 0 && !strings.HasPrefix(stderr, "perfsim: ") && !strings.Contains(stderr, "Usage") {
			t.Errorf("perfsim %v: stderr %q lacks the perfsim: prefix", tt.args, stderr)
		}
	}
}

// TestFlags_everyProblemAtOnce: flag mistakes after the first are said
// too, each naming its flag, and the run exits 2 (pflag stops at the
// first: "--dtype fp9 --batch x --bogus" had said only --dtype). A help
// flag among them prints no usage; a flag's value that starts with "-"
// is not taken for a flag.
func TestFlags_everyProblemAtOnce(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"simulate", "--hw", "h100", "--model", "llama3-8b", "--dtype", "fp9", "--batch", "x", "--bogus", "--input=abc", "-o"},
			[]string{`"fp9" for "--dtype"`, `"x" for "--batch"`, "unknown flag: --bogus", `"abc" for "--input"`, "'o' in -o"}},
		{[]string{"serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "8x", "--help", "--ttft-slo", "1", "--tpot-slo"},
			[]string{`"8x" for "--rate"`, `"1" for "--ttft-slo"`, "needs an argument: --tpot-slo"}},
		{[]string{"plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--ttft-p99", "1", "--input", "-5", "--tpot-p99", "2"},
			[]string{`"1" for "--ttft-p99"`, `"2" for "--tpot-p99"`}},
	}
	for _, tt := range tests {
		out, stderr, code := perfsim(t, tt.args...)
		if code != 2 {
			t.Errorf("perfsim %v: exit %d, want 2", tt.args, code)
		}
		if out != "" || strings.Contains(stderr, "Usage") {
			t.Errorf("perfsim %v: printed usage or output:\n%s%s", tt.args, out, stderr)
		}
		for _, w := range tt.want {
			if strings.Count(stderr, w) != 1 {
				t.Errorf("perfsim %v: stderr says %q %d times, want once:\n%s", tt.args, w, strings.Count(stderr, w), stderr)
			}
		}
		if n := strings.Count(stderr, "\n"); n != len(tt.want)+1 {
			t.Errorf("perfsim %v: %d lines on stderr, want %d (a line a problem and the pointer to help):\n%s", tt.args, n, len(tt.want)+1, stderr)
		}
	}
}

// TestNames_everyProblemAtOnce: an unknown --hw (plan train: --system),
// an unknown --model and a bad flag are said together, as simulate says
// them (serve, plan serve, sensitivity and plan train had stopped at the
// first: a bad flag hid the names, and a bad --hw hid the --model).
func TestNames_everyProblemAtOnce(t *testing.T) {
	hw := `--hw: hardware: unknown device "h10"`
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"simulate", "--hw", "h10", "--model", "llama3-8", "--batch", "0"}, []string{hw, "--batch"}},
		{[]string{"serve", "--hw", "h10", "--model", "llama3-8", "--rate", "-1", "--engine", "vllm9"}, []string{hw, "--rate", "--engine"}},
		{[]string{"plan", "serve", "--hw", "h10", "--model", "llama3-8", "--rate", "1"}, []string{hw, "--ttft-p99"}},
		{[]string{"sensitivity", "--hw", "h10", "--model", "llama3-8", "--step", "5"}, []string{hw, "--step"}},
		{[]string{"plan", "train", "--system", "dgx-h10", "--model", "llama3-8", "--gpus", "0"}, []string{`--system: hardware: unknown system "dgx-h10"`, "--gpus"}},
	} {
		_, stderr, code := perfsim(t, tt.args...)
		if code != 2 {
			t.Errorf("perfsim %v: exit %d, want 2", tt.args, code)
		}
		for _, w := range append(tt.want, `--model: workloads: unknown model "llama3-8"`) {
			if !strings.Contains(stderr, "perfsim: "+w) {
				t.Errorf("perfsim %v: stderr lacks %q:\n%s", tt.args, w, stderr)
			}
		}
	}
}
