package calibrate

import (
	"path/filepath"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestMoE_mixtralGrowth: the measured Mixtral-8x7B MoE module (hidden
// 4096, experts of 14336, top-2 of 8, on one rank of moe_tp 2;
// aiconfigurator's TensorRT-LLM tables) grows from 1 to 4 tokens by less
// than the experts it reads, because the module has a fixed cost (the
// top-k, permute and finalize kernels and each grouped GEMM's launch) that
// does not grow with them. The calibrated device must follow the measured
// growth, each row priced with the rows and experts its rank ran
// (routing.go): within 10% on the H100, whose rows the collector revision
// routing.go rebuilds (1.3.0rc20) made; within 20% on the A100, whose rows
// an older revision (1.0.0) made, so that its power-law draws are rebuilt
// less surely (at α 1.2 the measured module grows less, ×1.86, than at
// α 1.01, ×2.01, though the rebuilt draws touch more experts). Both
// measured and modelled modules grow by less than the experts they read.
// This is why a whole decode step of Mixtral on a calibrated device grows
// less than its bytes (docs/models.md).
func TestMoE_mixtralGrowth(t *testing.T) {
	v := validationDir(t)
	for _, tt := range []struct {
		device, file string
		within       float64
	}{
		{"a100", "a100_sxm_moe_trtllm_1.0.0_moe_perf.csv", 0.20},
		{"h100", "h100_sxm_moe_trtllm_1.3.0rc20_moe_perf.csv", 0.10},
	} {
		dev := catalogDevice(t, tt.device)
		p := dev.Processor()
		ms, _, err := ReadFile(filepath.Join(v, "aiconfigurator", tt.file), FormatAuto, "")
		if err != nil {
			t.Fatal(err)
		}
		// The rows of each routing at 1 and 4 tokens.
		rows := map[string][2]*Measurement{}
		for i := range ms {
			m := &ms[i]
			if m.Kernel != KernelMoE || m.DType != model.BF16 || m.K != 4096 || m.N != 14336 || m.Experts != 8 || m.TopK != 2 || m.MoETP != 2 || m.MoEEP != 1 {
				continue
			}
			r := rows[m.Routing]
			switch m.M {
			case 1:
				r[0] = m
			case 4:
				r[1] = m
			}
			rows[m.Routing] = r
		}
		if len(rows) == 0 {
			t.Fatalf("%s: no Mixtral-8x7B rows at moe_tp 2 in %s", tt.device, tt.file)
		}
		for routing, r := range rows {
			if r[0] == nil || r[1] == nil {
				continue
			}
			measured := float64(r[1].Time) / float64(r[0].Time)
			k1, k4 := moeKernelsOf(*r[0]), moeKernelsOf(*r[1])
			t1, t4 := moeTime(&p, k1), moeTime(&p, k4)
			experts := func(draws [][]model.Kernel) (e float64) {
				for _, d := range draws {
					for _, k := range d {
						if g, ok := k.(model.GroupedGEMM); ok {
							e += g.Experts / float64(len(draws)) / 2 // two grouped GEMMs a draw
						}
					}
				}
				return e
			}
			got := t4 / t1
			t.Logf("%s %s: measured %.1f → %.1f µs (×%.3f), model %.1f → %.1f µs (×%.3f); experts read %.2f → %.2f (×%.3f)",
				tt.device, routing, 1e6*float64(r[0].Time), 1e6*float64(r[1].Time), measured, 1e6*t1, 1e6*t4, got, experts(k1), experts(k4), experts(k4)/experts(k1))
			if d := got/measured - 1; d > tt.within || d < -tt.within {
				t.Errorf("%s %s: the module grows ×%.3f from 1 to 4 tokens, measured ×%.3f (%.1f%% apart; want within %.0f%%)", tt.device, routing, got, measured, 100*d, 100*tt.within)
			}
			if e := experts(k4) / experts(k1); !(measured < e && got < e) {
				t.Errorf("%s %s: measured ×%.3f, model ×%.3f: want both below the experts' ×%.3f", tt.device, routing, measured, got, e)
			}
		}
	}
}

// TestMoE_mixtralServing: the measured Mixtral-8x7B MoE module on one
// rank holding all 8 experts (moe_tp 1, moe_ep 1, fp8; aiconfigurator's
// TensorRT-LLM tables) at the token counts of an MLPerf iteration on
// NVIDIA's engines, 1,024 to 16,384 (a running batch of up to 3,072
// decodes beside prefill chunks up to max_num_tokens 9,216), against the
// calibrated module priced with the rows and experts each routing gave
// the rank (routing.go). At these counts every expert is in use and
// takes some T·2/8 rows; the model's module costs the same at every
// routing, while the measured one is 5-12% slower under the power-law
// routings than balanced (the busiest experts' longer GEMMs), and the
// model is slower than either: at 3,072 tokens on the H200 2.03 ms
// against 1.48 (balanced) and 1.63-1.67 (power law). The grouped GEMMs
// here are compute-bound (the measured module runs at 0.74 of the fp8
// peak) and the fitted table prices them at compute_fp8 (0.74 on the
// H200) with the weights' streaming added almost in full (overlap
// exponent 1.1), a compromise over shape families whose measured
// efficiency differs (docs/hardware.md, "MoE at large token counts").
// Two-sided: the module may be priced no more than 5% faster than
// measured (then the MoE would become a source of the MLPerf Mixtral
// row's optimism, docs/mlperf.md) and no more than it is today over it,
// +50% on the H200 (now +15.7% to +47.3%) and +65% on the H100 (now
// +25.1% to +62.1%): a bound to tighten when the compute-bound regime
// is fixed, not a target.
func TestMoE_mixtralServing(t *testing.T) {
	v := validationDir(t)
	for _, dv := range []struct {
		dev  string
		over float64 // the most the module may be priced over measured
	}{{"h100", 0.65}, {"h200", 0.50}} {
		dev := catalogDevice(t, dv.dev)
		p := dev.Processor()
		ms, _, err := ReadFile(filepath.Join(v, "aiconfigurator", dv.dev+"_sxm_moe_trtllm_1.3.0rc20_moe_perf.csv"), FormatAuto, "")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for i := range ms {
			m := &ms[i]
			if m.Kernel != KernelMoE || m.DType != model.FP8 || m.K != 4096 || m.N != 14336 || m.Experts != 8 || m.TopK != 2 || m.MoETP != 1 || m.MoEEP != 1 || m.M < 1024 {
				continue
			}
			n++
			got := moeTime(&p, moeKernelsOf(*m))
			e := got/float64(m.Time) - 1
			t.Logf("%s %-15s %6d tokens: measured %7.1f µs, model %7.1f µs (%+.1f%%)", dv.dev, m.Routing, m.M, 1e6*float64(m.Time), 1e6*got, 100*e)
			if e < -0.05 {
				t.Errorf("%s %s at %d tokens: the module is priced %.1f%% faster than measured (%.1f µs against %.1f)", dv.dev, m.Routing, m.M, -100*e, 1e6*got, 1e6*float64(m.Time))
			}
			if e > dv.over {
				t.Errorf("%s %s at %d tokens: the module is priced %.1f%% over measured (%.1f µs against %.1f; want at most +%.0f%%)", dv.dev, m.Routing, m.M, 100*e, 1e6*got, 1e6*float64(m.Time), 100*dv.over)
			}
		}
		if n == 0 {
			t.Errorf("%s: no Mixtral-8x7B fp8 rows at moe_tp 1, moe_ep 1 from 1,024 tokens", dv.dev)
		}
	}
}
