package main

// perfsim plan serve's data-parallel attention search (--dp-attention):
// which groups it tries for an MoE model, and what it refuses.

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/plan"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// dpAttnMode is --dp-attention's value.
type dpAttnMode int

const (
	dpAttnAuto dpAttnMode = iota // searched beside the other layouts for an MoE model
	dpAttnOn                     // the only layouts searched
	dpAttnOff                    // not searched
)

func parseDPAttn(s string) (dpAttnMode, error) {
	switch strings.ToLower(s) {
	case "auto":
		return dpAttnAuto, nil
	case "on":
		return dpAttnOn, nil
	case "off":
		return dpAttnOff, nil
	}
	return 0, usagef("--dp-attention: want auto, on or off, got %q", s)
}

// dpAttnGroup is one data-parallel attention shape searched: d replicas
// of tp GPUs, EP d × tp.
type dpAttnGroup struct{ tp, d int }

// dpAttnGroups returns the groups a plan searches for a model of shape s
// under mode: none when off, for a dense model, without --pp 1 (serve
// models no pipeline under the layout), or behind another router than
// round-robin; else, for each --tp degree, every group size
// plan.DPAttentionDegrees gives within --max-gpus, whose EP (d × tp) is
// among --ep's where that is pinned. --max-rate prices one deployment: a
// group only where --ep pins a multiple of the first --tp (and the first
// --pp is 1), EP over TP replicas.
func (o *planOptions) dpAttnGroups(fs *pflag.FlagSet, mode dpAttnMode, s sim.Shape, router serve.Router) []dpAttnGroup {
	if mode == dpAttnOff || s.Experts <= 1 || !slices.Contains(o.pp, 1) || router != serve.RoundRobin {
		return nil
	}
	if o.maxRate {
		if !fs.Changed("ep") || len(o.ep) != 1 || len(o.tp) == 0 || o.pp[0] != 1 {
			return nil
		}
		tp, ep := o.tp[0], o.ep[0]
		if tp >= 1 && ep%tp == 0 && slices.Contains(plan.DPAttentionDegrees(s, tp, ep), ep/tp) {
			return []dpAttnGroup{{tp, ep / tp}}
		}
		return nil
	}
	var out []dpAttnGroup
	for _, tp := range o.tp {
		for _, d := range plan.DPAttentionDegrees(s, tp, o.maxGPUs) {
			if !fs.Changed("ep") || slices.Contains(o.ep, d*tp) {
				out = append(out, dpAttnGroup{tp, d})
			}
		}
	}
	return out
}

// dpAttnErrors returns what --dp-attention on cannot search, each a
// usage error said beside the other flags' problems: a dense model, an
// engine serve cannot run the layout with (e nil: not known yet), and
// what serve does not model with it (--disagg, another router, no --pp
// 1); then, if none of those, that no group fits (with --max-rate, that
// --ep names none).
func (o *planOptions) dpAttnErrors(mode dpAttnMode, s sim.Shape, router serve.Router, e *serve.Engine, groups []dpAttnGroup) []error {
	if mode != dpAttnOn {
		return nil
	}
	var errs []error
	if s.Experts <= 1 {
		errs = append(errs, usagef("--dp-attention: on, but %s has no routed experts: data-parallel attention spreads each MoE layer's experts over the group's GPUs (give auto or off)", o.model))
	}
	if e != nil {
		if err := serve.CheckDPAttentionEngine(*e); err != nil {
			errs = append(errs, usagef("--engine: %s cannot run data-parallel attention: %v", e.Name, err))
		}
	}
	if o.disagg {
		errs = append(errs, usagef("--dp-attention: on is not with --disagg (data-parallel attention in a disaggregated deployment is not modelled)"))
	}
	if router != serve.RoundRobin {
		errs = append(errs, usagef("--router: %s with --dp-attention on is not modelled: data-parallel attention's replicas take requests round-robin (SGLang's data-parallel controller's default)", router))
	}
	if !slices.Contains(o.pp, 1) {
		errs = append(errs, usagef("--pp: data-parallel attention runs one pipeline stage, and --dp-attention on was given without --pp 1 among %s", intList(o.pp)))
	}
	if len(errs) == 0 && len(groups) > 0 && !o.maxRate {
		// on searches the groups alone: an EP pinned that is no group's
		// would be dropped without a word.
		for _, ep := range o.ep {
			if !slices.ContainsFunc(groups, func(g dpAttnGroup) bool { return g.d*g.tp == ep }) {
				errs = append(errs, usagef("--ep: %d is the expert parallelism of no data-parallel attention group searched (replicas × --tp %s), and --dp-attention on searches those alone", ep, intList(o.tp)))
			}
		}
	}
	if len(errs) == 0 && len(groups) == 0 && s.Experts > 1 && o.maxRate {
		errs = append(errs, usagef("--dp-attention: on with --max-rate prices one group of replicas × --tp GPUs, the experts over all of them: give --ep, a multiple of --tp that %s's %d experts and layout take (e.g. --tp %d --ep %d), and --pp 1", o.model, s.Experts, max(o.tp[0], 1), 2*max(o.tp[0], 1)))
	} else if len(errs) == 0 && len(groups) == 0 && s.Experts > 1 {
		ep := ""
		if len(o.ep) > 0 {
			ep = fmt.Sprintf(" among --ep %s", intList(o.ep))
		}
		errs = append(errs, usagef("--dp-attention: on, but no group of 2 or more replicas of --tp %s within --max-gpus %d has an expert parallelism (replicas × tp)%s that %s's %d experts and layout take", intList(o.tp), o.maxGPUs, ep, o.model, s.Experts))
	}
	return errs
}

// dpAttnNote says, for auto, why an MoE model's plan searches no
// data-parallel attention ("" when it does, or need not say): another
// router than round-robin, or an engine that cannot run it.
func dpAttnNote(mode dpAttnMode, s sim.Shape, router serve.Router, e serve.Engine) string {
	if mode != dpAttnAuto || s.Experts <= 1 {
		return ""
	}
	if router != serve.RoundRobin {
		return fmt.Sprintf("data-parallel attention not searched: the %s router with it is not modelled (round-robin only)", router)
	}
	if err := serve.CheckDPAttentionEngine(e); err != nil {
		return fmt.Sprintf("data-parallel attention not searched: %v", err)
	}
	return ""
}

// intList writes 1,2,4.
func intList(v []int) string {
	return strings.Trim(strings.Join(strings.Fields(fmt.Sprint(v)), ","), "[]")
}

// dpAttnLayouts are the layouts of groups × dts × caps, each a
// data-parallel attention group of one stage.
func dpAttnLayouts(groups []dpAttnGroup, dts []model.DType, caps []int) []plan.Layout {
	var out []plan.Layout
	for _, g := range groups {
		for _, dt := range dts {
			for _, ms := range caps {
				out = append(out, plan.Layout{TP: g.tp, PP: 1, EP: g.d * g.tp, DType: dt, MaxSeqs: ms, DPAttention: g.d})
			}
		}
	}
	return out
}

// deployDPAttn builds a data-parallel attention group of l: the engine
// as perfsim serve --dp-attention makes it (serve.DPAttentionPreset,
// then the engine flags given and l's cap), and one pricer for the
// group's dp × tp GPUs, the experts over all of them.
func (o *planOptions) deployDPAttn(fs *pflag.FlagSet, dev *hardware.Device, w sim.Workload, l plan.Layout) (*sim.Pricer, serve.Engine, error) {
	e, err := serve.DPAttentionPreset(o.engine, dev.Memory.Limit(), l.DPAttention, l.TP)
	if err != nil {
		return nil, e, err
	}
	o.host.apply(fs, &e)
	if l.MaxSeqs > 0 {
		e.MaxSeqs = l.MaxSeqs
	}
	sys, err := systemFor(dev, l.GPUs())
	if err != nil {
		return nil, e, err
	}
	sc := sim.Default()
	sc.TP, sc.PP, sc.DP, sc.EP, sc.Weights, sc.Act, sc.KV = l.TP, l.PP, l.DPAttention, l.EP, l.DType, l.DType, l.DType
	p, err := sim.NewPricer(sys, w, e.Scenario(sc))
	return p, e, err
}

// dpAttnServeFlags returns perfsim serve's layout flags for c, a
// data-parallel attention candidate: its groups of c.DPAttention
// replicas of tp GPUs (--ep the group's GPUs, --dp-attention's default
// --dp being --ep / --tp), c.DP of them (--gpus), its data type and
// the replicas' cap where the plan set one.
func dpAttnServeFlags(c *plan.Candidate) string {
	s := fmt.Sprintf("--dp-attention --tp %d --ep %d --gpus %d --dtype %s", c.TP, c.EP, c.GPUs, c.DType)
	if c.MaxSeqs > 0 {
		s += fmt.Sprintf(" --max-seqs %d", c.MaxSeqs)
	}
	return s
}

// rateFlag writes a rate for --rate to four significant digits, rounded
// down, so that the command it is given to runs at no more than r.
func rateFlag(r float64) string {
	if !(r > 0) || math.IsInf(r, 0) {
		return strconv.FormatFloat(r, 'g', -1, 64)
	}
	scale := math.Pow(10, 3-math.Floor(math.Log10(r)))
	return strconv.FormatFloat(math.Floor(r*scale)/scale, 'f', -1, 64)
}
