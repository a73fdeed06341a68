package serve

import (
	"errors"
	"slices"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// RunReplicas serves reqs on dp data-parallel replicas behind a
// round-robin router (request i to replica i mod dp), each an engine e
// priced by p, and merges their metrics: the system's throughput, the
// latencies of every request, utilisation averaged over the replicas.
// The replicas share nothing but the router, so each runs its own event
// loop, each a round at a time, the one furthest behind first. Series
// are those of replica 0.
//
// A replica with PP > 1 pipeline stages keeps PP micro-batches in
// flight, as vLLM's virtual engines and TensorRT-LLM's pipelined
// in-flight batching do: PP schedulers, each with its own requests
// (round-robin) and 1/PP of the KV cache, whose iterations take one pass
// through every stage (sim.IterationCost.Time) and overlap in the
// pipeline, so that pipelining multiplies throughput instead of dividing
// it. The overlap is exact while the micro-batches are alike; a
// micro-batch much larger than the others would hold the stages longer
// than this assumes.
func RunReplicas(p *sim.Pricer, e Engine, reqs []Request, dp int, o Options) (*Result, error) {
	return runReplicas(p, e, sliceSource(reqs), dp, o, false)
}

// runReplicas serves src as RunReplicas serves its requests, each
// replica reading its share (source.stride) as its engine reaches it;
// lock runs the replicas as one data-parallel attention group, their
// iterations in lockstep (lockstep), instead of each on its own.
func runReplicas(p *sim.Pricer, e Engine, src source, dp int, o Options, lock bool) (*Result, error) {
	if dp < 1 {
		return nil, errors.New("--dp: must be at least 1")
	}
	if lock {
		if err := checkLockstep(p, e, dp); err != nil {
			return nil, err
		}
	}
	// Past here a pipeline's engine has its KV cache given (KVTokens),
	// so what its memory count rests on is said now.
	warns := e.MemoryWarnings(p)
	if pp := p.Scenario().PP; pp > 1 {
		kv, mem, err := e.KVCapacity(p)
		if err != nil {
			return nil, err
		}
		e.KVTokens = e.seqTokens(max(kv/pp, e.BlockSize), mem)
		dp *= pp
	}
	ranks, groups := dp, 1
	if lock {
		ranks = p.Replicas()
		groups = dp / ranks
		dp = min(dp, src.n) // a replica without requests only idles
	}
	if !lock && (dp == 1 || src.n < dp) {
		res, err := run(p, e, src, o)
		if err == nil {
			res.Warnings = addWarnings(res.Warnings, warns...)
		}
		return res, err
	}
	n := src.n
	// The records in arrival order (ties by ID): request i of src is
	// the (i/dp)-th of replica i mod dp. When that is src's order (ord
	// nil), each replica keeps its records in their places among all.
	ord := arrivalOrder(src, dp)
	var all *records
	if ord == nil {
		r := newRecords(n)
		all = &r
	}
	loops := make([]*loop, dp)
	for i := range dp {
		oi := o
		if i > 0 {
			oi.SeriesPoints = 0
		}
		if o.OnFinish != nil {
			oi.OnFinish = func(j int, m *Metrics) { o.OnFinish(i+j*dp, m) }
		}
		l, err := startLoop(p, e, src.stride(i, dp), oi, all, slots{base: i, stride: dp})
		if err != nil {
			return nil, err
		}
		loops[i] = l
	}
	if lock {
		// Replica r is group r mod groups's: request i goes to group i
		// mod groups (round-robin), and that group's k-th request to its
		// replica k mod ranks (its own round-robin). The groups share
		// nothing, so each runs on its own.
		group := make([]*loop, 0, ranks)
		for g := range min(groups, dp) {
			group = group[:0]
			for r := g; r < dp; r += groups {
				group = append(group, loops[r])
			}
			if err := lockstep(p, group, ranks); err != nil {
				return nil, err
			}
		}
	}
	// The replicas share nothing, so the order their rounds run in
	// changes none of their results; the one furthest behind goes next,
	// so that requests finish (OnFinish) about in time order, as their
	// records are streamed (--requests-out), not a replica after another.
	for !lock {
		var next *loop
		for _, l := range loops {
			if l.done < l.srcN && (next == nil || l.now < next.now) {
				next = l
			}
		}
		if next == nil {
			break
		}
		if err := next.round(); err != nil {
			return nil, err
		}
	}
	var out *Result
	var area float64
	recs := make([]records, dp)
	for i, l := range loops {
		res, err := l.end()
		if err != nil {
			return nil, err
		}
		area += res.area
		recs[i] = res.recs
		if out == nil {
			first := res.Requests
			out = res
			if o.Records {
				out.Requests = append(make([]Metrics, 0, n), first...)
			}
			continue
		}
		out.Requests = append(out.Requests, res.Requests...)
		out.itl.merge(&res.itl)
		out.Iterations += res.Iterations
		out.Preemptions += res.Preemptions
		out.BusyTime += res.BusyTime
	}
	if all != nil {
		out.recs = *all
	} else {
		out.recs = newRecords(n)
		for j, i := range ord {
			recs[int(i)%dp].copyTo(&out.recs, int(i)/dp, j)
		}
		for k := range recs {
			out.recs.inputs += recs[k].inputs
			out.recs.outputs += recs[k].outputs
		}
	}
	slices.SortStableFunc(out.Requests, func(a, b Metrics) int {
		return byArrival(Request{Arrival: a.Arrival, ID: a.ID}, Request{Arrival: b.Arrival, ID: b.ID})
	})
	out.Replicas = dp
	out.Warnings = addWarnings(out.Warnings, warns...)
	out.summarize(area)
	return out, nil
}

// byArrival orders requests by arrival, ties by ID: the order of a run's
// records.
func byArrival(a, b Request) int {
	switch {
	case a.Arrival < b.Arrival:
		return -1
	case a.Arrival > b.Arrival:
		return 1
	}
	return a.ID - b.ID
}

// arrivalOrder returns src's indices sorted by byArrival, stably from the
// replicas' order (replica 0's requests, then replica 1's, ...), or nil
// when that is src's own order: its requests strictly increasing by
// arrival and ID, as a workload's (IDs in order) and a trace's (IDs its
// lines) are, which one reading of src tells without holding them.
func arrivalOrder(src source, dp int) []int32 {
	next := src.cursor()
	prev, sorted := next(), true
	for range src.n - 1 {
		q := next()
		if byArrival(prev, q) >= 0 {
			sorted = false
			break
		}
		prev = q
	}
	if sorted {
		return nil
	}
	type key struct {
		arrival model.Seconds
		id      int
	}
	keys := make([]key, src.n)
	next = src.cursor()
	for i := range keys {
		q := next()
		keys[i] = key{q.Arrival, q.ID}
	}
	ord := make([]int32, 0, src.n)
	for k := range dp {
		for i := k; i < src.n; i += dp {
			ord = append(ord, int32(i))
		}
	}
	slices.SortStableFunc(ord, func(a, b int32) int {
		return byArrival(Request{Arrival: keys[a].arrival, ID: keys[a].id}, Request{Arrival: keys[b].arrival, ID: keys[b].id})
	})
	return ord
}

// Goodput returns the requests per second (over the run's duration)
// that met every SLO given: TTFT at most ttft and TPOT at most tpot
// (0: no SLO on that metric).
func (res *Result) Goodput(ttft, tpot model.Seconds) float64 {
	if res.Duration <= 0 {
		return 0
	}
	n := 0
	r := &res.recs
	for i := range r.len() {
		if (ttft <= 0 || model.Seconds(r.ttft(i)) <= ttft) && (tpot <= 0 || model.Seconds(r.tpot(i)) <= tpot) {
			n++
		}
	}
	return float64(n) / float64(res.Duration)
}
