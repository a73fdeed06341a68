package calibrate

import (
	"math"
	"sort"
)

// neighbourFloor returns the |error| of predicting each GEMM of ms from
// its measured neighbours alone, the floor a model of the table can reach
// (DESIGN.md's "floor: interpolating measured neighbours"): leave the
// point out, and along each axis (m, n, k) on which it has a measured
// neighbour at a smaller and at a larger size, the other two held, take
// log time linear in log size between them; the estimate is the geometric
// mean of the axes' estimates. Points with no two-sided neighbour on any
// axis (the grid's corners) are left out of the figure.
func neighbourFloor(ms []Measurement) Stats {
	type key struct{ m, n, k int }
	at := map[key]float64{}
	axes := [3]map[int]bool{{}, {}, {}}
	for _, x := range ms {
		at[key{x.M, x.N, x.K}] = math.Log(float64(x.Time))
		axes[0][x.M], axes[1][x.N], axes[2][x.K] = true, true, true
	}
	var sorted [3][]int
	for i, a := range axes {
		for v := range a {
			sorted[i] = append(sorted[i], v)
		}
		sort.Ints(sorted[i])
	}
	with := func(p key, axis, v int) key {
		switch axis {
		case 0:
			p.m = v
		case 1:
			p.n = v
		default:
			p.k = v
		}
		return p
	}
	coord := func(p key, axis int) int { return [3]int{p.m, p.n, p.k}[axis] }
	var errs []float64
	for p, lt := range at {
		var sum float64
		var n int
		for axis := 0; axis < 3; axis++ {
			vs := sorted[axis]
			c := coord(p, axis)
			i := sort.SearchInts(vs, c)
			lo, hi := -1, -1
			for j := i - 1; j >= 0; j-- {
				if _, ok := at[with(p, axis, vs[j])]; ok {
					lo = vs[j]
					break
				}
			}
			for j := i + 1; j < len(vs); j++ {
				if _, ok := at[with(p, axis, vs[j])]; ok {
					hi = vs[j]
					break
				}
			}
			if lo < 0 || hi < 0 {
				continue
			}
			f := (math.Log(float64(c)) - math.Log(float64(lo))) / (math.Log(float64(hi)) - math.Log(float64(lo)))
			sum += (1-f)*at[with(p, axis, lo)] + f*at[with(p, axis, hi)]
			n++
		}
		if n > 0 {
			errs = append(errs, math.Abs(math.Exp(sum/float64(n)-lt)-1))
		}
	}
	return newStats(errs)
}
