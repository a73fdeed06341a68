package serve_test

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// A deployMode is one way of serving a workload that runs as one event
// loop (RunDeploymentWorkload) or replays a trace (RunDeploymentTrace).
type deployMode struct {
	name   string
	disagg bool
	router serve.Router
	dp     int
	users  int
	trace  bool
}

var deployModes = []deployMode{
	{name: "least-outstanding", router: serve.LeastOutstanding, dp: 2},
	{name: "closed loop", users: 16},
	{name: "disaggregated", disagg: true},
	{name: "disaggregated, least-outstanding", disagg: true, router: serve.LeastOutstanding, dp: 2},
	{name: "trace", dp: 1, trace: true},
	{name: "trace, least-outstanding", router: serve.LeastOutstanding, dp: 2, trace: true},
}

// peakDeployHeap serves n requests of 200 tokens in and 100 out on
// Llama 3 8B and H100s in mode md (Poisson at 20 req/s a replica, or
// every request at t = 0) and returns the most live heap seen while
// requests finish (every 1,000th finish, and at the end with the result
// held), less the heap before the run; a trace's is read from its file
// before the heap is first measured (see TestMemoryTrace for what a
// trace holds).
func peakDeployHeap(t *testing.T, md deployMode, n int, arr serve.Arrival) float64 {
	t.Helper()
	sys, w := setup(t, "h100", "llama3-8b", 1)
	e, _ := serve.Preset("vllm", sys.Device.Memory.Limit())
	p := pricer(t, sys, w, e.Scenario(sim.Default()))
	dp := max(md.dp, 1)
	d := serve.Deployment{Serve: serve.Pool{Pricer: p, Engine: e, Instances: dp}, Router: md.router}
	if md.disagg {
		d.Decode = serve.Pool{Pricer: pricer(t, sys, w, e.Scenario(sim.Default())), Engine: e, Instances: 1}
	}
	wl := &serve.Workload{N: n, Arrival: arr, Rate: 20 * float64(dp), Seed: 1, Input: serve.Fixed(200), Output: serve.Fixed(100)}
	var tr *serve.Trace
	if md.trace {
		reqs, err := wl.Requests()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.WriteString("arrival_s,input_tokens,output_tokens\n")
		for _, q := range reqs {
			fmt.Fprintf(&b, "%.9g,%d,%d\n", float64(q.Arrival), q.Input, q.Output)
		}
		if tr, err = serve.LoadTrace(&b, "mem.csv", 0); err != nil {
			t.Fatal(err)
		}
	}
	var ms runtime.MemStats
	live := func() float64 {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapAlloc)
	}
	base := live()
	peak, k := 0.0, 0
	o := serve.Options{ITL: true, Users: md.users, OnFinish: func(int, *serve.Metrics) {
		if k++; k%1000 == 0 {
			peak = max(peak, live())
		}
	}}
	var res *serve.Result
	var err error
	if tr != nil {
		res, err = serve.RunDeploymentTrace(d, tr, o)
	} else {
		res, err = serve.RunDeploymentWorkload(d, wl, o)
	}
	if err != nil {
		t.Fatal(err)
	}
	if k != n {
		t.Fatalf("%s: %d records seen finishing of %d", md.name, k, n)
	}
	peak = max(peak, live())
	runtime.KeepAlive(res)
	runtime.KeepAlive(tr)
	return peak - base
}

// TestMemoryPerRequestDeploy: a deployment run as one event loop (the
// least-outstanding router, a closed loop of users, disaggregated pools)
// and a trace's replay grow their live heap with their requests by the
// 36 bytes of a finished request's record (and, disaggregated, the 8 of
// its transfer time) and little more, as a plain run does
// (TestMemoryPerRequest): its slope between 4,000 and 40,000 requests
// stays under 64 bytes a request beyond the record. Before the
// deployments drew their requests as they reach them (each request's
// Request, its records in each pool and its hand-off held from the start)
// they grew by 300–650 bytes a request.
func TestMemoryPerRequestDeploy(t *testing.T) {
	if testing.Short() {
		t.Skip("serves 264,000 requests")
	}
	const record, bound = 36, 64
	for _, md := range deployModes {
		small, large := peakDeployHeap(t, md, 4000, serve.Poisson), peakDeployHeap(t, md, 40000, serve.Poisson)
		slope := (large - small) / 36000
		t.Logf("%s: live heap %.0f B at 4,000 requests, %.0f B at 40,000: %.1f B a request", md.name, small, large, slope)
		if slope > record+bound {
			t.Errorf("%s: the live heap grows %.1f bytes a request, over the %d of the record and %d more", md.name, slope, record, bound)
		}
	}
}
