package plan

import (
	"sync"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// SettleFactor bounds how far a plan lengthens a candidate's run that
// has not settled: one whose requests in the system were still rising
// through its second half while the queue's wait was not
// (serve.Result.Unsettled), the running batch still filling when the
// arrivals stopped. serve's verdict calls such a run overloaded and
// says more requests tell a slow warm-up from overload; the plan runs
// it again over twice the requests, drawn as the query draws them
// (same seed), until it settles or has run SettleFactor times
// --requests. One still unsettled then stays overloaded.
const SettleFactor = 8

// draws holds a plan's requests, drawn at their workload's rate: the
// query's, then twice as many, and so on up to SettleFactor times, each
// drawn once (Requests), when a run first needs it, and shared by the
// search's workers and the rates a bisection tries.
type draws struct {
	w    serve.Workload
	mu   sync.Mutex
	sets [][]serve.Request // sets[k] holds w.N·2^k requests
}

func newDraws(w serve.Workload) (*draws, error) {
	reqs, err := Requests(w)
	if err != nil {
		return nil, err
	}
	return &draws{w: w, sets: [][]serve.Request{reqs}}, nil
}

// first returns the query's own requests.
func (d *draws) first() []serve.Request { return d.sets[0] }

// at returns the k-th draw, drawing it if no run has needed it yet.
func (d *draws) at(k int) ([]serve.Request, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for len(d.sets) <= k {
		w := d.w
		w.N = 2 * len(d.sets[len(d.sets)-1])
		reqs, err := Requests(w)
		if err != nil {
			return nil, err
		}
		d.sets = append(d.sets, reqs)
	}
	return d.sets[k], nil
}

// settle runs a candidate by run over the query's requests at rate
// (run sees them as drawn; at another rate than the workload's it
// scales their times), and again over twice as many while the run has
// not settled (see SettleFactor), as long as the longer draw still
// arrives within serve.MaxTime at rate. It returns the last run's
// result and its requests.
func (d *draws) settle(rate float64, run func([]serve.Request) (*serve.Result, error)) (*serve.Result, int, error) {
	for k := 0; ; k++ {
		reqs, err := d.at(k)
		if err != nil {
			return nil, 0, err
		}
		res, err := run(reqs)
		n := len(reqs)
		last := float64(reqs[n-1].Arrival) * d.w.Rate / rate
		if err != nil || !res.Unsettled || 2*n > SettleFactor*len(d.first()) || 2*n > serve.MaxRequests || 2*last > float64(serve.MaxTime) {
			return res, n, err
		}
	}
}

// replicasAt runs dp replicas of p and e (ServeReplicas) at rate r as
// MaxRate judges a rate: over the draws made at rate 1 (d's workload's
// Rate is 1) with their times scaled by 1/r, again over twice as many
// while the run has not settled (settle), as a plan's candidates are.
// It returns the last run's result and its requests.
func (d *draws) replicasAt(p *sim.Pricer, e serve.Engine, dp int, r float64) (*serve.Result, int, error) {
	return d.settle(r, func(reqs []serve.Request) (*serve.Result, error) {
		rs := make([]serve.Request, len(reqs))
		for i, q := range reqs {
			q.Arrival = model.Seconds(float64(q.Arrival) / r)
			rs[i] = q
		}
		return ServeReplicas(p, e, rs, dp)
	})
}
