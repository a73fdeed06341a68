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
