package calibrate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// moeKernelsOf returns, per routing draw, the kernels the simulator prices
// for one measured MoE module on its rank, as workloads builds an MoE
// layer (moeOps) less the router GEMM, which TensorRT-LLM runs before the
// module: the top-k over the router's scores, the permutation of the
// tokens' rows into expert order, the gate-and-up grouped GEMM, the
// SwiGLU activation, the down grouped GEMM and the finalisation back
// into token order (model.MoEPermute, model.MoEFinalize). The grouped
// GEMMs take the rank's rows and distinct experts of that draw's loads
// (rankLoads); activations are quantised to the weights' type (TRT-LLM's
// fp8 and nvfp4 MoE run W8A8 and W4A4) and written in bf16.
func moeKernelsOf(m Measurement) [][]model.Kernel {
	draws := 1
	if strings.HasPrefix(m.Routing, "power_law_") {
		draws = powerDraws
	}
	width := m.N / max(m.MoETP, 1)
	act := model.BF16
	out := make([][]model.Kernel, 0, draws)
	for d := 0; d < draws; d++ {
		loads := rankLoads(m.M, m.Experts, m.TopK, max(m.MoEEP, 1), m.Routing, d)
		rows, distinct := 0, 0
		for _, l := range loads {
			rows += l
			if l > 0 {
				distinct++
			}
		}
		e := float64(m.M) * float64(m.Experts)
		ks := []model.Kernel{model.Elementwise{Kind: "softmax-topk", Elements: e, Work: model.FLOPs(5 * e), Read: act.Bytes(e), Written: act.Bytes(e)}}
		if rows > 0 {
			el := float64(rows) * float64(width)
			ks = append(ks,
				model.MoEPermute(m.M, rows, m.K, act, m.DType),
				model.GroupedGEMM{Rows: rows, Experts: float64(distinct), K: m.K, N: 2 * width, A: m.DType, B: m.DType, C: act},
				model.Elementwise{Kind: "silu", Elements: el, Work: model.FLOPs(5 * el), Read: act.Bytes(2 * el), Written: act.Bytes(el)},
				model.GroupedGEMM{Rows: rows, Experts: float64(distinct), K: width, N: m.K, A: m.DType, B: m.DType, C: act},
				model.MoEFinalize(m.M, rows, m.K, act))
		}
		out = append(out, ks)
	}
	return out
}

// moeTime prices the kernels of moeKernelsOf on p: the mean over the
// draws of each draw's summed kernel times.
func moeTime(p *model.Processor, draws [][]model.Kernel) float64 {
	s := 0.0
	for _, ks := range draws {
		for _, k := range ks {
			s += float64(p.Cost(k).Time)
		}
	}
	return s / float64(len(draws))
}

// setMoE installs η_c, η_c at an 8-bit peak, η_m, t0, a_e, the overlap
// exponent, the finalisation's time per routed element c_r and, with
// 4-bit rows, η_c, t0 and a_e of the 4-bit kernel (model.MoEParams); the
// row tile is the discrete choice.
func setMoE(e *model.MoEParams, x []float64, tile int) {
	e.Compute, e.Compute8, e.Memory = sigmoid(x[0]), sigmoid(x[1]), sigmoid(x[2])
	e.Launch, e.ExpertOverhead, e.Overlap = secs(x[3]), secs(x[4]), 1+math.Exp(x[5])
	e.ReduceElement = secs(x[6])
	e.RowTile = tile
	e.Compute4, e.Launch4, e.ExpertOverhead4 = 0, 0, 0
	if len(x) > 7 {
		e.Compute4, e.Launch4, e.ExpertOverhead4 = sigmoid(x[7]), secs(x[8]), secs(x[9])
	}
}

// fitMoE fits the MoE table (model.MoEParams) to measured MoE modules
// (class "moe") or bare grouped GEMMs (class "grouped_gemm"), with k-fold
// held-out errors, and installs it in dev.
func fitMoE(dev *hardware.Device, class string, ms []Measurement, opt Options, rng *rand.Rand) (ClassFit, []error) {
	cf := ClassFit{Class: class, Points: len(ms)}
	if len(ms) < minAttentionPoints {
		cf.InSample = scoreClass(dev, ms)
		return cf, []error{fmt.Errorf("%s: %d points (want at least %d): the parameters keep their defaults", class, len(ms), minAttentionPoints)}
	}
	kern := make([][][]model.Kernel, len(ms))
	eight, four, module := false, false, false
	for i, m := range ms {
		four = four || m.DType.Size() < 1
		if m.Kernel == KernelGroupedGEMM {
			kern[i] = [][]model.Kernel{{GroupedGEMMOf(m)}}
		} else {
			kern[i] = moeKernelsOf(m)
			module = true
		}
		eight = eight || m.DType.Size() < 2
	}
	base := dev.Processor()
	if base.Eff.MoE.Source == "" {
		base.Eff.MoE.Source = "fitting" // the MoE table prices grouped GEMMs once it has a source
	}
	predict := func(x []float64, tile int, i int) float64 {
		p := base
		setMoE(&p.Eff.MoE, x, tile)
		return moeTime(&p, kern[i])
	}
	train := func(idx []int, start []float64, evals int, tile int) []float64 {
		search := searchPoints(idx, opt.MaxPoints, rng)
		return minimize(func(x []float64) float64 {
			return meanLoss(ms, search, func(i int) float64 { return predict(x, tile, i) })
		}, start, evals)
	}
	x0 := []float64{logit(0.6), logit(0.6), logit(0.8), math.Log(10e-6), math.Log(0.1e-6), 1, math.Log(1e-12)}
	if four { // a 4-bit peak has its own fraction (B200's nvfp4)
		x0 = append(x0, logit(0.6), math.Log(10e-6), math.Log(0.1e-6))
	}
	all := make([]int, len(ms))
	for i := range all {
		all[i] = i
	}
	var bx []float64
	bt, bl := 0, math.Inf(1)
	for _, tile := range []int{64, 128} {
		x := train(all, x0, 1500, tile)
		if l := meanLoss(ms, all, func(i int) float64 { return predict(x, tile, i) }); l < bl {
			bx, bt, bl = x, tile, l
		}
	}
	x, in, held := fitScored(ms, opt, rng, bx,
		func(idx []int, start []float64) []float64 { return train(idx, start, 1500, bt) },
		func(x []float64, i int) float64 { return predict(x, bt, i) })
	cf.InSample, cf.HeldOut, cf.Fitted = in, held, true
	e := &dev.Eff.MoE
	setMoE(e, x, bt)
	if !eight {
		e.Compute8 = 0
	}
	if !module { // bare grouped GEMMs: no finalisation to fit
		e.ReduceElement = 0
	}
	e.Compute, e.Compute8, e.Compute4, e.Memory, e.Overlap = roundSig(e.Compute), roundSig(e.Compute8), roundSig(e.Compute4), roundSig(e.Memory), roundSig(e.Overlap)
	roundSecs(&e.Launch)
	roundSecs(&e.ExpertOverhead)
	roundSecs(&e.ReduceElement)
	roundSecs(&e.Launch4)
	roundSecs(&e.ExpertOverhead4)
	e.Residual = nil
	e.Source = class + " " + provenance(opt, ms, cf)
	e.Points = len(ms)
	e.ErrMedian, e.ErrP90 = round4(cf.HeldOut.Median), round4(cf.HeldOut.P90)
	return cf, nil
}
