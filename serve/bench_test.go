package serve_test

import (
	"testing"

	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// BenchmarkServe: 10,000 requests of Llama 3 70B on 8 H100s (TP 8, the
// vllm preset), 1024 tokens in and 256 out, Poisson at 15 req/s (about
// 93% of the 16 req/s the replica sustains; above about 16.5 the run is overloaded).
func BenchmarkServe(b *testing.B) {
	sys, w := setup(b, "h100", "llama3-70b", 8)
	sc := sim.Default()
	sc.TP = 8
	e, _ := serve.Preset("vllm", sys.Device.Memory.Limit())
	reqs, err := (&serve.Workload{N: 10000, Arrival: serve.Poisson, Rate: benchRate, Seed: 1,
		Input: serve.Fixed(1024), Output: serve.Fixed(256)}).Requests()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var res *serve.Result
	for b.Loop() {
		p, err := sim.NewPricer(sys, w, e.Scenario(sc)) // a fresh memo each run
		if err != nil {
			b.Fatal(err)
		}
		res, err = serve.Run(p, e, reqs, serve.Options{})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(res.Iterations), "iterations/run")
	b.ReportMetric(res.RequestsPerSecond, "served_req/s")
}

const benchRate = 15
