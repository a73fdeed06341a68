package sim

import (
	"math"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestHostPipeline checks the eager pipeline against its closed forms: n
// launches of t each, issued every h, finish at h + n·t when the device
// is the bottleneck (t ≥ h) and at n·h + t when the host is (t < h).
func TestHostPipeline(t *testing.T) {
	for _, tt := range []struct {
		name    string
		n       int
		tk, h   float64
		want    float64
		formula string
	}{
		{"device-bound", 100, 50e-6, 10e-6, 10e-6 + 100*50e-6, "h + n·t"},
		{"host-bound", 100, 5e-6, 40e-6, 100*40e-6 + 5e-6, "n·h + t"},
		{"balanced", 10, 20e-6, 20e-6, 11 * 20e-6, "h + n·t = n·h + t"},
		{"no host", 7, 3e-6, 0, 7 * 3e-6, "n·t"},
	} {
		rows := []OpRow{{Count: tt.n, Time: model.Seconds(float64(tt.n) * tt.tk)}}
		got := float64(hostPipeline(rows, model.Seconds(tt.h)))
		if math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s (%s): %g s, want %g", tt.name, tt.formula, got, tt.want)
		}
	}
	// A long kernel early lets the host run ahead: the short kernels
	// after it start back to back. 1 ms, then 100 × 5 µs with h = 40 µs:
	// the host issues the 101st launch at 4.04 ms, after the device has
	// drained the queue (1.04 + 99·0.005 ms), so the end is 4.04 + 0.005.
	rows := []OpRow{{Count: 1, Time: 1e-3}, {Count: 100, Time: 100 * 5e-6}}
	if got, want := float64(hostPipeline(rows, 40e-6)), 101*40e-6+5e-6; math.Abs(got-want) > 1e-12 {
		t.Errorf("long then short: %g s, want %g", got, want)
	}
}

func TestParseExec(t *testing.T) {
	for in, want := range map[string]Exec{"graph": ExecGraph, "Eager": ExecEager, "tensorrt": ExecFused, " fused ": ExecFused} {
		if got, err := ParseExec(in); err != nil || got != want {
			t.Errorf("ParseExec(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseExec("jit"); err == nil {
		t.Error("ParseExec(jit): no error")
	}
}
