package calibrate

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// collectiveOf returns the collective a measurement timed.
func collectiveOf(m Measurement) model.Collective {
	k := map[string]model.CollectiveKind{KernelAllReduce: model.AllReduce, KernelAllGather: model.AllGather,
		KernelReduceScatter: model.ReduceScatter, KernelAllToAll: model.AllToAll, KernelAllReduceOneShot: model.AllReduce}[m.Kernel]
	return model.Collective{Kind: k, Size: m.Bytes, Ranks: m.Ranks}
}

// collectiveTime prices a collective measurement over l: a one-shot
// all-reduce by the one-shot kernel alone (when l has one), the rest by
// the ring of model.CollectiveTime.
func collectiveTime(m Measurement, l model.Link) model.Seconds {
	c := collectiveOf(m)
	if m.Kernel == KernelAllReduceOneShot && l.OneShotLatency > 0 {
		return model.OneShotTime(c, l)
	}
	// A ring measurement (NCCL) is priced by the ring alone.
	l.OneShotLatency = 0
	return model.CollectiveTime(c, l)
}

// fitCollectives fits the intra-node link's alpha-beta parameters to
// collective measurements: from the ring collectives (NCCL), the fixed
// cost per collective, the latency per ring step and the bandwidth
// efficiency with its rise by message size and by rank count; from one-shot all-reduces (TensorRT-LLM's custom kernel),
// its latency and efficiency. The link's bandwidth stays the catalog's.
func fitCollectives(dev *hardware.Device, ms []Measurement, opt Options, rng *rand.Rand) (ClassFit, []error) {
	cf := ClassFit{Class: "collective", Points: len(ms)}
	if dev.Intra.Bandwidth <= 0 {
		return cf, []error{fmt.Errorf("collective: %d points not fitted: %s has no intra-node link", len(ms), dev.Name)}
	}
	var ring, one []int
	for i, m := range ms {
		if m.Kernel == KernelAllReduceOneShot {
			one = append(one, i)
		} else {
			ring = append(ring, i)
		}
	}
	if len(ring) < minStreamPoints {
		cf.InSample = scoreClass(dev, ms)
		return cf, []error{fmt.Errorf("collective: %d ring collective points (want at least %d): the link keeps its defaults", len(ring), minStreamPoints)}
	}
	// The rank factor is fitted only where the ring points have two
	// traffic shares f = Traffic/Size or more (two rank counts, or an
	// all-reduce beside an all-gather): at one share it trades off
	// against the efficiency, (1+γ)·f/(f+γ) being one number, and the
	// device's γ is kept.
	var warns []error
	shares := map[float64]bool{}
	for _, i := range ring {
		c := collectiveOf(ms[i])
		if c.Size > 0 {
			shares[math.Round(float64(c.Traffic())/float64(c.Size)*1e9)/1e9] = true
		}
	}
	rank := len(shares) >= 2
	ar := 5 // the index of the one-shot parameters in x
	if rank {
		ar = 6
	} else {
		warns = append(warns, fmt.Errorf("collective: every ring point moves the same share of its message (one kind at one rank count), which cannot separate efficiency_rank_factor from efficiency: it stays %g", dev.Intra.RankFactor))
	}
	set := func(n *hardware.Network, x []float64) {
		n.Base, n.Latency, n.Efficiency = model.Seconds(math.Exp(x[0])), model.Seconds(math.Exp(x[1])), 2*sigmoid(x[2])
		n.EfficiencyHalf, n.EfficiencySlope = model.Bytes(math.Exp(x[3])), math.Exp(x[4])
		if rank {
			n.RankFactor = math.Exp(x[5])
		}
		if len(x) > ar {
			n.AllReduceLatency, n.AllReduceEfficiency = model.Seconds(math.Exp(x[ar])), sigmoid(x[ar+1])
		}
	}
	predict := func(x []float64, i int) float64 {
		n := dev.Intra
		set(&n, x)
		return float64(collectiveTime(ms[i], n.Link()))
	}
	loss := func(idx []int, x []float64) float64 {
		return meanLoss(ms, idx, func(i int) float64 { return predict(x, i) })
	}
	x0 := []float64{math.Log(3e-6), math.Log(0.5e-6), logit(0.4), math.Log(1 << 20), 0}
	if rank {
		x0 = append(x0, math.Log(0.5))
	}
	if len(one) >= minStreamPoints {
		x0 = append(x0, math.Log(3e-6), logit(0.3))
	} else if len(one) > 0 {
		cf.InSample = scoreClass(dev, ms)
		return cf, []error{fmt.Errorf("collective: %d one-shot all-reduce points (want at least %d): the link keeps its defaults", len(one), minStreamPoints)}
	}
	// The ring's efficiency rises with the message size while NCCL
	// switches protocols (LL, LL128, Simple) and fills its channels
	// (model.Link HalfSize, Slope), and with the rank count (model.Link
	// RankFactor: the tables time 2, 4 and 8 GPUs, and at 268 MB the
	// bus bandwidth rises with the count on every GPU): every ring point
	// is fitted. The
	// one-shot kernel is fitted up to 1 MiB; beyond, TensorRT-LLM's
	// kernel is two-shot (those points are scored, not fitted).
	regime := func(m Measurement) bool {
		if m.Kernel == KernelAllReduceOneShot {
			return m.Bytes <= 1<<20
		}
		return true
	}
	train := func(idx []int, start []float64) []float64 {
		var fit []int
		for _, i := range idx {
			if regime(ms[i]) {
				fit = append(fit, i)
			}
		}
		return minimize(func(x []float64) float64 { return loss(fit, x) }, start, 3000)
	}
	x, in, held := fitScored(ms, opt, rng, x0, train, predict)
	cf.InSample, cf.HeldOut, cf.Fitted = in, held, true
	n := &dev.Intra
	set(n, x)
	n.Base, n.Latency, n.Efficiency = model.Seconds(roundSig(float64(n.Base))), model.Seconds(roundSig(float64(n.Latency))), roundSig(n.Efficiency)
	n.AllReduceLatency, n.AllReduceEfficiency = model.Seconds(roundSig(float64(n.AllReduceLatency))), roundSig(n.AllReduceEfficiency)
	n.EfficiencyHalf, n.EfficiencySlope, n.RankFactor = model.Bytes(math.Round(roundSig(float64(n.EfficiencyHalf)))), roundSig(n.EfficiencySlope), roundSig(n.RankFactor)
	if dev.Sources == nil {
		dev.Sources = map[string]string{}
	} else {
		src := make(map[string]string, len(dev.Sources))
		for k, v := range dev.Sources {
			src[k] = v
		}
		dev.Sources = src
	}
	p := provenance(opt, ms, cf)
	keys := []string{"latency", "efficiency", "base_latency", "allreduce_latency", "allreduce_efficiency", "efficiency_half_size", "efficiency_slope"}
	if rank {
		keys = append(keys, "efficiency_rank_factor")
	}
	for _, k := range keys {
		dev.Sources["interconnect.intra."+k] = "collective " + p
	}
	return cf, warns
}
