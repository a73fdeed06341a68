package serve

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"unsafe"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/internal/simload"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
	"github.com/perfsim/perfsim/workloads"
)

// TestDisagg_kvAccounting: a disaggregated request's KV cache is never
// nowhere and never in both pools outside its transfer window. After
// every step of the event loop every scheduler's blocks are all
// accounted for (free, held for a transfer, reserved for one, or held
// by a running or waiting request), and the blocks the prefill
// schedulers hold are exactly those of the requests between their
// prefill's end and their transfer's end. Each request's times are in
// order: the prefill holds its blocks from its last prefill iteration
// (held) until the transfer ends (ready); the decode scheduler holds
// them from the reservation on, so both hold them only over [reserved,
// ready], the wait for the link and the transfer (with ReserveFirst, the
// sglang preset, the reservation comes before the prefill starts, and
// the blocks wait empty through it); the decode scheduler receives the
// request at ready. Run with every engine preset, tight KV
// caches in both pools (preemption, blocked schedulers) and a slow link;
// every run drains, and Little's law holds over the deployment.
func TestDisagg_kvAccounting(t *testing.T) {
	d, err := hardware.Resolve("h100")
	if err != nil {
		t.Fatal(err)
	}
	sys, err := hardware.NewSystem(d, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := workloads.Resolve("llama3-8b")
	if err != nil {
		t.Fatal(err)
	}
	p, err := sim.NewPricer(sys, simload.Workload{M: m}, sim.Default())
	if err != nil {
		t.Fatal(err)
	}
	slow := model.Link{Bandwidth: 4e9, Latency: 10e-6, Efficiency: 1} // 268 MB of a 2048-token prompt in 67 ms
	for _, name := range Engines() {
		for _, c := range []struct {
			name              string
			prefill, decode   int // KV tokens
			prefillN, decodeN int
		}{
			{"tight prefill", 12000, 0, 1, 1},
			{"tight decode", 0, 20000, 2, 1},
			{"both tight", 9000, 16000, 2, 2},
		} {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				e, err := Preset(name, d.Memory.Limit())
				if err != nil {
					t.Fatal(err)
				}
				pe, de := e, e
				pe.KVTokens, de.KVTokens = c.prefill, c.decode
				dep := Deployment{Serve: Pool{Pricer: p, Engine: pe, Instances: c.prefillN}, Decode: Pool{Pricer: p, Engine: de, Instances: c.decodeN},
					Link: &KVLink{Intra: slow, Inter: slow, PerNode: 8}, Router: LeastOutstanding}
				w := Workload{N: 300, Arrival: Poisson, Rate: 12, Seed: 3,
					Input: Uniform{Min: 200, Max: 4000}, Output: Uniform{Min: 1, Max: 600}}
				reqs, err := w.Requests()
				if err != nil {
					t.Fatal(err)
				}
				var held, blocked, steps int
				var last *cluster
				// Each request's hand-off and decode arrival as last seen
				// in flight: final once its KV cache has arrived, before
				// it leaves.
				xs, decodeArrival := map[int]handoff{}, map[int]model.Seconds{}
				audit := func(c *cluster) error {
					last = c
					steps++
					for id, f := range c.fl {
						xs[id], decodeArrival[id] = f.x, f.m1.Arrival
					}
					for k, pl := range c.pools[:c.npools] {
						for _, nd := range pl.nodes {
							if got := nd.l.accounted(); got != nd.l.blocks || nd.l.free < 0 || nd.l.held < 0 || nd.l.inbound < 0 {
								return fmt.Errorf("pool %d scheduler %d: %d blocks accounted of %d (free %d, held %d, reserved %d)", k, nd.idx, got, nd.l.blocks, nd.l.free, nd.l.held, nd.l.inbound)
							}
							if nd.l.blocked {
								blocked++
							}
						}
					}
					// The prefill schedulers hold the blocks of the requests
					// prefilled whose KV cache has not yet arrived at their
					// decode scheduler.
					want := make([]int, len(c.pools[0].nodes))
					for _, f := range c.fl {
						if x := &f.x; x.blocks > 0 && !x.freed {
							want[x.src] += x.blocks
						}
					}
					for i, nd := range c.pools[0].nodes {
						for _, o := range nd.l.pending { // finished, its completion not yet delivered
							if o.finish && o.r.keep {
								want[i] += o.r.blocks
							}
						}
					}
					for i, nd := range c.pools[0].nodes {
						if nd.l.held != want[i] {
							return fmt.Errorf("prefill scheduler %d holds %d blocks; the requests between the pools have %d", i, nd.l.held, want[i])
						}
						if nd.l.held > 0 {
							held++
						}
					}
					return nil
				}
				res, err := runDeployment(dep, sliceSource(reqs), Options{Records: true}, audit)
				if err != nil {
					t.Fatal(err)
				}
				if len(last.fl) != 0 {
					t.Errorf("%d requests still in flight at the end", len(last.fl))
				}
				if held == 0 {
					t.Error("no prefill scheduler ever held a KV cache for its transfer: the scenario does not test it")
				}
				for k, pl := range last.pools[:last.npools] {
					for _, nd := range pl.nodes {
						if l := nd.l; l.free != l.blocks || l.held != 0 || l.inbound != 0 || l.requeued != 0 || len(nd.xq) != 0 {
							t.Errorf("pool %d scheduler %d at the end: %d of %d blocks free, %d held, %d reserved, %d preempted waiting, %d queued for a transfer", k, nd.idx, l.free, l.blocks, l.held, l.inbound, l.requeued, len(nd.xq))
						}
					}
				}
				for id, q := range reqs {
					x, m := xs[id], &res.Requests[id]
					if q.Output == 1 {
						if x.blocks != 0 || m.Transfer != 0 {
							t.Fatalf("request %d with one output token was handed over: %+v", id, x)
						}
						continue
					}
					kv := float64(last.kvTime(last.pools[0].nodes[x.src].inst, 0, q.Input)) // every pair of instances here shares a node
					// The decode blocks are set aside when the prefill ends, or
					// (ReserveFirst, SGLang) before it starts.
					order := x.held <= x.prefilled && x.prefilled <= x.reserved && x.reserved <= x.start
					if de.ReserveFirst {
						order = x.reserved <= float64(m.Start) && x.held <= x.prefilled && x.prefilled <= x.start
					}
					if !(order && x.start <= x.ready) ||
						math.Abs(x.ready-x.start-kv) > 1e-9*x.ready || x.ready != float64(decodeArrival[id]) ||
						x.prefilled != float64(m.FirstToken) || math.Abs(float64(m.Transfer)-(x.ready-x.prefilled)) > 1e-9*x.ready {
						t.Fatalf("request %d: held %g, prefilled %g, reserved %g, start %g, ready %g (transfer %g s), decode arrival %v, first token %v, transfer %v",
							id, x.held, x.prefilled, x.reserved, x.start, x.ready, kv, decodeArrival[id], m.FirstToken, m.Transfer)
					}
				}
				if l := res.RequestsPerSecond * res.E2E.Mean; math.Abs(res.MeanInSystem-l) > 1e-9*l {
					t.Errorf("Little's law: L = %.12g, λW = %.12g", res.MeanInSystem, l)
				}
				t.Logf("%d steps, %d with a prefill scheduler holding KV, %d scheduler-steps blocked; prefill KV held %.1f%%, p99 TTFT %.3f s, mean transfer %.3f s",
					steps, held, blocked, 100*res.Pools[0].KVHeld, res.TTFT.P99, res.Transfer.Mean)
			})
		}
	}
}

// TestCompactSizes: what a run holds of a request it has not reached yet
// is as small as docs/serving.md says: a trace's row 24 bytes, a routed
// request waiting for its scheduler 56.
func TestCompactSizes(t *testing.T) {
	if n := unsafe.Sizeof(traceRow{}); n != 24 {
		t.Errorf("a trace row is %d bytes, want 24", n)
	}
	if n := unsafe.Sizeof(arrival{}); n != 56 {
		t.Errorf("an arrival is %d bytes, want 56", n)
	}
}

// TestArrivalOrder: round-robin replicas' records are merged in arrival
// order, ties by ID. A source already in that order (strictly) needs no
// permutation; one with ties whose IDs go down is reordered: request 1
// (ID 0) before request 0 (ID 1) at the same arrival, and so on.
func TestArrivalOrder(t *testing.T) {
	reqs := make([]Request, 8)
	for i := range reqs {
		reqs[i] = Request{ID: i, Arrival: model.Seconds(i / 2), Input: 1, Output: 1}
	}
	if ord := arrivalOrder(sliceSource(reqs), 2); ord != nil {
		t.Errorf("requests in order: permuted %v", ord)
	}
	for i := range reqs {
		reqs[i].ID = i ^ 1
	}
	ord := arrivalOrder(sliceSource(reqs), 2)
	if want := []int32{1, 0, 3, 2, 5, 4, 7, 6}; !slices.Equal(ord, want) {
		t.Errorf("ties with IDs going down: %v, want %v", ord, want)
	}
}
