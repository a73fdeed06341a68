package calibrate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// attnVariant is one setting of an attention model's discrete choices:
// the wave model of prefill, the grouped-kernel limit and the KV split of
// decode. The fit tries each and keeps the best.
type attnVariant struct {
	waves       string
	maxGroup    int
	splitTokens int
}

// attnModel is the parameter vector of one attention phase (see
// model.AttentionCost): how to start, how to install a vector.
type attnModel struct {
	x0       []float64
	variants []attnVariant
	set      func(a *model.AttentionParams, x []float64, v attnVariant)
	round    func(a *model.AttentionParams)
}

func secs(x float64) model.Seconds { return model.Seconds(math.Exp(x)) }

func roundSecs(s *model.Seconds) { *s = model.Seconds(roundSig(float64(*s))) }

// prefillModel: η_c, η_c at 8 bits, the softmax rate, η_m, t0, the
// overlap exponent and the per-wave overhead; whole or fractional waves.
// A softmax rate rs > 0 is fixed, not fitted (x[2] is then unused).
func prefillModel(fp8 bool, rs model.FLOPRate) attnModel {
	return attnModel{
		x0:       []float64{logit(0.6), logit(0.6), math.Log(4e12), logit(0.8), math.Log(5e-6), 0, math.Log(1e-6)},
		variants: []attnVariant{{waves: model.WavesWhole}, {waves: model.WavesFractional}},
		set: func(a *model.AttentionParams, x []float64, v attnVariant) {
			a.Compute, a.Compute8 = sigmoid(x[0]), 0
			if fp8 {
				a.Compute8 = sigmoid(x[1])
			}
			// Where the exponentials never bind (the A100's FA2 kernels)
			// the rate runs off toward infinity; capped at 1e21 scores/s,
			// thousands of times any device's, it stays a number the
			// hardware loader accepts and still never binds.
			a.SoftmaxRate = model.FLOPRate(math.Exp(math.Min(x[2], math.Log(1e21))))
			if rs > 0 {
				a.SoftmaxRate = rs
			}
			a.Memory, a.Launch, a.Overlap, a.WaveOverhead = sigmoid(x[3]), secs(x[4]), 1+math.Exp(x[5]), secs(x[6])
			a.Waves = v.waves
		},
		round: func(a *model.AttentionParams) {
			a.Compute, a.Compute8, a.Memory, a.Overlap = roundSig(a.Compute), roundSig(a.Compute8), roundSig(a.Memory), roundSig(a.Overlap)
			a.SoftmaxRate = model.FLOPRate(roundSig(float64(a.SoftmaxRate)))
			roundSecs(&a.Launch)
			roundSecs(&a.WaveOverhead)
		},
	}
}

// fixedSoftmaxRate returns the softmax rate a prefill attention fit
// fixes rather than fits, or 0 to fit it: where every row has one head
// size, the matrix products (4·D·P/(peak·η_c)) and the exponentials
// (P/R_s) both grow with the scores alone, so the data cannot tell η_c
// from R_s (the A100's TensorRT-LLM table times head size 128 only: fitted
// free, its rate ran off to the 1e21 bound at η_c 0.488 in the catalog's
// fit and to 0.68 T/s at η_c 0.87 in a fit of its prefill rows alone,
// both 2.2–2.3% held out). The split then comes from the datasheet: the
// exponentials at the rate of the special-function units
// (hardware.SoftmaxRate; A100 2.44 T/s, η_c 0.555, held out 2.3% as
// before), which hardware.Transfer carries to another device by units ×
// clock. The MLA context table keeps its fitted rate: it is not carried
// to another device.
func fixedSoftmaxRate(dev *hardware.Device, class string, kern []model.Attention) model.FLOPRate {
	if class != KernelAttentionPrefill || len(kern) == 0 {
		return 0
	}
	for _, a := range kern[1:] {
		if a.HeadDim != kern[0].HeadDim || a.ValueDim() != kern[0].ValueDim() {
			return 0
		}
	}
	rs, _ := hardware.SoftmaxRate(dev)
	return rs
}

// decodeModel: η_c, η_m, t0, the overlap exponent, the per-CTA bandwidth
// β of the grouped and β_h of the per-head kernel, the CTA overheads a_g,
// a_q, a_h and a_d and the split reduction t_r; with 8-bit KV caches in
// the data (kv8), β, β_h, a_g and a_q of the 8-bit-cache kernels; the
// largest group of the grouped kernel and the fewest tokens of a split.
func decodeModel(kv8 bool) attnModel {
	var vs []attnVariant
	for _, g := range []int{16, 32} {
		for _, s := range []int{256, 1024} {
			vs = append(vs, attnVariant{maxGroup: g, splitTokens: s})
		}
	}
	x0 := []float64{logit(0.3), logit(0.85), math.Log(6e-6), 1, math.Log(50e9), math.Log(1.5e-6), math.Log(0.1e-6), math.Log(1.4e-6), math.Log(2e-6),
		math.Log(50e9), math.Log(0.05e-6), math.Log(6e-6)}
	if kv8 {
		x0 = append(x0, math.Log(50e9), math.Log(20e9), math.Log(0.5e-6), math.Log(0.1e-6), math.Log(5e-6))
	}
	return attnModel{
		x0:       x0,
		variants: vs,
		set: func(a *model.AttentionParams, x []float64, v attnVariant) {
			a.DecodeCompute, a.DecodeMemory, a.DecodeLaunch, a.DecodeOverlap = sigmoid(x[0]), sigmoid(x[1]), secs(x[2]), 1+math.Exp(x[3])
			a.DecodeCTABandwidth = model.ByteRate(math.Exp(x[4]))
			a.DecodeCTAOverhead, a.DecodeGroupOverhead, a.DecodeHeadOverhead, a.DecodeSplitCost = secs(x[5]), secs(x[6]), secs(x[7]), secs(x[8])
			a.DecodeHeadBandwidth, a.DecodeDimOverhead, a.DecodeHeadLaunch = model.ByteRate(math.Exp(x[9])), secs(x[10]), secs(x[11])
			a.DecodeCTABandwidth8, a.DecodeHeadBandwidth8, a.DecodeCTAOverhead8, a.DecodeGroupOverhead8, a.DecodeLaunch8 = 0, 0, 0, 0, 0
			if len(x) > 12 {
				a.DecodeCTABandwidth8, a.DecodeHeadBandwidth8 = model.ByteRate(math.Exp(x[12])), model.ByteRate(math.Exp(x[13]))
				a.DecodeCTAOverhead8, a.DecodeGroupOverhead8, a.DecodeLaunch8 = secs(x[14]), secs(x[15]), secs(x[16])
			}
			a.DecodeMaxGroup, a.DecodeSplitTokens = v.maxGroup, v.splitTokens
			a.DecodeWaveOverhead = 0
		},
		round: func(a *model.AttentionParams) {
			a.DecodeCompute, a.DecodeMemory, a.DecodeOverlap = roundSig(a.DecodeCompute), roundSig(a.DecodeMemory), roundSig(a.DecodeOverlap)
			for _, r := range []*model.ByteRate{&a.DecodeCTABandwidth, &a.DecodeHeadBandwidth, &a.DecodeCTABandwidth8, &a.DecodeHeadBandwidth8} {
				*r = model.ByteRate(roundSig(float64(*r)))
			}
			for _, s := range []*model.Seconds{&a.DecodeLaunch, &a.DecodeCTAOverhead, &a.DecodeGroupOverhead, &a.DecodeHeadOverhead, &a.DecodeSplitCost,
				&a.DecodeDimOverhead, &a.DecodeCTAOverhead8, &a.DecodeGroupOverhead8, &a.DecodeLaunch8, &a.DecodeHeadLaunch} {
				roundSecs(s)
			}
		},
	}
}

// mlaDecodeModel: η_c, η_m, t0, the overlap exponent, the per-CTA
// bandwidth β, the CTA overhead a and the split reduction t_r of the MLA
// decode (model.Processor.mlaDecode), with η_c at an 8-bit cache
// (compute_fp8) when the data has one; the heads per CTA and the fewest
// keys of a split are the discrete choices.
func mlaDecodeModel(kv8 bool) attnModel {
	var vs []attnVariant
	for _, g := range []int{32, 64, 128} {
		for _, s := range []int{256, 1024} {
			vs = append(vs, attnVariant{maxGroup: g, splitTokens: s})
		}
	}
	x0 := []float64{logit(0.6), logit(0.8), math.Log(8e-6), 1, math.Log(50e9), math.Log(2e-6), math.Log(3e-6)}
	if kv8 {
		x0 = append(x0, logit(0.6))
	}
	return attnModel{
		x0:       x0,
		variants: vs,
		set: func(a *model.AttentionParams, x []float64, v attnVariant) {
			a.DecodeCompute, a.DecodeMemory, a.DecodeLaunch, a.DecodeOverlap = sigmoid(x[0]), sigmoid(x[1]), secs(x[2]), 1+math.Exp(x[3])
			// Where the per-CTA stream never binds, β runs off toward
			// infinity; capped at 1e15 B/s it stays a number the loader
			// accepts and still never binds.
			a.DecodeCTABandwidth, a.DecodeCTAOverhead, a.DecodeSplitCost = model.ByteRate(math.Exp(math.Min(x[4], math.Log(1e15)))), secs(x[5]), secs(x[6])
			a.DecodeCompute8 = 0
			if len(x) > 7 {
				a.DecodeCompute8 = sigmoid(x[7])
			}
			a.DecodeMaxGroup, a.DecodeSplitTokens = v.maxGroup, v.splitTokens
		},
		round: func(a *model.AttentionParams) {
			a.DecodeCompute, a.DecodeMemory, a.DecodeOverlap, a.DecodeCompute8 = roundSig(a.DecodeCompute), roundSig(a.DecodeMemory), roundSig(a.DecodeOverlap), roundSig(a.DecodeCompute8)
			a.DecodeCTABandwidth = model.ByteRate(roundSig(float64(a.DecodeCTABandwidth)))
			for _, s := range []*model.Seconds{&a.DecodeLaunch, &a.DecodeCTAOverhead, &a.DecodeSplitCost} {
				roundSecs(s)
			}
		},
	}
}

// attnTable returns the parameter table a class fits: the MLA table for
// the MLA kernels, the attention table otherwise.
func attnTable(e *model.Efficiency, mla bool) *model.AttentionParams {
	if mla {
		return &e.MLA
	}
	return &e.Attention
}

// fitAttention fits the prefill or decode attention parameters (see
// prefillModel, decodeModel) and a residual table over the phase's shape
// axes, trying each discrete variant on all points; the k-fold scores
// refit the continuous parameters and the table with the chosen variant.
func fitAttention(dev *hardware.Device, class string, ms []Measurement, opt Options, rng *rand.Rand) (ClassFit, []error) {
	ms, dropped, dropWarn := dropBeatsDRAM(dev, class, ms)
	var warns []error
	if dropWarn != nil {
		warns = append(warns, dropWarn)
	}
	cf := ClassFit{Class: class, Points: len(ms), Dropped: dropped}
	if len(ms) < minAttentionPoints {
		cf.InSample = scoreClass(dev, ms)
		return cf, append(warns, fmt.Errorf("%s: %d points (want at least %d): the parameters keep their defaults", class, len(ms), minAttentionPoints))
	}
	decode := class == KernelAttentionDecode || class == KernelMLADecode
	mla := class == KernelMLAPrefill || class == KernelMLADecode
	axes := model.AttentionAxes
	if mla {
		axes = model.MLAAxes
	}
	kern := make([]model.Attention, len(ms))
	fp8, kv8 := false, false
	for i, m := range ms {
		kern[i] = AttentionOf(m)
		kv8 = kv8 || kern[i].KVDType.Size() < 2
		fp8 = fp8 || m.DType.Size() < 2 || (mla && kern[i].KVDType.Size() < 2)
	}
	am := prefillModel(fp8, fixedSoftmaxRate(dev, class, kern))
	switch {
	case decode && mla:
		am = mlaDecodeModel(kv8)
	case decode:
		am = decodeModel(kv8)
	}
	base := dev.Processor()
	if mla && base.Eff.MLA.Source == "" {
		base.Eff.MLA.Source = "fitting" // the MLA table prices the MLA kernels once it has a source
	}
	loss := func(idx []int, x []float64, v attnVariant) float64 {
		p := base
		am.set(attnTable(&p.Eff, mla), x, v)
		s := 0.0
		for _, i := range idx {
			s += softL1(math.Log(float64(p.AttentionCost(kern[i]).Time) / float64(ms[i].Time)))
		}
		return s / float64(len(idx))
	}
	train := func(idx []int, start []float64, evals int, vs []attnVariant) ([]float64, attnVariant) {
		search := searchPoints(idx, opt.MaxPoints, rng)
		var bx []float64
		var bv attnVariant
		bl := math.Inf(1)
		for _, v := range vs {
			x := minimize(func(x []float64) float64 { return loss(search, x, v) }, start, evals)
			if l := loss(search, x, v); l < bl {
				bx, bv, bl = x, v, l
			}
		}
		return bx, bv
	}
	all := make([]int, len(ms))
	for i := range all {
		all[i] = i
	}
	evals := 2000
	if len(am.variants) > 4 {
		evals = 1200
	}
	x, v := train(all, am.x0, evals, am.variants)
	x, _ = train(all, x, 3000, []attnVariant{v})
	install := func(a *model.AttentionParams, x []float64, r *model.Residual) {
		am.set(a, x, v)
		if decode {
			a.DecodeResidual = r
		} else {
			a.Residual = r
		}
	}
	eval := func(idx []int, x []float64, r *model.Residual, out []float64) {
		p := base
		install(attnTable(&p.Eff, mla), x, r)
		for _, i := range idx {
			out[i] = float64(p.AttentionCost(kern[i]).Time)/float64(ms[i].Time) - 1
		}
	}
	// A residual table over the phase's shape axes takes what the
	// model cannot (the library's kernel choice by shape).
	var grid *model.Residual
	var ri [][8]int32
	var rw [][8]float64
	if !opt.NoResidual {
		xyz := make([][3]float64, len(ms))
		for i := range ms {
			a, b, c := axes(kern[i])
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
	withTable := func(idx []int, x []float64) *model.Residual {
		if grid == nil {
			return nil
		}
		p := base
		install(attnTable(&p.Eff, mla), x, nil)
		target := make([]float64, len(ms))
		for _, i := range idx {
			target[i] = math.Log(float64(ms[i].Time) / float64(p.AttentionCost(kern[i]).Time))
		}
		r := *grid
		r.Values = make([]float64, len(grid.Values))
		solveResidual(ri, rw, idx, target, r.Values)
		return &r
	}
	// The MLA classes are a few thousand points over a table of about as
	// many nodes: a table is kept only where a 3-fold split of the
	// training points says it predicts their held-out third better than
	// none (on H100's context rows it does not: 16.3% held out with a
	// table, 14.4% without; on its decode rows it does: 5.3% and 6.1%).
	fitTable := withTable
	if mla {
		fitTable = func(idx []int, x []float64) *model.Residual {
			if grid == nil {
				return nil
			}
			var with, without float64
			eachFold(len(idx), 3, rng, func(tr, te []int) {
				sub := make([]int, len(tr))
				for j, k := range tr {
					sub[j] = idx[k]
				}
				r := withTable(sub, x)
				p, q := base, base
				install(attnTable(&p.Eff, mla), x, r)
				install(attnTable(&q.Eff, mla), x, nil)
				for _, k := range te {
					i := idx[k]
					with += math.Abs(math.Log(float64(p.AttentionCost(kern[i]).Time) / float64(ms[i].Time)))
					without += math.Abs(math.Log(float64(q.AttentionCost(kern[i]).Time) / float64(ms[i].Time)))
				}
			})
			if with < without {
				return withTable(idx, x)
			}
			return nil
		}
	}
	table := fitTable(all, x)
	in := make([]float64, len(ms))
	eval(all, x, table, in)
	cf.InSample, cf.Fitted = newStats(in), true
	if opt.Folds > 1 {
		held := make([]float64, len(ms))
		eachFold(len(ms), opt.Folds, rng, func(tr, te []int) {
			fx, _ := train(tr, x, 400, []attnVariant{v})
			eval(te, fx, fitTable(tr, fx), held)
		})
		cf.HeldOut = newStats(held)
	}
	a := attnTable(&dev.Eff, mla)
	if mla && a.Source == "" {
		a.Source = "fitting"
	}
	install(a, x, table)
	am.round(a)
	src := class + " " + provenance(opt, ms, cf)
	if !strings.Contains(a.Source, "fitted:") {
		a.Source = src
	} else {
		a.Source += " | " + src
	}
	a.Points += len(ms)
	// The attention tables carry one error figure: the larger of the two
	// phases' held-out errors, so that an interval is never too narrow.
	if !strings.Contains(a.Source, " | ") {
		a.ErrMedian, a.ErrP90 = 0, 0
	}
	a.ErrMedian, a.ErrP90 = math.Max(a.ErrMedian, round4(cf.HeldOut.Median)), math.Max(a.ErrP90, round4(cf.HeldOut.P90))
	return cf, warns
}
