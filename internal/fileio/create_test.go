//go:build unix

package fileio

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCreate: a File written in pieces appears whole at Commit, keeps an
// existing file's mode, leaves the path as it was (and no temporary file)
// on Abort, and writes through a symlink to its target.
func TestCreate(t *testing.T) {
	dir := t.TempDir()
	read := func(p string) string { b, _ := os.ReadFile(p); return string(b) }
	p := filepath.Join(dir, "out.csv")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		commit bool
		want   string
	}{
		{"abort", false, "old"},
		{"commit", true, "a,b\n1,2\n"},
	}
	for _, tt := range tests {
		w, err := Create(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"a,b\n", "1,2\n"} {
			if _, err := w.Write([]byte(s)); err != nil {
				t.Fatal(err)
			}
		}
		if got := read(p); got != "old" {
			t.Errorf("%s: %q at the path before the commit", tt.name, got)
		}
		if tt.commit {
			if err := w.Commit(); err != nil {
				t.Fatal(err)
			}
		} else {
			w.Abort()
		}
		if got := read(p); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
		if es, _ := os.ReadDir(dir); len(es) != 1 {
			t.Errorf("%s: %d files in the directory, want 1", tt.name, len(es))
		}
		if _, err := w.Write([]byte("x")); err == nil {
			t.Errorf("%s: a write after the end succeeded", tt.name)
		}
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the old file's 0600", st.Mode().Perm())
	}
	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink(p, link); err != nil {
		t.Fatal(err)
	}
	w, err := Create(link)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("via link"))
	if err := w.Commit(); err != nil || read(p) != "via link" {
		t.Errorf("through a symlink: %v, %q", err, read(p))
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced: %v", err)
	}
	if _, err := Create(dir); err == nil {
		t.Error("Create(a directory) succeeded")
	}
}
