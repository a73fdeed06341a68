package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/hardware"
)

// TestSources_resolve: every source code the catalog cites (N6, M2, ...)
// is resolved, with its title, in docs/sources.md, so that what
// "perfsim hardware show" prints can be followed inside the repository.
func TestSources_resolve(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "sources.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\| ([A-Z]\d+[a-z]?) \| `).FindAllStringSubmatch(string(data), -1) {
		listed[m[1]] = true
	}
	code := regexp.MustCompile(`\b([NAGICXM]\d{1,2}[a-z]?)\b`)
	missing := map[string][]string{}
	for _, d := range hardware.Catalog() {
		for k, s := range d.Sources {
			for _, m := range code.FindAllStringSubmatch(s, -1) {
				if !listed[m[1]] && !strings.EqualFold(m[1], d.Name) { // "A10 datasheet" names the device
					missing[m[1]] = append(missing[m[1]], d.Name+" "+k)
				}
			}
		}
	}
	var codes []string
	for c := range missing {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	for _, c := range codes {
		ks := missing[c]
		sort.Strings(ks)
		t.Errorf("source code %s (cited by %s) is not in docs/sources.md", c, strings.Join(ks[:min(3, len(ks))], "; "))
	}
}
