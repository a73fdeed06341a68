package main

import (
	"strings"
	"testing"

	"github.com/perfsim/perfsim/cmd/perfsim/internal/chart"
	"github.com/perfsim/perfsim/hardware"
)

// TestNoteCalibration_whatIf: a chart names a what-if that carries some
// kernels by the kernels it carries ("fp8 kernels transferred from H100
// SXM"), one that carries every kernel by its base, and says nothing of
// a calibrated device.
func TestNoteCalibration_whatIf(t *testing.T) {
	h, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	fp8, err := hardware.Derive(h, []string{"peak.matrix.fp8=4PFLOP/s"})
	if err != nil {
		t.Fatal(err)
	}
	bw, err := hardware.Derive(h, []string{"memory.bandwidth=4TB/s"})
	if err != nil {
		t.Fatal(err)
	}
	c := &chart.Chart{Title: "t"}
	noteCalibration(c, []*hardware.Device{h, fp8, bw})
	want := "t\n" + fp8.Name + ": fp8 kernels transferred from H100 SXM\n" + bw.Name + ": transferred from H100 SXM"
	if c.Title != want {
		t.Errorf("title %q, want %q", c.Title, want)
	}
	if strings.Contains(c.Title, "calibrated:") {
		t.Errorf("title %q names the calibrated device", c.Title)
	}
}
