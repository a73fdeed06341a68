package calibrate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// fitAttention fits the prefill or decode attention parameters: compute
// and memory efficiency, launch cost, overlap exponent and per-wave
// overhead (model.AttentionParams), trying whole and fractional waves.
func fitAttention(dev *hardware.Device, class string, ms []Measurement, opt Options, rng *rand.Rand) (ClassFit, []error) {
	cf := ClassFit{Class: class, Points: len(ms)}
	if len(ms) < minAttentionPoints {
		cf.InSample = scoreClass(dev, ms)
		return cf, []error{fmt.Errorf("%s: %d points (want at least %d): the parameters keep their defaults", class, len(ms), minAttentionPoints)}
	}
	decode := class == KernelAttentionDecode
	kern := make([]model.Attention, len(ms))
	for i, m := range ms {
		kern[i] = AttentionOf(m)
	}
	base := dev.Processor()
	set := func(a *model.AttentionParams, x []float64, waves string) {
		ec, em, t0, p, wo := sigmoid(x[0]), sigmoid(x[1]), model.Seconds(math.Exp(x[2])), 1+math.Exp(x[3]), model.Seconds(math.Exp(x[4]))
		if decode {
			a.DecodeCompute, a.DecodeMemory, a.DecodeLaunch, a.DecodeOverlap, a.DecodeWaveOverhead = ec, em, t0, p, wo
			return
		}
		a.Compute, a.Memory, a.Launch, a.Overlap, a.WaveOverhead, a.Waves = ec, em, t0, p, wo, waves
	}
	loss := func(idx []int, x []float64, waves string) float64 {
		p := base
		set(&p.Eff.Attention, x, waves)
		s := 0.0
		for _, i := range idx {
			s += softL1(math.Log(float64(p.AttentionCost(kern[i]).Time) / float64(ms[i].Time)))
		}
		return s / float64(len(idx))
	}
	x0 := []float64{logit(0.6), logit(0.8), math.Log(5e-6), 0, math.Log(1e-6)}
	waves := []string{model.WavesWhole, model.WavesFractional}
	if decode {
		waves = []string{base.Eff.Attention.Waves}
	}
	train := func(idx []int, start []float64, evals int, ws []string) ([]float64, string) {
		search := idx
		if len(search) > opt.MaxPoints {
			sub := subsample(len(idx), opt.MaxPoints, rng)
			search = make([]int, len(sub))
			for i, j := range sub {
				search[i] = idx[j]
			}
		}
		var bx []float64
		bw, bl := "", math.Inf(1)
		for _, w := range ws {
			x := minimize(func(x []float64) float64 { return loss(search, x, w) }, start, evals)
			if l := loss(search, x, w); l < bl {
				bx, bw, bl = x, w, l
			}
		}
		return bx, bw
	}
	all := make([]int, len(ms))
	for i := range all {
		all[i] = i
	}
	x, w := train(all, x0, 2000, waves)
	eval := func(idx []int, x []float64, w string, r *model.Residual, out []float64) {
		p := base
		set(&p.Eff.Attention, x, w)
		if decode {
			p.Eff.Attention.DecodeResidual = r
		} else {
			p.Eff.Attention.Residual = r
		}
		for _, i := range idx {
			out[i] = float64(p.AttentionCost(kern[i]).Time)/float64(ms[i].Time) - 1
		}
	}
	// A residual table over the phase's shape axes takes what the
	// roofline cannot (kernel choice by shape, multi-block decode).
	var grid *model.Residual
	var ri [][8]int32
	var rw [][8]float64
	if !opt.NoResidual {
		xyz := make([][3]float64, len(ms))
		for i := range ms {
			a, b, c := model.AttentionAxes(kern[i])
			xyz[i] = [3]float64{a, b, c}
		}
		grid = gridOver(xyz)
		ri, rw = make([][8]int32, len(ms)), make([][8]float64, len(ms))
		for i := range ms {
			idx, wt := grid.Weights(xyz[i][0], xyz[i][1], xyz[i][2])
			for c := range idx {
				ri[i][c], rw[i][c] = int32(idx[c]), wt[c]
			}
		}
	}
	// withTable fits the table on idx for parameters x and installs it.
	withTable := func(idx []int, x []float64, w string) *model.Residual {
		if grid == nil {
			return nil
		}
		p := base
		set(&p.Eff.Attention, x, w)
		target := make([]float64, len(ms))
		for _, i := range idx {
			target[i] = math.Log(float64(ms[i].Time) / float64(p.AttentionCost(kern[i]).Time))
		}
		r := *grid
		r.Values = make([]float64, len(grid.Values))
		solveResidual(ri, rw, idx, target, r.Values)
		return &r
	}
	table := withTable(all, x, w)
	in := make([]float64, len(ms))
	eval(all, x, w, table, in)
	cf.InSample, cf.Fitted = newStats(in), true
	if opt.Folds > 1 {
		held := make([]float64, len(ms))
		fold := folds(len(ms), opt.Folds, rng)
		for f := 0; f < opt.Folds; f++ {
			var tr, te []int
			for i, fi := range fold {
				if fi == f {
					te = append(te, i)
				} else {
					tr = append(tr, i)
				}
			}
			fx, _ := train(tr, x, 400, []string{w})
			eval(te, fx, w, withTable(tr, fx, w), held)
		}
		cf.HeldOut = newStats(held)
	}
	a := &dev.Eff.Attention
	set(a, x, w)
	if decode {
		a.DecodeResidual = table
	} else {
		a.Residual = table
	}
	a.Compute, a.Memory, a.Overlap = roundSig(a.Compute), roundSig(a.Memory), roundSig(a.Overlap)
	a.Launch, a.WaveOverhead = model.Seconds(roundSig(float64(a.Launch))), model.Seconds(roundSig(float64(a.WaveOverhead)))
	a.DecodeCompute, a.DecodeMemory, a.DecodeOverlap = roundSig(a.DecodeCompute), roundSig(a.DecodeMemory), roundSig(a.DecodeOverlap)
	a.DecodeLaunch, a.DecodeWaveOverhead = model.Seconds(roundSig(float64(a.DecodeLaunch))), model.Seconds(roundSig(float64(a.DecodeWaveOverhead)))
	src := class + " " + provenance(opt, ms, cf)
	if !strings.Contains(a.Source, "fitted:") {
		a.Source = src
	} else {
		a.Source += " | " + src
	}
	a.Points += len(ms)
	if !decode || a.ErrMedian == 0 {
		a.ErrMedian, a.ErrP90 = round4(cf.HeldOut.Median), round4(cf.HeldOut.P90)
	}
	return cf, nil
}

// fitStream fits the streaming bandwidth model of memory-bound kernels
// (model.MemoryParams): the efficiency and the launch cost. The half-size
// is left at 0: with no arithmetic to overlap, b/(W·η·b/(b+h)) + t0 =
// b/(W·η) + h/(W·η) + t0, so h only adds a constant that the launch cost
// already is.
func fitStream(dev *hardware.Device, class string, ms []Measurement, opt Options, rng *rand.Rand) (ClassFit, []error) {
	cf := ClassFit{Class: class, Points: len(ms)}
	if len(ms) < minStreamPoints {
		cf.InSample = scoreClass(dev, ms)
		return cf, []error{fmt.Errorf("%s: %d points (want at least %d): the parameters keep their defaults", class, len(ms), minStreamPoints)}
	}
	base := dev.Processor()
	set := func(m *model.MemoryParams, x []float64) {
		m.Efficiency, m.Half, m.Launch = sigmoid(x[0]), 0, model.Seconds(math.Exp(x[1]))
	}
	predict := func(x []float64, i int) float64 {
		p := base
		set(&p.Eff.Memory, x)
		return float64(p.StreamCost(ms[i].FLOPs, ms[i].Bytes, model.FP32).Time)
	}
	loss := func(idx []int, x []float64) float64 {
		s := 0.0
		for _, i := range idx {
			s += softL1(math.Log(predict(x, i) / float64(ms[i].Time)))
		}
		return s / float64(len(idx))
	}
	train := func(idx []int, start []float64) []float64 {
		search := idx
		if len(search) > opt.MaxPoints {
			sub := subsample(len(idx), opt.MaxPoints, rng)
			search = make([]int, len(sub))
			for i, j := range sub {
				search[i] = idx[j]
			}
		}
		return minimize(func(x []float64) float64 { return loss(search, x) }, start, 1500)
	}
	all := make([]int, len(ms))
	for i := range all {
		all[i] = i
	}
	x := train(all, []float64{logit(0.85), math.Log(5e-6)})
	in := make([]float64, len(ms))
	for _, i := range all {
		in[i] = predict(x, i)/float64(ms[i].Time) - 1
	}
	cf.InSample, cf.Fitted = newStats(in), true
	if opt.Folds > 1 {
		held := make([]float64, len(ms))
		fold := folds(len(ms), opt.Folds, rng)
		for f := 0; f < opt.Folds; f++ {
			var tr, te []int
			for i, fi := range fold {
				if fi == f {
					te = append(te, i)
				} else {
					tr = append(tr, i)
				}
			}
			fx := train(tr, x)
			for _, i := range te {
				held[i] = predict(fx, i)/float64(ms[i].Time) - 1
			}
		}
		cf.HeldOut = newStats(held)
	}
	m := &dev.Eff.Memory
	set(m, x)
	m.Efficiency, m.Launch = roundSig(m.Efficiency), model.Seconds(roundSig(float64(m.Launch)))
	m.Points = len(ms)
	m.ErrMedian, m.ErrP90 = round4(cf.HeldOut.Median), round4(cf.HeldOut.P90)
	m.Source = provenance(opt, ms, cf)
	return cf, nil
}
