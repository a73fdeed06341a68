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
