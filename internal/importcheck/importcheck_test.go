package importcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModule keeps every package of the module to DESIGN.md's direction
// (model <- hardware, workloads <- sim <- serve <- plan <- cmd, calibrate
// beside plan), and fails for a package Allowed does not place.
func TestModule(t *testing.T) {
	bad, err := Violations(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// TestAllowed_acyclic: the table itself points one way (no package may
// reach itself through what it may import), and names only packages it
// places.
func TestAllowed_acyclic(t *testing.T) {
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(p string, path []string)
	visit = func(p string, path []string) {
		switch state[p] {
		case 1:
			t.Errorf("Allowed has a cycle: %s", strings.Join(append(path, p), " -> "))
			return
		case 2:
			return
		}
		state[p] = 1
		for _, d := range Allowed[p] {
			if d == "*" {
				continue
			}
			if _, ok := Allowed[d]; !ok {
				t.Errorf("Allowed[%q] names %q, which it does not place", p, d)
				continue
			}
			visit(d, append(path, p))
		}
		state[p] = 2
	}
	for p := range Allowed {
		visit(p, nil)
	}
}

// TestViolations_catches: on a small module of its own, Violations names
// an import against the direction, and a package the table does not
// place, and passes an allowed import and a test file's import.
func TestViolations_catches(t *testing.T) {
	root := t.TempDir()
	write := func(path, text string) {
		t.Helper()
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.24\n")
	write("model/a.go", "package model\n\nimport _ \"example.com/m/sim\"\n")
	write("sim/a.go", "package sim\n\nimport _ \"example.com/m/model\"\n")
	write("sim/a_test.go", "package sim\n\nimport _ \"example.com/m/cmd/perfsim\"\n")
	write("newpkg/a.go", "package newpkg\n")
	write("sim/testdata/x.go", "package x\n\nimport _ \"example.com/m/cmd/perfsim\"\n")
	bad, err := Violations(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"model/a.go imports sim", "newpkg: a package importcheck.Allowed does not place"}
	if len(bad) != len(want) {
		t.Fatalf("got %d violations, want %d: %q", len(bad), len(want), bad)
	}
	for i, w := range want {
		if !strings.HasPrefix(bad[i], w) {
			t.Errorf("violation %d: %q, want it to start %q", i, bad[i], w)
		}
	}
}

// maxLines is the project's "no file over about 600 lines": a file past
// it is split by topic.
const maxLines = 650

// TestModule_fileLength holds every Go file of the module, tests
// included, to about 600 lines (maxLines).
func TestModule_fileLength(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if n := strings.Count(string(data), "\n"); n > maxLines {
			t.Errorf("%s: %d lines, over about 600 (%d): split it by topic", path, n, maxLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
