package calibrate

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/optimize"
	"gonum.org/v1/gonum/stat"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// A KernelLoad is how busy one kernel keeps a device: its time and the
// fractions of the compute peak and of the memory bandwidth it achieves.
type KernelLoad struct {
	Time            model.Seconds
	Compute, Memory float64
}

// A PowerPoint is a measured mean power of one device and the kernels the
// simulator says ran meanwhile.
type PowerPoint struct {
	Group    string // the unit held out together (a model)
	Measured model.Watts
	Loads    []KernelLoad
}

// Loads returns the kernel loads of a phase priced on p.
func Loads(p *model.Processor, ph *sim.PhaseReport) []KernelLoad {
	out := make([]KernelLoad, 0, len(ph.Ops))
	for i := range ph.Ops {
		r := &ph.Ops[i]
		if r.Time <= 0 {
			continue
		}
		uc, um := p.Utilisation(model.Cost{FLOPs: r.FLOPs, Bytes: r.Bytes, Time: r.Time, DType: r.DType})
		out = append(out, KernelLoad{Time: r.Time, Compute: uc, Memory: um})
	}
	return out
}

// PredictPower returns the mean power of pt's kernels under pm: each
// kernel's model.Processor.Power weighted by its time.
func PredictPower(pm model.PowerParams, pt PowerPoint) model.Watts {
	var e, t float64
	for _, l := range pt.Loads {
		a := math.Min(1, pm.Static+pm.Compute*l.Compute+pm.Memory*l.Memory)
		e += float64(l.Time) * (float64(pm.Idle) + float64(pm.Cap-pm.Idle)*a)
		t += float64(l.Time)
	}
	if t == 0 {
		return pm.Idle
	}
	return model.Watts(e / t)
}

// FitPower fits the static, compute and memory shares of a power model
// with the given idle and cap to pts, minimising the mean squared log
// ratio of predicted to measured power. Shares stay in [0, 3].
func FitPower(idle, capW model.Watts, pts []PowerPoint) (model.PowerParams, error) {
	if len(pts) < 3 {
		return model.PowerParams{}, fmt.Errorf("calibrate: a power fit needs at least 3 points, got %d", len(pts))
	}
	if !(capW > idle && idle > 0) {
		return model.PowerParams{}, errors.New("calibrate: a power fit needs 0 < idle < cap")
	}
	pm := model.PowerParams{Idle: idle, Cap: capW}
	set := func(x []float64) {
		pm.Static, pm.Compute, pm.Memory = clampShare(x[0]), clampShare(x[1]), clampShare(x[2])
	}
	loss := func(x []float64) float64 {
		set(x)
		s := 0.0
		for _, pt := range pts {
			d := math.Log(float64(PredictPower(pm, pt)) / float64(pt.Measured))
			s += d * d
		}
		return s / float64(len(pts))
	}
	best, bestLoss := []float64{0.3, 0.5, 0.4}, math.Inf(1)
	for _, x0 := range [][]float64{{0.3, 0.5, 0.4}, {0.1, 1, 0.2}, {0.5, 0.2, 0.6}} {
		res, err := optimize.Minimize(optimize.Problem{Func: loss}, x0, &optimize.Settings{
			Converger: &optimize.FunctionConverge{Absolute: 1e-12, Relative: 1e-9, Iterations: 200},
		}, &optimize.NelderMead{})
		if err == nil && res.F < bestLoss {
			best, bestLoss = res.X, res.F
		}
	}
	set(best)
	return pm, nil
}

func clampShare(x float64) float64 { return math.Max(0, math.Min(3, x)) }

// A PowerScore is a power fit's error on points it was or was not fitted on.
type PowerScore struct {
	Points         int
	Median, Max    float64 // |predicted/measured − 1|
	MeanSigned     float64 // bias
	HeldOutMedian  float64 // leave-one-group-out
	HeldOutMax     float64
	HeldOutGroups  int
	HeldOutSigned  float64
	HeldOutByGroup map[string]float64 // median |error| per group held out
}

// ScorePower fits on all of pts (the in-sample errors) and, leaving each
// group out in turn, fits on the rest and scores the group left out.
func ScorePower(idle, capW model.Watts, pts []PowerPoint) (model.PowerParams, PowerScore, error) {
	pm, err := FitPower(idle, capW, pts)
	if err != nil {
		return pm, PowerScore{}, err
	}
	var sc PowerScore
	sc.Points = len(pts)
	in := make([]float64, len(pts))
	for i, pt := range pts {
		in[i] = float64(PredictPower(pm, pt)/pt.Measured) - 1
	}
	sc.Median, sc.Max, sc.MeanSigned = absMedian(in), absMax(in), stat.Mean(in, nil)

	groups := map[string]bool{}
	for _, pt := range pts {
		groups[pt.Group] = true
	}
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	sort.Strings(names)
	sc.HeldOutByGroup = map[string]float64{}
	var held []float64
	for _, g := range names {
		var tr, te []PowerPoint
		for _, pt := range pts {
			if pt.Group == g {
				te = append(te, pt)
			} else {
				tr = append(tr, pt)
			}
		}
		if len(tr) < 3 {
			continue
		}
		fit, err := FitPower(idle, capW, tr)
		if err != nil {
			return pm, sc, err
		}
		var ge []float64
		for _, pt := range te {
			ge = append(ge, float64(PredictPower(fit, pt)/pt.Measured)-1)
		}
		sc.HeldOutByGroup[g] = absMedian(ge)
		held = append(held, ge...)
		sc.HeldOutGroups++
	}
	if len(held) > 0 {
		sc.HeldOutMedian, sc.HeldOutMax, sc.HeldOutSigned = absMedian(held), absMax(held), stat.Mean(held, nil)
	}
	return pm, sc, nil
}

func absMedian(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	a := make([]float64, len(xs))
	for i, x := range xs {
		a[i] = math.Abs(x)
	}
	sort.Float64s(a)
	if n := len(a); n%2 == 1 {
		return a[n/2]
	} else {
		return (a[n/2-1] + a[n/2]) / 2
	}
}

func absMax(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

// WaitPoint is a measured step of a device in use that waits part of the
// time between kernels: Kernels is the energy its kernels draw (the power
// model's), Wait the time it waits, Measured the energy measured over the
// step. All three are for the same step and the same devices.
type WaitPoint struct {
	Kernels, Measured model.Joules
	Wait              model.Seconds
}

// FitWait returns the wait share w (model.PowerParams.Wait) that makes
// Kernels + Wait·(idle + w·(cap − idle)) closest to Measured: the share
// in [0, 1], to 0.001, with the smallest median relative |error|. The
// median, not least squares, so that the few steps whose GPU work the
// cost model misprices do not pull the share. It is an error when no
// point waits or a measurement is not positive.
func FitWait(idle, capW model.Watts, pts []WaitPoint) (float64, error) {
	waits := false
	for _, p := range pts {
		if !(p.Measured > 0) {
			return 0, fmt.Errorf("a measured energy of %v", p.Measured)
		}
		waits = waits || p.Wait > 0
	}
	if !waits || !(capW > idle) {
		return 0, errors.New("no point waits between kernels, or the cap is not above idle: the wait share cannot be fitted")
	}
	errs := make([]float64, len(pts))
	best, bestW := math.Inf(1), 0.0
	for i := 0; i <= 1000; i++ {
		w := float64(i) / 1000
		pw := float64(idle) + w*float64(capW-idle)
		for j, p := range pts {
			errs[j] = math.Abs((float64(p.Kernels)+float64(p.Wait)*pw)/float64(p.Measured) - 1)
		}
		if m := absMedian(errs); m < best {
			best, bestW = m, w
		}
	}
	return bestW, nil
}
