package serve_test

import (
	"strings"
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
		// A verdict from the running batch alone, the waits flat, is
		// the unsettled kind, which a longer run may overturn (plan
		// lengthens such runs); one from the queue's waits is not.
		if want := res.Overloaded && !strings.Contains(res.Verdict, "queue grows"); res.Unsettled != want {
			t.Errorf("%d requests at %g req/s: unsettled %v, want %v (%s)", c.n, c.rate, res.Unsettled, want, res.Verdict)
		}
		if c.n == 400 && c.rate == 130 && !res.Unsettled {
			t.Errorf("400 requests at 130 req/s: not unsettled, though its running batch grows and its queue does not")
		}
	}
}

// TestOverloaded_queueSettled: a verdict from a growing queue (one
// running request at a time, offered twice what it serves) is not
// the unsettled kind, and a run that keeps up is neither.
func TestOverloaded_queueSettled(t *testing.T) {
	sys, w := setup(t, "h100", "llama3-8b", 1)
	p := pricer(t, sys, w, sim.Default())
	e, _ := serve.Preset("vllm", sys.Device.Memory.Limit())
	e.MaxSeqs = 1
	for _, c := range []struct {
		rate                  float64
		overloaded, unsettled bool
	}{{0.5, false, false}, {20, true, false}} {
		res := mustServe(t, p, e, serve.Workload{N: 400, Arrival: serve.Poisson, Rate: c.rate, Seed: 3, Input: serve.Fixed(256), Output: serve.Fixed(64)})
		t.Logf("%g req/s: served %.3g req/s, %s", c.rate, res.RequestsPerSecond, res.Verdict)
		if res.Overloaded != c.overloaded || res.Unsettled != c.unsettled {
			t.Errorf("%g req/s: overloaded %v, unsettled %v; want %v, %v", c.rate, res.Overloaded, res.Unsettled, c.overloaded, c.unsettled)
		}
	}
}
