package calibrate

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// FuzzFitLoads fits GEMM and streaming measurements whose times the
// fuzzer scales, perturbs and corrupts (times of 1e300 s, 1e-300 s, NaN,
// noise of any size), and checks what issue 17 found broken: Fit either
// refuses the data with a message, or returns a device that writes, loads
// back, and prices every kernel at a finite, non-negative time inside a
// finite, non-negative interval.
//
//	go test -fuzz=FuzzFitLoads ./calibrate
func FuzzFitLoads(f *testing.F) {
	f.Add(uint64(1), 0.0, 0.02, uint8(1), 0.0)
	f.Add(uint64(1), 0.0, 0.02, uint8(8), 0.0)   // with the residual table
	f.Add(uint64(2), 690.0, 0.0, uint8(3), 0.0)  // every time ×e^690 ≈ 1e300
	f.Add(uint64(3), -690.0, 0.0, uint8(3), 0.0) // every time ×1e-300
	f.Add(uint64(4), 0.0, 20.0, uint8(9), 0.0)   // noise of e^±20
	f.Add(uint64(5), 0.0, 0.05, uint8(1), 1e300) // one row at 1e300 s
	f.Add(uint64(6), 5.0, 1.0, uint8(40), -1.0)
	f.Add(uint64(7), 0.0, 1.5, uint8(5), 0.0) // noise of e^±1.5: p90 error far above 100%
	dev := testDevice()
	f.Fuzz(func(t *testing.T, seed uint64, logScale, noise float64, extra uint8, odd float64) {
		residual := extra%8 == 0
		ms := synthetic(dev, truth, minGEMMPoints+int(extra%32), 0, seed)
		p := dev.Processor()
		if residual {
			// Sizes on a grid of powers of two, as measured sweeps are:
			// random sizes put each point on an axis node of its own, a
			// table of up to 32³ nodes whose fit took 1.7 s of CPU per
			// input, past the fuzzer's 10 s limit per input at a load
			// of 20 on two cores. On the grid the table has at most
			// 15 × 9 × 9 nodes.
			for i := range ms {
				pow2 := func(x int) int { return 1 << int(math.Round(math.Log2(float64(x)))) }
				m := gemmMeasurement(model.BF16, pow2(ms[i].M), pow2(ms[i].N), pow2(ms[i].K), 1)
				m.Device, m.Line = ms[i].Device, ms[i].Line
				m.Time = gemmTime(dev, m)
				ms[i] = m
			}
		}
		for b := 1e4; b < 4e10; b *= 4 {
			m := Measurement{Device: "H100", Kernel: KernelCopy, DType: model.FP32, Bytes: model.Bytes(b), Line: len(ms) + 2}
			m.Time = p.StreamCost(0, m.Bytes, model.FP32).Time
			ms = append(ms, m)
		}
		rng := rand.New(rand.NewPCG(seed, 11))
		for i := range ms {
			ms[i].Time *= model.Seconds(math.Exp(logScale + noise*rng.NormFloat64()))
		}
		if odd != 0 {
			ms[int(extra)%len(ms)].Time = model.Seconds(odd)
		}
		// The residual table costs ten times the parameter search: one
		// input in eight fits it, so that no input runs near the fuzzer's
		// 10 s limit on a loaded machine.
		res, err := Fit(dev, ms, Options{Folds: 2, Seed: seed, MaxPoints: 40, NoResidual: !residual})
		if err != nil {
			if err.Error() == "" {
				t.Fatal("Fit failed with an empty message")
			}
			return
		}
		var b bytes.Buffer
		if err := WriteDevice(&b, res.Device, []string{"fuzz"}); err != nil {
			t.Fatalf("WriteDevice: %v", err)
		}
		d, err := hardware.Load(bytes.NewReader(b.Bytes()), "fitted.toml")
		if err != nil {
			t.Fatalf("Fit accepted the data but its device does not load: %v\n%s", err, b.String())
		}
		fp := d.Processor()
		for _, g := range []model.GEMM{{M: 1, N: 4096, K: 4096, A: model.BF16, B: model.BF16, C: model.BF16},
			{M: 8192, N: 8192, K: 8192, A: model.BF16, B: model.BF16, C: model.BF16},
			{M: 3, N: 7, K: 129, A: model.BF16, B: model.BF16, C: model.BF16}} {
			c := fp.GEMMCost(g)
			checkTime(t, "GEMM", float64(c.Time), d.Eff.GEMM[model.BF16].ErrP90)
		}
		for _, by := range []float64{0, 1, 1e6, 1e11} {
			checkTime(t, "stream", float64(fp.StreamCost(0, model.Bytes(by), model.FP32).Time), d.Eff.Memory.ErrP90)
		}
	})
}

// gemmTime is m's time on dev with the synthetic tests' parameters.
func gemmTime(dev *hardware.Device, m Measurement) model.Seconds {
	d := *dev
	d.Eff = copyEff(dev.Eff)
	d.Eff.GEMM[model.BF16] = truth
	p := d.Processor()
	return p.GEMMCost(GEMMOf(m)).Time
}

// checkTime fails on a time, or an interval [t/(1+rel), t·(1+rel)] (sim's
// band), that is negative or not finite.
func checkTime(t *testing.T, what string, tm, rel float64) {
	t.Helper()
	lo, hi := tm/(1+rel), tm*(1+rel)
	for _, v := range []float64{tm, lo, hi} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			t.Fatalf("%s time %v, interval %v–%v (err_p90 %v): want finite and non-negative", what, tm, lo, hi, rel)
		}
	}
	if rel < 0 || rel > hardware.MaxRelErr {
		t.Fatalf("%s err_p90 %v outside [0, %v]", what, rel, hardware.MaxRelErr)
	}
}

func TestFit_refusesAbsurdData(t *testing.T) {
	dev := testDevice()
	for _, tt := range []struct {
		name  string
		scale float64 // every time multiplied by it
		noise float64 // log-normal noise
		want  string
	}{
		{"times of 1e300 s", 1e300, 0, "is outside 1 ns to 1 h"},
		{"times of 1e-300 s", 1e-300, 0, "is outside 1 ns to 1 h"},
		{"noise of e^±1.5", 1, 1.5, "do not follow the cost model"},
	} {
		ms := synthetic(dev, truth, 60, tt.noise, 3)
		for i := range ms {
			ms[i].Time *= model.Seconds(tt.scale)
			ms[i].File = "noisy.csv"
		}
		_, err := Fit(dev, ms, Options{Folds: 2, MaxPoints: 40})
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tt.want)) {
			t.Errorf("%s: Fit = %v, want an error saying %q", tt.name, err, tt.want)
		}
	}
}
