//go:build unix

package fileio

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.toml")
	big := filepath.Join(dir, "big.toml")
	os.WriteFile(small, []byte("name = 1\n"), 0o644)
	os.WriteFile(big, make([]byte, 2000), 0o644)
	zero := filepath.Join(dir, "zero.toml")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.toml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, path string
		want       string // "" for success
		is         error
	}{
		{"a small file", small, "", nil},
		{"exactly at the limit", big, "", nil},
		{"a directory", dir, "is a directory, not a test file", ErrNotRegular},
		{"/dev/zero through a symlink", zero, "is a character device, not a test file", ErrNotRegular},
		{"a named pipe", fifo, "is a named pipe, not a test file", ErrNotRegular},
		{"missing", filepath.Join(dir, "none.toml"), "no such file", nil},
	} {
		start := time.Now()
		data, err := ReadFile(tt.path, 2000, "test file")
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: ReadFile took %v", tt.name, d)
		}
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: ReadFile = %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || tt.is != nil && !errors.Is(err, tt.is)):
			t.Errorf("%s: ReadFile = %d bytes, %v; want an error saying %q", tt.name, len(data), err, tt.want)
		}
	}
	if _, err := ReadFile(big, 1999, "test file"); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "2000 bytes, over the 1999 bytes limit") {
		t.Errorf("ReadFile(2000 bytes, limit 1999) = %v, want ErrTooLarge", err)
	}
	// A file that grows after the check is cut at the limit with an error.
	r, err := Open(small, 9, "test file")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(small, []byte("name = 1\nmore = 2\n"), 0o644)
	buf := make([]byte, 100)
	n, _ := r.Read(buf)
	if _, err := r.Read(buf[n:]); !errors.Is(err, ErrTooLarge) {
		t.Errorf("reading past the limit = %v, want ErrTooLarge", err)
	}
	r.Close()
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	read := func(p string) string { b, _ := os.ReadFile(p); return string(b) }

	// A new file gets 0644; an existing one keeps its mode.
	p := filepath.Join(dir, "out.toml")
	if err := WriteFile(p, []byte("new")); err != nil || read(p) != "new" {
		t.Fatalf("WriteFile(new) = %v, %q", err, read(p))
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v, want 0644", st.Mode().Perm())
	}
	os.Chmod(p, 0o600)
	if err := WriteFile(p, []byte("again")); err != nil || read(p) != "again" {
		t.Fatalf("WriteFile(existing) = %v", err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Errorf("rewritten file mode %v, want 0600 kept", st.Mode().Perm())
	}

	// A symlink is written through: the link stays, its target changes.
	target := filepath.Join(dir, "target.toml")
	os.WriteFile(target, []byte("old"), 0o640)
	link := filepath.Join(dir, "link.toml")
	os.Symlink("target.toml", link)
	if err := WriteFile(link, []byte("through")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 || read(target) != "through" {
		t.Errorf("after writing through a symlink: link mode %v, target %q", st.Mode(), read(target))
	}
	if st, _ := os.Stat(target); st.Mode().Perm() != 0o640 {
		t.Errorf("symlink target mode %v, want 0640 kept", st.Mode().Perm())
	}

	// A named pipe is written to, not replaced.
	fifo := filepath.Join(dir, "fifo")
	syscall.Mkfifo(fifo, 0o644)
	got := make(chan string)
	go func() { got <- read(fifo) }()
	if err := WriteFile(fifo, []byte("piped")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "piped" {
		t.Errorf("read from the pipe %q", s)
	}
	if st, _ := os.Lstat(fifo); st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe was replaced: %v", st.Mode())
	}
	// /dev/null stays a device.
	if err := WriteFile("/dev/null", []byte("x")); err != nil {
		t.Errorf("WriteFile(/dev/null) = %v", err)
	}

	// A directory is refused with a clear message.
	if err := WriteFile(dir, []byte("x")); err == nil || !strings.Contains(err.Error(), "is a directory (give a file name)") {
		t.Errorf("WriteFile(dir) = %v", err)
	}

	// A stale temporary file of a dead process is removed by the next
	// write; one of a live process is not.
	stale := filepath.Join(dir, ".out.toml.perfsim-999999999-1.tmp")
	live := filepath.Join(dir, ".out.toml.perfsim-1-1.tmp") // pid 1 runs
	os.WriteFile(stale, []byte("partial"), 0o600)
	os.WriteFile(live, []byte("partial"), 0o600)
	if err := WriteFile(p, []byte("third")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("a dead process's temporary file was left")
	}
	if _, err := os.Stat(live); err != nil {
		t.Error("a live process's temporary file was removed")
	}
	os.Remove(live)
	entries, _ := os.ReadDir(dir)
	if len(entries) != 4 { // out.toml, target.toml, link.toml, fifo
		t.Errorf("files left: %v", entries)
	}
}

func TestWriteFile_readOnlyDir(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root writes into read-only directories")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "out")
	os.WriteFile(p, []byte("old"), 0o644)
	os.Chmod(dir, 0o555)
	defer os.Chmod(dir, 0o755)
	if err := WriteFile(p, []byte("new")); err == nil {
		t.Error("WriteFile in a read-only directory succeeded")
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("the old file holds %q", b)
	}
}

// TestRemoveTemps_stopsWrites checks that a write begun after RemoveTemps
// (a signal handler's) creates no temporary file that nothing would remove:
// it fails, and the target is untouched.
func TestRemoveTemps_stopsWrites(t *testing.T) {
	defer func() {
		temps.Lock()
		temps.stopped = false
		temps.Unlock()
	}()
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	RemoveTemps()
	err := WriteFile(path, []byte("new"))
	if !errors.Is(err, errStopped) {
		t.Fatalf("WriteFile after RemoveTemps: %v, want errStopped", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("the target became %q", b)
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("files left: %v", es)
	}
}

// TestCheckOutput_dash: "-" names standard output by convention; an
// output flag that writes files refuses it rather than write a file
// named "-" (serve --requests-out - had).
func TestCheckOutput_dash(t *testing.T) {
	if err := CheckOutput("-"); err == nil || !strings.Contains(err.Error(), "standard output") {
		t.Errorf("CheckOutput(\"-\") = %v", err)
	}
	if err := CheckOutput(filepath.Join(t.TempDir(), "-")); err != nil {
		t.Errorf("a file named - in a directory: %v", err)
	}
}
