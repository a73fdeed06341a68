package serve_test

import (
	"fmt"
	"testing"

	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// BenchmarkServeRequests: Llama 3 8B on one H100 (the vllm preset), 200
// tokens in and 100 out, at 10,000 and 100,000 requests, Poisson at 20
// req/s (online) and all at t = 0 (offline), the workload drawn inside
// the loop: B/op over the request count is the memory a request costs.
func BenchmarkServeRequests(b *testing.B) {
	sys, w := setup(b, "h100", "llama3-8b", 1)
	e, _ := serve.Preset("vllm", sys.Device.Memory.Limit())
	for _, arr := range []serve.Arrival{serve.Poisson, serve.AllAtOnce} {
		for _, n := range []int{10000, 100000} {
			b.Run(fmt.Sprintf("%s/%d", arr, n), func(b *testing.B) {
				wl := &serve.Workload{N: n, Arrival: arr, Rate: 20, Seed: 1, Input: serve.Fixed(200), Output: serve.Fixed(100)}
				b.ReportAllocs()
				for b.Loop() {
					p := pricer(b, sys, w, e.Scenario(sim.Default()))
					reqs, err := wl.Requests()
					if err != nil {
						b.Fatal(err)
					}
					if _, err := serve.Run(p, e, reqs, serve.Options{ITL: true}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
