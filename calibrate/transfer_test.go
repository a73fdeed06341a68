package calibrate

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// TestTransfer_crossGeneration is the experiment that measures how far
// efficiencies carry to a device nobody measured (hardware/transfer.go):
// fitted on one generation, predict another from its datasheet alone.
//
//   - A100 → H100: the catalog's A100 fit, transferred to the hand-written
//     H100 file, scored on H100's measured bf16 GEMMs and attention;
//   - H100 and H200 → B200: the nearest of the two (NearestCalibrated),
//     transferred to the hand-written B200 file, scored on B200's.
//
// Each is set beside the plain roofline (max(F/P, B/W), no overheads) and
// the hand-written fixed fractions on the same rows. The default run
// scores a 1-in-16 sample; -exhaustive every row.
func TestTransfer_crossGeneration(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 200,000 measurements; skipped with -short")
	}
	v := filepath.Join(validationDir(t), "aiconfigurator")
	stride := 16
	if *exhaustive {
		stride = 1
	}
	type class struct {
		kernel string
		d      model.DType
		bound  float64 // on the transferred median |error|; 0 for report only
	}
	tests := []struct {
		name, target string
		bases        []string
		files        []string
		classes      []class
	}{
		{"a100→h100", "h100-sxm", []string{"a100"},
			[]string{"h100_sxm_gemm_trtllm_1.3.0rc20_gemm_perf.csv", "h100_sxm_attention_trtllm_1.3.0rc20_context_attention_perf.csv", "h100_sxm_attention_trtllm_1.3.0rc20_generation_attention_perf.csv"},
			// The target is a median of 15% for both. bf16 GEMMs
			// meet it (12.3%), and so does prefill attention: 11.8% / 22.0%
			// (every row, 2026-11-26) since the Ampere kernel's operand
			// reads are priced against the shared memory (each of its
			// warps reads the whole key and value tile: at most 0.80 of an
			// A100's tensor peak; Hopper's wgmma reads it once a
			// warpgroup), 12.8% / 26.7% before; that since each
			// generation's prefill kernel has its own shape (TensorRT-LLM's
			// Ampere kernel: 64-query CTAs, two resident on an A100 SM;
			// its Hopper kernel: persistent, one CTA a unit, 128-query
			// tiles), 18.8% / 33.2% before; 22.5% / 44.4% before the
			// A100's softmax was fixed at its special-function rate and
			// the wave overhead carried as a latency. Split by type (the
			// A100 has no fp8 attention to carry): bf16 11.2% / 21.4%
			// (15.8% / 30.2% before), fp8 12.5% / 22.6% (9.9% / 20.5%);
			// by prompt length, TestTransfer_prefillBands.
			[]class{{"gemm", model.BF16, 0.15}, {KernelAttentionPrefill, model.Invalid, 0.15}, {KernelAttentionPrefill, model.BF16, 0}, {KernelAttentionPrefill, model.FP8, 0}, {KernelAttentionDecode, model.Invalid, 0}}},
		{"h200→h100", "h100-sxm", []string{"h200"},
			[]string{"h100_sxm_gemm_trtllm_1.3.0rc20_gemm_perf.csv", "h100_sxm_attention_trtllm_1.3.0rc20_context_attention_perf.csv", "h100_sxm_attention_trtllm_1.3.0rc20_generation_attention_perf.csv"},
			[]class{{"gemm", model.BF16, 0}, {"gemm", model.FP8, 0}, {KernelAttentionPrefill, model.Invalid, 0}, {KernelAttentionDecode, model.Invalid, 0}}},
		{"h100+h200→b200", "b200", []string{"h100", "h200"},
			[]string{"b200_sxm_gemm_trtllm_1.3.0rc20_gemm_perf.csv", "b200_sxm_attention_trtllm_1.3.0rc20_context_attention_perf.csv", "b200_sxm_attention_trtllm_1.3.0rc20_generation_attention_perf.csv"},
			[]class{{"gemm", model.BF16, 0.15}, {"gemm", model.FP8, 0}, {KernelAttentionPrefill, model.Invalid, 0.15}, {KernelAttentionDecode, model.Invalid, 0}}},
		// The MoE and MLA kernel classes on a device held out entirely:
		// fitted on H100 and H200 (the nearest carried by its
		// datasheet), scored on the B200's tables; and A100 → H100.
		{"h100+h200→b200 moe/mla", "b200", []string{"h100", "h200"},
			[]string{"b200_sxm_mla_trtllm_1.3.0rc20_context_mla_perf.csv", "b200_sxm_mla_trtllm_1.3.0rc20_generation_mla_perf.csv", "b200_sxm_moe_trtllm_1.3.0rc20_moe_perf.csv"},
			[]class{{KernelMLAPrefill, model.Invalid, 0}, {KernelMLADecode, model.Invalid, 0}, {KernelMoE, model.Invalid, 0}}},
		{"a100→h100 moe/mla", "h100-sxm", []string{"a100"},
			[]string{"h100_sxm_mla_trtllm_1.3.0rc20_context_mla_perf.csv", "h100_sxm_mla_trtllm_1.3.0rc20_generation_mla_perf.csv", "h100_sxm_moe_trtllm_1.3.0rc20_moe_perf.csv"},
			[]class{{KernelMLAPrefill, model.Invalid, 0}, {KernelMLADecode, model.Invalid, 0}, {KernelMoE, model.Invalid, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := catalogDeviceFile(t, tt.target)
			fixed := catalogDeviceFile(t, tt.target)
			var bases []*hardware.Device
			for _, b := range tt.bases {
				bases = append(bases, catalogDevice(t, b))
			}
			base := hardware.NearestCalibrated(target, bases)
			if base == nil {
				t.Fatalf("no calibrated device of %s's family among %v", target.Name, tt.bases)
			}
			hardware.Transfer(target, base)
			plain := plainRoofline(catalogDeviceFile(t, tt.target))
			names := strings.Join(append([]string{target.Name}, target.Aliases...), "|")
			var all []Measurement
			for _, f := range tt.files {
				ms, _, err := ReadFile(filepath.Join(v, f), FormatAuto, names)
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, ms...)
			}
			for _, c := range tt.classes {
				var ms []Measurement
				n := 0
				for _, m := range all {
					if classOf(m) == c.kernel && (c.d == model.Invalid || m.DType == c.d) {
						if n%stride == 0 {
							ms = append(ms, m)
						}
						n++
					}
				}
				tr, pl, fx := scoreAll(target, ms), scoreAll(plain, ms), scoreAll(fixed, ms)
				name := c.kernel
				if c.d != model.Invalid {
					name += "/" + c.d.String()
				}
				t.Logf("%s from %s, %s n=%d: transferred median %.1f%% p90 %.1f%% bias %+.1f%% | plain roofline %.1f%% / %.1f%% | fixed fractions %.1f%% / %.1f%%",
					tt.name, base.Name, name, tr.N, 100*tr.Median, 100*tr.P90, 100*tr.Bias, 100*pl.Median, 100*pl.P90, 100*fx.Median, 100*fx.P90)
				if c.bound > 0 && tr.Median > c.bound {
					t.Errorf("%s: transferred median %.1f%%, want ≤ %.0f%%", name, 100*tr.Median, 100*c.bound)
				}
				// The band every output of a transferred device states
				// must hold what this experiment measures.
				// (A split of a class by type reports; the band is the
				// whole class's.)
				bands := hardware.TransferBands(target, base)
				if b, ok := bands[c.kernel]; ok && (c.kernel == "gemm" || c.d == model.Invalid) && (tr.Median > b.Median+bandSlack || tr.P90 > b.P90+bandSlack) {
					t.Errorf("%s: transferred %.1f%% / %.1f%% exceeds the band hardware.TransferBands states (%.0f%% / %.0f%%)", name, 100*tr.Median, 100*tr.P90, 100*b.Median, 100*b.P90)
				}
			}
		})
	}
}

// bandSlack allows the sampled run's figures to stray from the full
// run's, which the bands are.
const bandSlack = 0.02

// scoreAll returns the errors of dev's model on ms.
func scoreAll(dev *hardware.Device, ms []Measurement) Stats { return scoreClass(dev, ms) }

// plainRoofline returns d with every efficiency 1 and no overheads: the
// plain roofline max(F/P, B/W).
func plainRoofline(d *hardware.Device) *hardware.Device {
	d.Launch = 0
	g := map[model.DType]model.GEMMParams{}
	for t := range d.Eff.GEMM {
		g[t] = model.GEMMParams{Compute: 1, Memory: 1, Source: "plain roofline"}
	}
	d.Eff.GEMM = g
	d.Eff.Attention = model.AttentionParams{Compute: 1, Memory: 1, Source: "plain roofline"}
	d.Eff.MLA = model.AttentionParams{Compute: 1, Memory: 1, Source: "plain roofline"}
	d.Eff.MoE = model.MoEParams{Compute: 1, Memory: 1, Source: "plain roofline"}
	return d
}
