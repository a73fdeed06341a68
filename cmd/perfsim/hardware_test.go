package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestHardware_golden compares list and show, in every format, with the
// golden files in testdata/ (go test ./cmd/perfsim -update rewrites them).
func TestHardware_golden(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"hardware-list.table", []string{"hardware", "list"}},
		{"hardware-list.json", []string{"hardware", "list", "--format", "json"}},
		{"hardware-list.csv", []string{"hardware", "list", "--format=csv"}},
		{"hardware-show-h100.table", []string{"hardware", "show", "h100"}},
		{"hardware-show-h100.json", []string{"hardware", "show", "--format", "json", "H100"}},
		{"hardware-show-h100.csv", []string{"hardware", "show", "h100-sxm", "--format", "csv"}},
		{"hardware-show-mi300x.table", []string{"hardware", "show", "mi300x"}},
		{"hardware-show-user.table", []string{"hardware", "show", filepath.Join("testdata", "hardware-user.toml")}},
		{"hardware-show-user.json", []string{"hardware", "show", filepath.Join("testdata", "hardware-user.toml"), "--format", "json"}},
		{"hardware-show-user.csv", []string{"hardware", "show", filepath.Join("testdata", "hardware-user.toml"), "--format", "csv"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := perfsim(t, tt.args...)
			if code != 0 || stderr != "" {
				t.Fatalf("perfsim %v exited %d: %s", tt.args, code, stderr)
			}
			golden(t, tt.name, stdout)
			// Output is deterministic.
			again, _, _ := perfsim(t, tt.args...)
			if again != stdout {
				t.Errorf("perfsim %v gave different output on a second run", tt.args)
			}
		})
	}
}

// TestHardware_h100 checks the figures the issue names in the table.
func TestHardware_h100(t *testing.T) {
	stdout, _, _ := perfsim(t, "hardware", "show", "h100")
	for _, want := range []string{"989.5 TFLOP/s", "3.35 TB/s", "80 GB"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("hardware show h100 lacks %q", want)
		}
	}
	// The column width follows the longest key (fitted keys are long).
	if !regexp.MustCompile(`\nridge\.matrix\.bf16 +295\.4 FLOP/B`).MatchString(stdout) {
		t.Errorf("hardware show h100 lacks the bf16 ridge point, 295.4 FLOP/B")
	}
	list, _, _ := perfsim(t, "hardware", "list", "--format", "csv")
	if n := strings.Count(list, "\n") - 1; n < 24 {
		t.Errorf("hardware list has %d devices, want at least 24", n)
	}
}

// TestHardware_errors checks exit statuses and messages: a bad file is
// bad input (2; it was 1) with file:line on every line of stderr and no
// pointer to 'perfsim help'; a mistake in the call, a file that cannot be
// opened among them, is a usage error (2).
func TestHardware_errors(t *testing.T) {
	bad := func(name string) string { return filepath.Join("..", "..", "hardware", "testdata", "bad", name) }
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string // exact, or a prefix when it ends in "..."
	}{
		{"bare number", []string{"hardware", "show", bad("bare_number.toml")}, 2,
			"perfsim: hardware: " + bad("bare_number.toml") + `:12: memory.bandwidth: "3.35" is not a bandwidth: missing unit (expected "3.35 TB/s")` + "\n"},
		{"misspelt key", []string{"hardware", "show", bad("misspelt_key.toml")}, 2,
			"perfsim: hardware: " + bad("misspelt_key.toml") + `:10: missing required key "memory.bandwidth"` + "\n" +
				"perfsim: hardware: " + bad("misspelt_key.toml") + `:12: unknown key "memory.bandwith" (did you mean "memory.bandwidth"?)` + "\n"},
		{"not toml", []string{"hardware", "show", bad("not_toml.toml")}, 2,
			"perfsim: hardware: " + bad("not_toml.toml") + ":1: not valid TOML: expected '.' or '=', but got 'i' instead\n"},
		{"missing file", []string{"hardware", "show", "nosuch.toml"}, 2, "perfsim: hardware: open nosuch.toml: no such file or directory\nperfsim: run 'perfsim help' for usage\n"},
		{"unknown device", []string{"hardware", "show", "h1000"}, 2, "perfsim: hardware: unknown device \"h1000\" (did you mean \"h100\"?)\n..."},
		{"far from any device", []string{"hardware", "show", "zzzzzz"}, 2, "perfsim: hardware: unknown device \"zzzzzz\": not in the catalog (v100-sxm2-32gb, a100-sxm-40gb, ..."},
		{"no subcommand", []string{"hardware"}, 2, "perfsim: hardware: give a subcommand: list or show NAME|FILE\n..."},
		{"unknown subcommand", []string{"hardware", "lsit"}, 2, "perfsim: hardware: unknown subcommand \"lsit\" (want list or show)\n..."},
		{"show without device", []string{"hardware", "show"}, 2, "perfsim: hardware show takes one device (a catalog name or a .toml file), got 0 arguments\n..."},
		{"list with argument", []string{"hardware", "list", "h100"}, 2, "perfsim: hardware list takes no arguments, got [\"h100\"]\n..."},
		{"bad format", []string{"hardware", "list", "--format", "xml"}, 2, "perfsim: --format: unknown format \"xml\" (want table, json or csv)\n..."},
		{"bad flag", []string{"hardware", "list", "--nosuch"}, 2, "perfsim: unknown flag: --nosuch\n..."},
		{"help", []string{"hardware", "--help"}, 0, "Usage: perfsim hardware list [--format table|json|csv]\n..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := perfsim(t, tt.args...)
			if code != tt.code {
				t.Errorf("perfsim %v exited %d, want %d; stderr:\n%s", tt.args, code, tt.code, stderr)
			}
			if code != 0 && stdout != "" {
				t.Errorf("perfsim %v wrote to stdout on failure: %q", tt.args, stdout)
			}
			if prefix, ok := strings.CutSuffix(tt.stderr, "..."); ok {
				if !strings.HasPrefix(stderr, prefix) {
					t.Errorf("perfsim %v stderr:\n%s\nwant it to begin:\n%s", tt.args, stderr, prefix)
				}
			} else if stderr != tt.stderr {
				t.Errorf("perfsim %v stderr:\n%s\nwant:\n%s", tt.args, stderr, tt.stderr)
			}
		})
	}
}

// TestHardware_everyBadFile checks that every bad hardware file fails
// with exit status 2 (bad input; it was 1) and a perfsim:-prefixed
// message naming the file on every line of stderr.
func TestHardware_everyBadFile(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "hardware", "testdata", "bad", "*.toml"))
	if err != nil || len(files) < 12 {
		t.Fatalf("found %d bad files (%v)", len(files), err)
	}
	for _, f := range files {
		stdout, stderr, code := perfsim(t, "hardware", "show", f)
		if code != 2 || stdout != "" {
			t.Errorf("hardware show %s exited %d with stdout %q, want 2 and none", f, code, stdout)
		}
		for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
			if !strings.HasPrefix(line, "perfsim: hardware: "+f) {
				t.Errorf("hardware show %s: stderr line %q lacks the prefix and file", f, line)
			}
		}
	}
}

// TestResolveHardware checks the --hw helper other commands share.
func TestResolveHardware(t *testing.T) {
	d, err := resolveHardware("a100")
	if err != nil || d.Name != "A100 80GB SXM" {
		t.Errorf("resolveHardware(a100) = %v, %v", d, err)
	}
	d, err = resolveHardware(filepath.Join("testdata", "hardware-user.toml"))
	if err != nil || d.Name != "Acme X1" {
		t.Errorf("resolveHardware(user file) = %v, %v", d, err)
	}
	if _, err := resolveHardware(""); exitCode(err) != 2 {
		t.Errorf("resolveHardware(\"\") = %v, want a usage error", err)
	}
	if _, err := resolveHardware("h1000"); exitCode(err) != 2 {
		t.Errorf("resolveHardware(h1000) = %v, want a usage error (an unknown name, like an unknown --model)", err)
	}
	if _, err := resolveHardware(filepath.Join("..", "..", "hardware", "testdata", "bad", "zero.toml")); exitCode(err) != 2 {
		t.Errorf("resolveHardware(bad file) = %v, want bad input (exit 2)", err)
	}
}

// TestHardwareShow_usableUnits: the usable memory is printed in the
// capacity's units, so the two compare at a glance: an H100's "80 GiB"
// capacity beside "79.11 GiB" usable, not "84.94 GB" (more than 80, read
// quickly).
func TestHardwareShow_usableUnits(t *testing.T) {
	out, errOut, code := perfsim(t, "hardware", "show", "h100")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	found := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == "memory.usable" {
			found = true
			if f[1] != "79.11" || f[2] != "GiB" {
				t.Errorf("usable: %q, want 79.11 GiB beside the 80 GiB capacity", line)
			}
		}
	}
	if !found {
		t.Errorf("no memory.usable row in:\n%s", out)
	}
}
