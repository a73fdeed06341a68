package plan

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// A Layout is one replica's shape and settings. EP is the
// expert-parallel degree of an MoE model's layers within each stage's TP
// group (0 or 1: none; EP divides TP and the experts, as serve prices
// it): it adds no GPUs, a replica holding TP × PP of them.
//
// DPAttention > 1 makes the replica a data-parallel attention group
// (DeepSeek's layout, perfsim serve --dp-attention): DPAttention
// instances of TP GPUs, each with its own scheduler, KV cache and
// requests, their iterations in lockstep, each MoE layer's experts over
// all DPAttention × TP GPUs (EP is that product; PP is 1). Such a
// replica holds DPAttention × TP GPUs (GPUs); 0 or 1: none.
type Layout struct {
	TP, PP      int
	EP          int
	DType       model.DType
	MaxSeqs     int // 0: the engine's default
	DPAttention int
}

func (l Layout) String() string {
	s := fmt.Sprintf("tp%d pp%d %s", l.TP, l.PP, l.DType)
	if l.EP > 1 {
		s = fmt.Sprintf("tp%d ep%d pp%d %s", l.TP, l.EP, l.PP, l.DType)
	}
	if l.DPAttention > 1 {
		s = fmt.Sprintf("dp-attn %d × %s", l.DPAttention, s)
	}
	if l.MaxSeqs > 0 {
		s += fmt.Sprintf(" max-seqs %d", l.MaxSeqs)
	}
	return s
}

// A Deployer builds what a replica of a layout needs: its pricer and its
// engine (the preset with the layout's settings). cmd wires it to the
// hardware and the model.
type Deployer func(l Layout) (*sim.Pricer, serve.Engine, error)

// SLO is the service objective: p99 TTFT and p99 TPOT at most these
// (0: no bound), and the queue not growing without bound.
type SLO struct {
	TTFTP99, TPOTP99 model.Seconds
}

// Meets reports whether a run meets the SLO.
func (s SLO) Meets(res *serve.Result) bool {
	return !res.Overloaded && (s.TTFTP99 <= 0 || res.TTFT.P99 <= float64(s.TTFTP99)) &&
		(s.TPOTP99 <= 0 || res.TPOT.P99 <= float64(s.TPOTP99))
}

// A Candidate is a deployment that was simulated: DP replicas of
// Layout (under data-parallel attention DP groups of Layout.DPAttention
// instances each), or (Disagg.Prefill > 0) disaggregated pools, Layout
// then being the prefill instances' (and the data type and batch cap of
// both).
type Candidate struct {
	Layout
	DP     int
	Disagg Disagg
	GPUs   int
	// From its simulation at the target load.
	TTFTP99, TPOTP99, TPOTMean float64 // seconds
	// TokensPerSecond is the output tokens per second the deployment
	// carries at the target load, in steady state (SteadyTokens), and
	// per GPU; TokensPerSecondPerUser is 1 / mean TPOT.
	TokensPerSecond        float64
	TokensPerSecondPerGPU  float64
	TokensPerSecondPerUser float64
	Overloaded, Meets      bool
	// Requests is the requests its simulation ran: the query's, or more
	// when a run had not settled (see SettleFactor).
	Requests int
	// CostPerHour is what the deployment costs per hour at the target
	// load and CostPerMillionTokens per million output tokens, when the
	// query has a Coster (0 otherwise).
	CostPerHour, CostPerMillionTokens float64
}

// String names the deployment: "tp4 pp1 bf16 × dp 2", or
// "prefill 2 × tp4 pp1 + decode 1 × tp8 pp1 bf16".
func (c Candidate) String() string {
	if d := c.Disagg; d.Prefill > 0 {
		s := fmt.Sprintf("prefill %d × %s + decode %d × %s %s", d.Prefill, shape(d.PrefillTP, c.EP, d.PrefillPP), d.Decode, shape(d.DecodeTP, c.EP, d.DecodePP), c.DType)
		if c.MaxSeqs > 0 {
			s += fmt.Sprintf(" max-seqs %d", c.MaxSeqs)
		}
		return s
	}
	return fmt.Sprintf("%v × dp %d", c.Layout, c.DP)
}

// ServeQuery is what a serving plan is asked.
type ServeQuery struct {
	Layouts []Layout
	// Pairs are the disaggregated layouts to search (none: aggregated
	// only); Link gives the network between the pools of a deployment
	// of that many GPUs.
	Pairs    []Pair
	Link     func(gpus int) (*serve.KVLink, error)
	Router   serve.Router
	MaxGPUs  int
	Workload serve.Workload // its Rate is the load to serve
	SLO      SLO
	Deploy   Deployer
	// Workers simulates candidates in parallel (0: 1).
	Workers int
	// Objective picks the best deployment; Cost prices each one (needed
	// for LowestCost).
	Objective Objective
	Cost      Coster
}

// ServePlan is a search's answer.
type ServePlan struct {
	// Best is the feasible candidate the objective prefers (the fewest
	// GPUs, then the most tokens per second per GPU; or the lowest cost
	// per hour); nil when none meets the SLO.
	Best *Candidate
	// Front is the Pareto front of the simulated candidates that kept up
	// with the load: tokens/s per GPU against tokens/s per user, by
	// tokens/s per user.
	Front []Candidate
	// All is every simulated candidate, in search order.
	All                     []Candidate
	Seen, Pruned, Simulated int
	Elapsed                 time.Duration
	Problems                []error // why layouts were pruned as unrunnable
	// Warnings are what pricing the searched data types fell back on (a
	// type the device has no peak for), then what the engine's memory
	// count rests on that the hardware file does not say (memoryWarnings),
	// each once, in search order.
	Warnings []error
}

// Serve searches q's layouts: for each, the fewest replicas (from the
// throughput bound up) whose simulation at the target rate meets the
// SLO, within MaxGPUs.
func Serve(q ServeQuery) (*ServePlan, error) {
	start := time.Now()
	if q.Deploy == nil || len(q.Layouts)+len(q.Pairs) == 0 {
		return nil, errors.New("plan: nothing to search")
	}
	if q.Objective == LowestCost && q.Cost == nil {
		return nil, errors.New("plan: the cost objective needs a price")
	}
	if !(q.Workload.Rate > 0) {
		return nil, errors.New("--rate: a plan needs a positive target rate")
	}
	ds, err := newDraws(q.Workload)
	if err != nil {
		return nil, err
	}
	plan := &ServePlan{Warnings: append(dtypeWarnings(q), memoryWarnings(q)...)}
	var mu sync.Mutex
	// A work item is a layout (aggregated) or a pair (disaggregated).
	type item struct {
		l    Layout
		p    Pair
		pair bool
	}
	work := make(chan item)
	var wg sync.WaitGroup
	for range max(q.Workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range work {
				var cands []Candidate
				var pruned, simulated int
				var perr error
				var name fmt.Stringer = it.l
				if it.pair {
					cands, pruned, simulated, perr = searchPair(q, it.p, ds)
					name = it.p
				} else {
					cands, pruned, simulated, perr = searchLayout(q, it.l, ds)
				}
				mu.Lock()
				plan.All = append(plan.All, cands...)
				plan.Pruned += pruned
				plan.Simulated += simulated
				if perr != nil {
					plan.Problems = append(plan.Problems, fmt.Errorf("%v: %w", name, perr))
				}
				mu.Unlock()
			}
		}()
	}
	for _, l := range q.Layouts {
		plan.Seen++
		work <- item{l: l}
	}
	for _, p := range q.Pairs {
		plan.Seen++
		work <- item{p: p, pair: true}
	}
	close(work)
	wg.Wait()
	slices.SortFunc(plan.Problems, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	// Deterministic order whatever the workers did.
	slices.SortFunc(plan.All, func(a, b Candidate) int { return compareCand(a, b) })
	for i := range plan.All {
		c := &plan.All[i]
		if c.Meets && (plan.Best == nil || q.Objective.better(c, plan.Best)) {
			plan.Best = c
		}
	}
	plan.Front = front(plan.All)
	plan.Elapsed = time.Since(start)
	return plan, nil
}

// dtypeWarnings prices the first runnable layout of each data type of q
// and returns the pricers' warnings, each once.
func dtypeWarnings(q ServeQuery) []error {
	var out []error
	done := map[model.DType]bool{}
	said := map[string]bool{}
	for _, l := range q.Layouts {
		if done[l.DType] {
			continue
		}
		p, _, err := q.Deploy(l)
		if err != nil {
			continue
		}
		done[l.DType] = true
		for _, w := range p.Warnings() {
			if !said[w.Error()] {
				said[w.Error()] = true
				out = append(out, w)
			}
		}
	}
	return out
}

func compareCand(a, b Candidate) int {
	x, y := a.Disagg, b.Disagg
	for _, d := range [...]int{a.GPUs - b.GPUs, a.TP - b.TP, max(a.EP, 1) - max(b.EP, 1), a.DPAttention - b.DPAttention, a.PP - b.PP, int(a.DType) - int(b.DType), a.MaxSeqs - b.MaxSeqs, a.DP - b.DP,
		x.Prefill - y.Prefill, x.Decode - y.Decode, x.DecodeTP - y.DecodeTP, x.DecodePP - y.DecodePP} {
		if d != 0 {
			return d
		}
	}
	return 0
}

// searchLayout finds the fewest replicas of l meeting the SLO. It
// returns the candidates it simulated, how many replica counts it
// pruned, and why l cannot run at all.
func searchLayout(q ServeQuery, l Layout, ds *draws) (cands []Candidate, pruned, simulated int, err error) {
	reqs := ds.first()
	p, e, err := q.Deploy(l)
	if err != nil {
		return nil, 1, 0, err
	}
	per := l.GPUs()
	maxDP := q.MaxGPUs / per
	if maxDP < 1 {
		return nil, 1, 0, fmt.Errorf("a replica needs %d GPUs, more than %d", per, q.MaxGPUs)
	}
	// The bound: one replica's throughput at maximum load on the same
	// lengths (every request queued at once; as many for each instance
	// of a data-parallel attention group).
	off := make([]serve.Request, min(len(reqs), 4*max(e.MaxSeqs, 64)*max(l.DPAttention, 1)))
	copy(off, reqs)
	for i := range off {
		off[i].Arrival = 0
	}
	cap1, err := ServeReplicas(p, e, off, 1)
	simulated++
	if err != nil {
		return nil, 1, simulated, err
	}
	// The bound is a guess, not a bound: a few hundred requests at
	// once spend much of their run draining the last long ones, which
	// understates a replica's capacity. So when the first count tried
	// meets the SLO, fewer are tried too, down to the first that
	// misses (more replicas never serve worse).
	start := min(max(1, int(math.Ceil(q.Workload.Rate/cap1.RequestsPerSecond))), maxDP)
	try := func(dp int) (Candidate, error) {
		res, n, err := ds.settle(q.Workload.Rate, func(rs []serve.Request) (*serve.Result, error) {
			simulated++
			return serve.RunDeployment(l.deployment(p, e, dp, q.Router), rs, serve.Options{})
		})
		if err != nil {
			return Candidate{}, err
		}
		c := candidate(l, dp, per, q.Workload.Rate, res, q.SLO)
		c.Requests = n
		err = q.price(&c, res)
		return c, err
	}
	for dp := start; dp <= maxDP; dp++ {
		c, err := try(dp)
		if err != nil {
			return cands, pruned, simulated, err
		}
		cands = append(cands, c)
		if c.Meets {
			if dp > start {
				break
			}
			for dp--; dp >= 1; dp-- {
				c, err := try(dp)
				if err != nil {
					return cands, pruned, simulated, err
				}
				cands = append(cands, c)
				if !c.Meets {
					break
				}
			}
			pruned += max(dp-1, 0)
			return cands, pruned, simulated, nil
		}
	}
	pruned += start - 1
	return cands, pruned, simulated, nil
}

func candidate(l Layout, dp, per int, rate float64, res *serve.Result, slo SLO) Candidate {
	c := Candidate{Layout: l, DP: dp, GPUs: dp * per, TTFTP99: res.TTFT.P99, TPOTP99: res.TPOT.P99, TPOTMean: res.TPOT.Mean,
		TokensPerSecond: SteadyTokens(rate, res), Overloaded: res.Overloaded, Meets: slo.Meets(res)}
	c.TokensPerSecondPerGPU = c.TokensPerSecond / float64(c.GPUs)
	if res.TPOT.Mean > 0 {
		c.TokensPerSecondPerUser = 1 / res.TPOT.Mean
	}
	return c
}

// Requests draws w's requests as a plan simulates them: a Poisson or
// gamma process's pinned to w.Rate (serve.PinRate), so that a plan
// checks its objectives at the load it was asked, whatever the seed and
// however few the requests (seed 1's 400 Poisson arrivals had come at
// 10.5% under the target rate).
func Requests(w serve.Workload) ([]serve.Request, error) {
	reqs, err := w.Requests()
	if err != nil {
		return nil, err
	}
	if w.Arrival == serve.Poisson || w.Arrival == serve.Gamma {
		serve.PinRate(reqs, w.Rate)
	}
	return reqs, nil
}

// SteadyTokens is the output tokens per second a deployment carries in
// steady state at an arrival rate (requests per second), from its run
// at that rate: a run that keeps up serves every request that arrives,
// so it carries rate × the mean output tokens of its requests. The run's
// own OutputTokensPerSecond (the benchmark's definition: first arrival
// to last completion) is lower by the ramp-up and the drain, which
// weigh the more the shorter the run: llama3-8b on one H100 at 20 req/s
// of 1,024 + 256 tokens, 5,120 tokens/s offered, read 4,170 over 400
// requests and 5,009 over 4,000. An overloaded run carries less than
// arrives: its figure is the run's own.
func SteadyTokens(rate float64, res *serve.Result) float64 {
	if res.Overloaded || res.Count == 0 || !(rate > 0) {
		return res.OutputTokensPerSecond
	}
	return rate * float64(res.OutputTokens) / float64(res.Count)
}

// front returns the candidates that kept up with the load and that no
// other beats on both tokens/s per GPU and tokens/s per user.
func front(all []Candidate) []Candidate {
	var f []Candidate
	for _, c := range all {
		if c.Overloaded {
			continue
		}
		dominated := false
		for _, o := range all {
			if o.Overloaded {
				continue
			}
			if o.TokensPerSecondPerGPU >= c.TokensPerSecondPerGPU && o.TokensPerSecondPerUser >= c.TokensPerSecondPerUser &&
				(o.TokensPerSecondPerGPU > c.TokensPerSecondPerGPU || o.TokensPerSecondPerUser > c.TokensPerSecondPerUser) {
				dominated = true
				break
			}
		}
		same := slices.ContainsFunc(f, func(o Candidate) bool {
			return o.TokensPerSecondPerGPU == c.TokensPerSecondPerGPU && o.TokensPerSecondPerUser == c.TokensPerSecondPerUser
		})
		if !dominated && !same { // of equal points, the first (fewest GPUs, smallest layout)
			f = append(f, c)
		}
	}
	slices.SortFunc(f, func(a, b Candidate) int {
		switch {
		case a.TokensPerSecondPerUser < b.TokensPerSecondPerUser:
			return -1
		case a.TokensPerSecondPerUser > b.TokensPerSecondPerUser:
			return 1
		}
		return compareCand(a, b)
	})
	return f
}

// MaxRate returns the highest arrival rate (requests per second) at
// which dp replicas of a deployment (dp groups of a data-parallel
// attention pricer's: ServeReplicas) meet the SLO, by bisection between
// 0 and the replicas' throughput at maximum load (doubled while it meets
// the SLO), to a relative tolerance tol (e.g. 0.01), with w's lengths,
// process and seed (its Rate is ignored). It returns 0 when even a
// trickle misses the SLO.
func MaxRate(p *sim.Pricer, e serve.Engine, dp int, w serve.Workload, slo SLO, tol float64) (float64, *serve.Result, error) {
	if w.Arrival == serve.AllAtOnce {
		return 0, nil, errors.New("--arrival: the highest sustained rate needs arrivals over time (poisson, gamma or constant)")
	}
	w.Rate = 1
	ds, err := newDraws(w)
	if err != nil {
		return 0, nil, err
	}
	reqs := ds.first()
	off := append([]serve.Request(nil), reqs...)
	for i := range off {
		off[i].Arrival = 0
	}
	capRes, err := ServeReplicas(p, e, off, dp)
	if err != nil {
		return 0, nil, err
	}
	at := func(r float64) (*serve.Result, error) {
		res, _, err := ds.replicasAt(p, e, dp, r)
		return res, err
	}
	// The throughput at maximum load is where the search starts, not
	// a cap: the requests at once spend much of their run draining the
	// longest, which understates what the replicas sustain, so while
	// the top meets the SLO it is doubled (up to 2^8 times).
	lo, hi := 0.0, capRes.RequestsPerSecond*1.05
	var best *serve.Result
	for k := 0; ; k++ {
		res, err := at(hi)
		if err != nil {
			return 0, nil, err
		}
		if !slo.Meets(res) {
			break
		}
		if k == 8 {
			return hi, res, nil
		}
		lo, best, hi = hi, res, 2*hi
	}
	// Below floor the arrivals span more than serve.MaxTime, where the
	// clock no longer resolves a token: no rate under it is tried.
	floor := float64(reqs[len(reqs)-1].Arrival) / serve.MaxTime
	for hi-lo > tol*hi {
		mid := (lo + hi) / 2
		if mid < floor {
			break
		}
		res, err := at(mid)
		if err != nil {
			return 0, nil, err
		}
		if slo.Meets(res) {
			lo, best = mid, res
		} else {
			hi = mid
		}
	}
	return lo, best, nil
}
