package mlperf

import "github.com/perfsim/perfsim/sim"

// SimScenario returns the scenario a batch of a benchmark's first model
// (its only one, but for multi-model pipelines such as SDXL) runs as on
// one device: the engine's fused graph for CNNs, a captured graph
// otherwise, at the benchmark's precision. For pricing its energy or its
// kernels outside Run; w is that model.
func (b Benchmark) SimScenario(w sim.Workload, batch int) sim.Scenario {
	return (&fixed{b: b}).scenario(fixedPart{Part: b.parts()[0], w: w}, batch)
}
