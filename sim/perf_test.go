package sim_test

import (
	"reflect"
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/internal/racedetect"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// TestRun_allocs bounds the allocations of one simulation of
// BenchmarkSimulate's scenarios, run again and again as a serving loop or
// a sweep's repeated points would: the report, its rows and its warnings
// in one block, the warnings' messages. Run recycles its scratch state
// (costers and their memos), keeps prices and decompositions between runs
// (pricecache.go, opscache.go) and prices each distinct kernel once; 85
// allocations per run before the first of these, 48 before the last.
func TestRun_allocs(t *testing.T) {
	if racedetect.Enabled {
		// Under -race, sync.Pool drops a random share of what is put
		// back, so Run's recycled runners are allocated anew: the count
		// measures the detector, not Run (36 and 13 here under -race).
		t.Skip("allocation counts are not Run's under the race detector: its sync.Pool drops recycled runners at random")
	}
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
		if got > 10 {
			t.Errorf("%s: %v allocations per Run, want at most 10", bc.model, got)
		}
	}
}

// TestRun_cachesChangeNothing checks that the prices and decompositions
// runners keep between runs give the same reports, field for field, as
// runs that keep nothing: over models, devices (fitted and not), modes,
// data types and CUDA graphs, each run twice so that the second is
// served from the caches, and after a device's peak or a system's link is
// changed in place.
func TestRun_cachesChangeNothing(t *testing.T) {
	type tc struct {
		hw, model string
		tp        int
		mutate    func(*sim.Scenario)
	}
	cases := []tc{
		{"h100", "llama3-70b", 4, nil},
		{"h100", "gpt3-175b", 8, nil},
		{"a100", "llama3-8b", 1, func(s *sim.Scenario) { s.NoGraphs = true }},
		{"mi300x", "mixtral-8x7b", 2, nil},
		{"h200", "llama3-8b", 1, func(s *sim.Scenario) { s.Weights, s.Act, s.KV = model.FP8, model.FP8, model.FP8 }},
		{"h100", "llama3-8b", 1, func(s *sim.Scenario) { s.Mode, s.Seq, s.GlobalBatch = sim.Training, 2048, 8 }},
		{"b200", "llama3-8b", 2, func(s *sim.Scenario) { s.Batch, s.Input, s.Output = 64, 8000, 500 }},
		{"t4", "llama3-8b", 1, nil}, // bf16 emulated: a warning at every run, from the caches too
		{"h100", "llama3-8b", 1, func(s *sim.Scenario) { s.Output = 2 }},
		{"h100", "gpt3-175b", 8, func(s *sim.Scenario) { s.PP = 2; s.TP = 4 }},
	}
	type loaded struct {
		sys *hardware.System
		w   sim.Workload
	}
	var systems []loaded
	for _, c := range cases {
		sys, w := load(t, c.hw, c.model, 8)
		systems = append(systems, loaded{sys, w})
	}
	run := func(i int) *sim.Report {
		t.Helper()
		c, sys, w := cases[i], systems[i].sys, systems[i].w
		sc := sim.Default()
		sc.TP = c.tp
		if c.mutate != nil {
			c.mutate(&sc)
		}
		r, err := sim.Run(sys, w, sc)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		return r
	}
	var want []*sim.Report
	sim.WithoutCaches(func() {
		for i := range cases {
			want = append(want, run(i))
		}
	})
	for i, c := range cases {
		for pass := range 3 { // again at once, so that the runner's caches hold it
			if got := run(i); !reflect.DeepEqual(got, want[i]) {
				t.Errorf("pass %d, %s on %s: the report with caches differs from the one without", pass, c.model, c.hw)
			}
		}
	}
	// One device, its peak halved in place between runs.
	sys, w := load(t, "h100", "llama3-8b", 1)
	sc := sim.Default()
	before, err := sim.Run(sys, w, sc)
	if err != nil {
		t.Fatal(err)
	}
	sys.Device.Matrix[model.BF16] /= 2
	after, err := sim.Run(sys, w, sc)
	if err != nil {
		t.Fatal(err)
	}
	var fresh *sim.Report
	sim.WithoutCaches(func() { fresh, err = sim.Run(sys, w, sc) })
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(before, after) || !reflect.DeepEqual(after, fresh) {
		t.Errorf("after halving the bf16 peak in place: TTFT %v before, %v after, %v without caches", before.Inference.TTFT, after.Inference.TTFT, fresh.Inference.TTFT)
	}
	// One system, its NVLink bandwidth halved in place between runs (the
	// processor, and so the prices of the kernels, unchanged).
	sys, w = load(t, "h100", "llama3-70b", 8)
	sc = sim.Default()
	sc.TP = 8
	if before, err = sim.Run(sys, w, sc); err != nil {
		t.Fatal(err)
	}
	sys.Intra.Bandwidth /= 2
	if after, err = sim.Run(sys, w, sc); err != nil {
		t.Fatal(err)
	}
	sim.WithoutCaches(func() { fresh, err = sim.Run(sys, w, sc) })
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(before, after) || !reflect.DeepEqual(after, fresh) {
		t.Errorf("after halving the NVLink bandwidth in place: TTFT %v before, %v after, %v without caches", before.Inference.TTFT, after.Inference.TTFT, fresh.Inference.TTFT)
	}
}
