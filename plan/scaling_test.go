package plan

import (
	"testing"

	"github.com/perfsim/perfsim/sim"
	"github.com/perfsim/perfsim/workloads"
)

// TestScaling_referenceThatFits: strong and weak scaling are relative to
// the smallest count at which a layout fits. When the first count fits
// nothing (Llama 3 8B on one H100, whose states alone are 119 GiB), every
// later point had read "speedup 0, efficiency 0.0%", as if measured.
func TestScaling_referenceThatFits(t *testing.T) {
	m, err := workloads.Resolve("llama3-8b")
	if err != nil {
		t.Fatal(err)
	}
	req := TrainRequest{GlobalBatch: 32, Seq: 2048, Base: sim.Default(), MicroBatches: []int{1},
		Recomputes: []sim.Recompute{sim.RecomputeNone}}
	pts, err := Scaling("dgx-h100", adapter{M: m}, req, []int{1, 8, 16})
	if err != nil {
		t.Fatal(err)
	}
	if pts[0].StrongFits || !pts[1].StrongFits || !pts[2].StrongFits {
		t.Fatalf("fits: %v %v %v, want 1 GPU out, 8 and 16 in", pts[0].StrongFits, pts[1].StrongFits, pts[2].StrongFits)
	}
	if p := pts[1]; p.Speedup != 1 || p.StrongEff != 1 {
		t.Errorf("8 GPUs, the first that fits: speedup %v, efficiency %v; want 1 and 1", p.Speedup, p.StrongEff)
	}
	if p := pts[2]; !(p.Speedup > 1 && p.Speedup <= 2.01) || !(p.StrongEff > 0.5 && p.StrongEff <= 1.01) {
		t.Errorf("16 GPUs: speedup %v, efficiency %v; want them over 8 GPUs'", p.Speedup, p.StrongEff)
	}
	if p := pts[1]; p.WeakFits && p.WeakEff != 1 {
		t.Errorf("8 GPUs weak: efficiency %v, want 1 (the reference)", p.WeakEff)
	}
	if p := pts[2]; p.WeakFits && !(p.WeakEff > 0.5 && p.WeakEff <= 1.05) {
		t.Errorf("16 GPUs weak: efficiency %v", p.WeakEff)
	}
}

// TestScaling_weakBatchNotWhole: where the first count's batch per GPU
// does not make a whole global batch at a count, weak scaling has no
// point there and says so (WeakBatch 0): 512 sequences over 3 GPUs had
// printed a weak batch of 10922 at 64 GPUs (512 × 64 / 3, truncated) and
// "no fit", a batch never tried.
func TestScaling_weakBatchNotWhole(t *testing.T) {
	m, err := workloads.Resolve("gpt3-1.3b")
	if err != nil {
		t.Fatal(err)
	}
	req := TrainRequest{GlobalBatch: 32, Seq: 2048, Base: sim.Default(), MicroBatches: []int{1},
		Recomputes: []sim.Recompute{sim.RecomputeNone}}
	pts, err := Scaling("dgx-h100", adapter{M: m}, req, []int{3, 4, 6})
	if err != nil {
		t.Fatal(err)
	}
	if p := pts[1]; p.WeakBatch != 0 || p.WeakFits {
		t.Errorf("4 GPUs: weak batch %d, fits %v; want none (32 × 4 / 3 is not whole)", p.WeakBatch, p.WeakFits)
	}
	if p := pts[2]; p.WeakBatch != 64 || !p.WeakFits {
		t.Errorf("6 GPUs: weak batch %d, fits %v; want 32 × 6 / 3 = 64, tried", p.WeakBatch, p.WeakFits)
	}
}
