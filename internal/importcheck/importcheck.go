// Package importcheck keeps the dependency direction of DESIGN.md for
// the whole module: Violations reads the imports of every package's
// non-test Go files and returns each import its package may not make,
// and each package the table below does not place (a new package must
// say where it stands). Tests may import what they need. Its tests also
// hold every Go file to the project's length of about 600 lines.
package importcheck

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// utilities are the leaf helpers under internal/ that any package may
// import; they import nothing of the module themselves.
var utilities = []string{
	"internal/errlist", "internal/fileio", "internal/jsonkeys",
	"internal/racedetect", "internal/suggest",
}

// Allowed maps each package of the module (its directory, relative to
// the module root) to the packages of the module it may import besides
// the utilities. The direction is DESIGN.md's: model <- hardware,
// workloads <- sim <- serve <- plan <- cmd, with calibrate beside plan.
// sim never imports workloads: it declares what it needs of one
// (sim.Workload), and internal/simload adapts workloads to it. price and
// mlperf stand beside hardware and plan. "*" is any package (the one
// binary wires them all).
var Allowed = map[string][]string{
	"model":                      nil,
	"hardware":                   {"model"},
	"workloads":                  {"model"},
	"price":                      {"model"},
	"sim":                        {"model", "hardware"},
	"serve":                      {"model", "hardware", "sim"},
	"plan":                       {"model", "hardware", "sim", "serve", "price"},
	"mlperf":                     {"model", "hardware", "sim", "serve"},
	"calibrate":                  {"model", "hardware", "sim"},
	"internal/simload":           {"model", "sim", "workloads"},
	"internal/errlist":           nil,
	"internal/fileio":            nil,
	"internal/jsonkeys":          nil,
	"internal/racedetect":        nil,
	"internal/suggest":           nil,
	"internal/csvtest":           nil,
	"internal/fuzzcheck":         nil,
	"internal/importcheck":       nil,
	"cmd/perfsim/internal/chart": nil,
	"cmd/perfsim":                {"*"},
}

// Violations reads the Go packages below root, the module's root (its
// go.mod names the module), and returns one line per import that
// Allowed forbids and per package it does not list, sorted.
func Violations(root string) ([]string, error) {
	mod, err := modulePath(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		allowed, ok := Allowed[pkg]
		if !ok {
			if !seen[pkg] {
				out = append(out, fmt.Sprintf("%s: a package importcheck.Allowed does not place; say what it may import", pkg))
				seen[pkg] = true
			}
			return nil
		}
		af, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, im := range af.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			dep, ok := strings.CutPrefix(p, mod+"/")
			if !ok || may(allowed, dep) {
				continue
			}
			out = append(out, fmt.Sprintf("%s/%s imports %s, which %s may not (it may import: %s)",
				pkg, filepath.Base(path), dep, pkg, describe(allowed)))
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

func may(allowed []string, dep string) bool {
	for _, a := range allowed {
		if a == "*" || a == dep {
			return true
		}
	}
	for _, u := range utilities {
		if u == dep {
			return true
		}
	}
	return false
}

func describe(allowed []string) string {
	all := append(append([]string(nil), allowed...), utilities...)
	return strings.Join(all, ", ")
}

// modulePath reads the module line of a go.mod.
func modulePath(gomod string) (string, error) {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`), nil
		}
	}
	return "", fmt.Errorf("%s: no module line", gomod)
}
