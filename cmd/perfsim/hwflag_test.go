package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnknownNameNamesFlag: an unknown --hw or --model name is a usage
// error that starts with the flag (it read "perfsim: hardware: unknown
// device" and "perfsim: workloads: unknown model", naming no flag, while
// --system's named its); a hardware file whose base is unknown is the
// file's problem, at its file:line:key, exit 1; a positional device
// (hardware show) names no flag.
func TestUnknownNameNamesFlag(t *testing.T) {
	dir := t.TempDir()
	d1 := filepath.Join(dir, "d1.toml")
	if err := os.WriteFile(d1, []byte("base = \"h999\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"simulate", "--hw", "h999", "--model", "llama3-8b"}, 2, "perfsim: --hw: hardware: unknown device \"h999\""},
		{[]string{"sweep", "--hw", "h100,h999", "--model", "llama3-8b"}, 2, "perfsim: --hw: hardware: unknown device \"h999\""},
		{[]string{"maxmodel", "--hw", "h999"}, 2, "perfsim: --hw: hardware: unknown device \"h999\""},
		{[]string{"calibrate", "merge", "--hw", "h999", "-o", filepath.Join(dir, "x.toml")}, 2, "perfsim: --hw: hardware: unknown device \"h999\""},
		{[]string{"simulate", "--hw", "h100", "--model", "nope"}, 2, "perfsim: --model: workloads: unknown model \"nope\""},
		{[]string{"sweep", "--hw", "h100", "--model", "llama3-8b,nope"}, 2, "perfsim: --model: workloads: unknown model \"nope\""},
		{[]string{"simulate", "--hw", d1, "--model", "llama3-8b"}, 1, "perfsim: hardware: " + d1 + ":1: base: unknown device \"h999\""},
		{[]string{"hardware", "show", "h1000"}, 2, "perfsim: hardware: unknown device \"h1000\" (did you mean \"h100\"?)"},
	} {
		_, stderr, code := perfsim(t, tt.args...)
		if code != tt.code || !strings.HasPrefix(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tt.args, code, stderr, tt.code, tt.want)
		}
	}
}
