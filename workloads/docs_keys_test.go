package workloads

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestDocsEveryKey: every key of a model file (Config's and Layer's TOML
// tags) is named, in backquotes, in docs/models.md's schema.
func TestDocsEveryKey(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "models.md"))
	if err != nil {
		t.Skipf("docs/models.md not available: %v", err)
	}
	doc := string(b)
	for _, typ := range []reflect.Type{reflect.TypeOf(Config{}), reflect.TypeOf(Layer{})} {
		for i := 0; i < typ.NumField(); i++ {
			key, _, _ := strings.Cut(typ.Field(i).Tag.Get("toml"), ",")
			if key == "" || key == "-" {
				continue
			}
			if !strings.Contains(doc, "`"+key+"`") && !strings.Contains(doc, "`[["+key+"]]`") {
				t.Errorf("docs/models.md does not name %s key `%s`", typ.Name(), key)
			}
		}
	}
}

// TestDocsNoStaleKey: every key docs/models.md's schema table names in
// its first column is a key a model file may hold (Config's and Layer's
// TOML tags): a key renamed or dropped in the parser leaves no row
// describing a key the parser refuses.
func TestDocsNoStaleKey(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "models.md"))
	if err != nil {
		t.Skipf("docs/models.md not available: %v", err)
	}
	doc := string(b)
	start, end := strings.Index(doc, "## The TOML schema"), strings.Index(doc, "## Decomposition")
	if start < 0 || end < start {
		t.Fatal("docs/models.md: no '## The TOML schema' section before '## Decomposition'")
	}
	tags := map[string]bool{}
	for _, typ := range []reflect.Type{reflect.TypeOf(Config{}), reflect.TypeOf(Layer{})} {
		for i := 0; i < typ.NumField(); i++ {
			key, _, _ := strings.Cut(typ.Field(i).Tag.Get("toml"), ",")
			tags[key] = true
		}
	}
	rows := 0
	for _, line := range strings.Split(doc[start:end], "\n") {
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "| `") || len(cells) < 3 {
			continue
		}
		rows++
		parts := strings.Split(cells[1], "`")
		for i := 1; i < len(parts); i += 2 {
			if key := strings.Trim(parts[i], "[]"); !tags[key] {
				t.Errorf("docs/models.md's schema describes `%s`, which no model file may hold", parts[i])
			}
		}
	}
	if rows < 40 {
		t.Errorf("read %d rows of the schema table, want the whole table", rows)
	}
}
