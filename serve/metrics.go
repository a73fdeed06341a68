package serve

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// Metrics is one request's record. Times are since the start of the run.
type Metrics struct {
	ID            int
	Arrival       model.Seconds
	Start         model.Seconds // first scheduled
	FirstToken    model.Seconds
	Finish        model.Seconds // last token
	Input, Output int
	Preemptions   int
	// Transfer is, disaggregated, the first token to the KV cache's
	// arrival at the decode instance (waiting for the decode instance's
	// blocks and for the link included).
	Transfer model.Seconds
}

// Queue is the wait from arrival to first being scheduled.
func (m *Metrics) Queue() model.Seconds { return m.Start - m.Arrival }

// TTFT is arrival to first token.
func (m *Metrics) TTFT() model.Seconds { return m.FirstToken - m.Arrival }

// E2E is arrival to last token.
func (m *Metrics) E2E() model.Seconds { return m.Finish - m.Arrival }

// TPOT is (E2E − TTFT)/(output − 1), 0 for one output token.
func (m *Metrics) TPOT() model.Seconds {
	if m.Output <= 1 {
		return 0
	}
	return (m.Finish - m.FirstToken) / model.Seconds(m.Output-1)
}

// Stats summarises one metric over requests: the mean and empirical
// percentiles (gonum stat.Quantile with stat.Empirical).
type Stats struct {
	Mean, P50, P90, P95, P99, Max float64
}

func statsOf(x []float64) Stats {
	if len(x) == 0 {
		return Stats{}
	}
	slices.Sort(x)
	q := func(p float64) float64 { return stat.Quantile(p, stat.Empirical, x, nil) }
	return Stats{Mean: stat.Mean(x, nil), P50: q(0.5), P90: q(0.9), P95: q(0.95), P99: q(0.99), Max: x[len(x)-1]}
}

// A Result is what a run returns.
type Result struct {
	Engine   Engine
	KVTokens int // KV cache capacity of the replica, in tokens
	KVBlocks int
	Memory   sim.Memory // one device, as the KV cache was sized
	// Requests is every request's record, in arrival order, when
	// Options.Records asks for it; otherwise nil: a run keeps 36 bytes a
	// request (records), whatever the request's length.
	Requests []Metrics
	// Count is the requests served; InputTokens and OutputTokens their
	// prompt and output tokens.
	Count                     int
	InputTokens, OutputTokens int

	Iterations  int
	Preemptions int
	// BusyTime is the time the engine spent in iterations; Duration is
	// the first arrival to the last completion.
	BusyTime, Duration model.Seconds

	Queue, TTFT, TPOT, E2E Stats // seconds
	// ITL summarises every gap between consecutive tokens of a request,
	// over all requests' tokens (Options.ITL; the engine's sampling
	// times, not the client's: multi-step decode streams in bursts).
	ITL Stats

	// Throughput over Duration, of the replica.
	RequestsPerSecond     float64
	OutputTokensPerSecond float64
	// Utilization is the fraction of the GPUs' time over Duration spent
	// in iterations: BusyTime/Duration per scheduler, all of a pool's
	// schedulers being alike; disaggregated, the pools' figures weighted
	// by their GPUs (PoolResult).
	Utilization float64
	// MeanInSystem is the time average of the requests in the system
	// (arrived, not finished), integrated by the event loop; Little's
	// law says it equals RequestsPerSecond × E2E.Mean.
	MeanInSystem float64
	// Overloaded says the queue grew without bound: the arrival rate
	// exceeds what the engine serves (see Verdict).
	Overloaded bool
	Verdict    string
	// Unsettled says the verdict came from the requests in the system
	// still rising through the run's second half while the queue's wait
	// did not grow: a running batch still filling when the arrivals
	// stopped, which a longer run tells from overload.
	Unsettled bool

	// Replicas is the schedulers the requests were spread over (1 for
	// Run; replicas × PP; both pools' when disaggregated).
	Replicas int
	// Pools says what each pool did (RunDeployment; nil from Run and
	// RunReplicas). Transfer summarises the requests' KV transfers
	// (disaggregated; seconds). Users is the closed loop's users (0:
	// open loop).
	Pools    []PoolResult
	Transfer Stats
	// TransferBusy is the time the links between the pools spent moving
	// KV caches, summed over the transfers (their waits for a busy link
	// left out).
	TransferBusy model.Seconds
	Users        int

	Series   []Sample
	Warnings []error

	area float64 // the integral of the requests in the system
	recs records // what the summaries are computed from
	itl  gaps    // the inter-token gaps (Options.ITL)
}

// summarize fills the summaries from the requests' records; area is
// the integral of the requests in the system.
func (res *Result) summarize(area float64) {
	res.area = area
	res.Replicas = max(res.Replicas, 1)
	r := &res.recs
	n := r.len()
	res.Count, res.InputTokens, res.OutputTokens = n, r.inputs, r.outputs
	// One buffer, each metric in turn (statsOf sorts it).
	x := make([]float64, 0, n)
	metric := func(f func(int) float64, all bool) Stats {
		x = x[:0]
		for i := range n {
			if all || r.output[i] > 1 {
				x = append(x, f(i))
			}
		}
		return statsOf(x)
	}
	res.Queue, res.TTFT, res.TPOT, res.E2E = metric(r.queue, true), metric(r.ttft, true), metric(r.tpot, false), metric(r.e2e, true)
	first := math.Inf(1)
	last := 0.0
	for i := range n {
		first = math.Min(first, r.arrival[i])
		last = math.Max(last, r.finish[i])
	}
	res.Duration = model.Seconds(last - first)
	res.ITL = res.itl.stats()
	if d := float64(res.Duration); d > 0 {
		res.RequestsPerSecond = float64(n) / d
		res.OutputTokensPerSecond = float64(r.outputs) / d
		res.Utilization = float64(res.BusyTime) / d / float64(res.Replicas)
		res.MeanInSystem = area / d
	}
	res.overload(x)
}

// MinJudged is the fewest requests whose run the overload verdict
// judges: below it a run is never called overloaded, whatever its load,
// and a plan cannot tell whether a deployment keeps up (a --max-rate
// search over 19 requests of llama3-8b on one H100 had answered
// 2,095 req/s, over 20 requests 64.8).
const MinJudged = 20

// overload decides whether the system fell behind its arrivals without
// bound, over the second half of the arrivals (an open arrival process
// only), by two least-squares slopes against the arrival time: the
// queueing delay's (a slope of 0.05 s per s or more means the server
// falls behind the arrivals by 5% or more of the time elapsed), and the
// requests in the system at each arrival's (a slope of 5% of the arrival
// rate or more is the same deficit, when its rise over the half is
// beyond the count's noise). The second catches an engine that
// admits every request and lets its running batch grow instead of its
// queue (a KV cache and a max_num_seqs larger than the run): its waits
// stay flat while each request is served ever more slowly. A stable
// system has both slopes near 0.
//
// buf is room for the sorted finish times (summarize's buffer).
func (res *Result) overload(buf []float64) {
	// A merged result (RunReplicas) starts from its first replica's,
	// whose verdict was on that replica's requests alone.
	res.Overloaded, res.Verdict, res.Unsettled = false, "", false
	r := &res.recs
	n := r.len()
	if n < MinJudged {
		return
	}
	arr := r.arrival // sorted, but for a closed loop's (sent as users finish)
	if !slices.IsSorted(arr) {
		arr = slices.Sorted(slices.Values(arr))
	}
	fin := append(buf[:0], r.finish...)
	slices.Sort(fin)
	span := arr[n-1] - arr[0]
	if span <= 0 {
		return
	}
	rate := float64(n-1) / span
	wait := slope(n/2, n, func(i int) (float64, float64) { return r.arrival[i], r.queue(i) })
	// The requests in the system at the i-th arrival: those arrived by
	// then less those finished by then.
	var sx, sy, sxx, sxy, k float64
	f := 0
	for i := n / 2; i < n; i++ {
		t := arr[i]
		a := i + 1
		for a < n && arr[a] == t {
			a++
		}
		for f < n && fin[f] <= t {
			f++
		}
		x, y := t, float64(a-f)
		sx, sy, sxx, sxy, k = sx+x, sy+y, sxx+x*x, sxy+x*y, k+1
	}
	grow := 0.0
	if den := k*sxx - sx*sx; den > 0 {
		grow = (k*sxy - sx*sy) / den
	}
	// The fitted rise over the second half must also stand clear of
	// the noise: an engine that admits every request is an infinite-
	// server queue, whose requests in the system are Poisson with mean
	// L (M/G/∞), so the difference of two far-apart counts has a
	// standard deviation of √(2L); three of them are asked. Without
	// this, a short run's warm-up (the running batch still filling
	// towards its steady state) reads as growth.
	rise, mean := grow*(arr[n-1]-arr[n/2]), sy/k
	if wait >= 0.05 || grow >= 0.05*rate && rise >= 3*math.Sqrt(2*mean) {
		res.Overloaded = true
		if wait >= 0.05 {
			res.Verdict = fmt.Sprintf("overloaded: the queue grows without bound at %.3g req/s (the wait grows %.2f s per s; served %.3g req/s)", rate, wait, res.RequestsPerSecond)
		} else {
			res.Unsettled = true
			res.Verdict = fmt.Sprintf("overloaded: the requests in the system grow through the run at %.3g req/s (by %.3g per s, the running batch rather than the queue; served %.3g req/s): no steady state in %d requests (more requests tell a slow warm-up from overload)", rate, grow, res.RequestsPerSecond, n)
		}
	}
}

// slope fits y against x over the records from..to-1 by least squares
// (0 when x does not vary).
func slope(from, to int, xy func(int) (float64, float64)) float64 {
	var sx, sy, sxx, sxy, k float64
	for i := from; i < to; i++ {
		x, y := xy(i)
		sx, sy, sxx, sxy, k = sx+x, sy+y, sxx+x*x, sxy+x*y, k+1
	}
	den := k*sxx - sx*sx
	if den <= 0 {
		return 0
	}
	return (k*sxy - sx*sy) / den
}
