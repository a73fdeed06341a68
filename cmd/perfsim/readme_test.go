package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMECommands runs every perfsim command the README shows (lines in
// its indented or fenced code blocks that start with "perfsim " or
// "go run ./cmd/perfsim ") and checks that each exits 0. Commands that
// write files are run in a temporary directory.
func TestREADMECommands(t *testing.T) {
	cmds := readmeCommands(t, filepath.Join("..", "..", "README.md"))
	if len(cmds) == 0 {
		t.Fatal("README.md shows no perfsim command")
	}
	dir := t.TempDir()
	wd, _ := os.Getwd()
	for _, c := range cmds {
		t.Run(strings.Join(c, " "), func(t *testing.T) {
			args := make([]string, len(c))
			for i, a := range c {
				// Paths in the README are relative to the repository root.
				if strings.HasPrefix(a, "testdata/") || strings.HasPrefix(a, "hardware/") || strings.HasPrefix(a, "workloads/") || strings.HasPrefix(a, "calibrate/") || strings.HasPrefix(a, "kernels/") || strings.HasPrefix(a, "docs/") {
					a = filepath.Join(wd, "..", "..", a)
				}
				args[i] = a
			}
			if err := os.Chdir(dir); err != nil {
				t.Fatal(err)
			}
			defer os.Chdir(wd)
			_, stderr, code := perfsim(t, args...)
			if code != 0 {
				t.Errorf("perfsim %s exited %d:\n%s", strings.Join(c, " "), code, stderr)
			}
		})
	}
}

// readmeCommands returns the argument lists of the perfsim commands in
// the README's code.
func readmeCommands(t *testing.T, path string) [][]string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds [][]string
	fenced := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced && !strings.HasPrefix(line, "    ") {
			continue
		}
		line = strings.TrimSpace(line)
		if i := strings.Index(line, " #"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		line = strings.TrimPrefix(line, "$ ")
		var rest string
		switch {
		case strings.HasPrefix(line, "go run ./cmd/perfsim "):
			rest = strings.TrimPrefix(line, "go run ./cmd/perfsim ")
		case strings.HasPrefix(line, "perfsim "):
			rest = strings.TrimPrefix(line, "perfsim ")
		default:
			continue
		}
		if strings.ContainsAny(rest, "|><;&") {
			t.Logf("skipping shell pipeline: %s", line)
			continue
		}
		cmds = append(cmds, strings.Fields(rest))
	}
	return cmds
}
