package calibrate

import (
	"path/filepath"
	"sort"
	"testing"
)

// TestMoE_bands scores each calibrated device's MoE table on every MoE
// module of its aiconfigurator table (the fit's own rows, so in sample;
// the fits' 5-fold held-out medians are within 0.2 points of their
// in-sample ones, calibrate/fitted/*.kernels.fit.txt) by expert type and
// token band: under 128 tokens (weight-bound), 128 to 1,023, and 1,024 or
// more (the grouped GEMMs compute-bound where the experts are wide). The
// issue's target, a median |error| ≤ 15%, must hold in every band of 100
// points or more, not only over the whole table, where the large bands
// could hide a bad one. The signed median is logged beside it: a band can
// meet the target while a family of shapes in it is far off (Mixtral's
// wide experts at 1,024 tokens or more, TestMoE_mixtralServing).
func TestMoE_bands(t *testing.T) {
	v := validationDir(t)
	for _, dv := range []struct{ dev, file string }{
		{"a100", "a100_sxm_moe_trtllm_1.0.0_moe_perf.csv"},
		{"h100", "h100_sxm_moe_trtllm_1.3.0rc20_moe_perf.csv"},
		{"h200", "h200_sxm_moe_trtllm_1.3.0rc20_moe_perf.csv"},
		{"b200", "b200_sxm_moe_trtllm_1.3.0rc20_moe_perf.csv"},
	} {
		dev := catalogDevice(t, dv.dev)
		p := dev.Processor()
		ms, _, err := ReadFile(filepath.Join(v, "aiconfigurator", dv.file), FormatAuto, "")
		if err != nil {
			t.Fatal(err)
		}
		errs := map[string][]float64{}
		for _, m := range ms {
			if m.Kernel != KernelMoE {
				continue
			}
			e := moeTime(&p, moeKernelsOf(m))/float64(m.Time) - 1
			band := "tokens < 128"
			switch {
			case m.M >= 1024:
				band = "tokens ≥ 1024"
			case m.M >= 128:
				band = "tokens 128–1023"
			}
			for _, k := range []string{"all types, all tokens", "all types, " + band, m.DType.String() + ", " + band} {
				errs[k] = append(errs[k], e)
			}
		}
		keys := make([]string, 0, len(errs))
		for k := range errs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			es := errs[k]
			s := newStats(es)
			sort.Float64s(es)
			t.Logf("%s %-26s %6d points: |error| median %5.1f%% p90 %5.1f%%; signed median %+5.1f%%", dv.dev, k, len(es), 100*s.Median, 100*s.P90, 100*es[len(es)/2])
			if len(es) >= 100 && !(s.Median <= 0.15) {
				t.Errorf("%s %s: median |error| %.1f%% over %d points, want ≤ 15%%", dv.dev, k, 100*s.Median, len(es))
			}
		}
	}
}
