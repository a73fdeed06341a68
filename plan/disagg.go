package plan

import (
	"errors"
	"fmt"
	"math"

	"github.com/perfsim/perfsim/serve"
)

// A Pair is a disaggregated deployment's two instance layouts: the
// prefill pool's and the decode pool's (the same data type, engine
// settings and expert parallelism, which divides both pools' TP, as
// perfsim serve --disagg --ep prices it).
type Pair struct {
	Prefill, Decode Layout
}

func (p Pair) String() string {
	return fmt.Sprintf("prefill %s, decode %s %s", shape(p.Prefill.TP, p.Prefill.EP, p.Prefill.PP), shape(p.Decode.TP, p.Decode.EP, p.Decode.PP), p.Prefill.DType)
}

// shape names an instance's layout: "tp4 pp1", or "tp4 ep2 pp1".
func shape(tp, ep, pp int) string {
	if ep > 1 {
		return fmt.Sprintf("tp%d ep%d pp%d", tp, ep, pp)
	}
	return fmt.Sprintf("tp%d pp%d", tp, pp)
}

// A Disagg is the pools of a disaggregated candidate: the instances'
// TP and PP and how many of each (zero for an aggregated candidate).
// Both pools' expert parallelism is the candidate's Layout.EP.
type Disagg struct {
	PrefillTP, PrefillPP, DecodeTP, DecodePP int
	Prefill, Decode                          int // instances
}

// searchPair finds, for one pair of layouts, the fewest prefill and
// decode instances that meet the SLO within MaxGPUs. It starts from the
// bounds (the target rate over one prefill instance's throughput at
// maximum load on the prompts alone, and over one decode instance's on
// prefilled requests alone) and adds an instance at a time to the pool
// that misses: the prefill pool when only TTFT misses, the decode pool
// when only TPOT misses, otherwise (both, or a queue that grows) the
// busier pool. Every candidate is a full simulation of both pools and
// the link between them (serve.RunDeployment).
func searchPair(q ServeQuery, pr Pair, ds *draws) (cands []Candidate, pruned, simulated int, err error) {
	reqs := ds.first()
	if q.Link == nil {
		return nil, 1, 0, errors.New("plan: disaggregated layouts need the link between the pools")
	}
	pp, pe, err := q.Deploy(pr.Prefill)
	if err != nil {
		return nil, 1, 0, err
	}
	dp, de, err := q.Deploy(pr.Decode)
	if err != nil {
		return nil, 1, 0, err
	}
	if max(pr.Prefill.EP, 1) != max(pr.Decode.EP, 1) {
		return nil, 1, 0, fmt.Errorf("expert parallelism %d in the prefill pool and %d in the decode pool: a deployment has one", pr.Prefill.EP, pr.Decode.EP)
	}
	gp, gd := pr.Prefill.TP*pr.Prefill.PP, pr.Decode.TP*pr.Decode.PP
	if gp+gd > q.MaxGPUs {
		return nil, 1, 0, fmt.Errorf("one prefill and one decode instance need %d GPUs, more than %d", gp+gd, q.MaxGPUs)
	}
	// The bounds: each pool alone at maximum load.
	n := min(len(reqs), 4*max(pe.MaxSeqs, 64))
	pre := make([]serve.Request, 0, n)
	dec := make([]serve.Request, 0, n)
	for _, r := range reqs[:n] {
		r.Arrival = 0
		if r.Output > 1 {
			d := r
			d.Prefilled = true
			dec = append(dec, d)
		}
		r.Output = 1
		pre = append(pre, r)
	}
	if len(dec) == 0 {
		return nil, 1, 0, errors.New("no request has more than one output token: nothing to decode")
	}
	capP, err := serve.RunReplicas(pp, pe, pre, 1, serve.Options{})
	simulated++
	if err != nil {
		return nil, 1, simulated, err
	}
	capD, err := serve.RunReplicas(dp, de, dec, 1, serve.Options{})
	simulated++
	if err != nil {
		return nil, 1, simulated, err
	}
	rate := q.Workload.Rate
	x := max(1, int(math.Ceil(rate/capP.RequestsPerSecond)))
	y := max(1, int(math.Ceil(rate*float64(len(dec))/float64(n)/capD.RequestsPerSecond)))
	pruned += x - 1 + y - 1
	// tried holds whether each (x, y) simulated met the SLO.
	tried := map[[2]int]bool{}
	try := func(x, y int) (Candidate, *serve.Result, error) {
		link, err := q.Link(x*gp + y*gd)
		if err != nil {
			return Candidate{}, nil, err
		}
		d := serve.Deployment{Serve: serve.Pool{Pricer: pp, Engine: pe, Instances: x}, Decode: serve.Pool{Pricer: dp, Engine: de, Instances: y},
			Link: link, Router: q.Router}
		res, n, err := ds.settle(q.Workload.Rate, func(rs []serve.Request) (*serve.Result, error) {
			simulated++
			return serve.RunDeployment(d, rs, serve.Options{})
		})
		if err != nil {
			return Candidate{}, nil, err
		}
		c := candidate(pr.Prefill, 1, x*gp+y*gd, rate, res, q.SLO)
		c.Requests = n
		c.DP = 0
		c.Disagg = Disagg{PrefillTP: pr.Prefill.TP, PrefillPP: pr.Prefill.PP, DecodeTP: pr.Decode.TP, DecodePP: pr.Decode.PP, Prefill: x, Decode: y}
		if err := q.price(&c, res); err != nil {
			return Candidate{}, nil, err
		}
		cands = append(cands, c)
		tried[[2]int{x, y}] = c.Meets
		return c, res, nil
	}
	for x*gp+y*gd <= q.MaxGPUs {
		c, res, err := try(x, y)
		if err != nil {
			return cands, pruned, simulated, err
		}
		if c.Meets {
			// The bounds are guesses (a few hundred requests at once
			// understate a pool's throughput by their drain): take an
			// instance from either pool while the SLO is still met
			// (more instances never serve worse).
			for shrunk := true; shrunk; {
				shrunk = false
				for _, n := range [][2]int{{x - 1, y}, {x, y - 1}} {
					if n[0] < 1 || n[1] < 1 {
						continue
					}
					meets, seen := tried[n]
					if !seen {
						c, _, err := try(n[0], n[1])
						if err != nil {
							return cands, pruned, simulated, err
						}
						meets = c.Meets
					}
					if meets {
						x, y, shrunk = n[0], n[1], true
						break
					}
				}
			}
			break
		}
		ttft := q.SLO.TTFTP99 > 0 && res.TTFT.P99 > float64(q.SLO.TTFTP99)
		tpot := q.SLO.TPOTP99 > 0 && res.TPOT.P99 > float64(q.SLO.TPOTP99)
		busyP := len(res.Pools) == 2 && res.Pools[0].Utilization >= res.Pools[1].Utilization
		switch {
		case !res.Overloaded && ttft && !tpot:
			x++
		case !res.Overloaded && tpot && !ttft:
			y++
		case busyP:
			x++
		default:
			y++
		}
	}
	return cands, pruned, simulated, nil
}
