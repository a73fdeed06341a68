// Package csvtest reads the CSV tables that tests check perfsim against:
// the measurements under ../shared/validation (and the seed tables under
// ../shared/data), which a clone may not have beside it. It is for tests
// only.
package csvtest

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Read reads the CSV file at path and returns its header as column
// indexes by name and its records after the header. Every column named in
// need must be in the header, or the test fails naming each one missing (a
// missing name would otherwise index column 0). A file whose folder
// is absent skips the test, saying ../shared is absent; a file missing
// from a folder that is there, or one that cannot be read or parsed or has
// no header, fails it: the data are beside the clone but not as the test
// expects them, which a skip would hide.
func Read(t testing.TB, path string, need ...string) (map[string]int, [][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		if _, derr := os.Stat(filepath.Dir(path)); derr != nil {
			t.Skipf("no data (%v): ../shared is absent", err)
		}
		t.Fatalf("%v (its folder is there)", err)
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
	var missing []string
	for _, n := range need {
		if _, ok := col[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("%s: no column %s in its header (%s)", path, strings.Join(missing, ", "), strings.Join(recs[0], ","))
	}
	return col, recs[1:]
}

// Rows reads the CSV file at path as Read does (need names the columns
// the test reads) and returns each record after the header as a map from
// the header's names to its fields.
func Rows(t testing.TB, path string, need ...string) []map[string]string {
	t.Helper()
	col, recs := Read(t, path, need...)
	out := make([]map[string]string, 0, len(recs))
	for _, r := range recs {
		m := make(map[string]string, len(col))
		for h, i := range col {
			m[h] = r[i]
		}
		out = append(out, m)
	}
	return out
}

// ValidationDir returns the folder ../shared/validation/sub beside the
// module root (found upward from the test's working directory, by its
// go.mod), or skips the test, saying so, where it is absent: a clone
// need not have ../shared beside it.
func ValidationDir(t testing.TB, sub string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("module root not found")
		}
		dir = parent
	}
	v := filepath.Join(dir, "..", "shared", "validation", sub)
	if _, err := os.Stat(v); err != nil {
		t.Skipf("third-party measurements not found at %s (../shared/validation/%s beside the module root): skipping", v, sub)
	}
	return v
}
