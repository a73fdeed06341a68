package serve_test

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// A deployMode is one way of serving a workload on a deployment
// (RunDeploymentWorkload) or replaying a trace (RunDeploymentTrace):
// round-robin replicas, each its own event loop, or one event loop.
type deployMode struct {
	name   string
	disagg bool
	router serve.Router
	dp     int
	users  int
	trace  bool
}

var deployModes = []deployMode{
	{name: "round-robin", dp: 2},
	{name: "trace, round-robin", dp: 2, trace: true},
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
// held), less the heap before the run; a trace's text is made before
// that, and read (LoadTrace) after it. The heap includes the records
// waiting to be put in order (as --requests-out streams them).
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
	var text []byte
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
		text = b.Bytes()
	}
	base := liveHeap()
	// The records are put in the requests' order as they finish, as
	// --requests-out writes them: those finished before one ahead of
	// them wait, and count in the heap.
	pend, next := map[int]serve.Metrics{}, 0
	var tr *serve.Trace
	if md.trace {
		var err error
		if tr, err = serve.LoadTrace(bytes.NewReader(text), "mem.csv", 0); err != nil {
			t.Fatal(err)
		}
	}
	peak, k := 0.0, 0
	o := serve.Options{ITL: true, Users: md.users, OnFinish: func(i int, m *serve.Metrics) {
		pend[i] = *m
		for _, ok := pend[next]; ok; _, ok = pend[next] {
			delete(pend, next)
			next++
		}
		if k++; k%1000 == 0 {
			peak = max(peak, liveHeap())
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
	if k != n || next != n {
		t.Fatalf("%s: %d records seen finishing of %d, %d in order", md.name, k, n, next)
	}
	peak = max(peak, liveHeap())
	runtime.KeepAlive(res)
	runtime.KeepAlive(tr)
	runtime.KeepAlive(text)
	return peak - base
}

// TestMemoryPerRequestDeploy: round-robin replicas, a deployment run as
// one event loop (the least-outstanding router, a closed loop of users,
// disaggregated pools) and a trace's replay grow their live heap with their requests by what
// the results keep (the 36 bytes of a finished request's record; and,
// disaggregated, the 8 of its transfer time), what a trace is (24 bytes
// a row) and little more, as a plain run does (TestMemoryPerRequest):
// online (Poisson), the slope between 4,000 and 40,000 requests stays
// under 64 bytes a request beyond those. Offline (every request at
// t = 0) a router decides every request's scheduler when it arrives, so
// each is held until its scheduler reaches it, as a 56-byte arrival
// (loop.go): the slope between 20,000 and 60,000 requests (past the
// requests the KV caches hold) stays under 64 bytes beyond those too.
// Before the deployments drew their requests as they reach them (each
// request's Request, its records in each pool and its hand-off held from
// the start, and, offline, its state built as it arrived) the slopes were
// 300–700 bytes a request. The heap is read between finishes, not when
// round-robin replicas merge their results: their records are kept in
// their places among all as they finish, not merged after.
func TestMemoryPerRequestDeploy(t *testing.T) {
	if testing.Short() {
		t.Skip("serves 1,000,000 requests")
	}
	const record, transfer, row, routed, bound = 36, 8, 24, 56, 64
	for _, md := range deployModes {
		for _, arr := range []serve.Arrival{serve.Poisson, serve.AllAtOnce} {
			lo, hi := 4000, 40000
			want := record + bound
			if arr == serve.AllAtOnce {
				lo, hi = 20000, 60000
				if md.router == serve.LeastOutstanding || md.disagg {
					want += routed
				}
			}
			if md.disagg {
				want += transfer
			}
			if md.trace {
				want += row
			}
			small, large := peakDeployHeap(t, md, lo, arr), peakDeployHeap(t, md, hi, arr)
			slope := (large - small) / float64(hi-lo)
			t.Logf("%s, %s: live heap %.0f B at %d requests, %.0f B at %d: %.1f B a request", md.name, arr, small, lo, large, hi, slope)
			if slope > float64(want) {
				t.Errorf("%s, %s: the live heap grows %.1f bytes a request, over the %d allowed", md.name, arr, slope, want)
			}
		}
	}
}

// BenchmarkServeDeploy: 10,000 requests of 200 tokens in and 100 out on
// Llama 3 8B and H100s in each deployment mode of TestMemoryPerRequestDeploy,
// Poisson at 20 req/s a replica: B/op over 10,000 is what a request
// costs, the record included.
func BenchmarkServeDeploy(b *testing.B) {
	sys, w := setup(b, "h100", "llama3-8b", 1)
	e, _ := serve.Preset("vllm", sys.Device.Memory.Limit())
	for _, md := range deployModes {
		if md.trace {
			continue // a trace replays as a drawn workload does
		}
		b.Run(md.name, func(b *testing.B) {
			dp := max(md.dp, 1)
			wl := &serve.Workload{N: 10000, Arrival: serve.Poisson, Rate: 20 * float64(dp), Seed: 1, Input: serve.Fixed(200), Output: serve.Fixed(100)}
			b.ReportAllocs()
			for b.Loop() {
				d := serve.Deployment{Serve: serve.Pool{Pricer: pricer(b, sys, w, e.Scenario(sim.Default())), Engine: e, Instances: dp}, Router: md.router}
				if md.disagg {
					d.Decode = serve.Pool{Pricer: pricer(b, sys, w, e.Scenario(sim.Default())), Engine: e, Instances: 1}
				}
				if _, err := serve.RunDeploymentWorkload(d, wl, serve.Options{ITL: true, Users: md.users}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
