package sim_test

import (
	"math"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/sim"
)

// TestZeRO_statesConserved: ZeRO shards each parameter's states over the
// ranks that hold a copy of it, so at PP 1 the devices together hold the
// model's states once: 12 bytes of Adam state per parameter with ZeRO 1,
// 2 of bf16 gradients more with ZeRO 2, 2 of weights more with ZeRO 3
// (Rajbhandari et al. 2020). An expert lives on DP·CP/EP ranks (its
// expert-data-parallel group, which dpComm already reduces over), not on
// all DP·CP: Mixtral 8x7B at TP 2 × DP 32 × EP 8 had sharded its experts'
// states over all 32, 1.265 GiB of optimizer state a GPU where 64 GPUs
// must hold 12 × 46.7 B bytes, 8.16 GiB each.
func TestZeRO_statesConserved(t *testing.T) {
	for _, tc := range []struct {
		model          string
		tp, dp, cp, ep int
	}{
		{"llama3-8b", 1, 8, 1, 1},
		{"llama3-8b", 2, 4, 2, 1},
		{"mixtral-8x7b", 2, 32, 1, 8},
		{"mixtral-8x7b", 1, 8, 2, 4},
	} {
		for zero := 1; zero <= 3; zero++ {
			devs := tc.tp * tc.dp * tc.cp
			sys, w := load(t, "h100", tc.model, devs)
			sc := sim.Default()
			sc.Mode, sc.Seq, sc.Batch = sim.Training, 4096, 1
			sc.TP, sc.DP, sc.CP, sc.EP, sc.ZeRO = tc.tp, tc.dp, tc.cp, tc.ep, zero
			sc.SP = tc.tp > 1
			sc.GlobalBatch = tc.dp
			rep, err := sim.Run(sys, w, sc)
			if err != nil {
				t.Fatalf("%s %+v zero %d: %v", tc.model, tc, zero, err)
			}
			n := w.Params()
			m := rep.Memory
			check := func(what string, per float64, bytes float64) {
				if got, want := float64(devs)*per, bytes*n; math.Abs(got-want) > 0.005*want {
					t.Errorf("%s %+v ZeRO %d: %s %.4g B a GPU × %d = %.4g, want %g bytes × %.4g parameters = %.4g",
						tc.model, tc, zero, what, per, devs, got, bytes, n, want)
				}
			}
			check("optimizer", float64(m.Optimizer), 12)
			if zero >= 2 {
				check("gradients", float64(m.Gradients), 2)
			}
			if zero >= 3 {
				check("weights", float64(m.Weights), 2)
			}
		}
	}
}

// TestZeRO_pipelineWarned: ZeRO 2 or 3 beside pipeline parallelism is a
// layout no framework runs (Megatron-LM's distributed optimizer is ZeRO 1;
// DeepSpeed's PipelineEngine refuses ZeRO 2 and 3): Run prices it as
// asked, and warns, as plan train no longer searches it.
func TestZeRO_pipelineWarned(t *testing.T) {
	sys, w := load(t, "h100", "gpt3-1.3b", 4)
	for _, tc := range []struct {
		zero, pp int
		warn     bool
	}{{1, 2, false}, {2, 2, true}, {3, 2, true}, {3, 1, false}} {
		sc := sim.Default()
		sc.Mode, sc.Seq, sc.Batch, sc.PP, sc.DP, sc.ZeRO = sim.Training, 2048, 1, tc.pp, 4/tc.pp, tc.zero
		sc.GlobalBatch = 8
		rep, err := sim.Run(sys, w, sc)
		if err != nil {
			t.Fatal(err)
		}
		var got bool
		for _, e := range rep.Warnings {
			if strings.Contains(e.Error(), "pipeline") && strings.Contains(e.Error(), "ZeRO") {
				got = true
			}
		}
		if got != tc.warn {
			t.Errorf("ZeRO %d, pp %d: warned %v (%v), want %v", tc.zero, tc.pp, got, rep.Warnings, tc.warn)
		}
	}
}
