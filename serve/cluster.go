package serve

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// A Router picks the replica (or pool instance) a request goes to.
type Router uint8

// The routers.
const (
	// RoundRobin sends request i to replica i mod N, whatever their
	// state.
	RoundRobin Router = iota
	// LeastOutstanding sends a request to the replica with the fewest
	// requests routed to it and not finished, ties broken in turn from
	// the replica after the last one picked (nginx's least_conn:
	// "the request is passed to the server with the least number of
	// active connections ... If there are several such servers, they are
	// tried in turn using a weighted round-robin balancing method",
	// nginx.org/en/docs/http/ngx_http_upstream_module.html#least_conn).
	LeastOutstanding
)

var routerNames = [...]string{"round-robin", "least-outstanding"}

func (r Router) String() string { return routerNames[r] }

// ParseRouter parses round-robin or least-outstanding.
func ParseRouter(s string) (Router, error) {
	for i, n := range routerNames {
		if strings.EqualFold(s, n) {
			return Router(i), nil
		}
	}
	return 0, fmt.Errorf("unknown router %q (want round-robin or least-outstanding)", s)
}

// A Pool is Instances identical replicas (TP × PP devices each, as the
// Pricer's scenario says) of one engine.
type Pool struct {
	Pricer    *sim.Pricer
	Engine    Engine
	Instances int
}

// GPUs returns the devices of one instance.
func (p *Pool) GPUs() int {
	sc := p.Pricer.Scenario()
	return max(sc.TP, 1) * max(sc.PP, 1)
}

// A Deployment is what RunDeployment serves: Serve's replicas, each
// prefilling and decoding its own requests (aggregated), or, when
// Decode has instances, a prefill pool (Serve) and a decode pool
// (Decode) with every request's KV cache moved between them over Link
// (disaggregated; docs/serving.md).
type Deployment struct {
	Serve  Pool
	Decode Pool
	// Link is the network between the pools; nil moves KV caches in no
	// time.
	Link   *KVLink
	Router Router
	// DPAttention runs Serve's instances as data-parallel attention
	// groups (DeepSeek's layout, SGLang's --enable-dp-attention) of
	// Serve's pricer's Replicas() instances each: each instance its own
	// scheduler, KV cache and requests (round-robin), a group's
	// iterations in lockstep because every MoE layer's experts span the
	// GPUs of them all (the pricer has EP = Replicas() × TP;
	// sim.Pricer.PriceGroup). Instances is a multiple of Replicas(): one
	// group (perfsim serve --dp-attention), or several behind the
	// round-robin router (perfsim plan serve), instance r in group r mod
	// Instances/Replicas(). Aggregated, round-robin and an open loop
	// only.
	DPAttention bool
}

// Disaggregated reports whether d has a decode pool.
func (d *Deployment) Disaggregated() bool { return d.Decode.Instances > 0 }

// GPUs returns the deployment's devices.
func (d *Deployment) GPUs() int {
	n := d.Serve.Instances * d.Serve.GPUs()
	if d.Disaggregated() {
		n += d.Decode.Instances * d.Decode.GPUs()
	}
	return n
}

// A KVLink is the network between a disaggregated deployment's pools:
// the devices are numbered prefill instances first, then decode
// instances, PerNode to a node (scale-up domain); a pair of instances
// within one node talks over Intra (NVLink), any other pair over Inter
// (the scale-out NIC share of one device), as hardware.System's tiers
// give them.
type KVLink struct {
	Intra, Inter model.Link
	PerNode      int
}

// RunDeployment serves reqs (in arrival order) on d and returns the
// metrics of the whole deployment. An aggregated deployment behind the
// round-robin router in an open loop is RunReplicas; anything else (the
// least-outstanding router, a closed loop, a decode pool) runs every
// instance in one event loop, in time order, so that the router sees
// each instance's state when a request arrives.
//
// Disaggregated (DistServe, Zhong et al., OSDI 2024; Splitwise, Patel et
// al., ISCA 2024): a request is routed to a prefill instance, which
// prefills it and samples its first token (its TTFT) and keeps its
// blocks; it is then routed to a decode instance (chosen at that
// moment), waits in that instance's transfer queue until the instance
// can set aside blocks for it, and its prompt's KV cache is then sent
// there over the link between the two instances, after which the
// prefill instance frees its blocks (transfer.go says how, and the
// engines it follows). The decode instance admits the request, which
// arrives holding its blocks, and decodes it to the end; a decode
// instance that must preempt recomputes locally. The request overhead
// is paid once, at the prefill pool.
func RunDeployment(d Deployment, reqs []Request, o Options) (*Result, error) {
	if d.replicasOnly(o) && d.Serve.Instances >= 1 && d.Serve.Pricer != nil {
		return runReplicas(d.Serve.Pricer, d.Serve.Engine, sliceSource(reqs), d.Serve.Instances, o, d.DPAttention)
	}
	if err := d.checkDPAttention(o); err != nil {
		return nil, err
	}
	return runDeployment(d, sliceSource(reqs), o, nil)
}

// checkDPAttention refuses data-parallel attention (DPAttention) beside
// what it is not modelled with: a decode pool, another router than
// round-robin (SGLang's data-parallel controller's default,
// --load-balance-method round_robin), a closed loop.
func (d Deployment) checkDPAttention(o Options) error {
	switch {
	case !d.DPAttention:
		return nil
	case d.Disaggregated():
		return errors.New("--dp-attention: a disaggregated deployment with data-parallel attention is not modelled")
	case d.Router != RoundRobin:
		return fmt.Errorf("--dp-attention: the %s router with data-parallel attention is not modelled (round-robin only)", d.Router)
	case o.Users > 0:
		return errors.New("--dp-attention: a closed loop (--users) with data-parallel attention is not modelled")
	}
	return nil
}

// replicasOnly says whether d under o is data-parallel replicas, each
// its own event loop (RunReplicas): aggregated, routed round-robin, an
// open loop.
func (d Deployment) replicasOnly(o Options) bool {
	return !d.Disaggregated() && d.Router == RoundRobin && o.Users == 0
}

// runDeployment runs d on src in one event loop (RunDeployment; not
// replicas alone), with an audit called after every step (tests).
func runDeployment(d Deployment, src source, o Options, audit func(*cluster) error) (*Result, error) {
	if d.Serve.Instances < 1 {
		return nil, errors.New("--dp: must be at least 1")
	}
	if d.Serve.Pricer == nil || d.Disaggregated() && d.Decode.Pricer == nil {
		return nil, errors.New("serve: a pool without a pricer")
	}
	if src.n == 0 {
		return nil, errors.New("serve: no requests")
	}
	c := &cluster{d: d, src: src, o: o, audit: audit, due: map[int]Request{}, fl: map[int]*flight{}}
	var err error
	if c.pools[0], err = newPool(d.Serve, o, !d.Disaggregated(), c.build); err != nil {
		return nil, err
	}
	c.npools = 1
	if d.Disaggregated() {
		if c.pools[1], err = newPool(d.Decode, o, true, c.build); err != nil {
			return nil, err
		}
		c.pools[1].e.RequestOverhead = 0
		for i := range c.pools[1].nodes {
			c.pools[1].nodes[i].l.e.RequestOverhead = 0
		}
		c.npools = 2
		c.linkFree = make([]float64, d.Serve.Instances)
		c.bytesPer = c.d.Serve.Pricer.KVBytes(1)
		for _, nd := range c.pools[1].nodes {
			nd.decode = true
		}
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	c.next = src.cursor()
	c.recs = newRecords(src.n)
	if o.Records {
		c.all = make([]Metrics, src.n)
	}
	if err := c.run(); err != nil {
		return nil, err
	}
	return c.result()
}

// node is one scheduler of a pool: a replica, or one of a PP replica's
// micro-batch schedulers.
type node struct {
	l       *loop
	inst    int // the instance it belongs to
	idx     int // its place in its pool
	decode  bool
	routed  int
	lastFin []float64   // finish times of its last round
	seen    map[int]int // prefix ids it has served
	xq      []int       // a decode scheduler's transfer queue (transfer.go)
}

// outstanding returns the requests routed to n and not finished by t.
// Only n's last round can end after t: the cluster starts no iteration
// after a pending routing decision.
func (n *node) outstanding(t float64) int {
	k := n.routed - n.l.done
	for _, f := range n.lastFin {
		if f > t {
			k++
		}
	}
	return k
}

// next returns when n next has something to do (+Inf: nothing). A
// scheduler that waits for blocks held elsewhere has nothing to do
// before a request arrives (a KV cache into blocks reserved for it), or
// the blocks come free (cluster.arrived).
func (n *node) next() float64 {
	l := n.l
	switch {
	case l.blocked:
		if l.next < len(l.queue) {
			return max(l.now, l.seen(l.queue[l.next].at))
		}
	case len(l.running) > 0 || l.nwait() > 0 || len(l.pending) > 0:
		return l.now
	case l.next < len(l.queue):
		return max(l.now, l.seen(l.queue[l.next].at))
	}
	return math.Inf(1)
}

// pool is a Pool's schedulers and its router's state.
type pool struct {
	e      Engine
	nodes  []*node
	blocks int
	kv     charge // what a sequence holds of a scheduler's blocks
	rr     int
	router Router
	warns  []error // Engine.MemoryWarnings of the pool's own engine
}

// newPool builds pl's schedulers: Instances × PP, each with 1/PP of an
// instance's KV cache (see RunReplicas). series: the first records the
// time series. build gives the record of a request whose state a
// scheduler builds (cluster.build).
func newPool(pl Pool, o Options, series bool, build func(arrival) *Metrics) (*pool, error) {
	e := pl.Engine
	if err := e.Validate(); err != nil {
		return nil, err
	}
	if pl.Instances < 1 {
		return nil, fmt.Errorf("serve: a pool of %d instances", pl.Instances)
	}
	kv, mem, err := e.KVCapacity(pl.Pricer)
	if err != nil {
		return nil, err
	}
	warns := e.MemoryWarnings(pl.Pricer)
	pp := max(pl.Pricer.Scenario().PP, 1)
	if pp > 1 {
		kv = max(kv/pp, e.BlockSize)
		e.KVTokens = e.seqTokens(kv, mem)
	}
	p := &pool{e: e, blocks: kv / e.BlockSize, kv: chargeOf(e, mem), warns: warns}
	for i := range pl.Instances * pp {
		oi := o
		if i > 0 || !series {
			oi.SeriesPoints = 0
		}
		l := newLoop(pl.Pricer, e, oi, p.blocks, mem)
		l.record = build
		p.nodes = append(p.nodes, &node{l: l, inst: i / pp, idx: i, seen: map[int]int{}})
	}
	return p, nil
}

// pick returns the scheduler a request routed at t goes to.
func (p *pool) pick(t float64) *node {
	n := len(p.nodes)
	if p.router == RoundRobin {
		j := p.rr % n
		p.rr++
		return p.nodes[j]
	}
	best, bo := -1, 0
	for k := range n {
		j := (p.rr + k) % n
		if o := p.nodes[j].outstanding(t); best < 0 || o < bo {
			best, bo = j, o
		}
	}
	p.rr = best + 1
	return p.nodes[best]
}

// cluster is one run of a deployment.
type cluster struct {
	d      Deployment
	o      Options
	src    source
	next   func() Request  // the source's cursor
	drawn  int             // requests drawn from it
	due    map[int]Request // drawn, to arrive
	fl     map[int]*flight
	spare  []*flight // flights of requests that have left, for the next
	pools  [2]*pool
	npools int
	ev     events
	seq    int
	done   int // requests finished end to end
	// What the results keep of the requests finished (flight.go).
	recs     records
	all      []Metrics // Options.Records
	merged   Metrics   // the record of the request that finished last
	svc      inOrder   // each pool's time in service
	xfer     []float64 // the transfer times
	linkFree []float64 // when each prefill instance's link is next free
	xferArea float64   // time requests spent between the pools
	xferBusy float64   // time the links spent moving KV caches
	bytesPer model.Bytes
	heldArea float64 // the integral of the blocks prefills hold for transfers
	// audit, when set (tests), is called after every step.
	audit func(*cluster) error
}

func (c *cluster) push(e event) {
	e.seq = c.seq
	c.seq++
	c.ev.push(e)
}

// check refuses requests that no instance of a pool can hold.
func (c *cluster) check() error {
	p := c.pools[0]
	if c.d.Disaggregated() {
		open := c.src.open
		pre := source{n: c.src.n, open: func() func() (Request, error) {
			next := open()
			return func() (Request, error) {
				r, err := next()
				r.Output = 1
				return r, err
			}
		}}
		if err := checkSource(pre, p.kv, p.blocks, c.o); err != nil {
			return err
		}
		p = c.pools[1]
	}
	return checkSource(c.src, p.kv, p.blocks, c.o)
}

// run releases the requests and runs every scheduler in time order:
// each step either makes the earliest routing decision or runs the
// scheduler whose next iteration starts first (routing first on a tie:
// a request arriving when an iteration starts joins it, as in Run).
func (c *cluster) run() error {
	c.pools[0].router, c.pools[1%c.npools].router = c.d.Router, c.d.Router
	n := c.src.n
	if c.o.Users > 0 {
		for range min(c.o.Users, n) {
			c.push(event{t: 0, id: c.draw()})
		}
	} else {
		c.seq = n // see arrive
		c.arrive()
	}
	for c.done < n {
		var best *node
		tn := math.Inf(1)
		for _, p := range c.pools[:c.npools] {
			for _, nd := range p.nodes {
				if t := nd.next(); t < tn {
					tn, best = t, nd
				}
			}
		}
		if len(c.ev) > 0 && c.ev[0].t <= tn {
			c.route(c.ev.pop())
			if err := c.check1(); err != nil {
				return err
			}
			continue
		}
		if best == nil {
			return fmt.Errorf("serve: the deployment is stuck with %d of %d requests finished (a bug)", c.done, n)
		}
		best.l.resume(tn)
		if err := best.l.round(); err != nil {
			return err
		}
		if best.decode && c.sendable(best) {
			c.push(event{t: best.l.now, src: best.idx, kind: retry})
		}
		best.lastFin = best.lastFin[:0]
		for _, r := range best.l.finished {
			best.lastFin = append(best.lastFin, float64(r.m.Finish))
		}
		for _, r := range best.l.finished {
			c.finish(best, r)
		}
		if err := c.check1(); err != nil {
			return err
		}
	}
	return nil
}

// check1 runs the audit, if any.
func (c *cluster) check1() error {
	if c.audit == nil {
		return nil
	}
	return c.audit(c)
}

// route makes a decision.
func (c *cluster) route(e event) {
	switch e.kind {
	case prefilled:
		c.transfer(e)
		return
	case retry:
		c.send(c.pools[1].nodes[e.src], e.t)
		return
	case arrived:
		c.arrived(e)
		return
	}
	if c.o.Users == 0 {
		c.arrive()
	}
	q := c.due[e.id]
	delete(c.due, e.id)
	whole := q.Output
	p := c.pools[0]
	nd := p.pick(e.t)
	q.Arrival = model.Seconds(e.t)
	keep := c.d.Disaggregated() && q.Output > 1
	if c.d.Disaggregated() {
		q.Output = 1
	}
	q.Cached = cachedTokens(q, c.o.PrefixHit, p.e.BlockSize, nd.seen)
	nd.routed++
	a := arrivalOf(&q, e.id)
	a.total, a.keep = int32(whole), keep
	if keep && c.pools[1].e.ReserveFirst {
		// Its record is made now: its arrival here is the engine's
		// sight of it once its decode blocks are set aside (prefill).
		f := c.flight(e.id, Request{ID: q.ID, Input: q.Input, Output: whole})
		f.m0 = Metrics{ID: q.ID, Arrival: q.Arrival, Input: q.Input, Output: q.Output}
		a.m = &f.m0
		c.bootstrap(nd, f, a, e.t)
		return
	}
	// Until its scheduler reaches it, the request is this arrival
	// (flight.go).
	nd.l.push(a)
}

// finish handles a request that finished on scheduler nd: a prefilled
// one goes to the decode pool; one finished end to end lets its user
// (closed loop) send the next request.
func (c *cluster) finish(nd *node, r *live) {
	t := float64(r.m.Finish)
	f := c.fl[r.id]
	if r.keep && r.m == &f.m0 {
		x := &f.x
		x.src, x.blocks, x.held, x.prefilled = nd.idx, r.blocks, r.heldAt, t
		c.push(event{t: t, id: r.id, src: nd.idx, kind: prefilled})
		return
	}
	c.done++
	c.complete(r.id, f)
	if c.o.Users > 0 && c.drawn < c.src.n {
		c.push(event{t: t + float64(c.o.Think), id: c.draw()})
	}
}

// result merges the schedulers' records.
func (c *cluster) result() (*Result, error) {
	res := &Result{}
	var area float64
	for k, p := range c.pools[:c.npools] {
		pr := PoolResult{Engine: p.e, Instances: c.d.Serve.Instances, GPUs: c.d.Serve.GPUs(), Schedulers: len(p.nodes), KVTokens: p.kv.tokens(p.blocks)}
		if k == 1 {
			pr.Instances, pr.GPUs = c.d.Decode.Instances, c.d.Decode.GPUs()
		}
		pr.Name = [...]string{"replicas", "prefill", "decode"}[k+c.npools-1]
		for _, nd := range p.nodes {
			l := nd.l
			if err := l.p.Err(); err != nil {
				return nil, err
			}
			area += l.area
			res.itl.merge(&l.res.itl)
			pr.Iterations += l.res.Iterations
			pr.Preemptions += l.res.Preemptions
			pr.BusyTime += l.res.BusyTime
			if l.o.SeriesPoints > 0 {
				res.Series = l.res.Series
			}
		}
		pr.InService = model.Seconds(c.svc.sum[k])
		res.Pools = append(res.Pools, pr)
		res.Warnings = append(res.Warnings, p.nodes[0].l.p.Warnings()...)
		res.Warnings = addWarnings(res.Warnings, p.warns...)
		// The engine and KV cache reported are the last pool's (the
		// decode pool's when disaggregated).
		res.Engine, res.KVTokens, res.KVBlocks, res.Memory = p.e, pr.KVTokens, p.blocks, p.nodes[0].l.res.Memory
		res.Iterations += pr.Iterations
		res.Preemptions += pr.Preemptions
		res.BusyTime += pr.BusyTime
		res.Replicas += pr.Schedulers
	}
	res.Requests = c.all
	if c.d.Disaggregated() {
		res.Transfer = statsOf(c.xfer)
		res.TransferBusy = model.Seconds(c.xferBusy)
		area += c.xferArea
	}
	res.Users = c.o.Users
	res.recs = c.recs
	res.summarize(area)
	var busy, gpus float64 // GPU-time busy and GPU-time available, over the duration
	for i := range res.Pools {
		if d := float64(res.Duration); d > 0 {
			pr := &res.Pools[i]
			pr.Utilization = float64(pr.BusyTime) / d / float64(pr.Schedulers)
			g := float64(pr.Instances * pr.GPUs)
			busy += pr.Utilization * g
			gpus += g
			if i == 0 && c.d.Disaggregated() {
				pr.KVHeld = c.heldArea / d / float64(pr.Schedulers*c.pools[0].blocks)
			}
		}
	}
	// Pools whose instances have different GPUs (disaggregated) weigh in
	// by their GPUs, not their schedulers as summarize counts them; one
	// pool's figure is left as summarize computed it.
	if len(res.Pools) > 1 && gpus > 0 {
		res.Utilization = busy / gpus
	}
	return res, nil
}

// A PoolResult is one pool's share of a run.
type PoolResult struct {
	Name       string // replicas (aggregated), prefill or decode
	Engine     Engine
	Instances  int
	GPUs       int // per instance
	Schedulers int // instances × PP (micro-batch schedulers)
	KVTokens   int // per scheduler
	Iterations int
	// Preemptions in the pool, BusyTime summed over its schedulers,
	// Utilization BusyTime over the run's duration per scheduler (the
	// fraction of its GPUs' time busy: its schedulers are alike).
	Preemptions int
	BusyTime    model.Seconds
	Utilization float64
	// InService is the requests' time in the pool's service, summed:
	// first scheduled to last token there (the prefill's end in a
	// prefill pool). Over BusyTime it is the mean running batch.
	InService model.Seconds
	// KVHeld is, in a prefill pool, the mean fraction of its KV cache
	// held by prefilled requests, from their prefill's end until their KV
	// cache has reached the decode pool (transfer.go), over the run.
	KVHeld float64
}

// cachedTokens returns the prompt tokens of q the prefix cache holds
// when the scheduler with prefix ids seen gets it: hit of the prompt,
// at most the prompt less its last token (vLLM recomputes that one for
// its logits when the whole prompt hits: max_cache_hit_length =
// num_tokens − 1 in vllm/v1/core/kv_cache_manager.py
// get_computed_blocks), rounded down to whole blocks (engines cache and
// match full blocks only, so a whole-prompt hit recomputes the last
// block, as that function's comment says).
// A request with a shared-prefix id finds it only when an earlier
// request with that id ran on the same scheduler (the first computes
// it); cached prefixes are assumed never evicted.
func cachedTokens(q Request, hit float64, block int, seen map[int]int) int {
	if !(hit > 0) {
		return 0
	}
	if q.Prefix != 0 {
		seen[q.Prefix]++
		if seen[q.Prefix] == 1 {
			return 0
		}
	}
	c := min(int(hit*float64(q.Input)), q.Input-1)
	return max(0, c/block*block)
}
