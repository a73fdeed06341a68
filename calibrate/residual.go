package calibrate

// The residual tables over shape space: their grids, and the regularised
// least-squares solve that fills them (fitGEMM and the kernel fits use them).

import (
	"math"
	"sort"

	"github.com/perfsim/perfsim/model"
)

// residualGrid returns the table's axes: on each axis, the measured sizes
// themselves when there are at most maxDataNodes of them (a benchmark grid,
// as aiconfigurator's), else whole octaves spanning them.
func residualGrid(pts []gemmPoint) *model.Residual {
	xyz := make([][3]float64, len(pts))
	for i := range pts {
		xyz[i] = [3]float64{pts[i].m, pts[i].n, pts[i].k}
	}
	var ax [3][]float64
	for a := 0; a < 3; a++ {
		seen := map[float64]bool{}
		for _, p := range xyz {
			l := math.Log2(p[a])
			if !seen[l] && len(seen) <= maxDataNodes {
				seen[l] = true
				ax[a] = append(ax[a], l)
			}
		}
		sort.Float64s(ax[a])
	}
	oct := gridOver(xyz)
	r := &model.Residual{Log2M: oct.Log2M, Log2N: oct.Log2N, Log2K: oct.Log2K}
	for a, dst := range [3]*[]float64{&r.Log2M, &r.Log2N, &r.Log2K} {
		if len(ax[a]) <= maxDataNodes {
			*dst = ax[a]
		}
	}
	r.Values = make([]float64, len(r.Log2M)*len(r.Log2N)*len(r.Log2K))
	return r
}

// residualLambda is the ridge that pulls a node with little support
// towards no correction, in units of a point of full weight.
const residualLambda = 0.5

// gridStep is the node spacing in octaves of an axis with too many
// distinct sizes for nodes at each (and of the attention tables). With
// octave nodes on every axis and a plain ridge, aiconfigurator's A100
// GEMMs reach 4.4% / 14.6% held out; nodes at the measured sizes with the
// robust smoothing of solveGEMMResidual, 2.7% / 10.6% with fixed axis
// weights and 2.6% / 9.4% with estimated axis weights and direction
// factors.
const gridStep = 1.0

// fitResidual fits the table's values to the log residuals of the GEMM
// points idx (whose weights setResidual set) against the analytical times
// base.
func fitResidual(pts []gemmPoint, idx []int, base []float64, vals []float64, dims [3]int) {
	ri := make([][8]int32, len(pts))
	rw := make([][8]float64, len(pts))
	target := make([]float64, len(pts))
	for _, i := range idx {
		ri[i], rw[i] = pts[i].ri, pts[i].rw
		target[i] = math.Log(pts[i].meas / base[i])
	}
	solveGEMMResidual(ri, rw, idx, target, vals, dims)
}

// The GEMM residual table's regularisation: a weak ridge towards no
// correction, and a smoothing penalty between neighbouring nodes. The
// smoothing is robust (a Huber penalty on the difference, by iterative
// reweighting): a jump of more than gemmHuber in log time between
// neighbours is kept as a jump instead of being smeared over its
// neighbours, so that a single odd shape does not pull the ones around it.
// Its weight along each axis is estimated from the training data
// (axisSmoothing: on aiconfigurator's A100 bf16 GEMMs 0.35–0.41, 0.32–0.36
// and 1 along m, n and k — a library's kernel choice for a given m and n
// holds over long runs of k), and each node leans towards the axis along
// which its neighbours agree (setDirection: on A100 at n = 4096, k = 128
// runs 12–22% slower than the model for every m from 256 to 8192, while
// its neighbours k = 64 and k = 256 differ from it and from each other by
// up to 30%, so those nodes follow m, not k). gemmRidge, gemmSmooth
// and gemmHuber were chosen by 5-fold held-out error on the A100 GEMMs,
// then checked unchanged on H100 and H200.
const (
	gemmRidge   = 0.01
	gemmSmooth  = 0.3
	gemmHuber   = 0.05
	gemmSweeps  = 300
	gemmReweigh = 50 // sweeps between reweightings
	// maxDataNodes is the most distinct sizes an axis may have for its
	// nodes to sit at the measured sizes themselves; beyond, whole octaves.
	maxDataNodes = 32
)

// gemmAxisSmooth weights gemmSmooth along m, n and k where the data are
// too sparse for axisSmoothing to estimate the weights (the weights chosen
// by held-out error on A100 before the estimate; they hold m's jumps, m =
// 768 → 1024 costs 2× on A100, apart from their neighbours).
var gemmAxisSmooth = [3]float64{0.03, 0.1, 1}

// A touchPt is a point touching a node: its index and its corner (0–7).
type touchPt struct {
	pt int32
	c  int8
}

// solveGEMMResidual fits table values to the log residuals target of the
// points idx (each touching the nodes ri with trilinear weights rw) on a
// grid of dims nodes: between reweightings it solves, by Gauss–Seidel
// sweeps, the linear system of Σ(target − table)² + gemmRidge·Σv² +
// Σ_edges w_e·(v_a − v_b)² in which a node's pull from a neighbour along
// axis a is scaled by its direction factor (setDirection); every
// gemmReweigh sweeps it reweights the edges (w_e = gemmSmooth·axis
// weight·min(1, gemmHuber/|v_a − v_b|), the axis weights from
// axisSmoothing) and the direction factors. The system stays strictly
// diagonally dominant (the ridge), so the sweeps converge. Targets are
// clipped to ±1 (a factor e) so that a broken measurement cannot dominate
// a node. A node no training point touches (a held-out shape on a grid of
// measured sizes) takes the weighted mean of its neighbours.
func solveGEMMResidual(ri [][8]int32, rw [][8]float64, idx []int, target []float64, vals []float64, dims [3]int) {
	lambda, smooth := gemmRidge, gemmSmooth
	for i := range vals {
		vals[i] = 0
	}
	n := len(vals)
	byNode := make([][]touchPt, n)
	diag := make([]float64, n)
	for _, i := range idx {
		for c := 0; c < 8; c++ {
			if w := rw[i][c]; w > 0 {
				nd := ri[i][c]
				byNode[nd] = append(byNode[nd], touchPt{int32(i), int8(c)})
				diag[nd] += w * w
			}
		}
	}
	cur := make([]float64, len(target))
	tgt := make([]float64, len(target))
	for _, i := range idx {
		tgt[i] = math.Max(-1, math.Min(1, target[i]))
	}
	nm, nn, nk := dims[0], dims[1], dims[2]
	stride := [3]int{nn * nk, nk, 1}
	size := [3]int{nm, nn, nk}
	// ew[a][nd] is the weight of the edge from nd to nd+stride[a].
	var ew [3][]float64
	axisW := axisSmoothing(byNode, rw, tgt, stride, size)
	for a := range ew {
		ew[a] = make([]float64, n)
		for nd := range ew[a] {
			ew[a][nd] = smooth * axisW[a]
		}
	}
	var dir [3][]float64
	for a := range dir {
		dir[a] = make([]float64, n)
		for nd := range dir[a] {
			dir[a][nd] = 1
		}
	}
	for sweep := 0; sweep < gemmSweeps; sweep++ {
		if sweep > 0 && sweep%gemmReweigh == 0 {
			setDirection(&dir, vals, stride, size)
			for a := range ew {
				for nd := 0; nd < n; nd++ {
					if (nd/stride[a])%size[a] < size[a]-1 {
						w := 1.0
						if d := math.Abs(vals[nd+stride[a]] - vals[nd]); d > gemmHuber {
							w = gemmHuber / d
						}
						ew[a][nd] = smooth * axisW[a] * w
					}
				}
			}
		}
		maxd := 0.0
		for nd := 0; nd < n; nd++ {
			num, den := 0.0, diag[nd]+lambda
			for _, tc := range byNode[nd] {
				num += rw[tc.pt][tc.c] * (tgt[tc.pt] - cur[tc.pt])
			}
			for a := range ew {
				pos := (nd / stride[a]) % size[a]
				if pos > 0 {
					w := ew[a][nd-stride[a]] * dir[a][nd]
					num += w * (vals[nd-stride[a]] - vals[nd])
					den += w
				}
				if pos < size[a]-1 {
					w := ew[a][nd] * dir[a][nd]
					num += w * (vals[nd+stride[a]] - vals[nd])
					den += w
				}
			}
			d := (num - lambda*vals[nd]) / den
			maxd = math.Max(maxd, math.Abs(d))
			vals[nd] += d
			for _, tc := range byNode[nd] {
				cur[tc.pt] += rw[tc.pt][tc.c] * d
			}
		}
		// Converged: skip to the next reweighting, or stop.
		if maxd < 1e-6 {
			next := (sweep/gemmReweigh + 1) * gemmReweigh
			if next >= gemmSweeps {
				break
			}
			sweep = next - 1
		}
	}
	for i := range vals {
		vals[i] = math.Round(vals[i]*1e4) / 1e4
	}
}

// minAxisPairs is the fewest pairs of neighbouring nodes with data an
// axis needs for axisSmoothing to estimate its roughness.
const minAxisPairs = 20

// axisSmoothing returns the smoothing weight of each axis, estimated from
// the data (an empirical-Bayes choice: a neighbour's value is worth the
// inverse of the variance of the change between neighbours along the
// axis): each node with data gets the weighted mean of its points'
// targets, the roughness of an axis is the median absolute difference
// between neighbouring such nodes, and an axis weighs (r_min/r_a)², so
// that the smoothest axis weighs 1. An axis with fewer than minAxisPairs
// pairs keeps gemmAxisSmooth.
func axisSmoothing(byNode [][]touchPt, rw [][8]float64, tgt []float64, stride, size [3]int) [3]float64 {
	n := len(byNode)
	mean := make([]float64, n)
	has := make([]bool, n)
	for nd, ts := range byNode {
		sw, s := 0.0, 0.0
		for _, tc := range ts {
			w := rw[tc.pt][tc.c]
			sw += w
			s += w * tgt[tc.pt]
		}
		if sw > 0 {
			mean[nd], has[nd] = s/sw, true
		}
	}
	var r [3]float64
	ok := true
	for a := 0; a < 3; a++ {
		var d []float64
		for nd := 0; nd < n; nd++ {
			if (nd/stride[a])%size[a] < size[a]-1 && has[nd] && has[nd+stride[a]] {
				d = append(d, math.Abs(mean[nd+stride[a]]-mean[nd]))
			}
		}
		if len(d) < minAxisPairs {
			ok = false
			break
		}
		sort.Float64s(d)
		r[a] = math.Max(quantile(d, 0.5), 1e-4)
	}
	if !ok {
		return gemmAxisSmooth
	}
	lo := math.Min(r[0], math.Min(r[1], r[2]))
	var w [3]float64
	for a := range w {
		w[a] = (lo / r[a]) * (lo / r[a])
	}
	return w
}

// setDirection sets dir[a][nd], the direction factor of the smoothing
// that node nd receives along axis a: (gemmHuber/(gemmHuber+g_a))²
// divided by its largest value over the three axes, where g_a is how much
// the table changes between the node's two neighbours along a (with one
// neighbour, between it and the next). A node's value then follows the
// axis along which its neighbours agree, not one across which the
// library's kernel choice jumps.
func setDirection(dir *[3][]float64, vals []float64, stride, size [3]int) {
	for nd := range vals {
		hi := 0.0
		for a := 0; a < 3; a++ {
			s, pos := stride[a], (nd/stride[a])%size[a]
			g := 0.0
			switch {
			case pos > 0 && pos < size[a]-1:
				g = math.Abs(vals[nd+s] - vals[nd-s])
			case pos == 0 && size[a] > 2:
				g = math.Abs(vals[nd+2*s] - vals[nd+s])
			case pos == size[a]-1 && size[a] > 2:
				g = math.Abs(vals[nd-2*s] - vals[nd-s])
			}
			r := gemmHuber / (gemmHuber + g)
			dir[a][nd] = r * r
			hi = math.Max(hi, r*r)
		}
		for a := 0; a < 3; a++ {
			dir[a][nd] /= hi
		}
	}
}

// solveResidual fits table values to the log residuals target of the
// points idx, each touching the nodes ri with trilinear weights rw, by
// regularised least squares (a ridge of residualLambda pulls a node with
// little support towards no correction), solved by coordinate sweeps
// (Gauss–Seidel). Residuals are clipped to ±1 (a factor e) so that a
// broken measurement cannot dominate a node.
func solveResidual(ri [][8]int32, rw [][8]float64, idx []int, target []float64, vals []float64) {
	for i := range vals {
		vals[i] = 0
	}
	n := len(vals)
	type touch struct {
		pt int32
		c  int8
	}
	byNode := make([][]touch, n)
	diag := make([]float64, n)
	for _, i := range idx {
		for c := 0; c < 8; c++ {
			if w := rw[i][c]; w > 0 {
				nd := ri[i][c]
				byNode[nd] = append(byNode[nd], touch{int32(i), int8(c)})
				diag[nd] += w * w
			}
		}
	}
	cur := make([]float64, len(target))
	tgt := make([]float64, len(target))
	for _, i := range idx {
		tgt[i] = math.Max(-1, math.Min(1, target[i]))
	}
	for sweep := 0; sweep < 30; sweep++ {
		for nd := 0; nd < n; nd++ {
			if len(byNode[nd]) == 0 {
				continue
			}
			num := 0.0
			for _, tc := range byNode[nd] {
				num += rw[tc.pt][tc.c] * (tgt[tc.pt] - cur[tc.pt])
			}
			d := num / (diag[nd] + residualLambda)
			vals[nd] += d
			for _, tc := range byNode[nd] {
				cur[tc.pt] += rw[tc.pt][tc.c] * d
			}
		}
	}
	for i := range vals {
		vals[i] = math.Round(vals[i]*1e4) / 1e4
	}
}

// gridOver returns a residual grid of whole octaves spanning the points
// xyz (each a triple of positive sizes).
func gridOver(xyz [][3]float64) *model.Residual {
	lo, hi := [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}, [3]float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}
	for _, p := range xyz {
		for a, v := range p {
			l := math.Log2(v)
			lo[a], hi[a] = math.Min(lo[a], l), math.Max(hi[a], l)
		}
	}
	axis := func(a int) []float64 {
		var ax []float64
		for v := math.Floor(lo[a]/gridStep) * gridStep; v <= math.Ceil(hi[a]/gridStep)*gridStep+1e-9; v += gridStep {
			ax = append(ax, v)
		}
		return ax
	}
	r := &model.Residual{Log2M: axis(0), Log2N: axis(1), Log2K: axis(2)}
	r.Values = make([]float64, len(r.Log2M)*len(r.Log2N)*len(r.Log2K))
	return r
}
