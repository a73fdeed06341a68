package serve_test

import (
	"testing"

	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// TestOverloaded_runningBatch: an engine whose KV cache and running-
// sequence cap hold the whole run admits every request at once, so its
// queue never grows; offered far more than it serves, its backlog sits
// in the running batch, and the verdict must still say so. Loads it
// keeps up with (its capacity at maximum load is about 64 req/s on
// this mix) must not be called overloaded, a short run's warm-up
// included.
func TestOverloaded_runningBatch(t *testing.T) {
	sys, w := setup(t, "h100", "llama3-8b", 1)
	p := pricer(t, sys, w, sim.Default())
	e, _ := serve.Preset("vllm", sys.Device.Memory.Limit())
	for _, c := range []struct {
		n    int
		rate float64
		want bool
	}{
		{400, 5, false},
		{400, 20, false},
		{400, 40, false},
		{4000, 40, false},
		{4000, 50, false},
		// Before: served 28 req/s of 130 with 400 requests, all
		// admitted at once, and no verdict.
		{400, 130, true},
		{400, 300, true},
		{4000, 130, true},
	} {
		res := mustServe(t, p, e, serve.Workload{N: c.n, Arrival: serve.Poisson, Rate: c.rate, Seed: 3, Joint: serve.ShareGPT{}})
		t.Logf("%d requests at %g req/s: served %.3g req/s, %s", c.n, c.rate, res.RequestsPerSecond, res.Verdict)
		if res.Overloaded != c.want {
			t.Errorf("%d requests at %g req/s (served %.3g req/s): overloaded %v, want %v", c.n, c.rate, res.RequestsPerSecond, res.Overloaded, c.want)
		}
	}
}
