package calibrate

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

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
		return meanLoss(ms, idx, func(i int) float64 { return predict(x, i) })
	}
	train := func(idx []int, start []float64) []float64 {
		search := searchPoints(idx, opt.MaxPoints, rng)
		return minimize(func(x []float64) float64 { return loss(search, x) }, start, 1500)
	}
	x, in, held := fitScored(ms, opt, rng, []float64{logit(0.85), math.Log(5e-6)}, train, predict)
	cf.InSample, cf.HeldOut, cf.Fitted = in, held, true
	m := &dev.Eff.Memory
	set(m, x)
	m.Efficiency, m.Launch = roundSig(m.Efficiency), model.Seconds(roundSig(float64(m.Launch)))
	m.Points = len(ms)
	m.ErrMedian, m.ErrP90 = round4(cf.HeldOut.Median), round4(cf.HeldOut.P90)
	m.Source = provenance(opt, ms, cf)
	return cf, nil
}
