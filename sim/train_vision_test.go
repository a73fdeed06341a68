package sim_test

import (
	"testing"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// TestTraining_visionSeq: a vision transformer trains on its image's
// tokens (ViT-L/16 at 224 px: 196 patches and the class token, 197), not
// on Scenario.Seq, whose default 2048 is a language model's. At seq 2048
// ViT-L/16's step at micro-batch 64 had been sized at 102.5 GiB of
// activations ("DOES NOT FIT" an H100, max batch 45), ten times
// Korthikanti et al.'s s·b·h·(10 + 24/t) per layer at s = 197 (24 layers
// of h = 1024: 8.9 GiB, FlashAttention keeping no scores); the step time
// moved with --seq too. The step and its memory must not depend on Seq,
// and must be sized at the image's tokens.
func TestTraining_visionSeq(t *testing.T) {
	sys, w := load(t, "h100", "vit-l16", 1)
	toks := w.Shape().Tokens
	if toks != 197 {
		t.Fatalf("vit-l16's tokens: %d, want 197", toks)
	}
	run := func(seq int) *sim.Report {
		sc := sim.Default()
		sc.Mode, sc.Batch, sc.GlobalBatch, sc.Seq = sim.Training, 64, 64, seq
		rep, err := sim.Run(sys, w, sc)
		if err != nil {
			t.Fatalf("seq %d: %v", seq, err)
		}
		return rep
	}
	at := run(toks)
	for _, seq := range []int{99, 2048, 8192} {
		rep := run(seq)
		if rep.Training.StepTime != at.Training.StepTime || rep.Memory.Total != at.Memory.Total {
			t.Errorf("seq %d: step %v, memory %v; at the image's %d tokens %v, %v: want the same",
				seq, rep.Training.StepTime, rep.Memory.Total, toks, at.Training.StepTime, at.Memory.Total)
		}
		if rep.Scenario.Seq != toks {
			t.Errorf("seq %d: the report's scenario says seq %d, want the image's %d tokens", seq, rep.Scenario.Seq, toks)
		}
	}
	// Korthikanti et al. without recomputation, attention fused: per
	// layer s·b·h·(10 + 24/t) bytes at 16 bits, t = 1.
	s := w.Shape()
	want := float64(s.Layers) * float64(toks) * 64 * float64(s.DModel) * 34
	if got := float64(at.Memory.Activations); got < 0.9*want || got > 1.3*want {
		t.Errorf("activations %v, want about %v (24 layers × 197 × 64 × 1024 × 34 bytes)", at.Memory.Activations, model.Bytes(want))
	}
	sc := sim.Default()
	sc.Mode, sc.Batch, sc.GlobalBatch = sim.Training, 64, 64
	m, err := sim.Footprint(sys, w, sc)
	if err != nil {
		t.Fatal(err)
	}
	if m.Total != at.Memory.Total {
		t.Errorf("Footprint at the default seq: %v, Run at the image's tokens: %v", m.Total, at.Memory.Total)
	}
	// At the image's tokens micro-batch 64 fits with room: the largest
	// micro-batch is well above it (45 at seq 2048).
	if mb, err := sim.MaxBatch(sys, w, sc); err != nil || mb < 200 {
		t.Errorf("MaxBatch at the default seq: %d, %v; want over 200", mb, err)
	}
}
