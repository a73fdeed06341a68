package serve_test

import (
	"runtime"
	"testing"

	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// peakHeap serves n requests and returns the most live heap (after a
// collection) seen while requests finish, every 1,000th finish and at
// the end with the result held, less the heap before the run (the
// requests themselves, which the caller holds, not counted).
func peakHeap(t *testing.T, n int, arr serve.Arrival) float64 {
	t.Helper()
	sys, w := setup(t, "h100", "llama3-8b", 1)
	e, _ := serve.Preset("vllm", sys.Device.Memory.Limit())
	p := pricer(t, sys, w, e.Scenario(sim.Default()))
	reqs, err := (&serve.Workload{N: n, Arrival: arr, Rate: 20, Seed: 1, Input: serve.Fixed(200), Output: serve.Fixed(100)}).Requests()
	if err != nil {
		t.Fatal(err)
	}
	var ms runtime.MemStats
	live := func() float64 {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapAlloc)
	}
	base := live()
	peak, k := 0.0, 0
	o := serve.Options{ITL: true, OnFinish: func(int, *serve.Metrics) {
		if k++; k%1000 == 0 {
			peak = max(peak, live())
		}
	}}
	res, err := serve.Run(p, e, reqs, o)
	if err != nil {
		t.Fatal(err)
	}
	peak = max(peak, live())
	runtime.KeepAlive(res)
	runtime.KeepAlive(reqs)
	return peak - base
}

// TestMemoryPerRequest: a run's live heap grows with its requests by
// the 36 bytes of a finished request's record (records.go) and little
// more: its slope between 4,000 and 40,000 requests, online (Poisson at
// 20 req/s, about 14 in the system) and offline (every request waiting
// at t = 0), stays under 64 bytes a request beyond the record. Before
// the records (a Metrics, an arrival and, offline, a live state kept for
// every request) it was about 390 bytes a request offline.
func TestMemoryPerRequest(t *testing.T) {
	const record, bound = 36, 64
	for _, arr := range []serve.Arrival{serve.Poisson, serve.AllAtOnce} {
		small, large := peakHeap(t, 4000, arr), peakHeap(t, 40000, arr)
		slope := (large - small) / 36000
		t.Logf("%s: live heap %.0f B at 4,000 requests, %.0f B at 40,000: %.1f B a request", arr, small, large, slope)
		if slope > record+bound {
			t.Errorf("%s: the live heap grows %.1f bytes a request, over the %d of the record and %d more", arr, slope, record, bound)
		}
	}
}
