package hardware

import (
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"github.com/perfsim/perfsim/internal/csvtest"
)

// sustainedShare derives a device's power.sustained from its TensorRT-LLM
// bf16 GEMM table (aiconfigurator): each shape is timed over 3 warm-ups
// and 6 runs, a few milliseconds in all for a short GEMM, where the power
// limiter has not yet acted, and a second or more for a long one, where
// it has. For every (n, k) with m ≥ 2048 and n, k ≥ 4096 (compute-bound
// shapes), the median TFLOP/s of its GEMMs that run 8 ms or more over the
// median of those that run 0.5–3 ms; the share is the median over the (n,
// k) that have at least 3 short GEMMs and one long. It returns the share,
// the (n, k) counted and how many of them slow down.
func sustainedShare(t *testing.T, path string) (share float64, families, below int) {
	t.Helper()
	col, recs := csvtest.Read(t, path, "gemm_dtype", "m", "n", "k", "latency")
	type nk struct{ n, k int }
	short, long := map[nk][]float64{}, map[nk][]float64{}
	for _, r := range recs {
		if r[col["gemm_dtype"]] != "bfloat16" {
			continue
		}
		var d [3]int
		var err error
		for i, k := range []string{"m", "n", "k"} {
			if d[i], err = strconv.Atoi(r[col[k]]); err != nil {
				t.Fatal(err)
			}
		}
		ms, err := strconv.ParseFloat(r[col["latency"]], 64)
		if err != nil {
			t.Fatal(err)
		}
		m, n, k := d[0], d[1], d[2]
		if m < 2048 || n < 4096 || k < 4096 {
			continue
		}
		rate := 2 * float64(m) * float64(n) * float64(k) / (ms * 1e-3)
		switch key := (nk{n, k}); {
		case ms >= 0.5 && ms < 3:
			short[key] = append(short[key], rate)
		case ms >= 8:
			long[key] = append(long[key], rate)
		}
	}
	median := func(x []float64) float64 {
		sort.Float64s(x)
		n := len(x)
		if n%2 == 1 {
			return x[n/2]
		}
		return (x[n/2-1] + x[n/2]) / 2
	}
	var ratios []float64
	for key, s := range short {
		if l := long[key]; len(s) >= 3 && len(l) > 0 {
			r := median(l) / median(s)
			ratios = append(ratios, r)
			if r < 1 {
				below++
			}
		}
	}
	if len(ratios) == 0 {
		t.Fatalf("%s: no (n, k) with both short and long GEMMs", path)
	}
	return median(ratios), len(ratios), below
}

// TestSustained_fromGEMMTables: each device file's power.sustained is
// what sustainedShare derives from its GEMM table, to the three decimals
// the file gives.
func TestSustained_fromGEMMTables(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "validation", "derived", "aiconfigurator")
	for _, tc := range []struct{ device, table string }{
		{"h100-sxm", "h100_sxm_gemm_trtllm_1.3.0rc20_gemm_perf.csv"},
		{"h200-sxm", "h200_sxm_gemm_trtllm_1.3.0rc20_gemm_perf.csv"},
		{"b200", "b200_sxm_gemm_trtllm_1.3.0rc20_gemm_perf.csv"},
	} {
		t.Run(tc.device, func(t *testing.T) {
			got, fam, below := sustainedShare(t, filepath.Join(dir, tc.table))
			d, err := Lookup(tc.device)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %.4f over %d (n, k), %d slower when long; file %v", tc.device, got, fam, below, d.Power.Sustained)
			if math.Abs(d.Power.Sustained-got) > 0.0005 {
				t.Errorf("%s: power.sustained %v, the table gives %.4f", tc.device, d.Power.Sustained, got)
			}
		})
	}
}
