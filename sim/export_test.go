package sim

import (
	"sync"

	"github.com/perfsim/perfsim/hardware"
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
	saved := runners
	runners = &sync.Pool{New: func() any { return new(runner) }}
	defer func() { runners = saved }()
	f()
}
