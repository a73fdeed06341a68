package serve

import (
	"errors"
	"fmt"
	"slices"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// live is a request in the engine.
type live struct {
	m         *Metrics
	own       Metrics // the record, when the run keeps none (Run)
	id        int     // the request's index in its run (a cluster's callbacks)
	input     int
	output    int
	cached    int     // prompt tokens found in the prefix cache
	computed  int     // tokens whose KV is in the cache
	generated int     // output tokens produced
	blocks    int     // blocks held (reserved, with Reserve admission)
	last      float64 // when its last token was sampled
	heldAt    float64 // see keep
	started   bool
	// held: its last token is out, but it keeps its slot in a multi-step
	// decode batch until the batch's last step (see holdsFinished).
	held bool
	// keep: a disaggregated prefill whose blocks stay when it finishes,
	// until its KV cache has left (hold.go), from heldAt.
	keep     bool
	requeued bool // preempted, back in the queue
}

// arrival is a request routed to a loop and the record it fills (nil:
// the loop's own, or one the loop's build gives), in 56 bytes: a
// cluster's schedulers hold each request routed to them in this form
// until the scheduler reaches it. Its token counts fit an int32 (at most
// 2^30, checkSource), and so does its index (at most MaxRequests).
type arrival struct {
	at     model.Seconds // Request.Arrival
	reqID  int           // Request.ID
	m      *Metrics
	id     int32 // the request's index in its run
	input  int32
	output int32 // Request.Output (1 in a prefill pool)
	cached int32
	total  int32 // its whole output (a cluster's)
	blocks int32 // blocks reserved for it before it arrived (hold.go)
	keep   bool  // see live.keep
	// prefilled: Request.Prefilled.
	prefilled bool
}

// arrivalOf returns request q, the id-th of its run, as an arrival.
func arrivalOf(q *Request, id int) arrival {
	return arrival{at: q.Arrival, reqID: q.ID, id: int32(id), input: int32(q.Input), output: int32(q.Output), cached: int32(q.Cached), total: int32(q.Output), prefilled: q.Prefilled}
}

// need is the tokens known: the prompt and the output so far. The KV of
// all but the last is computed before the next token is sampled.
func (l *live) need() int { return l.input + l.generated }

// loop is one run's state.
type loop struct {
	p       *sim.Pricer
	e       Engine
	o       Options
	blocks  int    // KV blocks of the replica
	kv      charge // what a sequence holds of them
	free    int
	waiting []*live // in arrival order, but see requeue and orderQueue
	running []*live // in admission order
	now     float64
	res     *Result
	// warns are what the engine's memory count rests on that the
	// hardware file does not say (Engine.MemoryWarnings).
	warns []error

	// queue holds the requests routed to the loop in the order the
	// engine sees them; next is the first not yet seen, and those from
	// head to next have arrived and wait behind l.waiting, their state
	// not yet built (as Run's from srcHead to srcNext; but one that
	// holds blocks is built as it arrives). done counts the requests
	// completed (their completion delivered); finished holds those of the
	// last round. record, when set (a cluster's), gives the record of a
	// request whose state is built (see wait).
	queue      []arrival
	head, next int
	done       int
	finished   []*live
	record     func(arrival) *Metrics

	// Run: srcN requests (a source, instead of queue); those from
	// srcNext on not yet in the system (up is request srcNext, read by
	// the cursor ahead); those from srcHead to srcNext arrived and
	// waiting behind l.waiting, their state not yet built (peek builds it,
	// reading them with the cursor behind, when the scheduler reaches
	// them): an offline run's queue of every request costs nothing. recs
	// holds the records of those that finished, request i's at slot
	// slot.at(i).
	srcN, srcHead, srcNext int
	ahead, behind          func() Request
	up                     Request
	recs                   *records
	slot                   slots

	// Little's law: the area under the number of requests in the system.
	inSys int
	lastT float64
	area  float64

	it     sim.Iteration
	graphs int // the largest batch replayed as a CUDA graph (Engine.GraphLimit)
	sched  []step
	multi  bool // the current batch is a multi-step decode batch

	pending []output // outputs waiting for the next iteration (AsyncOutput)
	every   int      // series: keep every every-th iteration
	count   int

	// The decode reserve (Engine.Headroom): the ratio now, the tokens
	// reserved in the prefill being formed, whether a prompt found no
	// room (SGLang's batch_is_full: no prompt is tried again until the
	// running batch shrinks, shrunk).
	ratio    float64
	reserved float64
	full     bool
	shrunk   bool

	// Disaggregated pools (hold.go): blocks held by finished prefills
	// until their KV caches have left, blocks reserved for KV caches on
	// their way here, preempted requests waiting, and whether the
	// scheduler waits for one of those to free blocks.
	held, inbound, requeued int
	blocked                 bool
}

// step is one request's share of an iteration.
type step struct {
	l *live
	k int // tokens computed
}

// ErrOverflow is a request that can never run: its prompt and output do
// not fit in the KV cache (or the model's context).
var ErrOverflow = errors.New("serve: request does not fit")

// Run serves reqs (sorted by arrival) on one replica priced by p under
// engine e, to the last request's completion, and returns the metrics.
func Run(p *sim.Pricer, e Engine, reqs []Request, o Options) (*Result, error) {
	return run(p, e, sliceSource(reqs), o)
}

// run serves src on one replica (Run).
func run(p *sim.Pricer, e Engine, src source, o Options) (*Result, error) {
	return runInto(p, e, src, o, nil, slots{stride: 1})
}

// slots places a replica's records among its deployment's: request i at
// base + i×stride.
type slots struct{ base, stride int }

func (s slots) at(i int) int { return s.base + i*s.stride }

// runInto is run keeping the records in recs at slots s, when recs is
// not nil (RunReplicas), and then leaving the summaries to its caller.
func runInto(p *sim.Pricer, e Engine, src source, o Options, recs *records, s slots) (*Result, error) {
	l, err := startLoop(p, e, src, o, recs, s)
	if err != nil {
		return nil, err
	}
	for l.done < l.srcN {
		if err := l.round(); err != nil {
			return nil, err
		}
	}
	return l.end()
}

// startLoop checks src and returns a loop ready to serve it (runInto).
func startLoop(p *sim.Pricer, e Engine, src source, o Options, recs *records, s slots) (*loop, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	kvTokens, mem, err := e.KVCapacity(p)
	if err != nil {
		return nil, err
	}
	blocks := kvTokens / e.BlockSize
	src = src.cached(o.PrefixHit, e.BlockSize)
	if err := checkSource(src, chargeOf(e, mem), blocks, o); err != nil {
		return nil, err
	}
	l := newLoop(p, e, o, blocks, mem)
	if o.Records {
		l.res.Requests = make([]Metrics, src.n)
	}
	l.srcN = src.n
	l.ahead, l.behind = src.cursor(), src.cursor()
	l.up = l.ahead()
	l.recs, l.slot = recs, s
	l.warns = e.MemoryWarnings(p)
	if recs == nil {
		l.res.recs = newRecords(src.n)
		l.recs = &l.res.recs
	}
	return l, nil
}

// end returns the result of a loop that has served its requests
// (startLoop): summarised unless its records are kept elsewhere.
func (l *loop) end() (*Result, error) {
	if err := l.p.Err(); err != nil {
		return nil, err
	}
	l.res.Warnings = addWarnings(slices.Clone(l.p.Warnings()), l.warns...)
	if l.recs != &l.res.recs {
		l.res.area = l.area
		return l.res, nil
	}
	l.res.summarize(l.area)
	return l.res, nil
}

// newLoop returns an idle loop with blocks KV blocks.
func newLoop(p *sim.Pricer, e Engine, o Options, blocks int, mem sim.Memory) *loop {
	ctx := o.MaxContext
	if p != nil {
		ctx = p.Shape().MaxContext
	}
	e.MaxSeqs = e.maxSeqs(blocks, ctx)
	l := &loop{p: p, e: e, o: o, blocks: blocks, free: blocks, every: 1, kv: chargeOf(e, mem), ratio: e.Headroom.Init, graphs: e.GraphLimit()}
	l.res = &Result{Engine: e, KVTokens: l.kv.tokens(blocks), KVBlocks: blocks, Memory: mem}
	return l
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// advance integrates the requests in the system up to t.
func (l *loop) advance(t float64) {
	l.area += float64(l.inSys) * (t - l.lastT)
	l.lastT = t
}

// round runs one scheduling decision at l.now: the requests seen by now
// join the queue; an idle engine delivers its pending outputs or waits
// for the next request (and returns); otherwise the scheduler fills the
// next iteration (or, with multi-step decode, several), which the
// pricer times. Requests seen during an iteration join the queue at its
// end. l.finished holds the completions the round delivered.
func (l *loop) round() error {
	steps, ok, err := l.plan()
	if !ok {
		return err
	}
	l.multi = steps > 1
	for s := 0; s < steps && len(l.sched) > 0; s++ {
		if s > 0 && !l.nextStep() {
			break
		}
		l.build()
		l.commit(float64(l.p.Price(&l.it).Time + l.e.StepOverhead + l.e.SeqOverhead*model.Seconds(len(l.sched))))
	}
	if l.multi {
		l.release()
	}
	return nil
}

// plan is a round up to its first iteration: it returns the steps the
// scheduler chose, with l.sched filled, or false when there is no
// iteration to run (an idle engine, which delivers its pending outputs or
// waits for the next request; a blocked one; or an error).
func (l *loop) plan() (steps int, ok bool, err error) {
	l.finished = l.finished[:0]
	l.join(l.now)
	if len(l.running) == 0 && l.nwait() == 0 {
		if len(l.pending) > 0 {
			// No next step to overlap with: the last outputs are
			// processed now.
			l.deliver()
			return 0, false, nil
		}
		l.ratio = l.e.Headroom.Init // an idle engine starts its estimate again
		if t, ok := l.upcoming(); ok {
			l.now = max(l.now, l.seen(t)) // idle until the next arrival
		}
		return 0, false, nil
	}
	steps = l.schedule()
	if len(l.sched) == 0 && l.promote() {
		steps = l.schedule()
	}
	if len(l.sched) == 0 {
		if l.held > 0 || l.inbound > 0 {
			l.block()
			return 0, false, nil
		}
		return 0, false, fmt.Errorf("serve: the engine is stuck at %v with %d waiting and %d running (a bug)", model.Seconds(l.now), l.nwait(), len(l.running))
	}
	return steps, true, nil
}

// commit ends an iteration of dt seconds that l.sched ran from l.now.
func (l *loop) commit(dt float64) {
	end := l.now + dt
	// Requests that arrived during the iteration enter the system (not
	// the engine) at their arrival times.
	l.join(end)
	l.now = end
	l.res.Iterations++
	l.res.BusyTime += model.Seconds(dt)
	l.deliver() // the previous iteration's outputs (AsyncOutput)
	l.apply()
	l.sample()
}

// join brings the requests the engine has seen by t into the system.
func (l *loop) join(t float64) {
	if l.ahead != nil {
		for l.srcNext < l.srcN && l.seen(l.up.Arrival) <= t {
			l.enter(l.up.Arrival)
			if l.srcNext++; l.srcNext < l.srcN {
				l.up = l.ahead()
			}
		}
		return
	}
	for l.next < len(l.queue) && l.seen(l.queue[l.next].at) <= t {
		a := &l.queue[l.next]
		l.enter(a.at)
		l.next++
		if a.blocks > 0 {
			// Built now, behind those before it: promote and accounted
			// see the blocks it holds.
			l.take(l.unbuilt())
		}
	}
	// Drop the requests built: the queue holds those routed to the loop
	// and not yet built.
	if l.head >= 256 && 2*l.head >= len(l.queue) {
		k := copy(l.queue, l.queue[l.head:])
		clear(l.queue[k:])
		l.queue, l.next, l.head = l.queue[:k], l.next-l.head, 0
	}
}

// upcoming returns when the next request arrives (false: none will).
func (l *loop) upcoming() (model.Seconds, bool) {
	switch {
	case l.ahead != nil && l.srcNext < l.srcN:
		return l.up.Arrival, true
	case l.ahead == nil && l.next < len(l.queue):
		return l.queue[l.next].at, true
	}
	return 0, false
}

// nwait returns the requests waiting: those in l.waiting and those
// arrived behind them.
func (l *loop) nwait() int { return len(l.waiting) + l.unbuilt() }

// unbuilt returns the requests arrived behind l.waiting, their state not
// yet built.
func (l *loop) unbuilt() int { return l.srcNext - l.srcHead + l.next - l.head }

// take builds the state of the next k requests arrived behind
// l.waiting, into l.waiting.
func (l *loop) take(k int) {
	for range k {
		if l.ahead == nil {
			l.wait(&l.queue[l.head])
			l.queue[l.head].m = nil
			l.head++
			continue
		}
		i := l.srcHead
		q := l.behind()
		a := arrivalOf(&q, i)
		if l.res.Requests != nil {
			a.m = &l.res.Requests[i]
		}
		l.wait(&a)
		l.srcHead++
	}
}

// peek returns the first waiting request (there must be one).
func (l *loop) peek() *live {
	if len(l.waiting) == 0 {
		l.take(1)
	}
	return l.waiting[0]
}

// push routes a request to the loop (a cluster's router), in the order
// the engine sees requests.
func (l *loop) push(a arrival) {
	l.queue = append(l.queue, a)
	for i := len(l.queue) - 1; i > l.next && l.seen(l.queue[i-1].at) > l.seen(l.queue[i].at); i-- {
		l.queue[i-1], l.queue[i] = l.queue[i], l.queue[i-1]
	}
}

// An output is a first token or a completion on its way to the client.
type output struct {
	r      *live
	finish bool
}

// emit sends r's first token (or, finish, its completion) to the client:
// at l.now, or with AsyncOutput at the end of the next iteration (or now
// when the engine has none to run).
func (l *loop) emit(r *live, finish bool) {
	if l.e.AsyncOutput {
		l.pending = append(l.pending, output{r, finish})
		return
	}
	l.stamp(output{r, finish})
}

// deliver stamps the pending outputs at l.now.
func (l *loop) deliver() {
	for _, o := range l.pending {
		l.stamp(o)
	}
	l.pending = l.pending[:0]
}

// stamp records o at l.now; a completion leaves the system.
func (l *loop) stamp(o output) {
	if !o.finish {
		o.r.m.FirstToken = model.Seconds(l.now)
		return
	}
	o.r.m.Finish = model.Seconds(l.now)
	if l.recs != nil {
		l.recs.put(l.slot.at(o.r.id), o.r.m)
		if l.o.OnFinish != nil {
			l.o.OnFinish(o.r.id, o.r.m)
		}
	}
	l.advance(l.now)
	l.inSys--
	l.done++
	l.finished = append(l.finished, o.r)
}

// seen returns when the engine sees a request arriving at t: its arrival
// plus the per-request overhead outside the engine (API, tokenisation).
func (l *loop) seen(t model.Seconds) float64 { return float64(t + l.e.RequestOverhead) }

// enter adds a request arriving at at to the system. A request routed
// after the loop's clock passed its arrival (a cluster's router runs
// between iterations) is counted in the system from its arrival.
func (l *loop) enter(at model.Seconds) {
	if t := float64(at); t >= l.lastT {
		l.advance(t)
	} else {
		l.area += l.lastT - t
	}
	l.inSys++
}

// wait builds the state of an arrived request at the back of the
// waiting queue, and its record unless the arrival brought one.
func (l *loop) wait(a *arrival) {
	v := &live{m: a.m, id: int(a.id), input: int(a.input), output: int(a.output), cached: int(a.cached), computed: int(a.cached), blocks: int(a.blocks), keep: a.keep}
	built := false
	if v.m == nil && l.record != nil {
		v.m, built = l.record(*a), true
	}
	if v.m == nil {
		v.m = &v.own
	}
	if l.recs != nil || built {
		*v.m = Metrics{ID: a.reqID, Arrival: a.at, Input: v.input, Output: v.output}
	}
	l.inbound -= v.blocks
	if a.prefilled {
		v.computed, v.generated = v.input, 1
		v.last = float64(v.m.FirstToken) // the prefill pool's first token
	}
	l.waiting = append(l.waiting, v)
}

// build fills l.it from l.sched.
func (l *loop) build() {
	l.it.Prefill, l.it.Decode, l.it.Sampled = l.it.Prefill[:0], l.it.Decode[:0], 0
	for _, s := range l.sched {
		if s.l.computed+s.k == s.l.need() {
			l.it.Sampled++
		}
		if s.k == 1 && s.l.computed == s.l.need()-1 && s.l.generated > 0 {
			l.it.Decode = append(l.it.Decode, s.l.computed)
		} else {
			l.it.Prefill = append(l.it.Prefill, sim.Chunk{Tokens: s.k, Context: s.l.computed})
		}
	}
	l.e.launch(&l.it, l.graphs)
}

// apply advances the scheduled requests by their tokens, records first
// tokens and completions at l.now, and frees what finished.
func (l *loop) apply() {
	done := 0
	for _, s := range l.sched {
		r := s.l
		r.computed += s.k
		if r.computed == r.need() {
			r.generated++
			if r.held {
				continue // a token computed and discarded
			}
			if r.generated == 1 {
				l.emit(r, false)
			} else if l.o.ITL {
				l.res.itl.add(l.now - r.last)
			}
			r.last = l.now
			if r.generated == r.output {
				if l.multi {
					r.held = true // completes with the batch's last step
					continue
				}
				l.emit(r, true)
				done++
			}
		}
	}
	if done > 0 {
		l.shrunk = true
		kept := l.running[:0]
		for _, r := range l.running {
			if r.generated == r.output && !r.held {
				l.drop(r)
				continue
			}
			kept = append(kept, r)
		}
		clear(l.running[len(kept):])
		l.running = kept
	}
}

// sample records the state for the time series.
func (l *loop) sample() {
	if l.o.SeriesPoints <= 0 {
		return
	}
	l.count++
	if l.count%l.every != 0 {
		return
	}
	if len(l.res.Series) >= 2*l.o.SeriesPoints {
		// Thin: keep every other sample, and sample half as often.
		n := 0
		for i := 0; i < len(l.res.Series); i += 2 {
			l.res.Series[n] = l.res.Series[i]
			n++
		}
		l.res.Series = l.res.Series[:n]
		l.every *= 2
	}
	l.res.Series = append(l.res.Series, Sample{
		Time: model.Seconds(l.now), Waiting: l.nwait(), Running: len(l.running),
		KVUsed: float64(l.blocks-l.free) / float64(l.blocks), BatchTokens: l.it.Tokens(),
	})
}
