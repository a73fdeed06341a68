package calibrate

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// gzipTo writes data gzipped to dir/name and returns the path.
func gzipTo(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	if _, err := z.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadFile_gzip: a .gz file reads as the file it compresses (the
// same rows, lines and warnings), a third-party table's device and
// constants still come from its name less the .gz, and what is not gzip
// data, or is cut short, is an error naming the file.
func TestReadFile_gzip(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join("..", "kernels", "testdata", "sample.csv")
	raw, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	want, wantWarns, err := ReadFile(plain, FormatAuto, "")
	if err != nil {
		t.Fatal(err)
	}
	gz := gzipTo(t, dir, "sample.csv.gz", raw)
	got, warns, err := ReadFile(gz, FormatAuto, "")
	if err != nil {
		t.Fatalf("ReadFile(%s): %v", gz, err)
	}
	if len(got) != len(want) {
		t.Fatalf("ReadFile(%s): %d rows, want the plain file's %d", gz, len(got), len(want))
	}
	for i := range got {
		if got[i].File != gz {
			t.Errorf("row %d: File %q, want %q", i, got[i].File, gz)
		}
		got[i].File = want[i].File // the rest must be equal, lines included
	}
	if !reflect.DeepEqual(got, want) || len(warns) != len(wantWarns) {
		t.Errorf("ReadFile(%s): %d rows and %d warnings, want the plain file's %d and %d, equal", gz, len(got), len(warns), len(want), len(wantWarns))
	}

	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"text.csv.gz", raw, "not gzip data"},
		{"empty.csv.gz", nil, "not gzip data"},
	} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ReadFile(path, FormatAuto, ""); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadFile(%s) = %v, want an error naming the file and %q", c.name, err, c.want)
		}
	}
	whole, err := os.ReadFile(gz)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.csv.gz")
	if err := os.WriteFile(cut, whole[:len(whole)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadFile(cut, FormatAuto, ""); err == nil || !strings.Contains(err.Error(), cut) || !strings.Contains(err.Error(), "gzip") {
		t.Errorf("ReadFile(cut short) = %v, want a gzip error naming the file", err)
	}

	// A third-party table keeps its name's meaning through the .gz.
	v := validationDir(t)
	table := filepath.Join(v, "aiconfigurator", "a100_sxm_comm_trtllm_1.0.0_custom_allreduce_perf.csv")
	traw, err := os.ReadFile(table)
	if err != nil {
		t.Fatal(err)
	}
	twant, _, err := ReadFile(table, FormatAuto, "")
	if err != nil {
		t.Fatal(err)
	}
	tgot, _, err := ReadFile(gzipTo(t, dir, filepath.Base(table)+".gz", traw), FormatAuto, "")
	if err != nil || len(tgot) != len(twant) || len(tgot) == 0 || tgot[0].Device != twant[0].Device {
		t.Errorf("gzipped aiconfigurator table: %d rows (%v), want %d of device %q", len(tgot), err, len(twant), twant[0].Device)
	}
}

// TestGunzipped_limit: decompressed data past the limit is an error, data
// of exactly the limit is not.
func TestGunzipped_limit(t *testing.T) {
	for _, c := range []struct {
		size, limit int64
		fail        bool
	}{
		{10, 10, false},
		{11, 10, true},
		{0, 10, false},
	} {
		g := &gunzipped{r: bytes.NewReader(make([]byte, c.size)), left: c.limit}
		b, err := io.ReadAll(g)
		if c.fail != (err != nil) || (err == nil && int64(len(b)) != c.size) {
			t.Errorf("%d bytes under a limit of %d: %d read, %v", c.size, c.limit, len(b), err)
		}
		if err != nil && !strings.Contains(err.Error(), "decompresses to more than") {
			t.Errorf("limit error %q does not say what passed the limit", err)
		}
	}
}
