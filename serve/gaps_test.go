package serve

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGaps: the run-length record summarises as the plain list does:
// the same quantiles and maximum exactly, the mean to float precision,
// over random lists with runs and repeats far apart.
func TestGaps(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		var g gaps
		var parts [3]gaps // the same gaps recorded by three schedulers, merged
		var x []float64
		for range 1 + r.IntN(300) {
			v := float64(r.IntN(1+trial%17)) * 0.001 // few distinct values
			k := r.IntN(len(parts))
			for range 1 + r.IntN(5) {
				g.add(v)
				parts[k].add(v)
				x = append(x, v)
			}
		}
		var m gaps
		for i := range parts {
			m.merge(&parts[i])
		}
		got, want := g.stats(), statsOf(x)
		if merged := m.stats(); merged != got {
			t.Fatalf("trial %d: merged %+v, whole %+v", trial, merged, got)
		}
		if got.P50 != want.P50 || got.P90 != want.P90 || got.P95 != want.P95 || got.P99 != want.P99 || got.Max != want.Max ||
			math.Abs(got.Mean-want.Mean) > 1e-12*math.Abs(want.Mean) {
			t.Fatalf("trial %d (%d gaps, %d entries): %+v, the list gives %+v", trial, len(x), len(g.n), got, want)
		}
	}
	if g := (gaps{}); g.stats() != (Stats{}) {
		t.Error("no gaps: want zero stats")
	}
}
