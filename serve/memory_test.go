package serve_test

import (
	"reflect"
	"runtime"
	"testing"

	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// peakHeap serves n requests (RunWorkload: drawn as the engine reaches
// them) and returns the most live heap (after a collection) seen while
// requests finish, every 1,000th finish and at the end with the result
// held, less the heap before the run.
func peakHeap(t *testing.T, n int, arr serve.Arrival) float64 {
	t.Helper()
	sys, w := setup(t, "h100", "llama3-8b", 1)
	e, _ := serve.Preset("vllm", sys.Device.Memory.Limit())
	p := pricer(t, sys, w, e.Scenario(sim.Default()))
	wl := &serve.Workload{N: n, Arrival: arr, Rate: 20, Seed: 1, Input: serve.Fixed(200), Output: serve.Fixed(100)}
	base := liveHeap()
	peak, k := 0.0, 0
	o := serve.Options{ITL: true, OnFinish: func(int, *serve.Metrics) {
		if k++; k%1000 == 0 {
			peak = max(peak, liveHeap())
		}
	}}
	res, err := serve.RunWorkload(p, e, wl, 1, o)
	if err != nil {
		t.Fatal(err)
	}
	peak = max(peak, liveHeap())
	runtime.KeepAlive(res)
	return peak - base
}

// TestMemoryPerRequest: a run's live heap grows with its requests by
// the 36 bytes of a finished request's record (records.go) and little
// more (the requests are drawn as they arrive, not held): its slope between 4,000 and 40,000 requests, online (Poisson at
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

// TestRunWorkload: drawing the requests as the engine reaches them gives
// Run's result on the drawn list exactly: every record and summary, with
// and without the prefix cache, on one scheduler and on two.
func TestRunWorkload(t *testing.T) {
	sys, w := setup(t, "h100", "llama3-8b", 1)
	e, _ := serve.Preset("vllm", sys.Device.Memory.Limit())
	tests := []struct {
		name string
		wl   serve.Workload
		o    serve.Options
		dp   int
	}{
		{"poisson", serve.Workload{N: 3000, Arrival: serve.Poisson, Rate: 30, Seed: 3, Input: serve.Uniform{Min: 50, Max: 400}, Output: serve.Uniform{Min: 1, Max: 200}}, serve.Options{ITL: true}, 1},
		{"all", serve.Workload{N: 3000, Arrival: serve.AllAtOnce, Seed: 4, Joint: serve.ShareGPT{}}, serve.Options{SeriesPoints: 100}, 1},
		{"gamma, prefix", serve.Workload{N: 2000, Arrival: serve.Gamma, CV: 3, Rate: 20, Seed: 5, Input: serve.Fixed(512), Output: serve.Fixed(64)}, serve.Options{PrefixHit: 0.5}, 1},
		{"two replicas", serve.Workload{N: 2000, Arrival: serve.Poisson, Rate: 40, Seed: 6, Input: serve.Fixed(300), Output: serve.Fixed(80)}, serve.Options{}, 2},
	}
	for _, tt := range tests {
		reqs, err := tt.wl.Requests()
		if err != nil {
			t.Fatal(err)
		}
		tt.o.Records = true
		want, err := serve.RunReplicas(pricer(t, sys, w, e.Scenario(sim.Default())), e, reqs, tt.dp, tt.o)
		if err != nil {
			t.Fatal(err)
		}
		got, err := serve.RunWorkload(pricer(t, sys, w, e.Scenario(sim.Default())), e, &tt.wl, tt.dp, tt.o)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: RunWorkload and Run on its requests differ:\n%+v\n%+v", tt.name, got.TTFT, want.TTFT)
		}
	}
	bad := serve.Workload{N: 10, Arrival: serve.Poisson, Rate: 1, Input: serve.Fixed(1 << 30), Output: serve.Fixed(1)}
	if _, err := serve.RunWorkload(pricer(t, sys, w, e.Scenario(sim.Default())), e, &bad, 1, serve.Options{}); err == nil {
		t.Error("a request beyond the KV cache: no error")
	}
}

// TestRunDeploymentWorkload: a drawn workload on a deployment gives what
// RunDeployment gives on its requests, whether the deployment draws them
// as the engine reaches them (replicas alone) or holds them (a router
// that sees the replicas' state, a closed loop).
func TestRunDeploymentWorkload(t *testing.T) {
	sys, w := setup(t, "h100", "llama3-8b", 1)
	e, _ := serve.Preset("vllm", sys.Device.Memory.Limit())
	wl := serve.Workload{N: 1500, Arrival: serve.Poisson, Rate: 30, Seed: 7, Input: serve.Uniform{Min: 50, Max: 400}, Output: serve.Uniform{Min: 1, Max: 200}}
	tests := []struct {
		name   string
		router serve.Router
		dp     int
		o      serve.Options
	}{
		{"one replica", serve.RoundRobin, 1, serve.Options{}},
		{"round-robin", serve.RoundRobin, 2, serve.Options{}},
		{"least outstanding", serve.LeastOutstanding, 2, serve.Options{}},
		{"closed loop", serve.RoundRobin, 1, serve.Options{Users: 16}},
	}
	for _, tt := range tests {
		tt.o.Records = true
		d := func() serve.Deployment {
			return serve.Deployment{Serve: serve.Pool{Pricer: pricer(t, sys, w, e.Scenario(sim.Default())), Engine: e, Instances: tt.dp}, Router: tt.router}
		}
		reqs, err := wl.Requests()
		if err != nil {
			t.Fatal(err)
		}
		want, err := serve.RunDeployment(d(), reqs, tt.o)
		if err != nil {
			t.Fatal(err)
		}
		got, err := serve.RunDeploymentWorkload(d(), &wl, tt.o)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: RunDeploymentWorkload and RunDeployment on its requests differ:\n%+v\n%+v", tt.name, got.TTFT, want.TTFT)
		}
	}
}

// liveHeap returns the bytes the heap holds live, after a collection.
func liveHeap() float64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc)
}
