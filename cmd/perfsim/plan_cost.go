package main

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/plan"
	"github.com/perfsim/perfsim/price"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// costing sets q's objective and, with a price, its Coster: a candidate
// costs what its GPUs cost over the simulated run (the price per
// GPU-hour, or the TCO's amortised purchase plus the facility energy the
// run draws at its load, as serve prices it), per hour of the run.
func (o *planOptions) costing(fs *pflag.FlagSet, q *plan.ServeQuery, dev *hardware.Device, w sim.Workload) error {
	obj, err := plan.ParseObjective(o.objective)
	if err != nil {
		return usagef("--objective: %v", err)
	}
	q.Objective = obj
	if o.energy.powerCap != 0 {
		return usagef("--power-cap: plan serve does not apply a power limit (simulate and sweep do)")
	}
	p, err := o.energy.pricing(fs, dev)
	if err != nil {
		return err
	}
	if p == nil || p.Hourly.Per == 0 && !p.TCO() {
		if obj == plan.LowestCost {
			return usagef("--objective cost: needs a price (--price 2.5/h, --prices FILE, or --purchase with --years and --energy-price)")
		}
		return nil
	}
	q.Cost = func(c plan.Candidate, res *serve.Result) (float64, error) {
		if d := c.Disagg; d.Prefill > 0 {
			// Each pool priced at its own load, as serve prices a
			// disaggregated run (serve_energy_disagg.go).
			pp, pe, err := q.Deploy(plan.Layout{TP: d.PrefillTP, PP: d.PrefillPP, DType: c.DType, MaxSeqs: c.MaxSeqs})
			if err != nil {
				return 0, err
			}
			dp, de, err := q.Deploy(plan.Layout{TP: d.DecodeTP, PP: d.DecodePP, DType: c.DType, MaxSeqs: c.MaxSeqs})
			if err != nil {
				return 0, err
			}
			dep := serve.Deployment{Serve: serve.Pool{Pricer: pp, Engine: pe, Instances: d.Prefill}, Decode: serve.Pool{Pricer: dp, Engine: de, Instances: d.Decode}}
			return costPerHour(res, &serveSetup{dep: dep, pricer: pp, w: w, dev: dev, hw: dev.Name, gpus: c.GPUs}, p)
		}
		pricer, _, err := q.Deploy(c.Layout)
		if err != nil {
			return 0, err
		}
		return costPerHour(res, &serveSetup{pricer: pricer, w: w, dev: dev, hw: dev.Name, gpus: c.GPUs, dp: c.DP}, p)
	}
	o.currency = p.Currency()
	o.costInputs = p.Inputs()
	return nil
}

// costPerHour is a serving run's cost over its duration, per hour.
func costPerHour(res *serve.Result, s *serveSetup, p *price.Pricing) (float64, error) {
	if !(res.Duration > 0) {
		return 0, errors.New("a run of no duration has no cost per hour")
	}
	var c float64
	energy := serveEnergy
	if s.dep.Disaggregated() {
		energy = serveEnergyDisagg
	}
	j, err := energy(res, s, p)
	switch {
	case err != nil:
		return 0, err
	case j != nil && j.Cost != nil:
		c = *j.Cost
	case p.TCO():
		return 0, fmt.Errorf("%s has no power model: a TCO needs the energy it draws", s.dev.Name)
	default:
		c = p.Cost(s.gpus, res.Duration, 0).Amount
	}
	return c / float64(res.Duration/model.Seconds(3600)), nil
}
