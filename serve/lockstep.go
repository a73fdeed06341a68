package serve

import (
	"fmt"
	"math"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// checkLockstep refuses what data-parallel attention groups of dp
// replicas in all (Deployment.DPAttention) do not model: a pricer whose
// expert-parallel group does not divide the dp replicas into whole
// groups (EP = Replicas·TP, dp a multiple of Replicas), pipeline stages,
// and an engine CheckDPAttentionEngine refuses.
func checkLockstep(p *sim.Pricer, e Engine, dp int) error {
	sc := p.Scenario()
	switch {
	case dp%p.Replicas() != 0:
		return fmt.Errorf("--dp-attention: %d replicas of tp %d, but --ep %d spans groups of %d: data-parallel attention needs the replicas to be whole groups, each group's experts over its replicas' GPUs (--ep = replicas of a group × --tp)", dp, sc.TP, sc.EP, p.Replicas())
	case sc.PP > 1:
		return fmt.Errorf("--dp-attention: pipeline parallelism (--pp %d) with data-parallel attention is not modelled", sc.PP)
	}
	return CheckDPAttentionEngine(e)
}

// CheckDPAttentionEngine reports why engine e cannot run data-parallel
// attention as serve models it: multi-step decode (several decode steps
// per scheduling decision; the group's iterations are scheduled one at a
// time). nil when it can.
func CheckDPAttentionEngine(e Engine) error {
	if e.SchedulerSteps > 1 {
		return fmt.Errorf("--dp-attention: multi-step scheduling (%d steps) with data-parallel attention is not modelled: SGLang, which runs the layout, schedules every iteration", e.SchedulerSteps)
	}
	return nil
}

// DPAttentionPreset returns engine name's preset for a data-parallel
// attention group of dp replicas of tp devices each, each device with
// capacity bytes a program can allocate: PresetFor at tp, except
// SGLang's, which is made at the world's TP size (dp × tp: SGLang's --tp
// under --enable-dp-attention is the world) with SGLangDPAttention's
// changes, as SGLang's ServerArgs makes them.
func DPAttentionPreset(name string, capacity model.Bytes, dp, tp int) (Engine, error) {
	e, err := PresetFor(name, capacity, tp)
	if err != nil || e.Name != "sglang" {
		return e, err
	}
	e, err = PresetFor(name, capacity, dp*tp)
	SGLangDPAttention(&e)
	return e, err
}

// lockstep runs loops, the schedulers of a data-parallel attention group
// of ranks replicas (loops[i] replica i; a replica the router gave no
// request has none), to the end of their requests, as one engine: every
// iteration starts on every replica at once, because every MoE layer's
// all-to-all spans all of them. Each replica's scheduler fills its own
// iteration from its own queue and KV cache; a replica with nothing to
// run joins the iteration with an idle batch (sim.Pricer.PriceGroup says
// what the group's iteration costs); the host overheads are the busiest
// scheduler's. When no replica has anything to run, the group waits for
// the next request any of them will see. Every replica's GPUs are busy
// while the group iterates (BusyTime); Iterations counts the iterations
// each replica ran requests in.
func lockstep(p *sim.Pricer, loops []*loop, ranks int) error {
	its := make([]sim.Iteration, ranks)
	busy := make([]bool, len(loops))
	e := loops[0].e
	now := 0.0
	for {
		left := false
		for _, l := range loops {
			left = left || l.done < l.srcN
		}
		if !left {
			return nil
		}
		any, seqs := false, 0
		for i, l := range loops {
			l.now = now
			its[i], busy[i] = sim.Iteration{}, false
			if _, ok, err := l.plan(); err != nil {
				return err
			} else if !ok {
				continue
			}
			l.multi = false
			l.build()
			its[i], busy[i], any = l.it, true, true
			seqs = max(seqs, len(l.sched))
		}
		if !any {
			next := math.Inf(1)
			for _, l := range loops {
				if t, ok := l.upcoming(); ok {
					next = min(next, l.seen(t))
				}
			}
			if math.IsInf(next, 1) {
				for _, l := range loops {
					if l.done < l.srcN {
						return fmt.Errorf("serve: the data-parallel attention group is stuck at %v with %d of %d requests finished on a replica (a bug)", model.Seconds(now), l.done, l.srcN)
					}
				}
				return nil
			}
			now = max(now, next)
			continue
		}
		dt := float64(p.PriceGroup(its).Time + e.StepOverhead + e.SeqOverhead*model.Seconds(seqs))
		for i, l := range loops {
			if busy[i] {
				l.commit(dt)
				continue
			}
			l.join(now + dt)
			l.now = now + dt
			l.res.BusyTime += model.Seconds(dt)
		}
		now += dt
	}
}
