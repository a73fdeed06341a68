package plan

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// A TrainRequest asks for the best layouts to train a model on a system.
type TrainRequest struct {
	GPUs        int     // devices in all; the system must have at least as many
	GlobalBatch int     // sequences per optimizer step
	Seq         int     // tokens per sequence
	Tokens      float64 // training budget for the time to train (0: none)
	Top         int     // layouts to report (0: 5)
	// Base carries the settings the search does not vary: data types,
	// optimizer, TPOverlap, NoOverlap, ExpertImbalance, Dropout,
	// UnfusedAttention, Reserve.
	Base sim.Scenario
	// MicroBatches, Recomputes and ZeROStages are the values tried;
	// empty means {1, 2, 4, 8}, {none, selective, full} and {0, 1, 2, 3}.
	MicroBatches []int
	Recomputes   []sim.Recompute
	ZeROStages   []int
	// MaxVirtual bounds the virtual stages per device tried (0: 8).
	MaxVirtual int
	// FixedTPOverlap keeps Base.TPOverlap; otherwise the search tries
	// TP-communication overlap on and off for every layout with TP > 1.
	FixedTPOverlap bool
}

// A TrainCandidate is one layout the search simulated.
type TrainCandidate struct {
	Scenario sim.Scenario
	Step     model.Seconds
	MFU      float64
	Tokens   float64 // tokens per second, whole system
	Memory   sim.Memory
	Break    sim.Breakdown
	// TimeToTrain is the budget over Tokens (0 without a budget).
	TimeToTrain model.Seconds
}

// GPUHours returns the device-hours to train the budget.
func (c *TrainCandidate) GPUHours() float64 {
	return float64(c.TimeToTrain) / 3600 * float64(c.Scenario.TP*c.Scenario.PP*c.Scenario.DP*c.Scenario.CP)
}

// Layout names the candidate's parallel degrees.
func (c *TrainCandidate) Layout() TrainLayout {
	s := c.Scenario
	return TrainLayout{TP: s.TP, PP: s.PP, DP: s.DP, CP: s.CP, EP: s.EP}
}

// A TrainLayout is a parallel decomposition, without the settings that go
// with it (micro-batch, schedule, recomputation, ZeRO).
type TrainLayout struct{ TP, PP, DP, CP, EP int }

func (l TrainLayout) String() string {
	return fmt.Sprintf("tp %d pp %d dp %d cp %d ep %d", l.TP, l.PP, l.DP, l.CP, l.EP)
}

// A TrainPlan is the search's answer.
type TrainPlan struct {
	// Best holds the fastest fitting candidate of each layout, fastest
	// first, at most Top of them; All holds every layout's best.
	Best, All []TrainCandidate
	// Seen counts the configurations enumerated, Invalid those the
	// simulator refused (a degree that does not divide), NoFit those that
	// ran out of memory, Simulated those priced.
	Seen, Invalid, NoFit, Simulated int
	// ClosestMiss is, when nothing fits, the candidate with the least
	// shortfall.
	ClosestMiss *TrainCandidate
	// Warnings are the simulations' distinct warnings (a data type the
	// device has no peak for), each once, in enumeration order.
	Warnings []error
}

// divisors returns n's divisors in ascending order.
func divisors(n int) []int {
	var d []int
	for i := 1; i <= n; i++ {
		if n%i == 0 {
			d = append(d, i)
		}
	}
	return d
}

// trainSpace enumerates the scenarios of a request: TP within the
// scale-up domain dividing the heads, CP splitting the sequence, PP
// dividing the layers, EP dividing the experts, DP the rest of the GPUs;
// then micro-batch, schedule and virtual stages, recomputation, ZeRO
// stage and TP-communication overlap. Sequence parallelism is on
// whenever TP is above 1.
func trainSpace(sys *hardware.System, s sim.Shape, req TrainRequest) []sim.Scenario {
	mbs := req.MicroBatches
	if len(mbs) == 0 {
		mbs = []int{1, 2, 4, 8}
	}
	rcs := req.Recomputes
	if len(rcs) == 0 {
		rcs = []sim.Recompute{sim.RecomputeNone, sim.RecomputeSelective, sim.RecomputeFull}
	}
	zs := req.ZeROStages
	if len(zs) == 0 {
		zs = []int{0, 1, 2, 3}
	}
	maxV := req.MaxVirtual
	if maxV <= 0 {
		maxV = 8
	}
	overlaps := []bool{false, true}
	if req.FixedTPOverlap {
		overlaps = []bool{req.Base.TPOverlap}
	}
	var out []sim.Scenario
	n := req.GPUs
	for _, tp := range divisors(n) {
		if tp > sys.DevicesPerNode || (s.Heads > 0 && s.Heads%tp != 0) || (s.KVHeads > 0 && s.KVHeads%tp != 0 && tp > s.KVHeads) {
			continue
		}
		for _, cp := range divisors(n / tp) {
			// Ring attention exchanges the blocks of a fused kernel's
			// running softmax: an unfused core has no context
			// parallelism (sim refuses the pair).
			if cp > 1 && (cp > 16 || req.Seq%(2*cp) != 0 || req.Base.UnfusedAttention) {
				continue
			}
			for _, pp := range divisors(n / (tp * cp)) {
				// The layers divide over pp, or with the embedding and
				// the loss counted as a layer slot each (Megatron-LM's
				// --account-for-embedding-in-pipeline-split and
				// --account-for-loss-in-pipeline-split), as NVIDIA runs
				// Llama 3.1 405B's 126 layers over pp 8.
				slots, per := false, s.Layers/pp
				if s.Layers%pp != 0 {
					if pp == 1 || (s.Layers+2)%pp != 0 {
						continue
					}
					slots, per = true, (s.Layers+2)/pp
				}
				dp := n / (tp * cp * pp)
				eps := []int{1}
				if s.Experts > 0 {
					eps = nil
					for _, e := range divisors(s.Experts) {
						if (dp*cp)%e == 0 {
							eps = append(eps, e)
						}
					}
				}
				for _, ep := range eps {
					for _, b := range mbs {
						if req.GlobalBatch%(b*dp) != 0 {
							continue
						}
						m := req.GlobalBatch / (b * dp)
						type sched struct {
							s sim.Schedule
							v int
						}
						scheds := []sched{{sim.OneFOneB, 1}}
						if pp > 1 && m%pp == 0 {
							for _, v := range divisors(per) {
								if v > 1 && v <= maxV {
									scheds = append(scheds, sched{sim.Interleaved, v})
								}
							}
						}
						for _, sh := range scheds {
							for _, rc := range rcs {
								for _, z := range zs {
									if z >= 2 && pp > 1 {
										// Beside pipelining no framework shards the
										// gradients: Megatron-LM's distributed optimizer
										// is ZeRO 1, and DeepSpeed's PipelineEngine
										// asserts "ZeRO-2 and ZeRO-3 are incompatible
										// with pipeline parallelism" (deepspeed/runtime/
										// pipe/engine.py; DeepSpeed issue #1110).
										continue
									}
									for _, tpo := range overlaps {
										if tpo && tp == 1 {
											continue
										}
										sc := req.Base
										sc.Mode, sc.Seq, sc.GlobalBatch, sc.Batch, sc.Tokens = sim.Training, req.Seq, req.GlobalBatch, b, req.Tokens
										sc.TP, sc.CP, sc.PP, sc.DP, sc.EP, sc.SP = tp, cp, pp, dp, ep, tp > 1
										sc.Schedule, sc.VirtualStages, sc.Recompute, sc.ZeRO = sh.s, sh.v, rc, z
										sc.TPOverlap = tpo
										sc.EmbeddingSlot, sc.LossSlot = slots, slots
										out = append(out, sc)
									}
								}
							}
						}
					}
				}
			}
		}
	}
	return out
}

// Train searches the layouts of req for model w on sys: it enumerates
// the space (trainSpace), simulates every configuration with sim.Run
// (the full model: nothing is priced here), drops what does not fit,
// keeps each layout's fastest configuration and ranks the layouts by
// step time. Configurations run on all CPUs; the answer does not depend
// on their order.
func Train(sys *hardware.System, w sim.Workload, req TrainRequest) (*TrainPlan, error) {
	if sys == nil || w == nil {
		return nil, errors.New("plan: no system or no workload")
	}
	var errs []error
	if req.GPUs < 1 {
		errs = append(errs, &sim.ScenarioError{Field: "gpus", Err: fmt.Errorf("must be at least 1, got %d", req.GPUs)})
	} else if sys.Devices() < req.GPUs {
		errs = append(errs, &sim.ScenarioError{Field: "gpus", Err: fmt.Errorf("%d GPUs, but the system has %d", req.GPUs, sys.Devices())})
	}
	if req.GlobalBatch < 1 {
		errs = append(errs, &sim.ScenarioError{Field: "global-batch", Err: fmt.Errorf("must be at least 1, got %d", req.GlobalBatch)})
	}
	if req.Seq < 1 {
		errs = append(errs, &sim.ScenarioError{Field: "seq", Err: fmt.Errorf("must be at least 1, got %d", req.Seq)})
	}
	if w.Shape().Arch == sim.CNN {
		errs = append(errs, errors.New("plan: training layouts are searched for transformers only"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if s := w.Shape(); s.Arch == sim.Vision && s.Tokens > 0 {
		req.Seq = s.Tokens // a ViT trains on its image's tokens (sim does the same)
	}
	space := trainSpace(sys, w.Shape(), req)
	res := make([]TrainCandidate, len(space))
	state := make([]uint8, len(space)) // 0 invalid, 1 no fit, 2 fits
	warns := make([][]error, len(space))
	var wg sync.WaitGroup
	workers := max(1, runtime.GOMAXPROCS(0))
	for k := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := k; i < len(space); i += workers {
				rep, err := sim.Run(sys, w, space[i])
				if err != nil {
					continue
				}
				warns[i] = rep.Warnings
				tr := rep.Training
				c := TrainCandidate{Scenario: rep.Scenario, Step: tr.StepTime, MFU: tr.MFU, Tokens: tr.TokensPerSecond,
					Memory: rep.Memory, TimeToTrain: tr.TimeToTrain}
				if tr.Breakdown != nil {
					c.Break = *tr.Breakdown
				}
				res[i] = c
				state[i] = 1
				if rep.Memory.Fits {
					state[i] = 2
				}
			}
		}()
	}
	wg.Wait()
	p := &TrainPlan{Seen: len(space)}
	said := map[string]bool{}
	for _, ws := range warns {
		for _, w := range ws {
			if !said[w.Error()] {
				said[w.Error()] = true
				p.Warnings = append(p.Warnings, w)
			}
		}
	}
	best := map[TrainLayout]int{}
	var miss *TrainCandidate
	for i := range res {
		switch state[i] {
		case 0:
			p.Invalid++
			continue
		case 1:
			p.NoFit++
			p.Simulated++
			if miss == nil || res[i].Memory.Headroom > miss.Memory.Headroom {
				c := res[i]
				miss = &c
			}
			continue
		}
		p.Simulated++
		l := res[i].Layout()
		if j, ok := best[l]; !ok || faster(&res[i], &res[j]) {
			best[l] = i
		}
	}
	for _, i := range best {
		p.All = append(p.All, res[i])
	}
	sort.Slice(p.All, func(a, b int) bool { return faster(&p.All[a], &p.All[b]) })
	top := req.Top
	if top <= 0 {
		top = 5
	}
	p.Best = p.All[:min(top, len(p.All))]
	if len(p.All) == 0 {
		p.ClosestMiss = miss
	}
	return p, nil
}

// faster orders candidates by step time, then by a fixed order of their
// settings, so that ties break the same way every run.
func faster(a, b *TrainCandidate) bool {
	if a.Step != b.Step {
		return a.Step < b.Step
	}
	x, y := a.Scenario, b.Scenario
	ka := [...]int{x.TP, x.PP, x.DP, x.CP, x.EP, x.Batch, int(x.Schedule), x.VirtualStages, int(x.Recompute), x.ZeRO}
	kb := [...]int{y.TP, y.PP, y.DP, y.CP, y.EP, y.Batch, int(y.Schedule), y.VirtualStages, int(y.Recompute), y.ZeRO}
	for i := range ka {
		if ka[i] != kb[i] {
			return ka[i] < kb[i]
		}
	}
	return false
}

// Rank returns the 1-based rank of layout l in p.All and its step over
// the best's minus one (0.05 = 5% slower), or 0 and +Inf when no
// configuration of l fits.
func (p *TrainPlan) Rank(l TrainLayout) (int, float64) {
	for i := range p.All {
		if p.All[i].Layout() == l {
			return i + 1, float64(p.All[i].Step/p.All[0].Step) - 1
		}
	}
	return 0, math.Inf(1)
}

// Why says why candidate c loses to the winner w: the part of the step
// where it loses most, with both figures.
func Why(c, w *TrainCandidate) string {
	cp, wp := parts(&c.Break), parts(&w.Break)
	best, at := model.Seconds(0), -1
	for i := range cp {
		if d := cp[i].t - wp[i].t; d > best {
			best, at = d, i
		}
	}
	if at < 0 {
		return "ties the winner"
	}
	return fmt.Sprintf("%s %v vs %v", cp[at].name, cp[at].t, wp[at].t)
}

type part struct {
	name string
	t    model.Seconds
}

func parts(b *sim.Breakdown) [10]part {
	return [10]part{{"compute", b.Compute}, {"TP comm", b.TPComm}, {"CP comm", b.CPComm}, {"EP comm", b.EPComm},
		{"PP comm", b.PPComm}, {"bubble", b.Bubble}, {"DP comm", b.DPComm}, {"overlap", b.Overlap}, {"optimizer", b.Optimizer}, {"input", b.Input}}
}
