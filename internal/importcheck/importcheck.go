// Package importcheck keeps the dependency direction of DESIGN.md: a
// package's tests call Banned to fail when one of its non-test files
// imports a package it must not.
package importcheck

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Banned fails t for every import of a non-test Go file in the current
// directory whose path contains one of banned ("/workloads", "/cmd/").
func Banned(t *testing.T, banned ...string) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range af.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			for _, b := range banned {
				if strings.Contains(p, b) {
					t.Errorf("%s imports %s", f, p)
				}
			}
		}
	}
}
