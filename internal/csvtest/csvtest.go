// Package csvtest reads the CSV tables that tests check perfsim against:
// the measurements under ../shared/validation, which a clone may not have
// beside it. It is for tests only.
package csvtest

import (
	"encoding/csv"
	"os"
	"testing"
)

// Read reads the CSV file at path and returns its header as column
// indexes by name and its records after the header. A file that cannot be
// opened skips the test, saying ../shared is absent; one that cannot be
// parsed or has no header fails it.
func Read(t testing.TB, path string) (map[string]int, [][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("no data (%v): ../shared is absent", err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(recs) == 0 {
		t.Fatalf("%s: no header", path)
	}
	col := make(map[string]int, len(recs[0]))
	for i, h := range recs[0] {
		col[h] = i
	}
	return col, recs[1:]
}
