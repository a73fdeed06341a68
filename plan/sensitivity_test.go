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
	base, rows, err := plan.Sensitivity(d, adapter{M: m}, sc, 0.03, 0.1)
	if err != nil {
		t.Fatal(err)
	}
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
	// The base is the H100 as calibrated, what simulate gives for it.
	// The capacity and link rows keep its calibration; the bandwidth and
	// peak rows carry it, residual tables included, to the kernels they
	// reach, so every row is relative to the same base. (Before carried
	// kernels kept their residual tables, the bandwidth and peak rows had
	// needed a base of their own: TTFT 359 ms, TPOT 7.06 ms at 2048
	// tokens in, against the calibrated 362.6 ms and 7.27 ms.)
	sys, err := hardware.NewSystem(d, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	r, err := sim.Run(sys, adapter{M: m}, sc)
	if err != nil {
		t.Fatal(err)
	}
	if base.TTFT != r.Inference.TTFT || base.TPOT != r.Inference.TPOT {
		t.Errorf("base: TTFT %v TPOT %v, want simulate's %v and %v", base.TTFT, base.TPOT, r.Inference.TTFT, r.Inference.TPOT)
	}
	if cp.Point.TTFT != base.TTFT || cp.Point.TPOT != base.TPOT || ln.Point != base {
		t.Errorf("capacity %+v, link %+v: want the base's times %+v", cp.Point, ln.Point, base)
	}
	if _, _, err := plan.Sensitivity(d, adapter{M: m}, sc, 0.03, 0); err == nil {
		t.Error("step 0: no error")
	}
}

// TestSensitivity_partialBase: on an H100 whose fp8 peak is a what-if, a
// bf16 run's base is the H100's own (no bf16 kernel reads the fp8 peak),
// and so is every row: the capacity row changes no time, the peak row
// (which changes the bf16 peak too) shortens the prefill.
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
	own, ownRows, err := plan.Sensitivity(h, adapter{M: m}, sc, 0.03, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	base, rows, err := plan.Sensitivity(d, adapter{M: m}, sc, 0.03, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	if base != own {
		t.Errorf("base %+v, want the H100's %+v", base, own)
	}
	for i, r := range rows {
		switch r.Knob {
		case "memory capacity":
			if r.TTFT != 0 || r.TPOT != 0 {
				t.Errorf("capacity row %+v: want no time changed", r)
			}
		case "matrix peak":
			if !(r.TTFT < -0.03) || r.TTFT != ownRows[i].TTFT {
				t.Errorf("peak row %+v: want the prefill shorter, as on the H100 (%+.4f)", r, ownRows[i].TTFT)
			}
		}
	}
}

// TestSensitivity_continuous: at the smallest step the command takes
// (0.1%), no row moves a time by more than the step, nor the wrong way.
// A what-if whose carried kernels dropped the base's residual tables had
// not been continuous with its base: 1% less fp8 peak on an H100 had made
// an fp8 prefill 1.5% faster (cmd/perfsim TestWhatIf_continuous).
func TestSensitivity_continuous(t *testing.T) {
	const step = 1e-3
	for _, tc := range []struct{ hw, model string }{{"h100", "llama3-8b"}, {"a100", "llama3-8b"}, {"h200", "mixtral-8x7b"}} {
		d, err := hardware.Resolve(tc.hw)
		if err != nil {
			t.Fatal(err)
		}
		m, err := workloads.Resolve(tc.model)
		if err != nil {
			t.Fatal(err)
		}
		sc := sim.Default()
		sc.Batch, sc.Input, sc.Output = 8, 1024, 64
		if tc.model == "mixtral-8x7b" {
			sc.TP = 2
		}
		_, rows, err := plan.Sensitivity(d, adapter{M: m}, sc, 0.03, step)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			for _, x := range []float64{r.TTFT, r.TPOT} {
				if x > 0 || x < -1.5*step {
					t.Errorf("%s %s: +0.1%% of %s: TTFT %+.4f%% TPOT %+.4f%%, want each in [-0.15%%, 0]", tc.hw, tc.model, r.Knob, 100*r.TTFT, 100*r.TPOT)
					break
				}
			}
		}
	}
}
