package plan

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports_train: plan prices through sim (and serve), never through
// workloads, calibrate or cmd.
func TestImports_train(t *testing.T) {
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
			for _, banned := range []string{"/workloads", "/calibrate", "/cmd/"} {
				if strings.Contains(p, banned) {
					t.Errorf("%s imports %s", f, p)
				}
			}
		}
	}
}
