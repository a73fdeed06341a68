package sim

import (
	"testing"

	"github.com/perfsim/perfsim/model"
)

// layouts are training scenarios of the fake model on 64 test GPUs (8 per
// node), over every kind of parallelism and overlap.
var layouts = []struct {
	name string
	mod  func(*Scenario)
}{
	{"dp", func(s *Scenario) { s.DP = 64 }},
	{"tp8-sp-dp8", func(s *Scenario) { s.TP, s.SP, s.DP = 8, true, 8 }},
	{"tp2-pp4-dp8", func(s *Scenario) { s.TP, s.PP, s.DP = 2, 4, 8 }},
	{"interleaved", func(s *Scenario) { s.TP, s.PP, s.DP, s.Schedule, s.VirtualStages = 4, 4, 4, Interleaved, 2 }},
	{"gpipe", func(s *Scenario) { s.TP, s.PP, s.DP, s.Schedule = 2, 2, 16, GPipe }},
	{"cp4", func(s *Scenario) { s.TP, s.CP, s.DP, s.SP = 2, 4, 8, true }},
	{"zero3", func(s *Scenario) { s.DP, s.ZeRO, s.Recompute = 64, 3, RecomputeFull }},
	{"zero1-no-overlap", func(s *Scenario) { s.TP, s.DP, s.ZeRO, s.NoOverlap = 4, 16, 1, true }},
	{"tp-overlap", func(s *Scenario) { s.TP, s.SP, s.PP, s.DP, s.TPOverlap = 8, true, 2, 4, true }},
	{"tp16-across-nodes", func(s *Scenario) { s.TP, s.DP = 16, 4 }},
}

func layoutScenario(mod func(*Scenario)) Scenario {
	sc := Default()
	sc.Mode, sc.Seq, sc.Batch, sc.GlobalBatch = Training, 2048, 1, 256
	mod(&sc)
	return sc
}

// Raising any link's bandwidth never slows a step.
func TestTrainingScaled_linkBandwidthMonotone(t *testing.T) {
	w := tinyLlama()
	w.heads, w.kvHeads = 16, 16
	for _, tt := range layouts {
		t.Run(tt.name, func(t *testing.T) {
			sc := layoutScenario(tt.mod)
			base := mustRun(t, testSystem(64), w, sc).Training.StepTime
			for _, f := range []float64{1.5, 2, 10} {
				a, b := testSystem(64), testSystem(64)
				a.Intra.Bandwidth *= model.ByteRate(f)
				b.Inter.Bandwidth *= model.ByteRate(f)
				ta := mustRun(t, a, w, sc).Training.StepTime
				tb := mustRun(t, b, w, sc).Training.StepTime
				if ta > base*(1+1e-12) || tb > base*(1+1e-12) {
					t.Errorf("×%g bandwidth: intra %v, inter %v, slower than %v", f, ta, tb, base)
				}
			}
		})
	}
}

// More micro-batches (a larger global batch at the same layout) never
// enlarge the bubble, and shrink its share of the step.
func TestTrainingScaled_moreMicroBatchesNeverEnlargeBubble(t *testing.T) {
	w := tinyLlama()
	for _, tt := range layouts[2:5] {
		t.Run(tt.name, func(t *testing.T) {
			var prevBubble, prevShare float64 = 1e300, 2
			for _, gb := range []int{32, 64, 128, 256, 512} {
				sc := layoutScenario(tt.mod)
				sc.GlobalBatch = gb * sc.DP / 8
				tr := mustRun(t, testSystem(64), w, sc).Training
				b := float64(tr.Breakdown.Bubble)
				share := b / float64(tr.StepTime)
				if b > prevBubble*(1+1e-12) || share > prevShare {
					t.Errorf("%d micro-batches: bubble %v (share %.3f) after %v (%.3f)", tr.MicroBatches, tr.Breakdown.Bubble, share, prevBubble, prevShare)
				}
				prevBubble, prevShare = b, share
			}
		})
	}
}

// The step is its breakdown, and the memory shrinks as ZeRO shards more.
func TestTrainingScaled_breakdownAndZeRO(t *testing.T) {
	w := tinyLlama()
	var prev float64 = 1e300
	for z := 0; z <= 3; z++ {
		sc := layoutScenario(func(s *Scenario) { s.DP, s.ZeRO = 64, z })
		rep := mustRun(t, testSystem(64), w, sc)
		tr := rep.Training
		if !near(float64(tr.StepTime), float64(tr.Breakdown.Total()), 1e-12) {
			t.Errorf("ZeRO %d: step %v ≠ Σ breakdown %v", z, tr.StepTime, tr.Breakdown.Total())
		}
		m := float64(rep.Memory.Weights + rep.Memory.Gradients + rep.Memory.Optimizer)
		if m >= prev {
			t.Errorf("ZeRO %d: model states %v not below stage %d's %v", z, m, z-1, prev)
		}
		prev = m
	}
}
