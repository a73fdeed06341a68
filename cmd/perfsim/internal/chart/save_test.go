package chart

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFormatOf(t *testing.T) {
	tests := []struct {
		path, want string
		err        bool
	}{
		{"a.svg", "svg", false},
		{"dir/a.PNG", "png", false},
		{"a.pdf", "pdf", false},
		{"-", "svg", false},
		{"a.jpg", "", true},
		{"a", "", true},
		{"a.svg.txt", "", true},
	}
	for _, tt := range tests {
		got, err := FormatOf(tt.path)
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("FormatOf(%q) = %q, %v; want %q, error %v", tt.path, got, err, tt.want, tt.err)
		}
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Errorf("FormatOf(%q): error %v does not wrap ErrFormat", tt.path, err)
			}
			for _, f := range []string{".svg", ".png", ".pdf"} {
				if !strings.Contains(err.Error(), f) {
					t.Errorf("FormatOf(%q): error %q does not list %s", tt.path, err, f)
				}
			}
		}
	}
}

// charts returns one chart of each kind, built from the review data.
func charts(t *testing.T) map[string]*Chart {
	t.Helper()
	out := map[string]*Chart{}
	add := func(name string, c *Chart, err error) {
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = c
	}
	c, err := h100Roofline().Chart()
	add("roofline", c, err)
	pre, dec := breakdownData()
	c, err = StackedBars("breakdown", pre, dec)
	add("breakdown", c, err)
	c, err = Lines{Title: "lines", XLabel: "x", YLabel: "y", LogY: true, Lines: []Line{{Name: "a", Points: []LinePoint{{X: 1, Y: 10, Label: "1"}, {X: 2, Y: 100, Label: "2"}}}}}.Chart()
	add("lines", c, err)
	c, err = Heatmap{Title: "heat", Cols: []string{"1", "2"}, Rows: []string{"a"}, Values: [][]float64{{1.5, 0.5}}}.Chart()
	add("heatmap", c, err)
	return out
}

// TestWrite checks that every chart writes a valid file in every format,
// and the same bytes twice.
func TestWrite(t *testing.T) {
	for name, c := range charts(t) {
		for _, f := range Formats {
			var a, b bytes.Buffer
			if err := Write(&a, c, DefaultWidth, DefaultHeight, f); err != nil {
				t.Fatalf("Write(%s, %s): %v", name, f, err)
			}
			if err := Write(&b, c, DefaultWidth, DefaultHeight, f); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Errorf("Write(%s, %s) gives different bytes on a second call", name, f)
			}
			checkValid(t, name+"."+f, f, a.Bytes())
		}
	}
}

// checkValid checks that data is a well-formed file of format f.
func checkValid(t *testing.T, name, f string, data []byte) {
	t.Helper()
	switch f {
	case "png":
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Errorf("%s: PNG does not decode: %v", name, err)
			return
		}
		if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 750 {
			t.Errorf("%s: PNG is %dx%d, want 1200x750 (8x5 in at %d dpi)", name, b.Dx(), b.Dy(), PNGDPI)
		}
	case "svg":
		d := xml.NewDecoder(bytes.NewReader(data))
		root := ""
		for {
			tok, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Errorf("%s: SVG does not parse as XML: %v", name, err)
				return
			}
			if se, ok := tok.(xml.StartElement); ok && root == "" {
				root = se.Name.Local
			}
		}
		if root != "svg" {
			t.Errorf("%s: root element %q, want svg", name, root)
		}
	case "pdf":
		if !bytes.HasPrefix(data, []byte("%PDF-")) || !bytes.Contains(data, []byte("%%EOF")) {
			t.Errorf("%s: not a PDF (starts %q)", name, data[:min(8, len(data))])
		}
		if !bytes.Contains(data, []byte("D:20000101000000")) {
			t.Errorf("%s: PDF does not carry the fixed creation date", name)
		}
	}
}

func TestSave(t *testing.T) {
	dir := t.TempDir()
	c := charts(t)["lines"]
	for _, f := range Formats {
		path := filepath.Join(dir, "chart."+f)
		if err := Save(path, c, DefaultWidth, DefaultHeight); err != nil {
			t.Fatalf("Save(%s): %v", path, err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		checkValid(t, path, f, data)
	}
	if err := Save(filepath.Join(dir, "chart.gif"), c, DefaultWidth, DefaultHeight); !errors.Is(err, ErrFormat) {
		t.Errorf("Save(chart.gif) = %v, want ErrFormat", err)
	}
	if err := Save(filepath.Join(dir, "missing", "chart.svg"), c, DefaultWidth, DefaultHeight); err == nil {
		t.Error("Save into a missing directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := "chart.pdf chart.png chart.svg"; strings.Join(names, " ") != want {
		t.Errorf("directory holds %v, want only %s (no temporary files, no chart.gif)", names, want)
	}
}
