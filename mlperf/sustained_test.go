package mlperf

import (
	"strings"
	"testing"

	"github.com/perfsim/perfsim/hardware"
)

// burstClocks returns sys with its device's sustained share cleared: the
// device as its kernel tables were timed, in bursts of milliseconds.
func burstClocks(t *testing.T, sys *hardware.System) *hardware.System {
	t.Helper()
	if s := sys.Device.Power.Sustained; !(s > 0 && s < 1) {
		t.Fatalf("%s: sustained share %v, want a measured one below 1", sys.Device.Name, s)
	}
	d := *sys.Device
	d.Power.Sustained = 0
	b := *sys
	b.Device = &d
	return &b
}

// TestRun_sustainedClocks: an MLPerf inference run keeps the matrix
// units busy for LoadGen's 600 s, as a training step does for seconds, so
// it runs at the device's sustained clocks (power.sustained, 0.912 on the
// H200) as MLPerf Training's rows on the same device do: slower than at
// the tables' burst clocks, but by no more than the clocks fell. Both
// rows had run at the burst clocks, the sustained share read by training
// alone.
func TestRun_sustainedClocks(t *testing.T) {
	sys, err := hardware.LookupSystem("hgx-h200", 8)
	if err != nil {
		t.Fatal(err)
	}
	burst := burstClocks(t, sys)
	s := sys.Device.Power.Sustained
	for _, tt := range []struct {
		bench string
		long  bool // an LLM run: skipped by -short
	}{
		{"resnet50", false},
		{"bert-99", false},
		{"mixtral-8x7b", true},
	} {
		if tt.long && testing.Short() {
			continue
		}
		b, err := Find(tt.bench)
		if err != nil {
			t.Fatal(err)
		}
		got := Run(sys, b, Offline, resolveCatalog, Options{Seed: 1})
		was := Run(burst, b, Offline, resolveCatalog, Options{Seed: 1})
		if !got.OK() || !was.OK() {
			t.Fatalf("%s: no figure: %q, %q", tt.bench, got.Note, was.Note)
		}
		r := got.Value / was.Value
		t.Logf("%s Offline on %s: %.1f %s at sustained clocks, %.1f at burst clocks (×%.4f; share %v)", tt.bench, sys.Name, got.Value, got.Unit, was.Value, r, s)
		if !(r < 0.995 && r >= s-1e-9) {
			t.Errorf("%s Offline: sustained/burst throughput ×%.4f, want below 0.995 and at least the share %v", tt.bench, r, s)
		}
	}
}

// TestRun_llmNoPeakNotFit: an LLM benchmark on a device that cannot
// compute in its precision says so, not that the model does not fit: on
// an EPYC 7742 (no fp8 peak nor any it falls back to) Llama 2 70B's row
// had read "does not fit at tensor parallelism up to 1: sim: EPYC 7742
// has no peak for fp8 ...". One that does not fit still says so.
func TestRun_llmNoPeakNotFit(t *testing.T) {
	b, err := Find("llama2-70b")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		hw        string
		want, not string
	}{
		{"epyc7742", "no peak for fp8", "does not fit"},
		{"t4", "does not fit", "no peak"},
	} {
		sys, err := hardware.LookupSystem(tt.hw, 1)
		if err != nil {
			sys2, err2 := hardware.Lookup(tt.hw)
			if err2 != nil {
				t.Fatal(err, err2)
			}
			if sys, err = hardware.NewSystem(sys2, 1, 1); err != nil {
				t.Fatal(err)
			}
		}
		r := Run(sys, b, Offline, resolveCatalog, Options{Seed: 1})
		if r.OK() || !strings.Contains(r.Note, tt.want) || strings.Contains(r.Note, tt.not) {
			t.Errorf("%s: %v, note %q: want no figure and a note saying %q, not %q", tt.hw, r.Value, r.Note, tt.want, tt.not)
		}
	}
}
