package mlperf

import "github.com/perfsim/perfsim/sim"

// SimScenario returns the scenario a Fixed benchmark's batch runs as on
// one device (the engine's fused graph for CNNs, a captured graph
// otherwise, at the benchmark's precision), for pricing its energy or
// its kernels outside Run.
func (b Benchmark) SimScenario(w sim.Workload, batch int) sim.Scenario {
	return (&fixed{w: w, b: b}).scenario(batch)
}
