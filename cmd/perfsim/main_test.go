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
