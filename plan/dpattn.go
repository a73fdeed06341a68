package plan

import (
	"errors"

	"github.com/perfsim/perfsim/internal/errlist"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// DPAttentionDegrees returns the data-parallel attention group sizes a
// serving search tries with a TP degree for a model of shape s, within
// maxGPUs: every d ≥ 2 with d × tp ≤ maxGPUs whose layout the simulator
// accepts (sim.Scenario.Validate at TP tp, DP d and EP d × tp, one
// stage: the experts of each MoE layer over every GPU of the group, as
// perfsim serve --dp-attention prices it). A model without routed
// experts gets none, so a dense model's search is unchanged.
func DPAttentionDegrees(s sim.Shape, tp, maxGPUs int) []int {
	if s.Experts <= 1 || tp < 1 {
		return nil
	}
	var out []int
	for d := 2; d*tp <= maxGPUs; d++ {
		sc := sim.Default()
		sc.TP, sc.DP, sc.EP = tp, d, d*tp
		if layoutOK(sc.Validate(s)) {
			out = append(out, d)
		}
	}
	return out
}

// layoutOK reports whether err says nothing against a layout's degrees
// (tp, pp, dp, ep): the default scenario's lengths and batch are not the
// search's.
func layoutOK(err error) bool {
	for _, e := range errlist.Flatten(err) {
		var se *sim.ScenarioError
		if !errors.As(e, &se) {
			return false
		}
		switch se.Field {
		case "tp", "pp", "dp", "ep":
			return false
		}
	}
	return true
}

// GPUs returns the devices of one replica of l: TP × PP, times the
// group's replicas under data-parallel attention.
func (l Layout) GPUs() int { return l.TP * l.PP * max(l.DPAttention, 1) }

// deployment is n replicas of l behind router, each served by pricer p
// and engine e: under data-parallel attention, n groups of l.DPAttention
// instances in lockstep (serve.Deployment's DPAttention; round-robin
// only, as serve models it).
func (l Layout) deployment(p *sim.Pricer, e serve.Engine, n int, router serve.Router) serve.Deployment {
	d := serve.Deployment{Serve: serve.Pool{Pricer: p, Engine: e, Instances: n}, Router: router}
	if l.DPAttention > 1 {
		d.Serve.Instances *= l.DPAttention
		d.DPAttention = true
	}
	return d
}

// ServeReplicas serves reqs (in arrival order) on dp replicas of pricer
// p's layout with engine e behind the round-robin router: independent
// replicas (serve.RunReplicas), or, for a pricer of a data-parallel
// attention group (p.Replicas() > 1: EP beyond TP), dp groups of
// p.Replicas() instances each in lockstep (serve.Deployment's
// DPAttention). MaxRate and the load plot run a deployment with it.
func ServeReplicas(p *sim.Pricer, e serve.Engine, reqs []serve.Request, dp int) (*serve.Result, error) {
	if g := p.Replicas(); g > 1 {
		return serve.RunDeployment(Layout{DPAttention: g}.deployment(p, e, dp, serve.RoundRobin), reqs, serve.Options{})
	}
	return serve.RunReplicas(p, e, reqs, dp, serve.Options{})
}
