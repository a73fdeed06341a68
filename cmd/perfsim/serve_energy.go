package main

import (
	"fmt"
	"io"
	"math"

	"github.com/spf13/pflag"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/price"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// serveEnergyJSON is the energy and cost of a serving run at its load
// (docs/energy.md, "Serving").
type serveEnergyJSON struct {
	Boundary   string   `json:"boundary"`
	Method     string   `json:"method"`
	BusyW      float64  `json:"busy_w_per_gpu"`
	IdleW      float64  `json:"idle_w_per_gpu"`
	AverageW   float64  `json:"average_w_per_gpu"`
	GPUJ       float64  `json:"gpu_j"`
	NodeJ      float64  `json:"node_j"`
	FacilityJ  float64  `json:"facility_j"`
	PUE        float64  `json:"pue"`
	JPerOutTok float64  `json:"j_per_output_token"`
	OutTokPerJ float64  `json:"output_tokens_per_j"`
	Cost       *float64 `json:"cost,omitempty"`
	Currency   string   `json:"currency,omitempty"`
	CostInputs string   `json:"cost_inputs,omitempty"`
	PerMInput  *float64 `json:"cost_per_million_input_tokens,omitempty"`
	PerMOutput *float64 `json:"cost_per_million_output_tokens,omitempty"`
	PerRequest *float64 `json:"cost_per_request,omitempty"`
	// Parts splits a disaggregated deployment's GPU energy
	// (serve_energy_disagg.go); nil for one pool of replicas.
	Parts        *serveEnergyParts `json:"parts,omitempty"`
	prefillShare float64
	shareOf      string // what prefillShare is the share of, for the table
}

// serveEnergy prices a serving run's energy at its load: while the
// engine iterates, each GPU draws the mean power of a run of the mean
// running batch with the requests' mean lengths (prefill and decode in
// the proportion the steady state has, as the power model is validated);
// while it waits for arrivals, idle power. Nil when the device has no
// power model.
func serveEnergy(res *serve.Result, s *serveSetup, p *price.Pricing) (*serveEnergyJSON, error) {
	n := res.Count
	if n == 0 || res.Duration <= 0 {
		return nil, nil
	}
	in, out, busyIn := float64(res.InputTokens), float64(res.OutputTokens), float64(res.InService())
	// The requests running while the engine is busy: their time in
	// service over the busy time of the replicas.
	util := math.Min(1, math.Max(res.Utilization, 0))
	busy := float64(res.Duration) * util * float64(max(res.Replicas, 1))
	batch := 1
	if busy > 0 {
		batch = max(1, int(math.Round(busyIn/busy)))
	}
	sc := s.pricer.Scenario()
	sc.Batch, sc.Input, sc.Output = batch, max(1, int(math.Round(in/float64(n)))), max(2, int(math.Round(out/float64(n))))
	dev := s.dev
	// A data-parallel attention group's replicas are one run of dp of
	// them (sc.DP is 1 otherwise).
	sys, err := systemFor(dev, sc.TP*sc.PP*max(sc.DP, 1))
	if err != nil {
		return nil, err
	}
	rep, err := sim.Run(sys, s.w, sc)
	if err != nil || rep.Energy == nil {
		return nil, nil // no power model, or a batch the run cannot price: no energy
	}
	e := rep.Energy
	gpus := float64(s.gpus)
	pue := pueOf(p)
	j := &serveEnergyJSON{
		Boundary: "gpu: the GPUs alone (node_j adds each GPU's share of its node; facility_j is node_j × pue)",
		Method: fmt.Sprintf("busy: a run of batch %d, %d tokens in and %d out (the mean running batch and lengths) at %.0f%% utilisation; idle otherwise",
			sc.Batch, sc.Input, sc.Output, 100*util),
		BusyW: float64(e.AveragePower), IdleW: float64(e.Idle), PUE: pue,
	}
	j.AverageW = util*j.BusyW + (1-util)*j.IdleW
	j.GPUJ = gpus * j.AverageW * float64(res.Duration)
	j.NodeJ = j.GPUJ + gpus*float64(e.NodeShare)*float64(res.Duration)
	j.FacilityJ = j.NodeJ * pue
	if in := rep.Inference; in != nil && in.E2E > 0 {
		j.prefillShare = float64(in.Prefill.Time) / float64(in.E2E)
	}
	j.perToken(p, s.gpus, res.Duration, n, in, out)
	return j, nil
}

// perToken sets j's energy per output token and, with a price, its cost
// for gpus over dur: in all, per request (n of them) and per million
// input and output tokens (in and out in all, the input tokens bearing
// j.prefillShare of the cost). j's GPU and node energies must be set.
func (j *serveEnergyJSON) perToken(p *price.Pricing, gpus int, dur model.Seconds, n int, in, out float64) {
	if out > 0 {
		j.JPerOutTok = j.GPUJ / out
		j.OutTokPerJ = out / j.GPUJ
	}
	if p == nil || (p.Hourly.Per == 0 && !p.TCO()) {
		return
	}
	c := p.Cost(gpus, dur, model.Joules(j.NodeJ)).Amount
	j.Cost, j.Currency, j.CostInputs = fp(c), p.Currency(), p.Inputs()
	j.PerRequest = fp(c / float64(n))
	if in > 0 {
		j.PerMInput = fp(c * j.prefillShare / in * 1e6)
	}
	if out > 0 {
		j.PerMOutput = fp(c * (1 - j.prefillShare) / out * 1e6)
	}
}

// writeServeEnergy prints serve's energy and cost sections.
func writeServeEnergy(w io.Writer, j *serveEnergyJSON) error {
	if j == nil {
		return nil
	}
	fmt.Fprintf(w, "\nenergy at this load (GPU: the GPUs alone; %s)\n", j.Method)
	tw := newTable(w)
	fmt.Fprintf(tw, "  power\t%v per GPU\tbusy %v, idle %v\n", model.Watts(j.AverageW), model.Watts(j.BusyW), model.Watts(j.IdleW))
	fmt.Fprintf(tw, "  per output token\t%v\t%s output tokens per J\n", model.Joules(j.JPerOutTok), fnum(j.OutTokPerJ))
	fmt.Fprintf(tw, "  GPU\t%v\tnode %v, facility %v (PUE %g)\n", model.Joules(j.GPUJ), model.Joules(j.NodeJ), model.Joules(j.FacilityJ), j.PUE)
	if x := j.Parts; x != nil {
		fmt.Fprintf(tw, "  GPU by part\tprefill %v, decode %v\tKV transfers %v (%v at the wait power), idle %v\n",
			model.Joules(x.PrefillJ), model.Joules(x.DecodeJ), model.Joules(x.TransferJ), model.Watts(x.WaitW), model.Joules(x.IdleJ))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if j.Cost == nil {
		return nil
	}
	fmt.Fprintf(w, "\ncost (%s)\n", j.CostInputs)
	tw = newTable(w)
	money := func(v float64) string { return fnum(v) + " " + j.Currency }
	fmt.Fprintf(tw, "  run\t%s\n", money(*j.Cost))
	fmt.Fprintf(tw, "  per request\t%s\n", money(*j.PerRequest))
	if j.PerMInput != nil {
		of := j.shareOf
		if of == "" {
			of = "the prefill's share of the time"
		}
		fmt.Fprintf(tw, "  per million input tokens\t%s\t%s, %.1f%%\n", money(*j.PerMInput), of, 100*j.prefillShare)
	}
	if j.PerMOutput != nil {
		fmt.Fprintf(tw, "  per million output tokens\t%s\n", money(*j.PerMOutput))
	}
	return tw.Flush()
}

// serveEnergy prices the run's energy and, with a price, its cost.
func (o *serveOptions) serveEnergy(fs *pflag.FlagSet, res *serve.Result, s *serveSetup) (*serveEnergyJSON, error) {
	if o.energy.powerCap != 0 {
		return nil, usagef("--power-cap: serve does not apply a power limit yet (simulate and sweep do)")
	}
	dev := s.dev
	p, err := o.energy.pricing(fs, dev)
	if err != nil {
		return nil, err
	}
	if s.dep.Disaggregated() {
		return serveEnergyDisagg(res, s, p)
	}
	return serveEnergy(res, s, p)
}
