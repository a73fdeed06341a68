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
	if _, _, err := plan.Sensitivity(d, adapter{M: m}, sc, 0.03, 0); err == nil {
		t.Error("step 0: no error")
	}
}
