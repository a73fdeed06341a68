package sim_test

// Metamorphic and invariant tests: properties that must hold whatever the
// calibration, over the catalog's kinds of model (dense, MoE, MLA,
// sliding-window, SSM and hybrid) and device (calibrated, datasheet-only,
// what-if). Each compares two runs that differ in one input whose effect
// has a known sign, or checks a bookkeeping identity of one run.

import (
	"fmt"
	"math"
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
	_, hi := pricedPair(t, base, n, sets...)
	return hi
}

// pricedPair returns base's what-if with sets (hi) and base itself (lo),
// on systems of n devices. The what-if's kernels that the change reaches
// carry base's calibration with its residual tables (hardware.Derive),
// so the difference between the two is the change's alone.
func pricedPair(t testing.TB, base string, n int, sets ...string) (lo, hi *hardware.System) {
	t.Helper()
	b, err := hardware.Resolve(base)
	if err != nil {
		t.Fatal(err)
	}
	h, err := hardware.Derive(b, sets)
	if err != nil {
		t.Fatalf("%s %v: %v", base, sets, err)
	}
	return systemOf(t, b, n), systemOf(t, h, n)
}

// systemOf returns a system of n devices d.
func systemOf(t testing.TB, d *hardware.Device, n int) *hardware.System {
	t.Helper()
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

// runFaster runs sc on lo and on hi (the better device) and checks that
// hi is nowhere slower. A run that fails on hi is an error; one that fails
// on lo is an error too unless loMayFail (a layout the lesser device need
// not hold), when it is logged and the pair skipped.
func runFaster(t *testing.T, what string, lo, hi *hardware.System, w sim.Workload, sc sim.Scenario, loMayFail bool) {
	t.Helper()
	a, err := sim.Run(lo, w, sc)
	if err != nil {
		if loMayFail {
			t.Logf("%s: %v", what, err)
		} else {
			t.Errorf("%s: %v", what, err)
		}
		return
	}
	b, err := sim.Run(hi, w, sc)
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	checkFaster(t, what, a, b)
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
// E2E or training step. The lesser device is the base priced as the
// what-if is (pricedPair: a what-if drops the base's residual tables
// for the kernels its change reaches, so the base as calibrated is not
// comparable with it).
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
			name string
			hi   []string
		}
		knobs := []knob{
			{"bandwidth", []string{fmt.Sprintf("memory.bandwidth=%gB/s", 1.5*bw)}},
			{"bf16 peak", []string{fmt.Sprintf("peak.matrix.bf16=%gFLOP/s", 1.5*pk)}},
		}
		if vec > 0 {
			knobs = append(knobs, knob{"bf16 vector", []string{fmt.Sprintf("peak.vector.bf16=%gFLOP/s", 1.5*vec)}})
		}
		for _, m := range metaModels {
			w := metaModel(t, m.name)
			for _, k := range knobs {
				lo, hi := pricedPair(t, dev, m.tp, k.hi...)
				for _, sc := range inferScenarios(m.tp) {
					what := fmt.Sprintf("%s %s ×1.5 %s %s", dev, k.name, m.name, scName(sc))
					runFaster(t, what, lo, hi, w, sc, false)
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
				runFaster(t, what, lo, hi, w, s, false)
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
