package sim

import (
	"fmt"
	"slices"

	"github.com/perfsim/perfsim/model"
)

// groupOpNames are the ops of an MoE layer under data-parallel attention
// that the expert-parallel group shares (workloads' moeOps with EP > TP):
// the all-to-all dispatch and combine, sized by the busiest replica's
// tokens, and the permutation, the experts' grouped GEMMs and the
// finalisation, over the tokens every replica routes. The router, the
// top-k and the shared experts run on each replica's own tokens.
var groupOpNames = []string{"moe.dispatch", "moe.permute", "expert.gate_up", "expert.up", "expert.act", "expert.down", "moe.finalize", "moe.combine"}

type groupKey struct {
	busiest, total int
	graph          bool
}

// findGroupOps names the ops of a decode step, dops, that PriceGroup
// prices over the group: none unless the scenario is data-parallel
// attention (EP beyond TP), whose decomposition must then hold the
// all-to-alls.
func (p *Pricer) findGroupOps(dops []model.Op) error {
	sc := p.r.sc
	if sc.EP <= sc.TP {
		return nil
	}
	for _, o := range dops {
		if o.Count > 0 && slices.Contains(groupOpNames, o.Name) && !slices.Contains(p.groupOps, o.Name) {
			p.groupOps = append(p.groupOps, o.Name)
		}
	}
	if !slices.Contains(p.groupOps, "moe.dispatch") || !slices.Contains(p.groupOps, "moe.combine") {
		return fmt.Errorf("sim: %s under ep %d > tp %d has no all-to-all dispatch and combine to price data-parallel attention with", p.r.w.Name(), sc.EP, sc.TP)
	}
	p.groupm = map[groupKey]float64{}
	return nil
}

// Replicas returns the data-parallel attention replicas whose MoE layers
// the pricer prices as one expert-parallel group (PriceGroup): the
// scenario's DP when EP is beyond TP, else 1.
func (p *Pricer) Replicas() int {
	if len(p.groupOps) == 0 {
		return 1
	}
	return p.r.sc.DP
}

// PriceGroup returns the time of one lockstep iteration of data-parallel
// attention replicas (DeepSeek's serving layout: each replica of TP
// devices its own scheduler, batch and KV cache; every MoE layer's
// experts split over the EP = DP·TP devices of them all), its[i] replica
// i's iteration, an empty one for a replica with nothing to run. As
// SGLang runs it (--enable-dp-attention; python/sglang/srt/managers/
// scheduler.py prepare_dp_attn_batch, v0.4): the replicas all-gather
// their token counts every iteration; a replica with none runs an idle
// batch (get_idle_batch, ForwardMode.IDLE) so as to join the MoE layers'
// collectives; and the iteration replays CUDA graphs only when every
// replica decodes or idles (can_run_dp_cuda_graph, a MIN all-reduce):
// one replica's prefill launches the others' decode steps eagerly too.
//
// The time is the slowest replica's own part (its attention, its dense
// layers, the router, the shared experts, its LM head: Price less the
// group's ops, at its tokens) plus the group's MoE part (groupOpNames):
// the all-to-alls at the busiest replica's tokens, the experts at every
// replica's tokens together, as workloads' moeOps prices them for
// Phase.Group. Replicas alike (equal iterations) cost what Price says
// for one of them, which is simulate's --dp --ep pricing; a replica
// alone with work still pays the MoE of the group. An all-empty group
// costs nothing. Without data-parallel attention (Replicas 1) its must
// hold one iteration, priced by Price.
func (p *Pricer) PriceGroup(its []Iteration) IterationCost {
	if len(p.groupOps) == 0 || len(its) == 1 {
		var c IterationCost
		for i := range its {
			if x := p.Price(&its[i]); x.Time > c.Time {
				c = x
			}
		}
		return c
	}
	busiest, total, eager := 0, 0, false
	for i := range its {
		if len(its[i].Prefill) > 0 || its[i].Eager {
			eager = eager || its[i].Tokens() > 0
		}
	}
	var slow float64
	for i := range its {
		it := its[i]
		n := it.Tokens()
		if n == 0 {
			continue // an idle batch: nothing of its own
		}
		if eager {
			it.Eager = true
		}
		if !it.Eager && len(it.Prefill) == 0 {
			n += max(it.Pad, 0)
		}
		busiest, total = max(busiest, n), total+n
		slow = max(slow, float64(p.price(&it, rankPart).Time))
	}
	if total == 0 {
		return IterationCost{}
	}
	t := slow + p.groupAt(busiest, total, !eager)
	return IterationCost{Time: model.Seconds(t), Stage: model.Seconds(t * p.share)}
}

// groupAt prices the group's MoE ops with the busiest replica at busiest
// tokens and total tokens over every replica.
func (p *Pricer) groupAt(busiest, total int, graph bool) float64 {
	k := groupKey{busiest, total, graph}
	if t, ok := p.groupm[k]; ok {
		return t
	}
	ph := p.r.phase(Decode)
	ph.Batch, ph.Group = busiest, total
	t := p.opsTime(ph, nil, graph, func(o *model.Op) bool { return slices.Contains(p.groupOps, o.Name) })
	remember(p.groupm, k, t)
	return t
}
