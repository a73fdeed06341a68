package sim_test

// Metamorphic and invariant tests: properties that must hold whatever the
// calibration, over the catalog's kinds of model (dense, MoE, MLA,
// sliding-window, SSM and hybrid) and device (calibrated, datasheet-only,
// what-if). Each compares two runs that differ in one input whose effect
// has a known sign, or checks a bookkeeping identity of one run.

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
	"github.com/perfsim/perfsim/workloads"
)

// metaModels are one catalog model of each kind, with the tensor-parallel
// degree and weight type that make it a realistic deployment (fits is not
// required: the times are the subject).
var metaModels = []struct {
	name string
	tp   int
}{
	{"llama3-8b", 1},          // dense, GQA
	{"qwen3-30b-a3b", 1},      // MoE
	{"mixtral-8x7b", 2},       // MoE, sliding window off
	{"deepseek-v3", 8},        // MLA + MoE
	{"gemma2-9b", 1},          // sliding window, alternating
	{"mistral-7b-v0.1", 1},    // sliding window, every layer
	{"mamba2-2.7b", 1},        // SSM
	{"nemotron-h-8b", 1},      // hybrid SSM/attention
	{"qwen3-next-80b-a3b", 2}, // hybrid linear attention + MoE
}

// metaDevices are calibrated (a100, h100, h200, b200), datasheet-only
// (l40s, mi300x, tpu-v5p) devices.
var metaDevices = []string{"a100", "h100", "h200", "b200", "l40s", "mi300x"}

func metaModel(t testing.TB, name string) sim.Workload {
	t.Helper()
	m, err := workloads.Resolve(name)
	if err != nil {
		t.Fatalf("model %s: %v", name, err)
	}
	return adapter{M: m}
}

// derived returns base's what-if with sets, on a system of n devices.
func derived(t testing.TB, base string, n int, sets ...string) *hardware.System {
	t.Helper()
	return derivedBy(t, hardware.Derive, base, n, sets...)
}

// derivedBy is derived with the deriving function given (hardware.Derive
// or hardware.DeriveCarried).
func derivedBy(t testing.TB, derive func(*hardware.Device, []string) (*hardware.Device, error), base string, n int, sets ...string) *hardware.System {
	t.Helper()
	b, err := hardware.Resolve(base)
	if err != nil {
		t.Fatal(err)
	}
	d, err := derive(b, sets)
	if err != nil {
		t.Fatalf("%s %v: %v", base, sets, err)
	}
	per := min(n, max(1, d.Intra.DevicesPerNode))
	sys, err := hardware.NewSystem(d, per, (n+per-1)/per)
	if err != nil {
		t.Fatal(err)
	}
	return sys
}

// slower reports whether b is slower than a by more than a relative
// tolerance (rounding in sums of thousands of terms).
func slower(a, b model.Seconds) bool { return float64(b) > float64(a)*(1+1e-9)+1e-15 }

// inferScenarios are the inference scenarios of a monotonicity grid.
func inferScenarios(tp int) []sim.Scenario {
	var out []sim.Scenario
	for _, b := range []int{1, 32} {
		for _, in := range []int{128, 4096} {
			sc := sim.Default()
			sc.Batch, sc.Input, sc.Output, sc.TP = b, in, 32, tp
			out = append(out, sc)
		}
	}
	return out
}

func scName(sc sim.Scenario) string {
	return fmt.Sprintf("batch %d in %d out %d tp %d", sc.Batch, sc.Input, sc.Output, sc.TP)
}

// compareOps reports every op row of b slower than a's.
func compareOps(t *testing.T, what string, a, b *sim.PhaseReport) {
	t.Helper()
	if len(a.Ops) != len(b.Ops) {
		return
	}
	for i := range a.Ops {
		if a.Ops[i].Name != b.Ops[i].Name {
			continue
		}
		if slower(a.Ops[i].Time, b.Ops[i].Time) {
			t.Errorf("%s: %s op %s: %v -> %v (%+.3g%%)", what, a.Name, a.Ops[i].Name, a.Ops[i].Time, b.Ops[i].Time, 100*(float64(b.Ops[i].Time)/float64(a.Ops[i].Time)-1))
		}
	}
}

// checkFaster checks that rep b (the better device) is nowhere slower than a.
func checkFaster(t *testing.T, what string, a, b *sim.Report) {
	t.Helper()
	if a.Inference != nil {
		x, y := a.Inference, b.Inference
		for _, p := range []struct {
			n    string
			a, b model.Seconds
		}{{"TTFT", x.TTFT, y.TTFT}, {"TPOT", x.TPOT, y.TPOT}, {"E2E", x.E2E, y.E2E}} {
			if slower(p.a, p.b) {
				t.Errorf("%s: %s %v -> %v (%+.3g%%)", what, p.n, p.a, p.b, 100*(float64(p.b)/float64(p.a)-1))
			}
		}
		compareOps(t, what, &x.Prefill, &y.Prefill)
		if x.Decode != nil && y.Decode != nil {
			compareOps(t, what, x.Decode, y.Decode)
		}
	}
	if a.Training != nil {
		x, y := a.Training, b.Training
		if slower(x.StepTime, y.StepTime) {
			t.Errorf("%s: step %v -> %v (%+.3g%%)", what, x.StepTime, y.StepTime, 100*(float64(y.StepTime)/float64(x.StepTime)-1))
		}
		compareOps(t, what, &x.Forward, &y.Forward)
		compareOps(t, what, &x.Backward, &y.Backward)
	}
}

// TestMeta_moreIsNeverSlower: a device with more memory bandwidth, or
// more matrix or vector FLOP/s, is never slower on any op, TTFT, TPOT,
// E2E or training step. Both devices are what-ifs of the same base (a
// what-if that changes a kernel's numbers drops the base's residual
// tables, so the base itself is not comparable with it).
func TestMeta_moreIsNeverSlower(t *testing.T) {
	for _, dev := range metaDevices {
		base, err := hardware.Resolve(dev)
		if err != nil {
			t.Fatal(err)
		}
		bw := float64(base.Memory.Bandwidth)
		pk := float64(base.Matrix[model.BF16])
		vec := float64(base.Vector[model.BF16])
		type knob struct {
			name   string
			lo, hi []string
		}
		knobs := []knob{
			{"bandwidth", []string{fmt.Sprintf("memory.bandwidth=%gB/s", bw)}, []string{fmt.Sprintf("memory.bandwidth=%gB/s", 1.5*bw)}},
			{"bf16 peak", []string{fmt.Sprintf("peak.matrix.bf16=%gFLOP/s", pk)}, []string{fmt.Sprintf("peak.matrix.bf16=%gFLOP/s", 1.5*pk)}},
		}
		if vec > 0 {
			knobs = append(knobs, knob{"bf16 vector", []string{fmt.Sprintf("peak.vector.bf16=%gFLOP/s", vec)}, []string{fmt.Sprintf("peak.vector.bf16=%gFLOP/s", 1.5*vec)}})
		}
		for _, m := range metaModels {
			w := metaModel(t, m.name)
			for _, k := range knobs {
				lo, hi := derived(t, dev, m.tp, k.lo...), derived(t, dev, m.tp, k.hi...)
				for _, sc := range inferScenarios(m.tp) {
					what := fmt.Sprintf("%s %s ×1.5 %s %s", dev, k.name, m.name, scName(sc))
					a, err := sim.Run(lo, w, sc)
					if err != nil {
						t.Errorf("%s: %v", what, err)
						continue
					}
					b, err := sim.Run(hi, w, sc)
					if err != nil {
						t.Errorf("%s: %v", what, err)
						continue
					}
					checkFaster(t, what, a, b)
				}
			}
		}
	}
}

// TestMeta_capacityAndLinks: more memory capacity never lowers the
// largest batch or context that fits; a faster link between devices never
// slows a tensor-parallel run; and the footprint never shrinks with the
// batch or the context (MaxBatch's bisection assumes it).
func TestMeta_capacityAndLinks(t *testing.T) {
	devs := []string{"a100", "h100", "b200", "l40s", "mi300x"}
	if testing.Short() {
		devs = []string{"h100", "l40s"} // a calibrated device and a datasheet one
	}
	for _, dev := range devs {
		base, err := hardware.Resolve(dev)
		if err != nil {
			t.Fatal(err)
		}
		c := float64(base.Memory.Capacity)
		l := float64(base.Intra.Bandwidth)
		for _, m := range metaModels {
			w := metaModel(t, m.name)
			sc := sim.Default()
			sc.TP, sc.Input, sc.Output = m.tp, 1024, 256
			small := derived(t, dev, m.tp, fmt.Sprintf("memory.capacity=%gB", c))
			big := derived(t, dev, m.tp, fmt.Sprintf("memory.capacity=%gB", 1.25*c))
			b0, err0 := sim.MaxBatch(small, w, sc)
			b1, err1 := sim.MaxBatch(big, w, sc)
			if err0 != nil || err1 != nil {
				t.Errorf("%s %s max batch: %v %v", dev, m.name, err0, err1)
			} else if b1 < b0 {
				t.Errorf("%s %s: max batch %d with 1.25× the capacity, %d without", dev, m.name, b1, b0)
			}
			c0, err0 := sim.MaxContext(small, w, sc)
			c1, err1 := sim.MaxContext(big, w, sc)
			if err0 != nil || err1 != nil {
				t.Errorf("%s %s max context: %v %v", dev, m.name, err0, err1)
			} else if c1 < c0 {
				t.Errorf("%s %s: max context %d with 1.25× the capacity, %d without", dev, m.name, c1, c0)
			}
			var prev model.Bytes
			for _, b := range []int{1, 2, 3, 8, 17, 64, 256} {
				s := sc
				s.Batch = b
				f, err := sim.Footprint(small, w, s)
				if err != nil {
					t.Errorf("%s %s batch %d: %v", dev, m.name, b, err)
					break
				}
				if f.Total < prev {
					t.Errorf("%s %s: footprint %v at batch %d, %v at a smaller batch", dev, m.name, f.Total, b, prev)
				}
				prev = f.Total
			}
			if l <= 0 || m.tp == 1 && dev != "h100" {
				continue
			}
			tp := max(m.tp, 2)
			lo := derived(t, dev, tp, fmt.Sprintf("interconnect.intra.bandwidth=%gB/s", l))
			hi := derived(t, dev, tp, fmt.Sprintf("interconnect.intra.bandwidth=%gB/s", 2*l))
			for _, s := range inferScenarios(tp) {
				what := fmt.Sprintf("%s link ×2 %s %s", dev, m.name, scName(s))
				a, err := sim.Run(lo, w, s)
				if err != nil {
					t.Errorf("%s: %v", what, err)
					continue
				}
				b, err := sim.Run(hi, w, s)
				if err != nil {
					t.Errorf("%s: %v", what, err)
					continue
				}
				checkFaster(t, what, a, b)
			}
		}
	}
}

// TestMeta_longerIsNeverShorter: a longer prompt never gives a shorter
// TTFT, more output tokens never a shorter E2E, a larger batch never a
// shorter TTFT, and a larger batch at the same per-step cost shape (the
// prompts of a batch prefilled in whole chunks of the token budget)
// never fewer output tokens per second.
//
// Where these legitimately fail, the tolerance says by how much and why:
//   - calibrated devices (tol 5%): their residual tables follow measured
//     kernels, which are not monotone (aiconfigurator's A100 bf16 GEMM
//     n=16384 k=4096 takes 0.119 ms at m=96 and 0.108 ms at m=128; m=2
//     0.090 ms, m=1 0.098 ms), and TTFT inherits it;
//   - none on the analytical model (what-if and datasheet devices). It
//     had two: a prefill attention spread its work evenly over its CTAs,
//     so a query tile of one query beside full ones shortened the
//     modelled time (qwen3-30b-a3b on the MI300X: 33.72 ms at 2048
//     tokens, 33.55 ms at 2049; on the L40S 85.29 ms at 128, 85.25 ms at
//     129); and a one-token Mamba prompt was priced as a decode step's
//     state update (mamba2-2.7b on the L40S: 9.56 ms at 1 token, 9.46 ms
//     at 2).
//
// TPOT is not monotone in the batch, nor need it be: the decode attention
// kernel splits the KV cache over more CTAs when the batch leaves compute
// units idle (TensorRT-LLM's multi-block mode), and pays for the split, so
// its time jumps where the split changes; aiconfigurator measures batch 1
// slower than batch 2 (H100, 32 query and 8 KV heads, 511 tokens: 15.2 µs
// and 12.2 µs).
func TestMeta_longerIsNeverShorter(t *testing.T) {
	for _, dev := range []struct {
		name string
		tol  float64
		sys  func(t testing.TB, dev string, n int) *hardware.System
	}{
		{"a100", 0.05, mustSystem}, {"h100", 0.05, mustSystem}, {"b200", 0.05, mustSystem},
		{"a100", 1e-9, whatIf}, {"h100", 1e-9, whatIf}, {"h200", 1e-9, whatIf}, {"b200", 1e-9, whatIf},
		{"l40s", 1e-9, mustSystem}, {"mi300x", 1e-9, mustSystem},
	} {
		for _, m := range metaModels {
			w := metaModel(t, m.name)
			sys := dev.sys(t, dev.name, m.tp)
			run := func(b, in, out int) *sim.InferenceResult {
				sc := sim.Default()
				sc.Batch, sc.Input, sc.Output, sc.TP = b, in, out, m.tp
				r, err := sim.Run(sys, w, sc)
				if err != nil {
					t.Fatalf("%s %s %s: %v", dev.name, m.name, scName(sc), err)
				}
				return r.Inference
			}
			what := sys.Device.Name + " " + m.name
			shorter := func(a, b model.Seconds) bool { return float64(b) < float64(a)*(1-dev.tol) }
			var prev *sim.InferenceResult
			for _, in := range []int{1, 2, 7, 16, 100, 128, 129, 511, 512, 1000, 2048, 2049, 4096, 8192, 8193, 20000} {
				r := run(1, in, 16)
				if prev != nil && shorter(prev.TTFT, r.TTFT) {
					t.Errorf("%s: TTFT %v at %d tokens in, %v at fewer", what, r.TTFT, in, prev.TTFT)
				}
				prev = r
			}
			prev = nil
			for _, out := range []int{1, 2, 3, 63, 64, 65, 66, 100, 500} {
				r := run(4, 512, out)
				if prev != nil && shorter(prev.E2E, r.E2E) {
					t.Errorf("%s: E2E %v at %d tokens out, %v at fewer", what, r.E2E, out, prev.E2E)
				}
				prev = r
			}
			prev = nil
			for _, b := range []int{1, 2, 3, 8, 16, 17, 64, 128, 200, 256} {
				r := run(b, 512, 64)
				if prev != nil && shorter(prev.TTFT, r.TTFT) {
					t.Errorf("%s: batch %d TTFT %v; a smaller batch %v", what, b, r.TTFT, prev.TTFT)
				}
				prev = r
			}
			// 512-token prompts: 16 to a chunk of the default budget.
			prev = nil
			for _, b := range []int{1, 2, 4, 8, 16, 32, 64, 128, 256} {
				r := run(b, 512, 64)
				if prev != nil && r.OutputTokensPerSecond < prev.OutputTokensPerSecond*(1-dev.tol) {
					t.Errorf("%s: batch %d %.6g tokens/s; a smaller batch %.6g", what, b, r.OutputTokensPerSecond, prev.OutputTokensPerSecond)
				}
				prev = r
			}
		}
	}
}

// whatIf returns dev's what-if with nothing changed, its calibration
// carried as a kernel-changing what-if's is (hardware.DeriveCarried; a
// what-if that changes nothing keeps the residual tables): the analytical
// model with dev's fitted parameters and without its residual tables.
func whatIf(t testing.TB, dev string, n int) *hardware.System {
	t.Helper()
	return derivedBy(t, hardware.DeriveCarried, dev, n)
}

func mustSystem(t testing.TB, dev string, n int) *hardware.System {
	t.Helper()
	sys, _ := load(t, dev, "", n)
	return sys
}

// near reports whether a and b agree to a relative tolerance.
func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))+1e-300
}

// finiteNonNeg reports whether every value is finite and not negative.
func finiteNonNeg(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return false
		}
	}
	return true
}

// checkPhase checks a phase's bookkeeping: its rows sum to its totals,
// every row is finite and not negative, Low ≤ Time ≤ High, and no op
// beats the device's datasheet bandwidth or its peak.
func checkPhase(t *testing.T, what string, ph *sim.PhaseReport, d *hardware.Device) {
	t.Helper()
	what += " " + ph.Name
	var tm, fl, by, en float64
	for _, o := range ph.Ops {
		tm += float64(o.Time)
		fl += float64(o.FLOPs)
		by += float64(o.Bytes)
		en += float64(o.Energy)
		if !finiteNonNeg(float64(o.Time), float64(o.Low), float64(o.High), float64(o.FLOPs), float64(o.Bytes), float64(o.Energy)) {
			t.Errorf("%s: op %s has a negative or non-finite figure: %+v", what, o.Name, o)
		}
		if o.Low > o.Time*(1+1e-12) || o.High < o.Time*(1-1e-12) {
			t.Errorf("%s: op %s: band [%v, %v] does not hold its time %v", what, o.Name, o.Low, o.High, o.Time)
		}
		if o.Kind.String() == "collective" || o.Count == 0 {
			continue
		}
		// No kernel moves its bytes faster than the datasheet bandwidth
		// or computes faster than the densest peak of its type (sparse
		// peaks included, the most generous).
		if bw := float64(d.Memory.Bandwidth); bw > 0 && float64(o.Time) < float64(o.Bytes)/bw*(1-1e-9) {
			t.Errorf("%s: op %s moves %v in %v: faster than %v", what, o.Name, o.Bytes, o.Time, d.Memory.Bandwidth)
		}
		pk := math.Max(float64(d.Matrix[o.DType.Peak()]), float64(d.Vector[o.DType.Peak()]))
		pk = math.Max(pk, float64(d.Sparse[o.DType.Peak()]))
		if pk > 0 && float64(o.Time) < float64(o.FLOPs)/pk*(1-1e-9) {
			t.Errorf("%s: op %s computes %v in %v: faster than %v", what, o.Name, o.FLOPs, o.Time, model.FLOPRate(pk))
		}
	}
	if len(ph.Ops) > 0 {
		if !near(tm, float64(ph.Time), 1e-9) {
			t.Errorf("%s: op times sum to %v, the phase is %v", what, model.Seconds(tm), ph.Time)
		}
		if !near(fl, float64(ph.FLOPs), 1e-9) || !near(by, float64(ph.Bytes), 1e-9) {
			t.Errorf("%s: op FLOPs and bytes sum to %v, %v; the phase has %v, %v", what, model.FLOPs(fl), model.Bytes(by), ph.FLOPs, ph.Bytes)
		}
		if !near(en, float64(ph.Energy), 1e-9) {
			t.Errorf("%s: op energies sum to %v J, the phase %v", what, en, ph.Energy)
		}
	}
	var ct float64
	for _, c := range ph.Classes {
		ct += float64(c.Time)
	}
	if len(ph.Classes) > 0 && !near(ct, float64(ph.Time), 1e-9) {
		t.Errorf("%s: class times sum to %v, the phase is %v", what, model.Seconds(ct), ph.Time)
	}
	if ph.Low > ph.Time*(1+1e-12) || ph.High < ph.Time*(1-1e-12) || !finiteNonNeg(float64(ph.Time), float64(ph.Low), float64(ph.High), float64(ph.Wait)) {
		t.Errorf("%s: time %v band [%v, %v] wait %v", what, ph.Time, ph.Low, ph.High, ph.Wait)
	}
}

// checkReport checks a report's identities.
func checkReport(t *testing.T, what string, r *sim.Report, d *hardware.Device) {
	t.Helper()
	m := r.Memory
	if sum := m.Weights + m.KVCache + m.Activations + m.Gradients + m.Optimizer + m.Reserve; !near(float64(sum), float64(m.Total), 1e-12) {
		t.Errorf("%s: memory parts sum to %v, the total is %v", what, sum, m.Total)
	}
	if !near(float64(m.Usable-m.Total), float64(m.Headroom), 1e-12) || m.Fits != (m.Total <= m.Usable) || m.Usable > m.Capacity {
		t.Errorf("%s: memory %+v", what, m)
	}
	if !finiteNonNeg(float64(m.Weights), float64(m.KVCache), float64(m.Activations), float64(m.Gradients), float64(m.Optimizer), float64(m.Reserve)) {
		t.Errorf("%s: a negative memory part: %+v", what, m)
	}
	sc := r.Scenario
	if r.Devices != sc.TP*sc.PP*sc.DP*max(sc.CP, 1) && r.Devices != sc.TP*sc.PP*sc.DP {
		t.Errorf("%s: %d devices for TP %d PP %d DP %d", what, r.Devices, sc.TP, sc.PP, sc.DP)
	}
	var wall float64
	if in := r.Inference; in != nil {
		checkPhase(t, what, &in.Prefill, d)
		e2e := in.TTFT
		if in.Decode != nil {
			checkPhase(t, what, in.Decode, d)
			e2e += in.Decode.Time
			if !near(float64(in.TPOT)*float64(sc.Output-1), float64(in.Decode.Time), 1e-12) {
				t.Errorf("%s: TPOT %v × %d steps is not the decode's %v", what, in.TPOT, sc.Output-1, in.Decode.Time)
			}
		}
		if in.TTFT != in.Prefill.Time || !near(float64(e2e), float64(in.E2E), 1e-12) {
			t.Errorf("%s: TTFT %v E2E %v; prefill %v, TTFT + decode %v", what, in.TTFT, in.E2E, in.Prefill.Time, e2e)
		}
		if in.Decode == nil && in.TTFT > 0 && !near(in.SamplesPerSecond*float64(in.TTFT), float64(sc.DP*sc.Batch), 1e-9) && !in.LoaderBound {
			t.Errorf("%s: %.6g samples/s × TTFT %v is not the %d samples", what, in.SamplesPerSecond, in.TTFT, sc.DP*sc.Batch)
		}
		if in.Decode != nil {
			tokens := float64(sc.DP * sc.Batch * sc.Output)
			if !near(in.OutputTokensPerSecond*float64(in.E2E), tokens, 1e-12) {
				t.Errorf("%s: %.6g tokens/s × E2E %v = %.6g, want the %g tokens", what, in.OutputTokensPerSecond, in.E2E, in.OutputTokensPerSecond*float64(in.E2E), tokens)
			}
			if !near(in.OutputTokensPerSecondPerDevice*float64(r.Devices), in.OutputTokensPerSecond, 1e-12) {
				t.Errorf("%s: %.6g tokens/s per device × %d devices is not the system's %.6g", what, in.OutputTokensPerSecondPerDevice, r.Devices, in.OutputTokensPerSecond)
			}
		}
		if !(in.TTFTLow <= in.TTFT && in.TTFT <= in.TTFTHigh && in.E2ELow <= in.E2E && in.E2E <= in.E2EHigh && in.TPOTLow <= in.TPOT && in.TPOT <= in.TPOTHigh) {
			t.Errorf("%s: a band does not hold its figure: %+v", what, in)
		}
		wall = float64(in.E2E)
	}
	if tr := r.Training; tr != nil {
		checkPhase(t, what, &tr.Forward, d)
		checkPhase(t, what, &tr.Backward, d)
		if !(tr.MFU > 0 && tr.MFU <= tr.HFU && tr.HFU <= 1) {
			t.Errorf("%s: MFU %.4g HFU %.4g", what, tr.MFU, tr.HFU)
		}
		gb := sc.GlobalBatch
		if !near(tr.SamplesPerSecond*float64(tr.StepTime), float64(gb), 1e-9) {
			t.Errorf("%s: %.6g samples/s × step %v is not the global batch %d", what, tr.SamplesPerSecond, tr.StepTime, gb)
		}
		perSample := float64(sc.Seq)
		if r.Arch == sim.CNN || r.Arch == sim.Vision {
			perSample = 1 // images, as TokensPerSecond counts them
		}
		if !near(tr.TokensPerSecond, tr.SamplesPerSecond*perSample, 1e-9) {
			t.Errorf("%s: %.6g tokens/s, %.6g samples/s of %g tokens", what, tr.TokensPerSecond, tr.SamplesPerSecond, perSample)
		}
		if b := tr.Breakdown; b != nil && !near(float64(b.Total()), float64(tr.StepTime), 1e-9) {
			t.Errorf("%s: the breakdown sums to %v, the step is %v: %+v", what, b.Total(), tr.StepTime, *b)
		}
		wall = float64(tr.StepTime)
	}
	if e := r.Energy; e != nil {
		n := float64(e.Devices)
		if e.Devices != r.Devices || !near(float64(e.Wall), wall, 1e-12) {
			t.Errorf("%s: energy over %d devices and %v, the run %d and %v", what, e.Devices, e.Wall, r.Devices, model.Seconds(wall))
		}
		if !near(float64(e.Kernels+e.Gaps), float64(e.GPU), 1e-12) {
			t.Errorf("%s: kernels %v J + gaps %v J is not the GPU's %v J", what, e.Kernels, e.Gaps, e.GPU)
		}
		lo, hi := float64(e.Idle)*n*wall, float64(e.Limit)*n*wall
		if float64(e.GPU) < lo*(1-1e-9) || float64(e.GPU) > hi*(1+1e-9) {
			t.Errorf("%s: GPU energy %v J outside idle × time %.6g J and the limit × time %.6g J", what, e.GPU, lo, hi)
		}
		if !near(float64(e.AveragePower)*n*wall, float64(e.GPU), 1e-9) {
			t.Errorf("%s: average power %v × %g devices × %v is not %v J", what, e.AveragePower, n, model.Seconds(wall), e.GPU)
		}
		if e.Node < e.GPU {
			t.Errorf("%s: node energy %v J below the GPUs' %v J", what, e.Node, e.GPU)
		}
		if in := r.Inference; in != nil && in.Decode != nil && e.Gaps == 0 {
			// Per-token figures times their tokens make the whole.
			seqs := float64(sc.DP * sc.Batch)
			pre, dec := float64(e.PrefillPerToken)*seqs*float64(sc.Input), float64(e.DecodePerToken)*seqs*float64(sc.Output-1)
			if !near(pre+dec, float64(e.GPU), 1e-9) || !near(float64(e.PerOutputToken)*seqs*float64(sc.Output), float64(e.GPU), 1e-9) {
				t.Errorf("%s: %v J per input token and %v J per output token after the first make %.6g J, %v J per output token %.6g J; the GPUs drew %v J",
					what, e.PrefillPerToken, e.DecodePerToken, pre+dec, e.PerOutputToken, float64(e.PerOutputToken)*seqs*float64(sc.Output), e.GPU)
			}
		}
	}
}

// TestMeta_conservation: over a grid of models, devices and scenarios
// (inference and training, TP, PP and DP), every report's parts sum to its
// totals, no figure is negative or non-finite, no op beats the
// datasheet, and MFU ≤ HFU ≤ 1.
func TestMeta_conservation(t *testing.T) {
	devs := []struct {
		name string
		sets []string
	}{{"a100", nil}, {"h100", nil}, {"h200", nil}, {"b200", nil}, {"l40s", nil}, {"mi300x", nil}, {"tpu-v5p", nil}, {"h100", []string{"memory.bandwidth=8TB/s"}}}
	checked, refused := 0, 0
	for _, dv := range devs {
		for _, m := range metaModels {
			w := metaModel(t, m.name)
			for _, sc := range []sim.Scenario{
				func() sim.Scenario { s := sim.Default(); s.TP = m.tp; return s }(),
				func() sim.Scenario {
					s := sim.Default()
					s.TP, s.Batch, s.Input, s.Output = m.tp, 16, 9000, 300
					return s
				}(),
				func() sim.Scenario { s := sim.Default(); s.TP, s.PP, s.DP, s.Batch = m.tp, 2, 2, 4; return s }(),
				func() sim.Scenario {
					s := sim.Default()
					s.TP, s.Batch, s.Output, s.Exec = m.tp, 2, 17, sim.ExecEager
					return s
				}(),
				func() sim.Scenario {
					s := sim.Default()
					s.Mode, s.TP, s.DP, s.Batch, s.Seq, s.GlobalBatch, s.Recompute = sim.Training, m.tp, 2, 1, 2048, 8, sim.RecomputeSelective
					return s
				}(),
				func() sim.Scenario {
					s := sim.Default()
					s.Mode, s.TP, s.PP, s.Batch, s.Seq, s.GlobalBatch, s.Recompute = sim.Training, m.tp, 2, 1, 4096, 8, sim.RecomputeFull
					return s
				}(),
			} {
				n := sc.TP * max(sc.PP, 1) * max(sc.DP, 1)
				var sys *hardware.System
				if dv.sets != nil {
					sys = derived(t, dv.name, n, dv.sets...)
				} else {
					sys = mustSystem(t, dv.name, n)
				}
				what := fmt.Sprintf("%s %s %s %s pp %d dp %d", sys.Device.Name, m.name, sc.Mode, scName(sc), sc.PP, sc.DP)
				r, err := sim.Run(sys, w, sc)
				if err != nil {
					refused++
					t.Logf("%s: %v", what, err)
					continue
				}
				checked++
				checkReport(t, what, r, sys.Device)
			}
		}
	}
	t.Logf("%d reports checked, %d scenarios refused", checked, refused)
	if refused > checked/4 {
		t.Errorf("%d of %d scenarios refused: the grid tests too little", refused, checked+refused)
	}
}

// TestMeta_pricerEqualsRun: serving's pricer and Run price the same
// kernels, for every kind of model: a static batch's prefill iteration
// costs Run's TTFT, and its decode iterations Run's decode. Before the
// pricer kept every sequence mixer, it priced one attention op of the
// decode step for all (gemma2-9b's sliding-window and global layers,
// half of them dropped: TPOT 5% low), ran a prefill's Mamba and Gated
// DeltaNet scans as a decode step's state update per token (nemotron-h-8b
// TTFT +127%, qwen3-next-80b-a3b +49%), MLA's prefill in its absorbed
// decode form (deepseek-v3 +2.4%).
func TestMeta_pricerEqualsRun(t *testing.T) {
	for _, m := range metaModels {
		for _, dev := range []string{"h100", "l40s"} {
			w := metaModel(t, m.name)
			sys := mustSystem(t, dev, m.tp)
			sc := sim.Default()
			sc.Batch, sc.Input, sc.Output, sc.TP = 4, 700, 40, m.tp
			rep, err := sim.Run(sys, w, sc)
			if err != nil {
				t.Fatal(err)
			}
			p, err := sim.NewPricer(sys, w, sc)
			if m.name == "mamba2-2.7b" {
				// Serving a pure state-space model is refused: its
				// state is not a KV cache of tokens.
				if err == nil || !strings.Contains(err.Error(), "no attention layer") {
					t.Errorf("%s %s: %v, want a refusal", dev, m.name, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s %s: %v", dev, m.name, err)
				continue
			}
			it := sim.Iteration{Sampled: sc.Batch}
			for range sc.Batch {
				it.Prefill = append(it.Prefill, sim.Chunk{Tokens: sc.Input})
			}
			if got, want := p.Price(&it).Time, rep.Inference.TTFT; !near(float64(got), float64(want), 1e-9) {
				t.Errorf("%s %s: prefill iteration %v, Run's TTFT %v (%+.3g%%)", dev, m.name, got, want, 100*(float64(got)/float64(want)-1))
			}
			var dec model.Seconds
			it = sim.Iteration{Decode: make([]int, sc.Batch), Sampled: sc.Batch}
			for i := range sc.Output - 1 {
				for j := range it.Decode {
					it.Decode[j] = sc.Input + i
				}
				dec += p.Price(&it).Time
			}
			if want := rep.Inference.Decode.Time; !near(float64(dec), float64(want), 1e-9) {
				t.Errorf("%s %s: decode iterations %v, Run's decode %v (%+.3g%%)", dev, m.name, dec, want, 100*(float64(dec)/float64(want)-1))
			}
			// Prompts longer than the token budget: chunks at growing
			// contexts, only the last sampling a token.
			sc.Input, sc.MaxNumTokens = 3000, 1024
			rep, err = sim.Run(sys, w, sc)
			if err != nil {
				t.Fatal(err)
			}
			tot, err := sim.RunTotals(sys, w, sc)
			if err != nil {
				t.Fatal(err)
			}
			var pre model.Seconds
			for _, ch := range sim.PrefillChunks(sc.Batch, sc.Input, sc.MaxNumTokens) {
				it := sim.Iteration{}
				for range ch.Batch {
					it.Prefill = append(it.Prefill, sim.Chunk{Tokens: ch.Tokens, Context: ch.Context})
				}
				if !ch.Partial {
					it.Sampled = ch.Batch
				}
				pre += model.Seconds(ch.Repeat) * p.Price(&it).Time
			}
			if want := rep.Inference.TTFT; !near(float64(pre), float64(want), 1e-9) || !near(float64(tot.Inference.TTFT), float64(want), 1e-12) {
				t.Errorf("%s %s: a chunked prefill's iterations %v, Run's TTFT %v (%+.3g%%), RunTotals' %v", dev, m.name, pre, want, 100*(float64(pre)/float64(want)-1), tot.Inference.TTFT)
			}
		}
	}
}

// TestMeta_trainingNeverSlower: a training step under TP, PP, DP (over
// one node and two) is never slower on a device with more memory
// bandwidth, more bf16 FLOP/s, or faster links within or between nodes.
func TestMeta_trainingNeverSlower(t *testing.T) {
	type layout struct{ tp, pp, dp, ep int }
	devs := []string{"a100", "h100", "b200", "mi300x"}
	if testing.Short() {
		devs = []string{"h100", "mi300x"} // a calibrated device and a datasheet one
	}
	for _, dev := range devs {
		base, err := hardware.Resolve(dev)
		if err != nil {
			t.Fatal(err)
		}
		knobs := [][2]string{
			{fmt.Sprintf("memory.bandwidth=%gB/s", float64(base.Memory.Bandwidth)), fmt.Sprintf("memory.bandwidth=%gB/s", 1.3*float64(base.Memory.Bandwidth))},
			{fmt.Sprintf("peak.matrix.bf16=%gFLOP/s", float64(base.Matrix[model.BF16])), fmt.Sprintf("peak.matrix.bf16=%gFLOP/s", 1.3*float64(base.Matrix[model.BF16]))},
			{fmt.Sprintf("interconnect.intra.bandwidth=%gB/s", float64(base.Intra.Bandwidth)), fmt.Sprintf("interconnect.intra.bandwidth=%gB/s", 2*float64(base.Intra.Bandwidth))},
		}
		if base.Inter.Bandwidth > 0 {
			knobs = append(knobs, [2]string{fmt.Sprintf("interconnect.inter.bandwidth=%gB/s", float64(base.Inter.Bandwidth)), fmt.Sprintf("interconnect.inter.bandwidth=%gB/s", 2*float64(base.Inter.Bandwidth))})
		}
		for _, m := range []string{"llama3-8b", "qwen3-30b-a3b", "gemma2-9b", "nemotron-h-8b"} {
			w := metaModel(t, m)
			for _, l := range []layout{{2, 1, 2, 1}, {2, 2, 2, 1}, {4, 2, 2, 1}, {1, 1, 16, 1}, {2, 1, 8, 4}} {
				if l.ep > 1 && m != "qwen3-30b-a3b" {
					continue
				}
				sc := sim.Default()
				sc.Mode, sc.Seq, sc.Batch, sc.Recompute = sim.Training, 2048, 1, sim.RecomputeSelective
				sc.TP, sc.PP, sc.DP, sc.EP = l.tp, l.pp, l.dp, l.ep
				sc.GlobalBatch = 8 * l.dp
				n := l.tp * l.pp * l.dp
				for _, k := range knobs {
					lo, hi := derived(t, dev, n, k[0]), derived(t, dev, n, k[1])
					what := fmt.Sprintf("%s %s -> %s %s tp %d pp %d dp %d ep %d", dev, k[0], k[1], m, l.tp, l.pp, l.dp, l.ep)
					a, err := sim.Run(lo, w, sc)
					if err != nil {
						t.Logf("%s: %v", what, err)
						continue
					}
					b, err := sim.Run(hi, w, sc)
					if err != nil {
						t.Errorf("%s: %v", what, err)
						continue
					}
					checkFaster(t, what, a, b)
				}
			}
		}
	}
}

// TestMeta_kernelsMonotone: on the analytical model (a calibrated
// device's fitted parameters carried without their residual tables, and
// datasheet devices) a GEMM never takes less time for a larger M, N or
// K: each tile-and-split candidate's time grows with the shape, and a
// larger shape only removes split-K candidates. The calibrated residual
// tables are not monotone, nor are the measurements they follow:
// aiconfigurator's A100 bf16 GEMM 64×128×128 (m×k×n) takes 9.7 µs, and
// 3.4 to 4.5 µs at n=64 and 256, k=64 and 256, m=48 and 80, an outlier
// the A100's table reproduces (64×128×192 priced at 5.3 µs, 44% below
// it); that is logged, not failed.
//
// Attention on the analytical model has one documented exception,
// bounded here: a decode kernel splits the KV cache over the CTAs the
// batch leaves idle and pays for the split (TensorRT-LLM's multi-block
// mode), so a longer cache or a larger batch can take less time (B200, 16
// heads, 256 → 257 keys, 6.5% less; A100, 16 heads of 257 keys, batch 3
// → 4, 15% less, where the split stops). A prefill is monotone: it had
// spread its work evenly over its CTAs, so that a second query tile of
// one query halved the modelled time of the first (MI300X, 32 query
// heads, 256 → 257 tokens at batch 1: 7.87 → 6.60 µs); a CTA now takes a
// full tile's share.
func TestMeta_kernelsMonotone(t *testing.T) {
	dims := []int{1, 2, 3, 8, 16, 17, 33, 64, 100, 128, 129, 256, 257, 512, 1000, 1024, 2048, 4096, 4097, 16384}
	for _, dev := range []string{"a100", "h100", "h200", "b200", "l40s", "mi300x"} {
		for _, analytical := range []bool{true, false} {
			sys := mustSystem(t, dev, 1)
			if analytical {
				sys = whatIf(t, dev, 1)
			}
			price := func(k model.Kernel) float64 {
				r, err := sim.Kernel(sys.Device, k, true)
				if err != nil {
					return -1
				}
				return float64(r.Time)
			}
			for _, dt := range []model.DType{model.BF16, model.FP8} {
				worst := 0.0
				for _, m := range dims {
					for _, k := range []int{128, 4096, 14336} {
						for _, n := range []int{128, 1024, 28672} {
							g := model.GEMM{M: m, K: k, N: n, A: dt, B: dt, C: model.BF16}
							t0 := price(g)
							if t0 < 0 {
								continue
							}
							for _, g1 := range []model.GEMM{{M: m + 1, K: k, N: n}, {M: m, K: k + 64, N: n}, {M: m, K: k, N: n + 64}} {
								g1.A, g1.B, g1.C = dt, dt, model.BF16
								t1 := price(g1)
								if t1 >= t0 {
									continue
								}
								worst = math.Max(worst, 1-t1/t0)
								if analytical {
									t.Errorf("%s %s GEMM %d×%d×%d (m×k×n): %v, and %v at %d×%d×%d", sys.Device.Name, dt, m, k, n, model.Seconds(t0), model.Seconds(t1), g1.M, g1.K, g1.N)
								}
							}
						}
					}
				}
				if !analytical && worst > 0 {
					t.Logf("%s %s GEMM: the residual table's largest drop for a larger shape %.1f%%", sys.Device.Name, dt, 100*worst)
				}
			}
			if !analytical {
				continue
			}
			lens := []int{2, 16, 63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 512, 1000, 1024, 2048, 4096, 4097, 8192, 32768}
			for _, h := range [][2]int{{32, 8}, {64, 8}, {16, 16}, {8, 1}} {
				for _, b := range []int{1, 2, 3, 16, 17, 64, 128} {
					for i, l := range lens[:len(lens)-1] {
						for _, decode := range []bool{true, false} {
							mk := func(b, l int) model.Attention {
								a := model.Attention{Batch: b, Heads: h[0], KVHeads: h[1], HeadDim: 128, Causal: true, Fused: true, DType: model.BF16, KVDType: model.BF16, QLen: l, KVLen: l}
								if decode {
									a.QLen = 1
								}
								return a
							}
							tol := 1e-9 // none for a prefill
							if decode {
								tol = 0.16 // the decode's KV split
							}
							t0 := price(mk(b, l))
							for _, a1 := range []model.Attention{mk(b+1, l), mk(b, lens[i+1])} {
								if t1 := price(a1); t1 < t0*(1-tol) {
									t.Errorf("%s attention %+v: %v; %v at batch %d, %d keys", sys.Device.Name, mk(b, l), model.Seconds(t0), model.Seconds(t1), a1.Batch, a1.KVLen)
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestMeta_maxModelGrows: more memory, more devices to shard over, a
// smaller batch or more recomputation never lower the largest model that
// fits; and the member found fits while the next does not.
func TestMeta_maxModelGrows(t *testing.T) {
	for _, fam := range []string{"gpt3", "llama"} {
		for _, mode := range []sim.Mode{sim.Training, sim.Inference} {
			var prev float64
			for _, c := range []struct {
				capacity string
				devices  int
			}{{"40GB", 1}, {"80GB", 1}, {"96GB", 1}, {"141GB", 1}, {"141GB", 2}, {"141GB", 4}, {"192GB", 4}} {
				sys := derived(t, "h100", c.devices, "memory.capacity="+c.capacity)
				sc := sim.Default()
				sc.Mode, sc.Seq, sc.Recompute = mode, 2048, sim.RecomputeSelective
				if mode == sim.Training {
					sc.DP, sc.ZeRO = c.devices, 3
				} else {
					sc.PP = c.devices // as perfsim maxmodel splits the layers
				}
				what := fmt.Sprintf("%s %s %s × %d", fam, mode, c.capacity, c.devices)
				res, err := sim.MaxModel(sys, family(fam), sc, 1e8, 1e13)
				if err != nil {
					t.Errorf("%s: %v", what, err)
					continue
				}
				if res.Model == nil {
					t.Errorf("%s: nothing fits", what)
					continue
				}
				p := res.Model.Params()
				if p < prev*(1-1e-3) {
					t.Errorf("%s: %.4g parameters fit, %.4g with less memory or fewer devices", what, p, prev)
				}
				if !res.Memory.Fits || res.Next != nil && res.NextMemory.Fits {
					t.Errorf("%s: found fits %v; next fits %v", what, res.Memory.Fits, res.NextMemory.Fits)
				}
				prev = p
			}
		}
	}
}

// TestMeta_conservationOneShot: checkReport's identities for models
// without decode (CNN, ViT, encoders, diffusion UNet, DLRM), inference
// and training, data-parallel.
func TestMeta_conservationOneShot(t *testing.T) {
	for _, m := range []string{"resnet50", "vit-b16", "bert-large", "sdxl-unet", "dlrm-dcnv2", "t5-v1.1-xxl-encoder"} {
		for _, dev := range []string{"h100", "a100", "mi300x"} {
			for _, mode := range []sim.Mode{sim.Inference, sim.Training} {
				sys := mustSystem(t, dev, 2)
				sc := sim.Default()
				sc.Mode, sc.Batch, sc.DP, sc.Input, sc.Output, sc.GlobalBatch, sc.Seq = mode, 8, 2, 384, 1, 32, 384
				what := fmt.Sprintf("%s %s %s", sys.Device.Name, m, mode)
				r, err := sim.Run(sys, metaModel(t, m), sc)
				if err != nil {
					t.Errorf("%s: %v", what, err)
					continue
				}
				checkReport(t, what, r, sys.Device)
			}
		}
	}
}

// TestMeta_conservationLayouts: the bookkeeping of checkReport holds
// under expert parallelism (inside the TP group and across data-parallel
// attention replicas), 8- and 4-bit types, context and sequence
// parallelism, interleaved pipelines and overlapped TP collectives.
func TestMeta_conservationLayouts(t *testing.T) {
	type c struct {
		model, hw string
		sc        func(*sim.Scenario)
	}
	inf := func(tp, dp, ep int, w, a, kv model.DType) func(*sim.Scenario) {
		return func(s *sim.Scenario) {
			s.TP, s.DP, s.EP, s.Batch, s.Input, s.Output = tp, dp, ep, 8, 1500, 60
			s.Weights, s.Act, s.KV = w, a, kv
		}
	}
	train := func(tp, pp, dp, cp, ep, vs int, sp, ov bool, sched sim.Schedule) func(*sim.Scenario) {
		return func(s *sim.Scenario) {
			s.Mode, s.Seq, s.Batch = sim.Training, 4096, 1
			s.TP, s.PP, s.DP, s.CP, s.EP, s.VirtualStages, s.SP, s.TPOverlap, s.Schedule = tp, pp, dp, cp, ep, vs, sp, ov, sched
			s.GlobalBatch = 16 * dp
			s.Recompute = sim.RecomputeSelective
		}
	}
	bf, f8, i4 := model.BF16, model.FP8, model.INT4
	for _, tt := range []c{
		{"qwen3-30b-a3b", "h100", inf(2, 1, 2, bf, bf, bf)},
		{"qwen3-30b-a3b", "h100", inf(1, 4, 4, bf, bf, bf)},
		{"mixtral-8x7b", "a100", inf(2, 2, 4, bf, bf, bf)},
		{"deepseek-v3", "h200", inf(8, 1, 8, f8, f8, f8)},
		{"llama3-8b", "h100", inf(1, 1, 1, f8, f8, f8)},
		{"llama3-8b", "a100", inf(1, 1, 1, i4, bf, bf)},
		{"gemma2-9b", "b200", inf(2, 1, 1, model.FP4, model.FP8, f8)},
		{"nemotron-h-8b", "h100", inf(2, 1, 1, f8, f8, f8)},
		{"llama3-8b", "h100", train(2, 2, 2, 2, 1, 2, true, true, sim.Interleaved)},
		{"qwen3-30b-a3b", "h100", train(2, 1, 4, 1, 4, 1, true, false, sim.OneFOneB)},
		{"gemma2-9b", "b200", train(4, 2, 2, 1, 1, 1, true, false, sim.GPipe)},
		{"nemotron-h-8b", "mi300x", train(2, 2, 2, 1, 1, 1, false, false, sim.OneFOneB)},
	} {
		sc := sim.Default()
		tt.sc(&sc)
		n := max(sc.TP, 1) * max(sc.PP, 1) * max(sc.DP, 1) * max(sc.CP, 1)
		sys := mustSystem(t, tt.hw, n)
		what := fmt.Sprintf("%s %s %s tp %d pp %d dp %d cp %d ep %d %s/%s/%s", sys.Device.Name, tt.model, sc.Mode, sc.TP, sc.PP, sc.DP, sc.CP, sc.EP, sc.Weights, sc.Act, sc.KV)
		r, err := sim.Run(sys, metaModel(t, tt.model), sc)
		if err != nil {
			t.Errorf("%s: %v", what, err)
			continue
		}
		checkReport(t, what, r, sys.Device)
	}
}
