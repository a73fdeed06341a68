package calibrate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// The GEMM parameters are searched in unconstrained coordinates: the
// efficiencies through a logistic function, times and factors through
// exp, the overlap exponent as 1 + exp, the L2 factor as 1 + exp; the
// operand-load time (x[8]) through exp.
func gemmX(t gemmTheta) []float64 {
	x := []float64{logit(t.etaC), logit(t.etaM), math.Log(t.t0), math.Log(t.a), math.Log(t.tau), math.Log(t.tsplit), math.Log(t.p - 1), 0}
	if t.l2f > 1 {
		x[7] = math.Log(t.l2f - 1)
	} else if t.q > 0 {
		x[7] = math.Log(t.q)
	}
	x = append(x, math.Log(t.edge))
	return x
}

func gemmFromX(x []float64, fp8, fractional bool) gemmTheta {
	t := gemmTheta{etaC: sigmoid(x[0]), etaM: sigmoid(x[1]), t0: boundTime(x[2]), a: boundTime(x[3]), tau: boundTime(x[4]),
		tsplit: boundTime(x[5]), p: 1 + boundFactor(x[6]), fractional: fractional}
	if fp8 {
		t.q = boundFactor(x[7])
	} else {
		t.l2f = 1 + boundFactor(x[7])
	}
	t.edge = boundTime(x[8])
	return t
}

// boundTime and boundFactor map a search coordinate to a time in
// [1e-18 s, 1 s] and a factor in [1e-9, 1e4]. A parameter the data do not
// constrain (the L2 factor of a CPU's cache-resident GEMMs, a split-K cost
// where K is never split) drifts while the search looks elsewhere; bounded,
// it stays a value the hardware loader accepts and means nothing odd.
func boundTime(x float64) float64   { return math.Exp(math.Max(-41.4, math.Min(0, x))) }
func boundFactor(x float64) float64 { return math.Exp(math.Max(-20.7, math.Min(9.2, x))) }

// gemmStart is where the search starts: magnitudes of the prototype study
// (DESIGN.md) on H100.
func gemmStart(fp8, fractional bool) gemmTheta {
	t := gemmTheta{etaC: 0.75, etaM: 0.8, t0: 4e-6, a: 1e-6, tau: 1e-9, tsplit: 3e-6, p: 2, fractional: fractional, edge: 1e-11}
	if fp8 {
		t.q = 3
	} else {
		t.l2f = 2
	}
	return t
}

// lossGEMM is the mean robust loss of the log ratio over pts.
func lossGEMM(pts []gemmPoint, idx []int, e *gemmEnv, t *gemmTheta) float64 {
	return lossSum(pts, idx, e, t) / float64(len(idx))
}

func lossSum(pts []gemmPoint, idx []int, e *gemmEnv, t *gemmTheta) float64 {
	s := 0.0
	for _, i := range idx {
		p := &pts[i]
		v := math.Max(p.eval(e, t), p.floor(e))
		s += softL1(math.Log(v / p.meas))
	}
	return s
}

// parLoss is lossGEMM split over workers goroutines (chunks of idx summed
// in a fixed order, so that the result does not depend on scheduling).
func parLoss(pts []gemmPoint, idx []int, e *gemmEnv, t *gemmTheta, workers int) float64 {
	if workers <= 1 || len(idx) < 256 {
		return lossGEMM(pts, idx, e, t)
	}
	part := make([]float64, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := w*len(idx)/workers, (w+1)*len(idx)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			part[w] = lossSum(pts, idx[lo:hi], e, t)
		}()
	}
	wg.Wait()
	s := 0.0
	for _, x := range part {
		s += x
	}
	return s / float64(len(idx))
}

// fitTheta searches the parameters on the points idx from start.
// The loss is evaluated on workers goroutines.
func fitTheta(pts []gemmPoint, idx []int, e *gemmEnv, start gemmTheta, evals, workers int) gemmTheta {
	fp8 := start.q > 0
	x := minimize(func(x []float64) float64 {
		t := gemmFromX(x, fp8, start.fractional)
		return parLoss(pts, idx, e, &t, workers)
	}, gemmX(start), evals)
	return gemmFromX(x, fp8, start.fractional)
}

// gemmModel is a fitted GEMM model: parameters and residual table.
type gemmModel struct {
	theta gemmTheta
	res   *model.Residual
}

// The parameter search's budgets of loss evaluations (Nelder–Mead, plus
// a restart of half as many): per wave model on a small sample, then with
// the better one on the search sample.
// The search sees at most gemmSearchPoints points (a seeded subsample;
// fewer when Options.MaxPoints says so): nine parameters need no more, and
// the residual table and the scores use every point.
const (
	waveEvals        = 150
	searchEvals      = 300
	waveSample       = 400
	gemmSearchPoints = 1000
)

// gemmInit is the search's start for the points idx: gemmStart with the
// compute efficiency and memory efficiency read off the points that are
// clearly compute-bound (the median of F/(P·t) over points whose
// arithmetic takes 10× their traffic, of at least 10 GFLOP) and clearly
// memory-bound (the median of B/(W·t) over points whose traffic takes 10×
// their arithmetic, of at least 16 MB), and the launch cost from the
// fastest points: a start near the answer, so that the search needs few
// evaluations.
func gemmInit(pts []gemmPoint, idx []int, e *gemmEnv, fp8, fractional bool) gemmTheta {
	t := gemmStart(fp8, fractional)
	var c, m, fast []float64
	for _, i := range idx {
		p := &pts[i]
		tc, tm := p.flops/e.peak, p.bytes/e.bw
		switch {
		case tc > 10*tm && p.flops >= 1e10:
			c = append(c, tc/p.meas)
		case tm > 10*tc && p.bytes >= 16e6:
			m = append(m, tm/p.meas)
		}
		fast = append(fast, p.meas)
	}
	clamp := func(x float64) float64 { return math.Max(0.3, math.Min(0.97, x)) }
	if len(c) >= 5 {
		sort.Float64s(c)
		t.etaC = clamp(quantile(c, 0.5))
	} else if len(idx) >= 5 {
		// No large compute-bound GEMM (a CPU's small grid): the best
		// fraction of the peak any point reaches, which may be far below
		// 0.3 (gonum's Go kernels use a fraction of a core's vector width).
		best := 0.0
		for _, i := range idx {
			best = math.Max(best, pts[i].flops/e.peak/pts[i].meas)
		}
		t.etaC = math.Max(1e-3, math.Min(0.97, best))
	}
	if len(m) >= 5 {
		sort.Float64s(m)
		t.etaM = clamp(quantile(m, 0.5))
	}
	if len(fast) > 0 {
		sort.Float64s(fast)
		t.t0 = math.Max(1e-7, 0.5*quantile(fast, 0.01))
	}
	return t
}

// trainGEMM fits the parameters (both wave models, keeping the better) and
// the residual table on the points idx, from a start computed from those
// points alone: the k-fold folds repeat the whole fit. The loss runs on
// workers goroutines.
func trainGEMM(pts []gemmPoint, idx []int, e *gemmEnv, fp8 bool, opt Options, rng *rand.Rand, grid *model.Residual, workers int) gemmModel {
	search := idx
	if limit := min(opt.MaxPoints, gemmSearchPoints); len(search) > limit {
		sub := subsample(len(idx), limit, rng)
		search = make([]int, len(sub))
		for i, j := range sub {
			search[i] = idx[j]
		}
	}
	// Choose the wave model on a small sample, then search with it.
	small := search
	if len(small) > waveSample {
		small = small[:0:0]
		for i := 0; i < len(search); i += len(search)/waveSample + 1 {
			small = append(small, search[i])
		}
	}
	// The budgets are in loss evaluations over the full samples; a small
	// sample (a CPU's few dozen GEMMs) gets more of them for the same
	// work, up to 10×.
	scale := func(evals, n int) int { return evals * max(1, min(10, waveSample/max(n, 1))) }
	var th gemmTheta
	best := math.Inf(1)
	for _, fr := range []bool{false, true} {
		t := fitTheta(pts, small, e, gemmInit(pts, search, e, fp8, fr), scale(waveEvals, len(small)), workers)
		if l := lossGEMM(pts, small, e, &t); l < best {
			best, th = l, t
		}
	}
	th = fitTheta(pts, search, e, th, scale(searchEvals, len(search)), workers)
	gm := gemmModel{theta: th}
	if grid != nil {
		base := make([]float64, len(pts))
		for _, i := range idx {
			base[i] = pts[i].eval(e, &th)
		}
		r := *grid
		r.Values = make([]float64, len(grid.Values))
		switch residualChoice(pts, idx, base, &r, e) {
		case residualFull:
			fitResidual(pts, idx, base, r.Values, [3]int{len(r.Log2M), len(r.Log2N), len(r.Log2K)})
			gm.res = &r
		case residualAdditive:
			fitAdditiveResidual(pts, idx, base, &r)
			gm.res = &r
		}
	}
	return gm
}

// residualFolds is the number of folds of residualChoice's cross-validation.
const residualFolds = 3

// The residual tables residualChoice chooses among.
const (
	residualNone     = iota
	residualFull     // a value per node (solveGEMMResidual)
	residualAdditive // a curve per axis (fitAdditiveResidual)
)

// residualChoice chooses the residual table by cross-validation on the
// training points idx: it fits each kind on two thirds of idx (every third
// point left out in turn) and scores the mean absolute log error on the
// left-out points, of the analytical times base alone too; it keeps the
// best, or the additive table where that is within residualMargin of it. On a dense benchmark grid (aiconfigurator's
// thousands of GEMMs) the full table halves the error; on a few dozen
// scattered shapes (the CPU suite's quick grid) a node of the full table
// sits on one or two points and follows their noise, while the additive
// table follows what varies along one axis. r gives the axes (its values
// are overwritten).
func residualChoice(pts []gemmPoint, idx []int, base []float64, r *model.Residual, e *gemmEnv) int {
	if len(idx) < 2*residualFolds {
		return residualNone
	}
	dims := [3]int{len(r.Log2M), len(r.Log2N), len(r.Log2K)}
	var loss [3]float64
	train := make([]int, 0, len(idx))
	for f := 0; f < residualFolds; f++ {
		train = train[:0]
		for j, i := range idx {
			if j%residualFolds != f {
				train = append(train, i)
			}
		}
		for kind := residualNone; kind <= residualAdditive; kind++ {
			switch kind {
			case residualFull:
				fitResidual(pts, train, base, r.Values, dims)
			case residualAdditive:
				fitAdditiveResidual(pts, train, base, r)
			}
			for j := f; j < len(idx); j += residualFolds {
				p := &pts[idx[j]]
				t := base[idx[j]]
				if kind != residualNone {
					t *= math.Exp(p.residualAt(r.Values))
				}
				loss[kind] += math.Abs(math.Log(math.Max(t, p.floor(e)) / p.meas))
			}
		}
	}
	// The additive table where it scores within residualMargin of the
	// best: the choice is itself an estimate from a few dozen left-out
	// points on a small grid, and the table of a few dozen values, between
	// none and a value per node, is the surer one where they score alike.
	least := min(loss[residualNone], loss[residualFull], loss[residualAdditive])
	switch {
	case loss[residualAdditive] <= (1+residualMargin)*least:
		return residualAdditive
	case loss[residualFull] <= loss[residualNone]:
		return residualFull
	}
	return residualNone
}

// residualMargin is how much worse, relatively, the additive residual
// table may score in residualChoice's cross-validation and still be
// chosen.
const residualMargin = 0.05

func (gm gemmModel) predict(p *gemmPoint, e *gemmEnv) float64 {
	var vals []float64
	if gm.res != nil {
		vals = gm.res.Values
	}
	return p.predict(e, &gm.theta, vals)
}

// fitGEMM fits one compute type's GEMM parameters into dev.
func fitGEMM(dev *hardware.Device, ms []Measurement, opt Options, rng *rand.Rand) (ClassFit, []error) {
	d := ms[0].DType.Peak()
	cf := ClassFit{Class: "gemm", DType: d, Points: len(ms)}
	p := dev.Processor()
	sd, exact := p.Supported(d)
	peak, _ := p.Peak(sd)
	var warns []error
	if !exact || d.Peak() != sd {
		warns = append(warns, fmt.Errorf("gemm/%v: the device has no %v peak; %d points not fitted", d, d, len(ms)))
		cf.InSample = scoreClass(dev, ms)
		return cf, warns
	}
	if len(ms) < minGEMMPoints || dev.ComputeUnits <= 0 {
		warns = append(warns, fmt.Errorf("gemm/%v: %d points (want at least %d) or no compute units: the parameters keep their defaults", d, len(ms), minGEMMPoints))
		cf.InSample = scoreClass(dev, ms)
		return cf, warns
	}
	e := &gemmEnv{peak: float64(peak), bw: float64(dev.Memory.Bandwidth), l2: float64(dev.Memory.L2), cus: float64(dev.ComputeUnits), cpu: p.CPU}
	pts := make([]gemmPoint, len(ms))
	for i, m := range ms {
		pts[i] = newGEMMPoint(m)
		pts[i].setCands(e.cus, float64(max(m.Batch, 1)), e.cpu)
		pts[i].flr = math.Max(pts[i].flops/e.peak, pts[i].bytes/e.bw)
	}
	all := make([]int, len(pts))
	for i := range all {
		all[i] = i
	}
	fp8 := d == model.FP8
	var grid *model.Residual
	if !opt.NoResidual {
		grid = residualGrid(pts)
		for i := range pts {
			pts[i].setResidual(grid)
		}
	}
	var fold []int
	if opt.Folds > 1 {
		fold = folds(len(pts), opt.Folds, rng)
	}
	full, held := trainAndValidate(pts, all, fold, e, fp8, opt, grid)
	in := make([]float64, len(pts))
	for i := range pts {
		in[i] = full.predict(&pts[i], e)/pts[i].meas - 1
	}
	cf.InSample, cf.Fitted = newStats(in), true
	if opt.Folds > 1 {
		cf.HeldOut = newStats(held)
	}
	gp := full.theta.params()
	gp.Residual = full.res
	gp.Points = len(ms)
	gp.ErrMedian, gp.ErrP90 = round4(cf.HeldOut.Median), round4(cf.HeldOut.P90)
	gp.Source = provenance(opt, ms, cf)
	dev.Eff.GEMM[d] = roundGEMM(gp)
	if d == model.BF16 || d == model.FP16 {
		// fp16 runs at the bf16 tensor rate: a device fitted on one and
		// not the other gets the same parameters for both.
		other := model.FP16
		if d == model.FP16 {
			other = model.BF16
		}
		if _, ok := dev.Eff.GEMM[other]; !ok || !fittedSource(dev.Eff.GEMM[other].Source) {
			og := dev.Eff.GEMM[d]
			og.Source = "rule: same tensor rate as " + d.String() + "; " + og.Source
			dev.Eff.GEMM[other] = og
		}
	}
	return cf, warns
}

// trainAndValidate fits the model on all points and, when fold is set,
// refits it from scratch (parameters and residual table) once per fold on
// the other folds, returning each point's held-out relative error. The
// fits are independent and run in parallel, each with its own seeded
// generator, so that the result does not depend on scheduling; the loss
// of a fit is itself split over the cores the fits leave idle.
func trainAndValidate(pts []gemmPoint, all, fold []int, e *gemmEnv, fp8 bool, opt Options, grid *model.Residual) (gemmModel, []float64) {
	nf := 0
	if len(fold) > 0 {
		nf = opt.Folds
	}
	procs := runtime.GOMAXPROCS(0)
	workers := max(1, procs/(nf+1))
	var held []float64
	if nf > 0 {
		held = make([]float64, len(pts))
	}
	var full gemmModel
	var wg sync.WaitGroup
	sem := make(chan struct{}, procs)
	for f := -1; f < nf; f++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			frng := rand.New(rand.NewPCG(opt.Seed, uint64(f)+1))
			if f < 0 {
				full = trainGEMM(pts, all, e, fp8, opt, frng, grid, workers)
				return
			}
			var train, test []int
			for i, fi := range fold {
				if fi == f {
					test = append(test, i)
				} else {
					train = append(train, i)
				}
			}
			gm := trainGEMM(pts, train, e, fp8, opt, frng, grid, workers)
			for _, i := range test {
				held[i] = gm.predict(&pts[i], e)/pts[i].meas - 1
			}
		}()
	}
	wg.Wait()
	return full, held
}

func fittedSource(s string) bool { return len(s) > 7 && s[:7] == "fitted:" }

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// roundSig rounds x to 4 significant digits, so that the written file is
// short; the scores are of the rounded parameters (TestFit_roundTrip).
func roundSig(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	e := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*e) / e
}

func roundGEMM(g model.GEMMParams) model.GEMMParams {
	g.Compute, g.Memory = roundSig(g.Compute), roundSig(g.Memory)
	g.Launch, g.CTAOverhead, g.StepFloor, g.SplitK = model.Seconds(roundSig(float64(g.Launch))), model.Seconds(roundSig(float64(g.CTAOverhead))),
		model.Seconds(roundSig(float64(g.StepFloor))), model.Seconds(roundSig(float64(g.SplitK)))
	g.Overlap, g.L2Factor, g.QuantBytes = roundSig(g.Overlap), roundSig(g.L2Factor), roundSig(g.QuantBytes)
	g.OperandLoad = model.Seconds(roundSig(float64(g.OperandLoad)))
	return g
}

// provenance describes a fit for a source field.
func provenance(opt Options, ms []Measurement, cf ClassFit) string {
	files := map[string]bool{}
	for _, m := range ms {
		if m.File != "" {
			files[baseName(m.File)] = true
		}
	}
	names := sortedKeys(files)
	sort.Strings(names)
	s := fmt.Sprintf("fitted: perfsim calibrate fit, %d points", cf.Points)
	if cf.Dropped > 0 {
		s += fmt.Sprintf(" (%d more dropped: faster than DRAM allows)", cf.Dropped)
	}
	if opt.Date != "" {
		s += ", " + opt.Date
	}
	if opt.Source != "" {
		s += ", " + opt.Source
	}
	if len(names) > 0 {
		s += ", from " + joinMax(names, 4)
	}
	if cf.HeldOut.N > 0 {
		s += fmt.Sprintf("; %d-fold held-out |error| median %.1f%% p90 %.1f%%", opt.Folds, 100*cf.HeldOut.Median, 100*cf.HeldOut.P90)
	}
	s += fmt.Sprintf("; in-sample median %.1f%% p90 %.1f%%", 100*cf.InSample.Median, 100*cf.InSample.P90)
	return s
}
