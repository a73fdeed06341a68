package calibrate

import (
	"path/filepath"
	"testing"

	"github.com/perfsim/perfsim/model"
)

func TestRead_b200Tables(t *testing.T) {
	// The B200 tables dropped their constant columns (SOURCES.md): the
	// generation attention table has no isl or attn_dtype, the custom
	// all-reduce table no op_name or kernel_source. The importer reads
	// them with the dropped values, and skips the other libraries'
	// kernels (DeepGEMM, FlashInfer) with a warning.
	v := filepath.Join(validationDir(t), "aiconfigurator")
	for _, tc := range []struct {
		file   string
		kernel string
		rows   int // rows read, at least
		warn   bool
	}{
		{"b200_sxm_comm_trtllm_1.3.0rc20_custom_allreduce_perf.csv", KernelAllReduceOneShot, 60, false},
		{"b200_sxm_comm_nccl_2.29.2_nccl_perf.csv", KernelAllGather, 100, false},
		{"b200_sxm_attention_trtllm_1.3.0rc20_generation_attention_perf.csv", KernelAttentionDecode, 40000, true},
	} {
		ms, warns, err := ReadFile(filepath.Join(v, tc.file), FormatAuto, "B200|b200")
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		n := 0
		for _, m := range ms {
			if m.Kernel == tc.kernel {
				n++
				if m.Kernel == KernelAttentionDecode && (m.DType != model.BF16 || m.QLen != 1) {
					t.Fatalf("%s: %+v: want bf16 queries, one per sequence", tc.file, m)
				}
			}
		}
		if n < tc.rows {
			t.Errorf("%s: %d %s rows, want ≥ %d", tc.file, n, tc.kernel, tc.rows)
		}
		if tc.warn && len(warns) == 0 {
			t.Errorf("%s: no warning for the skipped FlashInfer rows", tc.file)
		}
	}
}

func TestAIConfigurator_b200GEMM(t *testing.T) {
	// B200 GEMMs held out, against the floor of the data (neighbourFloor,
	// on every row). The default run fits a deterministic 1-in-8 sample
	// of each type 3-fold; -exhaustive fits every row 5-fold, as
	// calibrate/fitted/regen.sh does (its figures are in b200.fit.txt).
	if testing.Short() {
		t.Skip("fits 12,000 GEMMs; skipped with -short")
	}
	v := filepath.Join(validationDir(t), "aiconfigurator")
	stride, folds := 8, 3
	if *exhaustive {
		stride, folds = 1, 5
	}
	dev := catalogDevice(t, "b200")
	all, _, err := ReadFile(filepath.Join(v, "b200_sxm_gemm_trtllm_1.3.0rc20_gemm_perf.csv"), FormatAuto, "B200|b200")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		d        model.DType
		med, p90 float64 // bounds on the sampled run's held-out figures
	}{
		// Measured 2026-11-24, 1-in-8 sample, 3-fold: bf16 5.8 / 15.0,
		// fp8 3.7 / 10.8, fp4 2.0 / 9.5 (the sample's residual table is
		// sparser than the whole table's). Every row, 5-fold: bf16 3.5 /
		// 11.2 (floor 3.4 / 10.2), fp8 2.4 / 7.2 (2.3 / 6.8), fp4 1.5 /
		// 5.2 (1.3 / 4.8).
		{model.BF16, 0.065, 0.165},
		{model.FP8, 0.042, 0.12},
		{model.FP4, 0.025, 0.105},
	} {
		t.Run(tc.d.String(), func(t *testing.T) {
			var ms, sample []Measurement
			for _, m := range all {
				if m.DType == tc.d {
					ms = append(ms, m)
				}
			}
			for i := 0; i < len(ms); i += stride {
				sample = append(sample, ms[i])
			}
			floor := neighbourFloor(ms)
			res, err := Fit(dev, sample, Options{Folds: folds})
			if err != nil {
				t.Fatal(err)
			}
			c := res.Classes[0]
			t.Logf("b200 %s: n=%d held-out median %.1f%% p90 %.1f%%; floor (measured neighbours, n=%d) median %.1f%% p90 %.1f%%",
				c.Name(), c.Points, 100*c.HeldOut.Median, 100*c.HeldOut.P90, floor.N, 100*floor.Median, 100*floor.P90)
			med, p90 := tc.med, tc.p90
			if stride == 1 {
				// At the floor: within half a point of its median and
				// 1.5 points of its p90.
				med, p90 = floor.Median+0.005, floor.P90+0.015
			}
			if c.HeldOut.Median > med || c.HeldOut.P90 > p90 {
				t.Errorf("held-out median %.1f%% p90 %.1f%%, want ≤ %.1f%%, %.1f%%", 100*c.HeldOut.Median, 100*c.HeldOut.P90, 100*med, 100*p90)
			}
		})
	}
}
