package sim

import (
	"fmt"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

type hwSystem = hardware.System

// DecodeCheck returns the decode time of steps steps from context first,
// summed as Run sums it and priced step by step, for tests in sim_test.
func DecodeCheck(s *hwSystem, w Workload, sc Scenario, first, steps int) (summed, each float64, err error) {
	sc = sc.normalized()
	r := newRunner(s, w, sc, w.Shape())
	a, err := r.decode(r.phase(Decode), first, steps, nil, nil)
	if err != nil {
		return 0, 0, err
	}
	b, err := r.decodeEachStep(r.phase(Decode), first, steps, nil)
	if err != nil {
		return 0, 0, err
	}
	return float64(a.Time), float64(b.Time), nil
}

// WithoutCaches runs f with runners that keep no prices nor
// decompositions between runs (pricecache.go, opscache.go).
func WithoutCaches(f func()) {
	noRunnerCaches = true
	defer func() { noRunnerCaches = false }()
	f()
}

// PrefillChecks prices the prefill of sc without rows on a runner with
// caches, twice (the second time from the running totals the first
// left), and returns the data types each checked.
func PrefillChecks(s *hwSystem, w Workload, sc Scenario) (first, again [32]bool, err error) {
	sc = sc.normalized()
	r := &runner{prices: new([2]priceCache), chunks: new(chunkCache), prefix: new(prefixCache)}
	for i := range 2 {
		r.init(s, w, sc, w.Shape(), s.Device.Processor())
		r.diag.noRows = true
		var ph PhaseReport
		var ws model.Bytes
		ok, err := r.prefillTotals(&ph, &ws, nil)
		if err != nil || !ok {
			return first, again, fmt.Errorf("prefillTotals: %v, %v", ok, err)
		}
		if i == 0 {
			first = r.diag.checked
		} else {
			again = r.diag.checked
		}
	}
	return first, again, nil
}

// GroupParts returns what PriceGroup adds up for one replica's iteration
// it alone in its group: its own part and the group's MoE part at its
// tokens (tests in sim_test).
func (p *Pricer) GroupParts(it *Iteration) (own, moe float64) {
	n := it.Tokens()
	return float64(p.price(it, rankPart).Time), p.groupAt(n, n, len(it.Prefill) == 0 && !it.Eager)
}
