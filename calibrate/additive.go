package calibrate

import (
	"math"

	"github.com/perfsim/perfsim/model"
)

// An additive residual table: log(measured/modelled) as f(log m) +
// g(log n) + h(log k), one curve per axis on the table's nodes, written
// into the full table as the sum at each node (trilinear interpolation of
// such a table is the sum of the curves' linear interpolations, so the
// model reads it as any other table). It has a few dozen values instead
// of thousands and follows what depends on one dimension at a time: on a
// CPU, the cost per multiply-add of gonum's GEMM rises with n (rows of B
// n·8 bytes apart compete for the same cache sets: fp64 0.24 ns for
// n = 128, k = 1024 against 0.36 ns for n = 1024, k = 256, measured here) and with
// few rows (a GEMV pays its per-row call on every element). Where a
// benchmark grid measures every combination (aiconfigurator), the full
// table is better; residualChoice picks by cross-validation.

// Additive fit settings: backfitting sweeps over the three axes, each
// solving its curve by Gauss–Seidel with a ridge towards 0 and a penalty
// on the difference between neighbouring nodes (the full table's
// gemmRidge and gemmSmooth).
const (
	additiveSweeps = 20
	curveSweeps    = 50
)

// fitAdditiveResidual fits the table r's values (r's axes set) to the log
// residuals of points idx against the analytical times base.
func fitAdditiveResidual(pts []gemmPoint, idx []int, base []float64, r *model.Residual) {
	axes := [3][]float64{r.Log2M, r.Log2N, r.Log2K}
	// touch[a][j] lists the points whose coordinate on axis a touches
	// node j, with their interpolation weights.
	type touch struct {
		p int
		w float64
	}
	var touch3 [3][][]touch
	target := make([]float64, len(pts))
	for a := range axes {
		touch3[a] = make([][]touch, len(axes[a]))
	}
	for _, p := range idx {
		x := [3]float64{pts[p].m, pts[p].n, pts[p].k}
		for a := range axes {
			i, w := model.Locate(axes[a], math.Log2(x[a]))
			if w < 1 {
				touch3[a][i] = append(touch3[a][i], touch{p, 1 - w})
			}
			if w > 0 {
				touch3[a][i+1] = append(touch3[a][i+1], touch{p, w})
			}
		}
		target[p] = math.Max(-1, math.Min(1, math.Log(pts[p].meas/base[p])))
	}
	var curve [3][]float64
	for a := range curve {
		curve[a] = make([]float64, len(axes[a]))
	}
	// fit[p] is the sum of the three curves at point p.
	fit := make([]float64, len(pts))
	for sweep := 0; sweep < additiveSweeps; sweep++ {
		maxd := 0.0
		for a, c := range curve {
			for range curveSweeps {
				step := 0.0
				for j := range c {
					num, den := -gemmRidge*c[j], gemmRidge
					for _, t := range touch3[a][j] {
						num += t.w * (target[t.p] - fit[t.p])
						den += t.w * t.w
					}
					for _, nb := range [2]int{j - 1, j + 1} {
						if nb >= 0 && nb < len(c) {
							num += gemmSmooth * (c[nb] - c[j])
							den += gemmSmooth
						}
					}
					d := num / den
					c[j] += d
					step = math.Max(step, math.Abs(d))
					for _, t := range touch3[a][j] {
						fit[t.p] += t.w * d
					}
				}
				maxd = math.Max(maxd, step)
				if step < 1e-6 {
					break
				}
			}
		}
		if maxd < 1e-6 {
			break
		}
	}
	nn, nk := len(r.Log2N), len(r.Log2K)
	for i, f := range curve[0] {
		for j, g := range curve[1] {
			for l, h := range curve[2] {
				r.Values[(i*nn+j)*nk+l] = math.Round((f+g+h)*1e4) / 1e4
			}
		}
	}
}
