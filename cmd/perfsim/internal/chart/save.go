package chart

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/perfsim/perfsim/internal/fileio"
)

// Formats lists the output formats, by file extension.
var Formats = []string{"svg", "png", "pdf"}

// PNGDPI is the resolution of PNG output: an 8×5 in chart is 1200×750
// pixels, sharp on a projector.
const PNGDPI = 150

// ErrFormat reports an output file whose extension names no format.
var ErrFormat = errors.New("unknown output format")

// A Drawer draws itself on a canvas; *Chart and *plot.Plot are Drawers.
type Drawer interface {
	Draw(draw.Canvas)
}

// FormatOf returns the format a path's extension names; "-" (stdout) is
// SVG. An unknown extension wraps ErrFormat and lists the formats.
func FormatOf(path string) (string, error) {
	if path == "-" {
		return "svg", nil
	}
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	for _, f := range Formats {
		if ext == f {
			return f, nil
		}
	}
	if ext == "" {
		return "", fmt.Errorf("%w: %q has no extension (want .svg, .png or .pdf)", ErrFormat, path)
	}
	return "", fmt.Errorf("%w %q in %q (want .svg, .png or .pdf)", ErrFormat, "."+ext, path)
}

// pdfDates fixes the creation and modification dates every PDF carries
// (fpdf stamps the current time otherwise), and sorts its catalogue, so
// that the same chart gives the same bytes. These are fpdf's process-wide
// defaults; perfsim makes no other PDFs.
var pdfDates sync.Once

// pdfEpoch is the date written into every PDF: 2000-01-01T00:00:00Z, a
// fixed stand-in, since a chart's content does not depend on when it was
// drawn.
var pdfEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Write draws d at width×height in format ("svg", "png" or "pdf") to w.
func Write(w io.Writer, d Drawer, width, height vg.Length, format string) error {
	var c interface {
		vg.CanvasSizer
		io.WriterTo
	}
	switch format {
	case "svg":
		c = vgsvg.New(width, height)
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(PNGDPI))}
	case "pdf":
		pdfDates.Do(func() {
			fpdf.SetDefaultCreationDate(pdfEpoch)
			fpdf.SetDefaultModificationDate(pdfEpoch)
			fpdf.SetDefaultCatalogSort(true)
		})
		c = vgpdf.New(width, height)
	default:
		return fmt.Errorf("%w %q (want svg, png or pdf)", ErrFormat, format)
	}
	d.Draw(draw.New(c))
	_, err := c.WriteTo(w)
	return err
}

// Save draws d at width×height into path, in the format its extension
// names, atomically (fileio.WriteFile): the chart is drawn in memory,
// then written beside path and renamed over it, so that a reader never
// sees half a chart and an interrupted run leaves nothing behind.
func Save(path string, d Drawer, width, height vg.Length) error {
	format, err := FormatOf(path)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := Write(&b, d, width, height, format); err != nil {
		return err
	}
	return fileio.WriteFile(path, b.Bytes())
}
