package calibrate

import (
	"math"
	"testing"

	"github.com/perfsim/perfsim/model"
)

func TestFitAdditiveResidual(t *testing.T) {
	// Log residuals that are a sum of one curve per axis (a step in n, a
	// slope in m, nothing in k), on a sparse set of shapes: the additive
	// table follows them at the points and at a shape between them.
	f := func(m, n, k float64) float64 {
		v := 0.05 * math.Log2(m)
		if n >= 1024 {
			v += 0.3
		}
		return v
	}
	var pts []gemmPoint
	for _, m := range []float64{1, 4, 16, 64} {
		for _, nk := range [][2]float64{{512, 256}, {1024, 256}, {512, 1024}, {1024, 1024}} {
			pts = append(pts, gemmPoint{m: m, n: nk[0], k: nk[1], meas: math.Exp(f(m, nk[0], nk[1]))})
		}
	}
	idx := make([]int, len(pts))
	base := make([]float64, len(pts))
	for i := range pts {
		idx[i], base[i] = i, 1
	}
	r := &model.Residual{Log2M: []float64{0, 2, 4, 6}, Log2N: []float64{9, 10}, Log2K: []float64{8, 10}}
	r.Values = make([]float64, 4*2*2)
	fitAdditiveResidual(pts, idx, base, r)
	for _, p := range pts {
		if got, want := r.At(p.m, p.n, p.k), f(p.m, p.n, p.k); math.Abs(got-want) > 0.02 {
			t.Errorf("%v×%v×%v: %.3f, want %.3f", p.m, p.n, p.k, got, want)
		}
	}
	// m = 8 and k = 512: no point measured either.
	if got, want := r.At(8, 1024, 512), f(8, 1024, 512); math.Abs(got-want) > 0.03 {
		t.Errorf("8×1024×512: %.3f, want %.3f", got, want)
	}
}
