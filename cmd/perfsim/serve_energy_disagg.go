package main

import (
	"fmt"
	"math"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/price"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// serveEnergyParts is a disaggregated deployment's GPU energy by part
// (docs/energy.md, "Serving"): they sum to serveEnergyJSON.GPUJ.
type serveEnergyParts struct {
	PrefillJ  float64 `json:"prefill_busy_j"`
	DecodeJ   float64 `json:"decode_busy_j"`
	TransferJ float64 `json:"kv_transfer_j"`
	IdleJ     float64 `json:"idle_j"`
	PrefillW  float64 `json:"prefill_busy_w_per_gpu"`
	DecodeW   float64 `json:"decode_busy_w_per_gpu"`
	WaitW     float64 `json:"wait_w_per_gpu"`
	// TransferGPUS is the GPU-seconds priced at the wait power: each
	// transfer's link time on the GPUs of the prefill instance that sends
	// it and the decode instance that receives it.
	TransferGPUS float64 `json:"kv_transfer_gpu_s"`
}

// poolPower is one pool's busy power: a run of its mean running batch
// (its requests' time in service over its busy time) with the requests'
// mean lengths, on one of its instances; the prefill's mean draw for a
// prefill pool, the decode's for a decode pool. Nil when the device has
// no power model or the run cannot be priced.
func poolPower(s *serveSetup, pl *serve.Pool, pr *serve.PoolResult, in, out int, prefill bool) (*sim.Energy, model.Watts, int, error) {
	batch := 1
	if pr.BusyTime > 0 {
		batch = max(1, int(math.Round(float64(pr.InService)/float64(pr.BusyTime))))
	}
	sc := pl.Pricer.Scenario()
	sc.Batch, sc.Input, sc.Output = batch, in, out
	sys, err := systemFor(s.dev, sc.TP*sc.PP)
	if err != nil {
		return nil, 0, batch, err
	}
	rep, err := sim.Run(sys, s.w, sc)
	if err != nil || rep.Energy == nil {
		return nil, 0, batch, nil
	}
	if prefill {
		return rep.Energy, rep.Energy.PrefillPower, batch, nil
	}
	return rep.Energy, rep.Energy.DecodePower, batch, nil
}

// serveEnergyDisagg prices a disaggregated run's energy as serveEnergy
// prices one pool's, pool by pool: each pool's GPUs draw its busy power
// (poolPower) for its utilisation of the run's duration; each KV
// transfer holds the GPUs of the prefill instance sending it and of the
// decode instance receiving it at the wait power (model.PowerParams:
// what a device in use draws between kernels) for its time on the link,
// taken from their idle time (an upper bound: a transfer that overlaps
// an instance's iterations is priced twice); the rest of the GPU time
// draws idle power. Nil when the device has no power model.
func serveEnergyDisagg(res *serve.Result, s *serveSetup, p *price.Pricing) (*serveEnergyJSON, error) {
	n := res.Count
	d := &s.dep
	if n == 0 || res.Duration <= 0 || len(res.Pools) != 2 {
		return nil, nil
	}
	in, out := float64(res.InputTokens), float64(res.OutputTokens)
	meanIn, meanOut := max(1, int(math.Round(in/float64(n)))), max(2, int(math.Round(out/float64(n))))
	pre, dec := &res.Pools[0], &res.Pools[1]
	ep, pw, pb, err := poolPower(s, &d.Serve, pre, meanIn, meanOut, true)
	if err != nil || ep == nil {
		return nil, err
	}
	ed, dw, db, err := poolPower(s, &d.Decode, dec, meanIn, meanOut, false)
	if err != nil || ed == nil {
		return nil, err
	}
	dur := float64(res.Duration)
	clamp := func(u float64) float64 { return math.Min(1, math.Max(u, 0)) }
	up, ud := clamp(pre.Utilization), clamp(dec.Utilization)
	gp, gd := float64(d.Serve.Instances*d.Serve.GPUs()), float64(d.Decode.Instances*d.Decode.GPUs())
	idleS := gp*(1-up)*dur + gd*(1-ud)*dur
	xferS := math.Min(float64(res.TransferBusy)*float64(d.Serve.GPUs()+d.Decode.GPUs()), idleS)
	wait, idle := float64(ep.Wait), float64(ep.Idle)
	parts := &serveEnergyParts{
		PrefillJ: gp * up * dur * float64(pw), DecodeJ: gd * ud * dur * float64(dw),
		TransferJ: xferS * wait, IdleJ: (idleS - xferS) * idle,
		PrefillW: float64(pw), DecodeW: float64(dw), WaitW: wait, TransferGPUS: xferS,
	}
	gpus := float64(s.gpus)
	j := &serveEnergyJSON{
		Boundary: "gpu: the GPUs alone (node_j adds each GPU's share of its node; facility_j is node_j × pue)",
		Method: fmt.Sprintf("prefill pool: a prefill of batch %d, %d tokens in, at %.0f%% utilisation; decode pool: a decode of batch %d, %d tokens in and %d out, at %.0f%%; KV transfers at the wait power; idle otherwise",
			pb, meanIn, 100*up, db, meanIn, meanOut, 100*ud),
		IdleW: idle, PUE: pueOf(p), Parts: parts,
	}
	if busy := gp*up*dur + gd*ud*dur; busy > 0 {
		j.BusyW = (parts.PrefillJ + parts.DecodeJ) / busy
	}
	j.GPUJ = parts.PrefillJ + parts.DecodeJ + parts.TransferJ + parts.IdleJ
	j.AverageW = j.GPUJ / (gpus * dur)
	j.NodeJ = j.GPUJ + gpus*float64(ep.NodeShare)*dur
	j.FacilityJ = j.NodeJ * j.PUE
	// The prefill pool's share of the GPUs carries the input tokens' cost.
	j.prefillShare, j.shareOf = gp/(gp+gd), "the prefill pool's share of the GPUs"
	j.perToken(p, s.gpus, res.Duration, n, in, out)
	return j, nil
}
