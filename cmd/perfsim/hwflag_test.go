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
// --system's named its); a bad input file, a hardware file whose base is
// unknown among them, is a usage error too (exit 2, as a bad --trace or
// length file is), said at its file:line:key, with the package's prefix
// once; a positional device (hardware show) names no flag.
func TestUnknownNameNamesFlag(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	d1 := write("d1.toml", "base = \"h999\"\n")
	d2 := write("d2.toml", "base = \"h100\"\n[memory]\ncapacity = \"80\"\n")
	s1 := write("s1.toml", "source = \"assumed\"\ndevice = \"h999\"\n")
	s2 := write("s2.toml", "source = \"assumed\"\ndevice = \"d1.toml\"\n")
	m1 := write("m1.toml", "name = \"x\"\nkind = \"decoder\"\n")
	p1 := write("p1.toml", "[[price]]\nhardware = \"h100\"\nhourly = \"2.5\"\nsource = \"assumed\"\ndate = \"2026-11-26\"\n")
	bad := filepath.Join("..", "..", "hardware", "testdata", "bad", "negative.toml")
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
		{[]string{"hardware", "show", "h1000"}, 2, "perfsim: hardware: unknown device \"h1000\" (did you mean \"h100\"?)"},
		// A derived file's unknown base (it exited 1), and every other
		// bad input file, through every command that reads one.
		{[]string{"simulate", "--hw", d1, "--model", "llama3-8b"}, 2, "perfsim: hardware: " + d1 + ":1: base: unknown device \"h999\""},
		{[]string{"hardware", "show", d1}, 2, "perfsim: hardware: " + d1 + ":1: base: unknown device \"h999\""},
		{[]string{"serve", "--hw", d1, "--model", "llama3-8b", "--rate", "1"}, 2, "perfsim: hardware: " + d1 + ":1: base: unknown device \"h999\""},
		{[]string{"sweep", "--hw", "h100," + d1, "--model", "llama3-8b"}, 2, "perfsim: hardware: " + d1 + ":1: base: unknown device \"h999\""},
		{[]string{"calibrate", "merge", "--hw", d1, "-o", filepath.Join(dir, "x.toml")}, 2, "perfsim: hardware: " + d1 + ":1: base: unknown device \"h999\""},
		{[]string{"simulate", "--hw", d2, "--model", "llama3-8b"}, 2, "perfsim: hardware: " + d2 + ":3: memory.capacity: \"80\" is not a size in bytes"},
		{[]string{"simulate", "--hw", bad, "--model", "llama3-8b"}, 2, "perfsim: hardware: " + bad},
		{[]string{"simulate", "--hw", filepath.Join(dir, "none.toml"), "--model", "llama3-8b"}, 2, "perfsim: --hw: hardware: open " + filepath.Join(dir, "none.toml")},
		// A system file naming an unknown device, or a device file with
		// problems of its own: each said once, at its own file:line:key
		// (they read "s1.toml:2: device: hardware: unknown device", and
		// "device: hardware: d1.toml:1: base: ...").
		{[]string{"simulate", "--hw", s1, "--model", "llama3-8b"}, 2, "perfsim: hardware: " + s1 + ":2: device: unknown device \"h999\""},
		{[]string{"simulate", "--hw", s2, "--model", "llama3-8b"}, 2, "perfsim: hardware: " + d1 + ":1: base: unknown device \"h999\""},
		{[]string{"simulate", "--hw", "h100", "--model", m1}, 2, "perfsim: workloads: " + m1},
		{[]string{"simulate", "--hw", "h100", "--model", filepath.Join(dir, "none.toml")}, 2, "perfsim: --model: workloads: open " + filepath.Join(dir, "none.toml")},
		{[]string{"simulate", "--hw", "h100", "--model", "llama3-8b", "--prices", p1}, 2, "perfsim: price: " + p1 + ":3: price[1].hourly: \"2.5\" is not a price"},
		{[]string{"calibrate", "validate", "--hw", "h100", "--measurements", write("m.csv", "kernel,m\nfoo,1\n")}, 2, "perfsim: calibrate: " + filepath.Join(dir, "m.csv") + ":1: unknown measurements format"},
	} {
		_, stderr, code := perfsim(t, tt.args...)
		if code != tt.code || !strings.HasPrefix(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tt.args, code, stderr, tt.code, tt.want)
		}
		for _, line := range strings.Split(stderr, "\n") {
			for _, p := range []string{"hardware: ", "workloads: ", "price: ", "calibrate: "} {
				if strings.Count(line, p) > 1 {
					t.Errorf("%v: %q says %q twice", tt.args, line, p)
				}
			}
		}
	}
}

// TestSystemFlag_file: a file given to --system, which takes a catalog
// name, is said to be one, with the catalog's names, and simulate, whose
// --hw reads system files, says to give it there (it had said 'unknown
// system "my.toml"' and nothing of files).
func TestSystemFlag_file(t *testing.T) {
	for _, tt := range []struct {
		args []string
		hw   bool
	}{
		{[]string{"simulate", "--model", "llama3-8b", "--system", "my.toml"}, true},
		{[]string{"serve", "--model", "llama3-8b", "--rate", "1", "--system", "my.toml"}, false},
		{[]string{"mlperf", "--system", "my.toml"}, false},
	} {
		_, stderr, code := perfsim(t, tt.args...)
		if code != 2 || !strings.Contains(stderr, `--system: "my.toml" is a file`) || !strings.Contains(stderr, "dgx-h100") {
			t.Errorf("perfsim %v: exit %d, want 2 saying --system was given a file and naming the catalog:\n%s", tt.args, code, stderr)
		}
		if got := strings.Contains(stderr, "give a system file to --hw"); got != tt.hw {
			t.Errorf("perfsim %v: says to give the file to --hw: %v, want %v:\n%s", tt.args, got, tt.hw, stderr)
		}
	}
}
