package sim_test

import (
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/sim"
)

// TestFootprint_training: the inverse queries size a training step as
// Run does. Footprint had sized a transformer's training memory with an
// older formula (no pipeline split, no FlashAttention, no micro-batches
// in flight), so simulate printed, for Llama 3 70B at TP 8 with SP, PP 4
// interleaved and DP 32 at seq 4096 (fits, 23.5 GiB), "max batch 0, max
// context 3297": MaxBatch dropped the global batch to one micro-batch,
// which the interleaved schedule refuses, and Footprint said 4096 tokens
// needed 106 GB.
func TestFootprint_training(t *testing.T) {
	sc := sim.Default()
	sc.Mode, sc.Seq, sc.TP, sc.SP, sc.PP, sc.DP, sc.GlobalBatch, sc.Schedule, sc.VirtualStages, sc.ZeRO =
		sim.Training, 4096, 8, true, 4, 32, 1024, sim.Interleaved, 5, 1
	one := sim.Default()
	one.Mode, one.Seq, one.GlobalBatch = sim.Training, 2048, 8
	for _, tt := range []struct {
		name, mdl string
		gpus      int
		sc        sim.Scenario
	}{
		{"llama3-70b tp 8 sp pp 4 interleaved dp 32", "llama3-70b", 1024, sc},
		{"gpt3-2.7b one GPU", "gpt3-2.7b", 1, one},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, w := load(t, "h100", tt.mdl, 1)
			sys, err := hardware.LookupSystem("dgx-h100", tt.gpus)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := sim.Run(sys, w, tt.sc)
			if err != nil {
				t.Fatal(err)
			}
			m, err := sim.Footprint(sys, w, tt.sc)
			if err != nil {
				t.Fatal(err)
			}
			if m.Total != rep.Memory.Total || m.Fits != rep.Memory.Fits {
				t.Errorf("Footprint %v (fits %v), Run %v (fits %v)", m.Total, m.Fits, rep.Memory.Total, rep.Memory.Fits)
			}
			if !rep.Memory.Fits {
				t.Fatal("the scenario does not fit")
			}
			b, err := sim.MaxBatch(sys, w, tt.sc)
			if err != nil || b < tt.sc.Batch {
				t.Errorf("MaxBatch %d, %v: want at least the micro-batch that runs, %d", b, err, tt.sc.Batch)
			}
			c, err := sim.MaxContext(sys, w, tt.sc)
			if err != nil || c < tt.sc.Seq {
				t.Errorf("MaxContext %d, %v: want at least the sequence that runs, %d", c, err, tt.sc.Seq)
			}
		})
	}
}
