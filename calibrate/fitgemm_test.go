package calibrate

import (
	"math"
	"testing"
)

// nodeField returns the targets of one point at each node of an
// nm×nn×nk grid, with value f(i, j, l), skipping the nodes skip says.
func nodeField(dims [3]int, f func(i, j, l int) float64, skip func(i, j, l int) bool) (ri [][8]int32, rw [][8]float64, idx []int, target []float64) {
	for i := 0; i < dims[0]; i++ {
		for j := 0; j < dims[1]; j++ {
			for l := 0; l < dims[2]; l++ {
				if skip != nil && skip(i, j, l) {
					continue
				}
				var r [8]int32
				var w [8]float64
				r[0], w[0] = int32((i*dims[1]+j)*dims[2]+l), 1
				idx = append(idx, len(ri))
				ri, rw, target = append(ri, r), append(rw, w), append(target, f(i, j, l))
			}
		}
	}
	return ri, rw, idx, target
}

func TestAxisSmoothing(t *testing.T) {
	// The axis weights are (r_min/r_a)² of the median change between
	// neighbours; too few pairs keep gemmAxisSmooth.
	tests := []struct {
		name string
		dims [3]int
		f    func(i, j, l int) float64
		want [3]float64
	}{
		{"roughest along m", [3]int{6, 6, 6}, func(i, j, l int) float64 {
			return 0.1*float64(i%2) + 0.05*float64(j%2) + 0.025*float64(l%2)
		}, [3]float64{0.0625, 0.25, 1}},
		{"smooth everywhere", [3]int{6, 6, 6}, func(i, j, l int) float64 { return 0.2 }, [3]float64{1, 1, 1}},
		{"too few pairs", [3]int{2, 2, 2}, func(i, j, l int) float64 { return float64(i) }, gemmAxisSmooth},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ri, rw, idx, target := nodeField(tt.dims, tt.f, nil)
			n := tt.dims[0] * tt.dims[1] * tt.dims[2]
			byNode := make([][]touchPt, n)
			for _, i := range idx {
				byNode[ri[i][0]] = append(byNode[ri[i][0]], touchPt{int32(i), 0})
			}
			stride := [3]int{tt.dims[1] * tt.dims[2], tt.dims[2], 1}
			got := axisSmoothing(byNode, rw, target, stride, tt.dims)
			for a := range got {
				if math.Abs(got[a]-tt.want[a]) > 1e-9 {
					t.Errorf("axis weights %v, want %v", got, tt.want)
					break
				}
			}
		})
	}
}

func TestSolveGEMMResidual_followsAgreeingAxis(t *testing.T) {
	// The table jumps by 0.3 along k between k-nodes 1 and 2 and is flat
	// along m and n. A node without data at k-node 2 takes the value its
	// m and n neighbours agree on, not the mean of its k neighbours on
	// either side of the jump (0.15); one at k-node 3 keeps the plateau.
	dims := [3]int{5, 5, 5}
	f := func(i, j, l int) float64 {
		if l >= 2 {
			return 0.3
		}
		return 0
	}
	holes := map[[3]int]float64{{2, 2, 2}: 0.3, {1, 3, 3}: 0.3, {3, 1, 1}: 0}
	ri, rw, idx, target := nodeField(dims, f, func(i, j, l int) bool {
		_, ok := holes[[3]int{i, j, l}]
		return ok
	})
	vals := make([]float64, dims[0]*dims[1]*dims[2])
	solveGEMMResidual(ri, rw, idx, target, vals, dims)
	for h, want := range holes {
		if got := vals[(h[0]*dims[1]+h[1])*dims[2]+h[2]]; math.Abs(got-want) > 0.02 {
			t.Errorf("node %v without data: %.4f, want %.2f ± 0.02", h, got, want)
		}
	}
}
