package calibrate

import (
	"math"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// gemmTable is a source's measured GEMM times by shape, with the sorted
// sizes it measured on each axis.
type gemmTable struct {
	at   map[[3]int]float64 // seconds
	axes [3][]int
}

func newGEMMTable(ms []Measurement) *gemmTable {
	g := &gemmTable{at: map[[3]int]float64{}}
	var seen [3]map[int]bool
	for a := range seen {
		seen[a] = map[int]bool{}
	}
	for _, m := range ms {
		s := [3]int{m.M, m.N, m.K}
		g.at[s] = float64(m.Time)
		for a, x := range s {
			if !seen[a][x] {
				seen[a][x] = true
				g.axes[a] = append(g.axes[a], x)
			}
		}
	}
	for a := range g.axes {
		sort.Ints(g.axes[a])
	}
	return g
}

// interp returns the table's own measurements interpolated to (m, n, k):
// trilinear in log time over log sizes between the measured sizes that
// bracket each axis; false outside the measured range or where a corner
// was not measured. No model is involved.
func (g *gemmTable) interp(s [3]int) (float64, bool) {
	var lo, hi [3]int
	var w [3]float64
	for a, x := range s {
		ax := g.axes[a]
		if len(ax) == 0 || x < ax[0] || x > ax[len(ax)-1] {
			return 0, false
		}
		i := sort.SearchInts(ax, x)
		if ax[i] == x {
			lo[a], hi[a] = x, x
			continue
		}
		lo[a], hi[a] = ax[i-1], ax[i]
		w[a] = math.Log(float64(x)/float64(lo[a])) / math.Log(float64(hi[a])/float64(lo[a]))
	}
	v := 0.0
	for c := 0; c < 8; c++ {
		var corner [3]int
		f := 1.0
		for a := 0; a < 3; a++ {
			if c>>a&1 == 1 {
				corner[a], f = hi[a], f*w[a]
			} else {
				corner[a], f = lo[a], f*(1-w[a])
			}
		}
		if f == 0 {
			continue
		}
		t, ok := g.at[corner]
		if !ok {
			return 0, false
		}
		v += f * math.Log(t)
	}
	return math.Exp(v), true
}

func TestAIConfigurator_vidurShapes(t *testing.T) {
	// Why the model fitted on aiconfigurator misses Vidur's GEMMs
	// (TestAIConfigurator_gemmHeldOut): at every Vidur shape inside
	// aiconfigurator's grid, compare the catalog's fitted model with
	// aiconfigurator's own measurements interpolated there (no model),
	// and those with Vidur's. The model must reproduce its source at
	// Vidur's shapes (it does to a median 2.2% on H100, 3.1% on A100,
	// bias −0.2% and +2.2%); the Vidur miss is then the gap between the
	// two sources (interpolated aiconfigurator against Vidur: a bias of
	// −13% and −12%), not the model's generalisation to Vidur's M, N and
	// K. Measured 2026-11-22, with the fitted catalog of that day.
	if testing.Short() {
		t.Skip("reads 35,000 aiconfigurator rows; skipped with -short")
	}
	v := validationDir(t)
	for _, tt := range []struct {
		hw, file string
	}{
		{"h100", "h100_sxm_gemm_trtllm_1.3.0rc20_gemm_perf.csv"},
		{"a100", "a100_sxm_gemm_trtllm_1.0.0_gemm_perf.csv"},
	} {
		t.Run(tt.hw, func(t *testing.T) {
			dev := catalogDevice(t, tt.hw)
			g, ok := dev.Eff.GEMM[model.BF16]
			if !ok || !fittedSource(g.Source) || !strings.Contains(g.Source, tt.file) {
				t.Skipf("the catalog's %s bf16 GEMM parameters are not fitted on %s", tt.hw, tt.file)
			}
			names := strings.Join(append([]string{dev.Name}, dev.Aliases...), "|")
			aic := newGEMMTable(readKind(t, filepath.Join(v, "aiconfigurator", tt.file), names, "gemm", model.BF16))
			vid := readKind(t, filepath.Join(v, "vidur_gemm_ops.csv"), names, "gemm", model.Invalid)
			p := dev.Processor()
			var modelVsAIC, aicVsVidur, modelVsVidur []float64
			for _, m := range vid {
				x, ok := aic.interp([3]int{m.M, m.N, m.K})
				if !ok {
					continue
				}
				pred := float64(p.GEMMCost(GEMMOf(m)).Time)
				modelVsAIC = append(modelVsAIC, pred/x-1)
				aicVsVidur = append(aicVsVidur, x/float64(m.Time)-1)
				modelVsVidur = append(modelVsVidur, pred/float64(m.Time)-1)
			}
			if len(modelVsAIC) < len(vid)/2 {
				t.Fatalf("only %d of %d Vidur shapes inside aiconfigurator's grid", len(modelVsAIC), len(vid))
			}
			a, b, c := newStats(modelVsAIC), newStats(aicVsVidur), newStats(modelVsVidur)
			t.Logf("%d of %d Vidur shapes inside aiconfigurator's grid; median |error| / bias:", a.N, len(vid))
			t.Logf("  model vs aiconfigurator interpolated: %.1f%% / %+.1f%%", 100*a.Median, 100*a.Bias)
			t.Logf("  aiconfigurator interpolated vs Vidur: %.1f%% / %+.1f%%", 100*b.Median, 100*b.Bias)
			t.Logf("  model vs Vidur:                       %.1f%% / %+.1f%%", 100*c.Median, 100*c.Bias)
			if a.Median > 0.04 || math.Abs(a.Bias) > 0.03 {
				t.Errorf("model against aiconfigurator's own measurements at Vidur's shapes: median %.1f%% bias %+.1f%%, want ≤ 4%% and |bias| ≤ 3%%",
					100*a.Median, 100*a.Bias)
			}
		})
	}
}

func TestGEMMTable_interp(t *testing.T) {
	// Time ∝ m·n·k on a grid: the log-log interpolation is exact.
	var ms []Measurement
	for _, m := range []int{64, 256} {
		for _, n := range []int{1024, 4096} {
			for _, k := range []int{512, 2048} {
				ms = append(ms, Measurement{M: m, N: n, K: k, Time: model.Seconds(float64(m*n*k) * 1e-12)})
			}
		}
	}
	g := newGEMMTable(ms)
	tests := []struct {
		s    [3]int
		want float64
		ok   bool
	}{
		{[3]int{64, 1024, 512}, 64 * 1024 * 512 * 1e-12, true},
		{[3]int{128, 2048, 1024}, 128 * 2048 * 1024 * 1e-12, true},
		{[3]int{100, 4096, 2048}, 100 * 4096 * 2048 * 1e-12, true},
		{[3]int{512, 1024, 512}, 0, false}, // beyond the largest m
		{[3]int{128, 1024, 256}, 0, false}, // below the smallest k
	}
	for _, tt := range tests {
		got, ok := g.interp(tt.s)
		if ok != tt.ok || (ok && math.Abs(got/tt.want-1) > 1e-9) {
			t.Errorf("interp(%v) = %g, %v; want %g, %v", tt.s, got, ok, tt.want, tt.ok)
		}
	}
	delete(g.at, [3]int{256, 4096, 2048})
	if _, ok := g.interp([3]int{128, 2048, 1024}); ok {
		t.Errorf("interp with a corner not measured: ok, want false")
	}
}
