package plan

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the dependency direction of STYLE.md: plan imports
// neither workloads, calibrate nor cmd.
func TestImports(t *testing.T) {
	files, _ := filepath.Glob("*.go")
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
			for _, banned := range []string{"/workloads", "/calibrate", "/cmd/"} {
				if strings.Contains(p, banned) {
					t.Errorf("%s imports %s", f, p)
				}
			}
		}
	}
}
