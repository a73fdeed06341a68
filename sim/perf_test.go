package sim_test

import (
	"testing"

	"github.com/perfsim/perfsim/sim"
)

// TestRun_allocs bounds the allocations of one simulation of
// BenchmarkSimulate's scenarios: the report and its rows, and the three
// decompositions the workload returns (about 12 each). Run recycles its
// scratch state (costers and their memos) between calls, and prices each
// distinct kernel once; 85 allocations per run before that work.
func TestRun_allocs(t *testing.T) {
	for _, bc := range []struct {
		model string
		tp    int
	}{{"gpt3-175b", 8}, {"llama3-70b", 4}} {
		sys, w := load(t, "h100", bc.model, 8)
		sc := sim.Default()
		sc.TP = bc.tp
		got := testing.AllocsPerRun(20, func() {
			if _, err := sim.Run(sys, w, sc); err != nil {
				t.Fatal(err)
			}
		})
		if got > 50 {
			t.Errorf("%s: %v allocations per Run, want at most 50", bc.model, got)
		}
	}
}
