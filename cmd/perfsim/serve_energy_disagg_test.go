package main

import (
	"encoding/json"
	"math"
	"testing"
)

// TestServeEnergy_disagg: a disaggregated run's GPU energy is the sum
// of its parts, and each part is what it says: each pool's GPUs at its
// busy power for its utilisation of the run, every KV transfer's link
// time on the GPUs of the two instances it joins at the wait power, the
// rest at idle power. The prefill pool's busy power is simulate's
// prefill power at the pool's batch; the transfers' GPU time is serve's
// transfer time (fixed lengths at a low rate: every transfer alike, none
// waits for the link).
func TestServeEnergy_disagg(t *testing.T) {
	const n = 120
	out, errOut, code := perfsim(t, "serve", "--hw", "h100", "--model", "llama3-8b", "--disagg", "2P1D", "--decode-tp", "2", "--gpus", "4",
		"--input", "1024", "--output", "64", "--requests", "120", "--rate", "2", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var v struct {
		GPUs      float64 `json:"gpus"`
		DurationS float64 `json:"duration_s"`
		Pools     []struct {
			Name        string  `json:"name"`
			Instances   float64 `json:"instances"`
			TP, PP      float64
			Utilization float64 `json:"utilization"`
		} `json:"pools"`
		Transfer struct {
			P50, Max float64
		} `json:"kv_transfer_s"`
		Energy *struct {
			GPUJ     float64           `json:"gpu_j"`
			AverageW float64           `json:"average_w_per_gpu"`
			IdleW    float64           `json:"idle_w_per_gpu"`
			Parts    *serveEnergyParts `json:"parts"`
		} `json:"energy"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if v.Energy == nil || v.Energy.Parts == nil || len(v.Pools) != 2 {
		t.Fatalf("no energy parts or pools in:\n%.600s", out)
	}
	e, x := v.Energy, v.Energy.Parts
	near := func(what string, got, want float64) {
		t.Helper()
		if !(math.Abs(got-want) <= 1e-9*math.Max(math.Abs(want), 1)) {
			t.Errorf("%s: %.12g, want %.12g", what, got, want)
		}
	}
	near("gpu_j = the sum of the parts", e.GPUJ, x.PrefillJ+x.DecodeJ+x.TransferJ+x.IdleJ)
	near("average power × GPUs × duration", e.AverageW*v.GPUs*v.DurationS, e.GPUJ)
	p, d := v.Pools[0], v.Pools[1]
	gp, gd := p.Instances*p.TP*p.PP, d.Instances*d.TP*d.PP
	near("prefill part", x.PrefillJ, gp*p.Utilization*v.DurationS*x.PrefillW)
	near("decode part", x.DecodeJ, gd*d.Utilization*v.DurationS*x.DecodeW)
	near("transfer part", x.TransferJ, x.TransferGPUS*x.WaitW)
	idle := gp*(1-p.Utilization)*v.DurationS + gd*(1-d.Utilization)*v.DurationS - x.TransferGPUS
	near("idle part", x.IdleJ, idle*e.IdleW)
	if v.Transfer.Max != v.Transfer.P50 {
		t.Fatalf("transfers differ (p50 %g, max %g): some waited for the link", v.Transfer.P50, v.Transfer.Max)
	}
	near("transfer GPU time", x.TransferGPUS, n*v.Transfer.P50*(p.TP*p.PP+d.TP*d.PP))
	if !(x.TransferJ > 0 && x.PrefillJ > 0 && x.DecodeJ > 0 && x.IdleJ > 0) || !(x.WaitW > e.IdleW) {
		t.Errorf("parts %+v: want each positive, the wait power above idle %g W", *x, e.IdleW)
	}
	// The prefill pool runs one prompt at a time here: its busy power is
	// simulate's prefill power at batch 1.
	sim, errOut, code := perfsim(t, "simulate", "--hw", "h100", "--model", "llama3-8b", "--batch", "1", "--input", "1024", "--output", "64", "--format", "json")
	if code != 0 {
		t.Fatalf("simulate: exit %d: %s", code, errOut)
	}
	var s struct {
		Energy struct {
			PrefillW float64 `json:"prefill_w_per_device"`
		} `json:"energy"`
	}
	if err := json.Unmarshal([]byte(sim), &s); err != nil {
		t.Fatal(err)
	}
	if s.Energy.PrefillW == 0 {
		t.Fatalf("simulate's JSON has no prefill power key:\n%.400s", sim)
	}
	near("prefill busy power = simulate's prefill power", x.PrefillW, s.Energy.PrefillW)
}

// TestPlanServe_disaggTCO: under a TCO a disaggregated candidate is
// priced with its pools' energy (it was refused before): its cost per
// hour is its GPUs' amortised purchase plus the facility energy, so above
// the purchase alone and below the purchase plus every GPU at its cap.
func TestPlanServe_disaggTCO(t *testing.T) {
	out, stderr, code := perfsim(t, "plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "10", "--ttft-p99", "500ms", "--tpot-p99", "30ms",
		"--input", "1000", "--output", "200", "--requests", "200", "--tp", "1,2", "--pp", "1", "--dtypes", "bf16", "--max-seqs", "0", "--disagg",
		"--purchase", "25000 USD", "--years", "4", "--energy-price", "0.10/kWh", "--objective", "cost", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var j struct {
		Candidates []candJSON `json:"candidates"`
		Front      []candJSON `json:"pareto_front"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	// 25,000 USD over 4 years of 365.25 days, per GPU-hour; an H100 SXM
	// draws at most its 700 W cap, at 0.10 USD/kWh and PUE 1.
	const purchase, energyMax = 25000.0 / (4 * 365.25 * 24), 0.7 * 0.10
	seen := 0
	for _, c := range append(j.Candidates, j.Front...) {
		if c.PrefillInstances == 0 {
			continue
		}
		seen++
		if c.CostPerHour == nil {
			t.Errorf("%s: no cost", c.Deployment)
			continue
		}
		lo, hi := float64(c.GPUs)*purchase, float64(c.GPUs)*(purchase+energyMax)
		if cost := *c.CostPerHour; !(cost > lo && cost < hi) {
			t.Errorf("%s: %.4f USD/h, want in (%.4f, %.4f)", c.Deployment, cost, lo, hi)
		}
	}
	if seen == 0 {
		t.Fatalf("no disaggregated candidate in:\n%.800s", out)
	}
}
