package plan_test

import (
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/plan"
	"github.com/perfsim/perfsim/sim"
	"github.com/perfsim/perfsim/workloads"
)

func TestSensitivity(t *testing.T) {
	// +10% of each number on an H100 serving llama3-8b at batch 8: the
	// bandwidth shortens the memory-bound decode step, the peak the
	// compute-bound prefill; capacity leaves both alone and acts through
	// the max batch; one device uses no link.
	d, err := hardware.Resolve("h100")
	if err != nil {
		t.Fatal(err)
	}
	m, err := workloads.Resolve("llama3-8b")
	if err != nil {
		t.Fatal(err)
	}
	sc := sim.Default()
	sc.Batch, sc.Input, sc.Output = 8, 1024, 64
	bases, rows, err := plan.Sensitivity(d, adapter{M: m}, sc, 0.03, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	base := bases.Own
	by := map[string]plan.SensitivityRow{}
	for _, r := range rows {
		by[r.Knob] = r
		t.Logf("+10%% %-16s TTFT %+.1f%% TPOT %+.1f%% max batch %+.1f%% throughput at SLO %+.1f%%", r.Knob, 100*r.TTFT, 100*r.TPOT, 100*r.MaxBatch, 100*r.SLOThroughput)
	}
	if base.MaxBatch <= 0 || base.SLOBatch <= 0 || base.SLOBatch > base.MaxBatch {
		t.Fatalf("base %+v", base)
	}
	bw, pk, cp, ln := by["memory bandwidth"], by["matrix peak"], by["memory capacity"], by["link bandwidth"]
	// TPOT is mostly bandwidth-bound: 10% more bandwidth gives between 5%
	// and 9.1% (1 − 1/1.1) less.
	if !(bw.TPOT < -0.05 && bw.TPOT > -0.091) || pk.TTFT > -0.03 || bw.SLOThroughput <= 0 {
		t.Errorf("bandwidth: TPOT %+.3f, throughput %+.3f; peak: TTFT %+.3f", bw.TPOT, bw.SLOThroughput, pk.TTFT)
	}
	if cp.TTFT != 0 || cp.TPOT != 0 || cp.MaxBatch < 0.1 {
		t.Errorf("capacity: TTFT %+.3f TPOT %+.3f max batch %+.3f; want only the max batch to grow, by more than 10%% (weights are fixed)", cp.TTFT, cp.TPOT, cp.MaxBatch)
	}
	if ln.TTFT != 0 || ln.TPOT != 0 {
		t.Errorf("link on one device: TTFT %+.3f TPOT %+.3f", ln.TTFT, ln.TPOT)
	}
	// The capacity and link rows keep the H100's calibration and are
	// relative to the H100 as calibrated, what simulate gives for it; the
	// bandwidth and peak rows carry the efficiencies to the kernels they reach
	// and are relative to the H100 priced that way. The capacity row had
	// been relative to the carried base (TTFT 359 ms, TPOT 7.06 ms at
	// 2048 tokens in, against the calibrated 362.6 ms and 7.27 ms).
	sys, err := hardware.NewSystem(d, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	r, err := sim.Run(sys, adapter{M: m}, sc)
	if err != nil {
		t.Fatal(err)
	}
	if bases.Own.TTFT != r.Inference.TTFT || bases.Own.TPOT != r.Inference.TPOT {
		t.Errorf("base as calibrated: TTFT %v TPOT %v, want simulate's %v and %v", bases.Own.TTFT, bases.Own.TPOT, r.Inference.TTFT, r.Inference.TPOT)
	}
	// A carried kernel keeps the H100's residual table, so the carried
	// base with nothing changed is the H100 as calibrated, answer for
	// answer (it had been TTFT 359 ms, TPOT 7.06 ms at 2048 tokens in,
	// against 362.6 ms and 7.27 ms), and the report gives one base.
	if !bases.Same || bases.Carried != bases.Own {
		t.Errorf("carried base %+v, own %+v: want them equal on a calibrated device", bases.Carried, bases.Own)
	}
	if cp.Carried || ln.Carried || !bw.Carried || !pk.Carried {
		t.Errorf("carried: capacity %v link %v bandwidth %v peak %v; want the bandwidth and peak rows alone", cp.Carried, ln.Carried, bw.Carried, pk.Carried)
	}
	if cp.Point.TTFT != bases.Own.TTFT || cp.Point.TPOT != bases.Own.TPOT || ln.Point != bases.Own {
		t.Errorf("capacity %+v, link %+v: want the calibrated base's times %+v", cp.Point, ln.Point, bases.Own)
	}
	// The bandwidth reaches every kernel: its row is relative to the
	// carried base. The matrix peaks reach every kernel but the
	// elementwise passes (which read the vector peaks and carry nothing):
	// its row has its own base, the H100 priced as the row is, which for
	// that reason equals the carried base.
	if bw.Base != nil || pk.Base == nil || *pk.Base != bases.Carried {
		t.Errorf("bases: bandwidth %v, peak %+v: want the carried base %+v for both", bw.Base, pk.Base, bases.Carried)
	}
	if _, _, err := plan.Sensitivity(d, adapter{M: m}, sc, 0.03, 0); err == nil {
		t.Error("step 0: no error")
	}
}

// TestSensitivity_partialBase: on an H100 whose fp8 peak is a what-if, a
// bf16 run's base as calibrated is the H100's own (no bf16 kernel reads
// the fp8 peak); the capacity row is priced as that device is and
// relative to it; the peak row, which changes the bf16 peak too, is
// relative to the device priced as it is.
func TestSensitivity_partialBase(t *testing.T) {
	h, err := hardware.Resolve("h100")
	if err != nil {
		t.Fatal(err)
	}
	d, err := hardware.Derive(h, []string{"peak.matrix.fp8=4PFLOP/s"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := workloads.Resolve("llama3-8b")
	if err != nil {
		t.Fatal(err)
	}
	sc := sim.Default()
	sc.Batch, sc.Input, sc.Output = 8, 1024, 64
	own, _, err := plan.Sensitivity(h, adapter{M: m}, sc, 0.03, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	bases, rows, err := plan.Sensitivity(d, adapter{M: m}, sc, 0.03, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	if !bases.Same || bases.Own != own.Own || bases.Carried != own.Carried {
		t.Errorf("bases %+v, want the H100's %+v", bases, own)
	}
	for _, r := range rows {
		switch r.Knob {
		case "memory capacity":
			if r.Carried || r.Base != nil || r.TTFT != 0 || r.TPOT != 0 {
				t.Errorf("capacity row %+v: want it priced as the what-if is, relative to it", r)
			}
		case "matrix peak":
			if !r.Carried || r.Base == nil || !(r.TTFT < -0.03) {
				t.Errorf("peak row %+v: want it relative to the device priced as it is", r)
			}
		}
	}
}
