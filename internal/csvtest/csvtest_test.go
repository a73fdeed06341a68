package csvtest

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
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

func TestRows(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(p, []byte("a,b\n1,2\n3,4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []map[string]string{{"a": "1", "b": "2"}, {"a": "3", "b": "4"}}
	if got := Rows(t, p); !reflect.DeepEqual(got, want) {
		t.Errorf("Rows = %v, want %v", got, want)
	}
}

// TestRead_missingSkips: a file whose folder is absent (../shared not
// beside the clone) skips.
func TestRead_missingSkips(t *testing.T) {
	var skipped bool
	ok := t.Run("missing", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		Read(t, filepath.Join(t.TempDir(), "absent", "absent.csv"))
		t.Error("a missing file did not skip")
	})
	if !ok || !skipped {
		t.Errorf("the subtest did not skip (passed %v, skipped %v)", ok, skipped)
	}
}

// TestRead_missingFileFails: a file missing from a folder that is there
// (the data set beside the clone, without the file the test expects)
// fails rather than skips.
func TestRead_missingFileFails(t *testing.T) {
	ft := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Read(ft, filepath.Join(t.TempDir(), "absent.csv"))
	}()
	<-done
	if !ft.failed || ft.skipped {
		t.Errorf("a file missing from a folder that is there: failed %v, skipped %v; want a failure", ft.failed, ft.skipped)
	}
}

// TestRead_missingColumnFails: a column the test reads that the header
// lacks fails, naming it, rather than reading column 0.
func TestRead_missingColumnFails(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(p, []byte("a,b\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		need []string
		fail bool
	}{
		{nil, false},
		{[]string{"a", "b"}, false},
		{[]string{"a", "c"}, true},
		{[]string{"c", "d"}, true},
	} {
		ft := &fakeTB{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			Rows(ft, p, tt.need...)
		}()
		<-done
		if ft.failed != tt.fail {
			t.Errorf("need %v: failed %v, want %v", tt.need, ft.failed, tt.fail)
		}
		if tt.fail && !strings.Contains(ft.msg, tt.need[len(tt.need)-1]) {
			t.Errorf("need %v: message %q does not name the missing column", tt.need, ft.msg)
		}
	}
}

// fakeTB records a fatal failure or a skip and ends the goroutine, as
// testing.T does, without failing or skipping the test around it.
type fakeTB struct {
	testing.TB
	failed, skipped bool
	msg             string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = true
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (f *fakeTB) Skipf(format string, args ...any) {
	f.skipped = true
	runtime.Goexit()
}
