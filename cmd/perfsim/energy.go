package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/price"
	"github.com/perfsim/perfsim/sim"
)

// energyOptions are the power and cost flags of simulate and sweep.
type energyOptions struct {
	powerCap                                        model.Watts
	price, prices, priceName, purchase, energyPrice string
	years, pue                                      float64
}

func (o *energyOptions) AddFlags(fs *pflag.FlagSet) {
	fs.Var(&o.powerCap, "power-cap", "a device power limit below its cap, e.g. 500W: kernels that would draw more run at lower clocks")
	fs.StringVar(&o.price, "price", "", `price per device-hour, energy included: "2.5/h" (USD) or "2.1 EUR/h"`)
	fs.StringVar(&o.prices, "prices", "", "a price table (TOML, each price with its source and date; docs/energy.md): the hardware's first entry, or --price-name's")
	fs.StringVar(&o.priceName, "price-name", "", "with --prices: the entry of that name")
	fs.StringVar(&o.purchase, "purchase", "", `TCO: purchase price per device, e.g. "25000 USD" (with --years and --energy-price)`)
	fs.Float64Var(&o.years, "years", 0, "TCO: years the purchase is amortised over")
	fs.StringVar(&o.energyPrice, "energy-price", "", `TCO: price of energy, e.g. "0.10/kWh"`)
	fs.Float64Var(&o.pue, "pue", 0, "facility power usage effectiveness (1 to 4) for the facility energy; default 1, or the price table's")
}

// checkCap refuses an explicit --power-cap of 0 W, which would silently
// mean no limit (the flag's unset value).
func (o *energyOptions) checkCap(fs *pflag.FlagSet) error {
	if fs.Changed("power-cap") && o.powerCap == 0 {
		return usagef("--power-cap: 0 W is no limit (leave the flag out for none)")
	}
	return nil
}

// pricing returns the pricing the flags describe for dev, nil when none
// is asked for; every problem at once, each naming its flag.
func (o *energyOptions) pricing(fs *pflag.FlagSet, dev *hardware.Device) (*price.Pricing, error) {
	var p price.Pricing
	var errs []error
	if err := o.checkCap(fs); err != nil {
		errs = append(errs, err)
	}
	if o.prices != "" {
		if o.price != "" || o.purchase != "" {
			errs = append(errs, usagef("--prices: give a price table or --price/--purchase, not both"))
		}
		tab, err := price.LoadTableFile(o.prices)
		if err != nil {
			var te *price.TableError
			return nil, inputError("--prices", err, errors.As(err, &te))
		}
		names := append([]string{dev.Name}, dev.Aliases...)
		if stem, ok := strings.CutPrefix(dev.File, "catalog:"); ok {
			names = append(names, stem)
		}
		e, ok := tab.Find(names, o.priceName)
		if !ok {
			what := dev.Name
			if o.priceName != "" {
				what += fmt.Sprintf(" named %q", o.priceName)
			}
			return nil, usagef("--prices: %s has no price for %s (its [[price]] entries' hardware must be one of %s)", o.prices, what, strings.Join(names, ", "))
		}
		p = e.Pricing
		p.Source = fmt.Sprintf("%s, %s:%d", p.Source, e.File, e.Line)
	} else if o.priceName != "" {
		errs = append(errs, usagef("--price-name: needs --prices"))
	}
	if o.price != "" {
		r, err := price.ParseRate(o.price)
		if err == nil && r.Per != price.PerHour {
			err = fmt.Errorf("%s is not a price per device-hour", r)
		}
		if err != nil {
			errs = append(errs, usagef("--price: %v", err))
		}
		p.Hourly = r
	}
	if o.purchase != "" {
		m, err := price.ParseMoney(o.purchase)
		if err != nil {
			errs = append(errs, usagef("--purchase: %v", err))
		}
		p.Purchase = m
	}
	if o.energyPrice != "" {
		r, err := price.ParseRate(o.energyPrice)
		if err == nil && r.Per != price.PerKWh {
			err = fmt.Errorf("%s is not a price per kWh", r)
		}
		if err != nil {
			errs = append(errs, usagef("--energy-price: %v", err))
		}
		p.Energy = r
	}
	if fs.Changed("years") {
		p.Years = o.years
	}
	if fs.Changed("pue") {
		if !(o.pue >= 1) || math.IsInf(o.pue, 0) {
			errs = append(errs, usagef("--pue: must be at least 1 (facility power over IT power), got %v", o.pue))
		} else if o.pue > price.MaxPUE {
			// --pue alone is not Check'd (no price): 1e308 printed "+Inf J".
			errs = append(errs, usagef("--pue: must be at most %g (facility power over IT power), got %v", float64(price.MaxPUE), o.pue))
		}
		p.PUE = o.pue
	}
	if o.energyPrice != "" && !p.TCO() && len(errs) == 0 {
		// Only a TCO prices the energy; it had been dropped silently,
		// alone or beside a price per hour (which includes the energy).
		what := "give --purchase and --years with it"
		if p.Hourly.Per != 0 {
			what = "a price per device-hour includes the energy"
		}
		errs = append(errs, usagef("--energy-price: prices a TCO's energy only (%s)", what))
	}
	if o.prices != "" {
		// A flag that overrides the table's entry is said beside it: the
		// table's file:line and source do not give it.
		var over []string
		for _, f := range []string{"years", "energy-price", "pue"} {
			if fs.Changed(f) {
				over = append(over, "--"+f)
			}
		}
		if len(over) > 0 {
			p.Source = strings.Join(over, ", ") + " from the command line; the rest " + p.Source
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if p == (price.Pricing{}) {
		return nil, nil
	}
	if p.Hourly.Per == 0 && !p.TCO() {
		if fs.Changed("pue") {
			return &p, nil // energy at the facility only, no price per hour
		}
	}
	if err := p.Check(); err != nil {
		return nil, usageError{err}
	}
	return &p, nil
}

// The energy and cost objects of simulate's JSON (docs/energy.md).

type energyJSON struct {
	Boundary       string  `json:"boundary"`
	IdleW          float64 `json:"idle_w"`
	WaitW          float64 `json:"wait_w"`
	CapW           float64 `json:"cap_w"`
	LimitW         float64 `json:"limit_w"`
	NodeW          float64 `json:"node_w_per_device"`
	Nodes          int     `json:"nodes"`
	AverageW       float64 `json:"average_w_per_device"`
	GPUJ           float64 `json:"gpu_j"`
	KernelsJ       float64 `json:"kernels_j"`
	GapsJ          float64 `json:"gaps_j"`
	NodeJ          float64 `json:"node_j"`
	FacilityJ      float64 `json:"facility_j"`
	PUE            float64 `json:"pue"`
	PrefillW       float64 `json:"prefill_w_per_device,omitempty"`
	DecodeW        float64 `json:"decode_w_per_device,omitempty"`
	PrefillJTok    float64 `json:"prefill_j_per_input_token,omitempty"`
	PerImageJ      float64 `json:"j_per_image,omitempty"`
	JPerTrainTok   float64 `json:"j_per_token,omitempty"`
	DecodeJTok     float64 `json:"decode_j_per_output_token,omitempty"`
	JPerOutTok     float64 `json:"j_per_output_token,omitempty"`
	TokensPerJ     float64 `json:"output_tokens_per_j,omitempty"`
	ToTrainGPUMWh  float64 `json:"to_train_gpu_mwh,omitempty"`
	ToTrainNodeMWh float64 `json:"to_train_node_mwh,omitempty"`
	ToTrainFacMWh  float64 `json:"to_train_facility_mwh,omitempty"`
}

type costJSON struct {
	Currency    string   `json:"currency"`
	Inputs      string   `json:"inputs"`
	Hourly      *float64 `json:"price_per_device_hour,omitempty"`
	Purchase    *float64 `json:"purchase_per_device,omitempty"`
	Years       *float64 `json:"years,omitempty"`
	EnergyPrice *float64 `json:"energy_price_per_kwh,omitempty"`
	PUE         float64  `json:"pue"`
	Source      string   `json:"source"`
	Date        string   `json:"date"`
	Run         float64  `json:"run"`
	PerRequest  *float64 `json:"per_request,omitempty"`
	PerMInput   *float64 `json:"per_million_input_tokens,omitempty"`
	PerMOutput  *float64 `json:"per_million_output_tokens,omitempty"`
	PerMTokens  *float64 `json:"per_million_tokens,omitempty"`
	Step        *float64 `json:"per_step,omitempty"`
	ToTrain     *float64 `json:"to_train,omitempty"`
}

// pueOf returns the PUE of p, 1 without one.
func pueOf(p *price.Pricing) float64 {
	if p == nil || p.PUE == 0 {
		return 1
	}
	return p.PUE
}

// nodeEnergy returns gpu energy plus the rest of e's nodes over t.
func nodeEnergy(e *sim.Energy, gpu model.Joules, t model.Seconds) model.Joules {
	return gpu + (e.NodeShare * model.Watts(e.Devices)).Over(t)
}

// energyOf is the energy object of r, nil without a power model.
func energyOf(r *sim.Report, p *price.Pricing) *energyJSON {
	e := r.Energy
	if e == nil {
		return nil
	}
	pue := pueOf(p)
	j := &energyJSON{
		Boundary: "gpu: the devices alone (node_j adds node_w_per_device for each device; facility_j is node_j × pue)",
		IdleW:    float64(e.Idle), WaitW: float64(e.Wait), CapW: float64(e.Cap), LimitW: float64(e.Limit), NodeW: float64(e.NodeShare), Nodes: e.Nodes,
		AverageW: float64(e.AveragePower), GPUJ: float64(e.GPU), KernelsJ: float64(e.Kernels), GapsJ: float64(e.Gaps),
		NodeJ: float64(e.Node), FacilityJ: float64(e.Node) * pue, PUE: pue,
		PrefillW: float64(e.PrefillPower), DecodeW: float64(e.DecodePower),
		PrefillJTok: float64(e.PrefillPerToken), PerImageJ: float64(e.PerImage), DecodeJTok: float64(e.DecodePerToken), JPerOutTok: float64(e.PerOutputToken),
		JPerTrainTok: float64(e.PerTrainedToken),
	}
	if e.PerOutputToken > 0 {
		j.TokensPerJ = 1 / float64(e.PerOutputToken)
	}
	if e.ToTrain > 0 {
		j.ToTrainGPUMWh, j.ToTrainNodeMWh = float64(e.ToTrain)/3.6e9, float64(e.ToTrainNode)/3.6e9
		j.ToTrainFacMWh = j.ToTrainNodeMWh * pue
	}
	return j
}

// costOf prices r with p; nil without a pricing.
func costOf(r *sim.Report, p *price.Pricing) (*costJSON, error) {
	if p == nil || (p.Hourly.Per == 0 && !p.TCO()) {
		return nil, nil
	}
	e := r.Energy
	if p.TCO() && e == nil {
		return nil, usagef("--purchase: %s has no power model (no tdp or [power] in its hardware file), so a TCO cannot price its energy", r.Hardware)
	}
	if e == nil {
		e = &sim.Energy{}
	}
	c := &costJSON{Currency: p.Currency(), Inputs: p.Inputs(), PUE: pueOf(p), Source: p.Source, Date: p.Date}
	if p.TCO() {
		c.Purchase, c.Years, c.EnergyPrice = fp(p.Purchase.Amount), fp(p.Years), fp(p.Energy.Amount)
	} else {
		c.Hourly = fp(p.Hourly.Amount)
	}
	devs := r.Devices
	if in := r.Inference; in != nil {
		sc := r.Scenario
		// The devices serve every DP replica's batch.
		reqs := float64(max(sc.DP, 1)) * float64(sc.Batch)
		// Each phase's GPU energy is its devices' mean draw over its
		// time (an image model has no energy per input token to
		// multiply back: its GPU energy had been left out of a TCO).
		phase := func(w model.Watts, t model.Seconds) model.Joules {
			return nodeEnergy(e, (w * model.Watts(devs)).Over(t), t)
		}
		pre := p.Cost(devs, in.Prefill.Time, phase(e.PrefillPower, in.Prefill.Time)).Amount
		run := pre
		if toks := reqs * float64(sc.Input); toks > 0 && (r.Arch == sim.Decoder || r.Arch == sim.Encoder) {
			c.PerMInput = fp(pre / toks * 1e6)
		}
		if d := in.Decode; d != nil {
			dec := p.Cost(devs, d.Time, phase(e.DecodePower, d.Time)).Amount
			run += dec
			c.PerMOutput = fp(dec / (reqs * float64(d.Steps)) * 1e6)
		}
		c.Run = run
		c.PerRequest = fp(run / reqs)
	}
	if tr := r.Training; tr != nil {
		c.Run = p.Cost(devs, tr.StepTime, e.Node).Amount
		c.Step = fp(c.Run)
		if toks := tr.TokensPerSecond * float64(tr.StepTime); toks > 0 && r.Arch != sim.CNN && r.Arch != sim.Vision {
			c.PerMTokens = fp(c.Run / toks * 1e6)
		}
		if tr.TimeToTrain > 0 {
			c.ToTrain = fp(p.Cost(devs, tr.TimeToTrain, e.ToTrainNode).Amount)
		}
	}
	return c, nil
}

// writeEnergyTable prints the energy and cost sections of simulate's table.
func writeEnergyTable(w io.Writer, r *sim.Report, ej *energyJSON, c *costJSON) error {
	if ej == nil {
		if c != nil {
			fmt.Fprintf(w, "\nenergy: %s has no power model (no tdp or [power] in its hardware file)\n", r.Hardware)
		}
		return writeCostTable(w, r, c)
	}
	e := r.Energy
	limit := ""
	if e.Limit < e.Cap {
		limit = fmt.Sprintf(", limited to %v", e.Limit)
	}
	wait := ""
	if e.Gaps > 0 {
		wait = fmt.Sprintf(", waiting between kernels %v", e.Wait)
	}
	fmt.Fprintf(w, "\nenergy (GPU: the devices alone; idle %v, cap %v%s%s)\n", e.Idle, e.Cap, limit, wait)
	tw := newTable(w)
	fmt.Fprintf(tw, "  average power\t%v per device\n", e.AveragePower)
	if e.PerImage > 0 {
		fmt.Fprintf(tw, "  per image\t%v\n", e.PerImage)
	}
	if in := r.Inference; in != nil && e.PrefillPerToken > 0 {
		fmt.Fprintf(tw, "  prefill\t%v per input token\t%v per device\n", e.PrefillPerToken, e.PrefillPower)
		if in.Decode != nil {
			fmt.Fprintf(tw, "  decode\t%v per output token\t%v per device\n", e.DecodePerToken, e.DecodePower)
		}
		if e.PerOutputToken > 0 {
			fmt.Fprintf(tw, "  run\t%v per output token\t%s output tokens per J\n", e.PerOutputToken, fnum(1/float64(e.PerOutputToken)))
		}
	}
	if r.Training != nil {
		fmt.Fprintf(tw, "  step\t%v\n", e.GPU)
		if e.PerTrainedToken > 0 {
			fmt.Fprintf(tw, "  per token\t%v\ttrained\n", e.PerTrainedToken)
		}
	}
	gaps := ""
	if e.Gaps > 0 {
		gaps = fmt.Sprintf(" (kernels %v, waits %v)", e.Kernels, e.Gaps)
	}
	fmt.Fprintf(tw, "  GPU\t%v%s\n", e.GPU, gaps)
	if e.NodeShare > 0 {
		fmt.Fprintf(tw, "  node\t%v\t+ %v per device, its share of the node's CPUs, memory, NICs, fans\n", e.Node, e.NodeShare)
	} else {
		fmt.Fprintf(tw, "  node\t%v\tthe hardware file gives no power.node: the GPU figure\n", e.Node)
	}
	fmt.Fprintf(tw, "  facility\t%v\t× PUE %g\n", model.Joules(ej.FacilityJ), ej.PUE)
	if ej.ToTrainGPUMWh > 0 {
		fmt.Fprintf(tw, "  to train\t%s MWh GPU\t%s MWh node, %s MWh facility\n", fnum(ej.ToTrainGPUMWh), fnum(ej.ToTrainNodeMWh), fnum(ej.ToTrainFacMWh))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return writeCostTable(w, r, c)
}

func writeCostTable(w io.Writer, r *sim.Report, c *costJSON) error {
	if c == nil {
		return nil
	}
	fmt.Fprintf(w, "\ncost (%s)\n", c.Inputs)
	tw := newTable(w)
	money := func(v float64) string { return fnum(v) + " " + c.Currency }
	fmt.Fprintf(tw, "  run\t%s\ton %s\n", money(c.Run), plural(r.Devices, "device"))
	if c.PerRequest != nil {
		fmt.Fprintf(tw, "  per request\t%s\n", money(*c.PerRequest))
	}
	if c.PerMInput != nil {
		fmt.Fprintf(tw, "  per million input tokens\t%s\n", money(*c.PerMInput))
	}
	if c.PerMOutput != nil {
		fmt.Fprintf(tw, "  per million output tokens\t%s\n", money(*c.PerMOutput))
	}
	if c.PerMTokens != nil {
		fmt.Fprintf(tw, "  per million tokens\t%s\ttrained\n", money(*c.PerMTokens))
	}
	if c.ToTrain != nil {
		fmt.Fprintf(tw, "  to train\t%s\n", money(*c.ToTrain))
	}
	return tw.Flush()
}

// energyCSVRows are the energy and cost rows of simulate's metric,value CSV.
func energyCSVRows(ej *energyJSON, c *costJSON) [][]string {
	var rows [][]string
	add := func(k string, v float64) {
		if v != 0 {
			rows = append(rows, []string{k, num(v)})
		}
	}
	if ej != nil {
		add("energy.average_w_per_device", ej.AverageW)
		add("energy.prefill_j_per_input_token", ej.PrefillJTok)
		add("energy.j_per_image", ej.PerImageJ)
		add("energy.decode_j_per_output_token", ej.DecodeJTok)
		add("energy.j_per_output_token", ej.JPerOutTok)
		add("energy.j_per_token", ej.JPerTrainTok)
		add("energy.gpu_j", ej.GPUJ)
		rows = append(rows, []string{"energy.kernels_j", num(ej.KernelsJ)}, []string{"energy.gaps_j", num(ej.GapsJ)})
		add("energy.node_j", ej.NodeJ)
		add("energy.facility_j", ej.FacilityJ)
		add("energy.pue", ej.PUE)
		add("energy.to_train_gpu_mwh", ej.ToTrainGPUMWh)
		add("energy.to_train_node_mwh", ej.ToTrainNodeMWh)
		add("energy.to_train_facility_mwh", ej.ToTrainFacMWh)
	}
	if c != nil {
		rows = append(rows, []string{"cost.currency", c.Currency}, []string{"cost.inputs", c.Inputs})
		add("cost.run", c.Run)
		for _, kv := range []struct {
			k string
			v *float64
		}{{"cost.per_request", c.PerRequest}, {"cost.per_million_input_tokens", c.PerMInput}, {"cost.per_million_output_tokens", c.PerMOutput}, {"cost.per_step", c.Step}, {"cost.per_million_tokens", c.PerMTokens}, {"cost.to_train", c.ToTrain}} {
			if kv.v != nil {
				rows = append(rows, []string{kv.k, num(*kv.v)})
			}
		}
	}
	return rows
}

// plural returns "1 device" or "8 devices".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// sweep applies the energy flags to a sweep: the power limit to every
// point, and a pricing per hardware (a price table gives each its own).
func (o *energyOptions) sweep(fs *pflag.FlagSet, s *sweepSpec) error {
	if err := o.checkCap(fs); err != nil {
		return err
	}
	if o.powerCap != 0 {
		if s.Base.Batch == 0 {
			s.Base = sim.Default()
		}
		s.Base.PowerCap = o.powerCap
	}
	s.Prices = make([]*price.Pricing, len(s.HW))
	for i, d := range s.HW {
		p, err := o.pricing(fs, d)
		if err != nil {
			return err
		}
		s.Prices[i] = p
	}
	return nil
}

// sweepEnergy returns the energy and cost objects of a sweep point.
func sweepEnergy(s *sweepSpec, r *sweepResult) (*energyJSON, *costJSON) {
	var p *price.Pricing
	if r.Point.HW < len(s.Prices) {
		p = s.Prices[r.Point.HW]
	}
	c, err := costOf(r.Report, p)
	if err != nil {
		c = nil // a TCO on hardware without a power model: no cost
	}
	return energyOf(r.Report, p), c
}

// priced reports whether a sweep's points are priced.
func priced(s *sweepSpec) bool {
	for _, p := range s.Prices {
		if p != nil && (p.Hourly.Per != 0 || p.TCO()) {
			return true
		}
	}
	return false
}

// energyHeader and energyTableCells are the sweep table's energy columns.
func energyHeader(priced bool) string {
	if priced {
		return "\tW/DEV\tTOK/J\tCOST/M OUT"
	}
	return "\tW/DEV\tTOK/J"
}

func energyTableCells(j simJSON, priced bool) string {
	w, tpj := "-", "-"
	if e := j.Energy; e != nil {
		w = strconv.FormatFloat(e.AverageW, 'f', 0, 64)
		if e.TokensPerJ > 0 {
			tpj = fnum(e.TokensPerJ)
		}
	}
	if !priced {
		return "\t" + w + "\t" + tpj
	}
	cost := "-"
	if c := j.Cost; c != nil && c.PerMOutput != nil {
		cost = fnum(*c.PerMOutput) + " " + c.Currency
	}
	return "\t" + w + "\t" + tpj + "\t" + cost
}
