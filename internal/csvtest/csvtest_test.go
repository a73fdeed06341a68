package csvtest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRead(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(p, []byte("a,b\n1,2\n3,4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	col, rows := Read(t, p)
	if col["a"] != 0 || col["b"] != 1 || len(rows) != 2 || rows[1][col["b"]] != "4" {
		t.Errorf("Read = %v, %v", col, rows)
	}
}

func TestRead_missingSkips(t *testing.T) {
	ok := t.Run("missing", func(t *testing.T) {
		Read(t, filepath.Join(t.TempDir(), "absent.csv"))
		t.Error("a missing file did not skip")
	})
	if !ok {
		t.Error("the subtest failed instead of skipping")
	}
}
