package calibrate

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// TestTransfer_sameChipResiduals measures whether a what-if of a
// calibrated device should keep that device's residual tables on the
// kernels it carries (hardware.Derive does; hardware.Transfer, to
// another device, does not). The H200 and the H100 are one chip (GH100:
// the same 132 SMs, clock and peaks) with other memory, so the H100 is a
// what-if of the H200 with the H100's bandwidth: Derive(H200,
// memory.bandwidth=3.35TB/s), every kernel carried (the bandwidth
// reaches all) with the H200's residual tables. Scored on the H100's
// measured kernels beside the transfer without them (the h200→h100 row
// of TestTransfer_crossGeneration), per class. The residual tables
// correct for the library's choice of kernel and tile over shape, which
// a bandwidth change leaves as it is: kept, they must not make any class
// worse than dropping them does. The default run scores a 1-in-16
// sample; -exhaustive every row.
func TestTransfer_sameChipResiduals(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 100,000 measurements; skipped with -short")
	}
	v := filepath.Join(validationDir(t), "aiconfigurator")
	stride := 16
	if *exhaustive {
		stride = 1
	}
	h200 := catalogDevice(t, "h200")
	h100 := catalogDevice(t, "h100")
	whatIf, err := hardware.Derive(h200, []string{"memory.bandwidth=" + h100.Memory.Bandwidth.String()})
	if err != nil {
		t.Fatal(err)
	}
	if whatIf.Memory.Bandwidth != h100.Memory.Bandwidth || whatIf.Kept != nil || whatIf.TransferredFrom != h200.Name {
		t.Fatalf("what-if %s: bandwidth %v, want the H100's %v and every kernel carried from the H200", whatIf.Name, whatIf.Memory.Bandwidth, h100.Memory.Bandwidth)
	}
	transferred := catalogDeviceFile(t, "h100-sxm")
	hardware.Transfer(transferred, h200)
	names := strings.Join(append([]string{h100.Name}, h100.Aliases...), "|")
	var all []Measurement
	for _, f := range []string{"h100_sxm_gemm_trtllm_1.3.0rc20_gemm_perf.csv", "h100_sxm_attention_trtllm_1.3.0rc20_context_attention_perf.csv", "h100_sxm_attention_trtllm_1.3.0rc20_generation_attention_perf.csv", "h100_sxm_moe_trtllm_1.3.0rc20_moe_perf.csv"} {
		ms, _, err := ReadFile(filepath.Join(v, f), FormatAuto, names)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, ms...)
	}
	for _, c := range []struct {
		kernel string
		d      model.DType
	}{{"gemm", model.BF16}, {"gemm", model.FP8}, {KernelAttentionPrefill, model.Invalid}, {KernelAttentionDecode, model.Invalid}, {KernelMoE, model.Invalid}} {
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
		name := c.kernel
		if c.d != model.Invalid {
			name += "/" + c.d.String()
		}
		if len(ms) == 0 {
			t.Errorf("%s: no H100 measurements", name)
			continue
		}
		kept, dropped := scoreAll(whatIf, ms), scoreAll(transferred, ms)
		t.Logf("H200 → H100, %s n=%d: residual tables kept (what-if) median %.1f%% p90 %.1f%% bias %+.1f%% | dropped (transfer) %.1f%% / %.1f%% bias %+.1f%%",
			name, kept.N, 100*kept.Median, 100*kept.P90, 100*kept.Bias, 100*dropped.Median, 100*dropped.P90, 100*dropped.Bias)
		if kept.Median > dropped.Median+0.005 || kept.P90 > dropped.P90+0.01 {
			t.Errorf("%s: with the H200's residual tables %.1f%% / %.1f%%, without %.1f%% / %.1f%%: keeping them makes the what-if worse", name, 100*kept.Median, 100*kept.P90, 100*dropped.Median, 100*dropped.P90)
		}
	}
}
