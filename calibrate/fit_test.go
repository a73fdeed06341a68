package calibrate

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// testH100 is an H100 SXM (NVIDIA H100 product page: 989.5 TFLOP/s dense
// bf16, 1979 fp8, 3.35 TB/s, 132 SMs, 50 MB L2) with flat efficiencies,
// written here so that the tests do not depend on the catalog's current
// defaults.
const testH100 = `name = "H100 SXM"
vendor = "NVIDIA"
kind = "gpu"
aliases = ["h100"]
source = "NVIDIA H100 product page (test copy)"
compute_units = 132
launch_overhead = "4 us"

[peak.matrix]
bf16 = "989.5 TFLOP/s"
fp16 = "989.5 TFLOP/s"
fp8 = "1979 TFLOP/s"

[peak.vector]
fp32 = "67 TFLOP/s"

[memory]
capacity = "80 GB"
bandwidth = "3.35 TB/s"
l2 = "50 MB"

[efficiency.gemm.bf16]
compute = 0.8
memory = 0.85
source = "assumed: test defaults"

[efficiency.memory]
efficiency = 0.85
source = "assumed: test defaults"

[efficiency.attention]
compute = 0.8
memory = 0.85
source = "assumed: test defaults"
`

func testDevice() *hardware.Device {
	d, err := hardware.Load(strings.NewReader(testH100), "test-h100.toml")
	if err != nil {
		panic(err)
	}
	return d
}

// truth is the parameter set the synthetic tests draw from.
var truth = model.GEMMParams{Compute: 0.78, Memory: 0.83, Launch: 3e-6, CTAOverhead: 0.8e-6, StepFloor: 1.2e-9,
	SplitK: 2.5e-6, Overlap: 2.2, L2Factor: 1.8, Waves: model.WavesFractional}

// synthetic returns n GEMMs of random shapes timed by dev with params g,
// times perturbed by a relative noise of sd.
func synthetic(dev *hardware.Device, g model.GEMMParams, n int, sd float64, seed uint64) []Measurement {
	d := *dev
	d.Eff = copyEff(dev.Eff)
	d.Eff.GEMM[model.BF16] = g
	p := d.Processor()
	rng := rand.New(rand.NewPCG(seed, 7))
	dim := func(lo, hi float64) int { return int(math.Exp2(lo + rng.Float64()*(hi-lo))) }
	ms := make([]Measurement, n)
	for i := range ms {
		m := gemmMeasurement(model.BF16, dim(0, 14), dim(7, 15), dim(7, 15), 1)
		m.Device, m.Line = "NVIDIA H100 80GB HBM3", i+2
		m.Time = p.GEMMCost(GEMMOf(m)).Time * model.Seconds(math.Exp(sd*rng.NormFloat64()))
		ms[i] = m
	}
	return ms
}

func TestGEMMEval_matchesModel(t *testing.T) {
	// The fit's evaluator must give what model.GEMMCost gives, for both
	// wave models, fp8 and bf16, the GPU and the CPU rule, and with a
	// residual table.
	dev := testDevice()
	e := &gemmEnv{peak: 989.5e12, bw: 3.35e12, l2: 50e6, cus: 132}
	rng := rand.New(rand.NewPCG(3, 3))
	for i := 0; i < 600; i++ {
		dev.Kind, e.cpu = "gpu", i >= 400
		if e.cpu {
			dev.Kind = "cpu"
		}
		th := gemmTheta{etaC: 0.5 + 0.5*rng.Float64(), etaM: 0.5 + 0.5*rng.Float64(), t0: 1e-6 * rng.Float64() * 5,
			a: 1e-6 * rng.Float64(), tau: 3e-9 * rng.Float64(), tsplit: 5e-6 * rng.Float64(), p: 1 + 2*rng.Float64(), edge: 5e-11 * rng.Float64(),
			fractional: i%2 == 0}
		d := model.BF16
		if i%3 == 0 {
			d, th.q = model.FP8, 4*rng.Float64()
			e.peak = 1979e12
		} else {
			th.l2f = 1 + 2*rng.Float64()
			e.peak = 989.5e12
		}
		m := gemmMeasurement(d, 1+rng.IntN(9000), 16+rng.IntN(30000), 16+rng.IntN(30000), 1)
		if i%5 == 0 { // small and skinny shapes, where the granule matters
			m = gemmMeasurement(d, 1+rng.IntN(70), 1+rng.IntN(200), 1+rng.IntN(300), 1)
		}
		m.Time = 1e-3
		pt := newGEMMPoint(m)
		pt.setCands(e.cus, 1, e.cpu)
		r := &model.Residual{Log2M: []float64{0, 14}, Log2N: []float64{4, 15}, Log2K: []float64{4, 15}, Values: []float64{0.1, -0.1, 0.05, 0, 0.2, -0.2, 0.3, 0.01}}
		pt.setResidual(r)
		got := pt.predict(e, &th, r.Values)

		dd := *dev
		dd.Eff = copyEff(dev.Eff)
		gp := th.params()
		gp.Residual = r
		dd.Eff.GEMM[d] = gp
		p := dd.Processor()
		want := float64(p.GEMMCost(GEMMOf(m)).Time)
		if math.Abs(got/want-1) > 1e-12 {
			t.Fatalf("%v %d×%d×%d %+v: evaluator %v, model %v", d, m.M, m.N, m.K, th, got, want)
		}
	}
}

func TestFit_recoversSynthetic(t *testing.T) {
	// Times made by the model from known parameters, with 1% noise: the
	// fit finds parameters that predict them to within the noise, and the
	// well-determined ones (η_c, η_m, t0, p, the wave model) near their
	// true values.
	dev := testDevice()
	ms := synthetic(dev, truth, 1500, 0.01, 1)
	res, err := Fit(dev, ms, Options{Folds: 1, NoResidual: true})
	if err != nil {
		t.Fatal(err)
	}
	g := res.Device.Eff.GEMM[model.BF16]
	checks := []struct {
		name      string
		got, want float64
		tol       float64
	}{
		{"compute", g.Compute, truth.Compute, 0.03},
		{"memory", g.Memory, truth.Memory, 0.05},
		{"launch", float64(g.Launch), float64(truth.Launch), 0.15},
		{"overlap_exponent", g.Overlap, truth.Overlap, 0.25},
	}
	for _, c := range checks {
		if math.Abs(c.got/c.want-1) > c.tol {
			t.Errorf("fitted %s = %v, want %v ±%.0f%%", c.name, c.got, c.want, 100*c.tol)
		}
	}
	if g.Waves != truth.Waves {
		t.Errorf("fitted waves %q, want %q", g.Waves, truth.Waves)
	}
	if s := res.Classes[0].InSample; s.Median > 0.012 || s.P90 > 0.03 {
		t.Errorf("in-sample |error| median %.3f p90 %.3f, want ≤ 0.012, 0.03 (1%% noise)", s.Median, s.P90)
	}
}

func TestFit_residualAndFolds(t *testing.T) {
	// A shape-dependent bias the analytical model cannot follow (a
	// kernel-choice step at n ≥ 4096): the residual table takes it out,
	// and the held-out error stays near the in-sample one.
	dev := testDevice()
	ms := synthetic(dev, truth, 3000, 0.005, 2)
	for i := range ms {
		if ms[i].N >= 4096 {
			ms[i].Time *= 1.2
		}
	}
	plain, err := Fit(dev, ms, Options{Folds: 1, NoResidual: true})
	if err != nil {
		t.Fatal(err)
	}
	with, err := Fit(dev, ms, Options{Folds: 3})
	if err != nil {
		t.Fatal(err)
	}
	p, w := plain.Classes[0], with.Classes[0]
	if !(w.InSample.Median < p.InSample.Median/2) {
		t.Errorf("residual table: in-sample median %.3f, without %.3f: want less than half", w.InSample.Median, p.InSample.Median)
	}
	if w.HeldOut.N != len(ms) || w.HeldOut.Median > 2*w.InSample.Median+0.01 {
		t.Errorf("held out: %+v against in-sample %+v", w.HeldOut, w.InSample)
	}
	if g := with.Device.Eff.GEMM[model.BF16]; !g.Residual.Valid() || g.Points != len(ms) || g.ErrMedian != round4(w.HeldOut.Median) {
		t.Errorf("fitted params lack their table or provenance: points %d err %v", g.Points, g.ErrMedian)
	}
}

func TestFit_tooFewPoints(t *testing.T) {
	dev := testDevice()
	ms := synthetic(dev, truth, 10, 0, 3)
	res, err := Fit(dev, ms, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Device.Eff.GEMM[model.BF16]; got.Compute != 0.8 || got.Residual != nil {
		t.Errorf("with 10 points the parameters changed: %+v", got)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].Error(), "10 points (want at least 30)") {
		t.Errorf("warnings = %v, want one about too few points", res.Warnings)
	}
	if res.Classes[0].Fitted {
		t.Error("class marked fitted")
	}
}

func TestFit_stream(t *testing.T) {
	// Streaming kernels timed with η 0.9 and launch 3 µs.
	dev := testDevice()
	want := model.MemoryParams{Efficiency: 0.9, Launch: 3e-6}
	d := *dev
	d.Eff.Memory = want
	p := d.Processor()
	var ms []Measurement
	for b := 1e4; b < 4e10; b *= 1.7 {
		m := Measurement{Device: "H100", Kernel: KernelCopy, DType: model.FP32, Bytes: model.Bytes(b)}
		m.Time = p.StreamCost(0, m.Bytes, model.FP32).Time
		ms = append(ms, m)
	}
	res, err := Fit(dev, ms, Options{Folds: 3})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Device.Eff.Memory
	if math.Abs(got.Efficiency/want.Efficiency-1) > 0.01 || got.Half != 0 || math.Abs(float64(got.Launch/want.Launch)-1) > 0.02 {
		t.Errorf("fitted %+v, want %+v", got, want)
	}
	if c := res.Classes[0]; c.HeldOut.Median > 0.01 {
		t.Errorf("held-out median %.4f, want ≤ 1%%", c.HeldOut.Median)
	}
}

func TestWriteDevice_roundTrip(t *testing.T) {
	// A fitted device written and read back by the hardware loader gives
	// the same predictions.
	dev := testDevice()
	ms := synthetic(dev, truth, 300, 0.02, 4)
	res, err := Fit(dev, ms, Options{Folds: 1})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "h100-calibrated.toml")
	if err := WriteDeviceFile(path, res.Device, []string{"test"}); err != nil {
		t.Fatal(err)
	}
	back, err := hardware.LoadFile(path)
	if err != nil {
		data, _ := os.ReadFile(path)
		t.Fatalf("%v\n%s", err, data)
	}
	p1, p2 := res.Device.Processor(), back.Processor()
	for _, m := range ms[:50] {
		a, b := p1.GEMMCost(GEMMOf(m)).Time, p2.GEMMCost(GEMMOf(m)).Time
		if a != b {
			t.Fatalf("%d×%d×%d: %v before writing, %v read back", m.M, m.N, m.K, a, b)
		}
	}
	// Writing is deterministic.
	var b1, b2 bytes.Buffer
	WriteDevice(&b1, res.Device, nil)
	WriteDevice(&b2, res.Device, nil)
	if b1.String() != b2.String() {
		t.Error("two writes differ")
	}
	// An unwritable path leaves nothing behind.
	if err := WriteDeviceFile(filepath.Join(t.TempDir(), "missing", "x.toml"), res.Device, nil); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}

func ExampleFit() {
	dev := testDevice()
	ms := synthetic(dev, truth, 1000, 0, 5)
	res, err := Fit(dev, ms, Options{Folds: 1, NoResidual: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := res.Classes[0]
	fmt.Printf("%s: %d points, in-sample |error| median below 1%%: %v\n", c.Name(), c.Points, c.InSample.Median < 0.01)
	// Output:
	// gemm/bf16: 1000 points, in-sample |error| median below 1%: true
}

func BenchmarkFit(b *testing.B) {
	// 5,000 GEMMs, 5-fold cross-validated, with the residual table: what
	// `calibrate fit` does per compute type.
	dev := testDevice()
	ms := synthetic(dev, truth, 5000, 0.02, 6)
	for _, bc := range []struct {
		name string
		opt  Options
	}{{"cv5", Options{}}, {"nocv", Options{Folds: 1}}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Fit(dev, ms, bc.opt); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(runtime.NumCPU()), "cpus")
		})
	}
}

func TestFit_residualLeftOutOnNoise(t *testing.T) {
	// Times that are the model's own plus noise leave the residual table
	// nothing to learn: its 3-fold check on the training points leaves it
	// out rather than fitting the noise.
	dev := testDevice()
	ms := synthetic(dev, truth, 400, 0.02, 5)
	res, err := Fit(dev, ms, Options{Folds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if g := res.Device.Eff.GEMM[model.BF16]; g.Residual != nil {
		t.Errorf("residual table of %d values fitted to noise", len(g.Residual.Values))
	}
}
