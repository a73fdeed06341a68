package hardware

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNetworkKeys_documented: every key of an interconnect tier the
// loader takes has its row in docs/hardware.md's table and its line in
// doc.go's schema.
func TestNetworkKeys_documented(t *testing.T) {
	md, err := os.ReadFile(filepath.Join("..", "docs", "hardware.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range intraKeys {
		if k == "source" {
			continue
		}
		if !strings.Contains(string(md), "| `"+k+"` |") {
			t.Errorf("docs/hardware.md has no row for the interconnect key %s", k)
		}
		if !strings.Contains(string(doc), "//\t"+k) && !strings.Contains(string(doc), ", "+k) {
			t.Errorf("hardware/doc.go does not list the interconnect key %s", k)
		}
	}
}
