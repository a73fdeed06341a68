package calibrate

import (
	"fmt"
	"math"
	"sort"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// A ClassScore is the scorecard of one kernel class: its errors and its
// worst rows.
type ClassScore struct {
	Name  string // "gemm/bf16", "attention_decode", "stream", ...
	Stats Stats
	Worst []Row // the largest |errors|, worst first
}

// Score predicts every measurement of ms on dev and scores the
// predictions per kernel class, listing the worst rows of each (at most
// worst). It warns about kernels the model does not price and about
// GEMMs and attention kernels outside the shape range of the device's
// residual tables (the fitted range: a prediction there extrapolates).
func Score(dev *hardware.Device, ms []Measurement, worst int) ([]ClassScore, []error) {
	p := dev.Processor()
	rows := map[string][]Row{}
	var warns []error
	unpriced := 0
	outside := map[string]int{}
	for _, m := range ms {
		t, ok := Predict(dev, &p, m)
		if !ok {
			unpriced++
			continue
		}
		name := classOf(m)
		switch name {
		case "gemm":
			name += "/" + m.DType.Peak().String()
			if g, ok := p.Eff.GEMM[m.DType.Peak()]; ok && g.Residual.Valid() && !inside(g.Residual, float64(m.M), float64(m.N), float64(m.K)) {
				outside[name]++
			}
		case KernelAttentionPrefill, KernelAttentionDecode:
			r := p.Eff.Attention.Residual
			if name == KernelAttentionDecode {
				r = p.Eff.Attention.DecodeResidual
			}
			if x, y, z := model.AttentionAxes(AttentionOf(m)); r.Valid() && !inside(r, x, y, z) {
				outside[name]++
			}
		}
		rows[name] = append(rows[name], Row{M: m, Predicted: t, Err: float64(t)/float64(m.Time) - 1})
	}
	if unpriced > 0 {
		warns = append(warns, fmt.Errorf("%d measurements of kernels the cost model does not price were ignored", unpriced))
	}
	for _, n := range sortedKeys(outside) {
		warns = append(warns, fmt.Errorf("%s: %d of %d points lie outside the fitted shape range: their predictions extrapolate", n, outside[n], len(rows[n])))
	}
	var out []ClassScore
	for _, n := range sortedKeys(rows) {
		rs := rows[n]
		errs := make([]float64, len(rs))
		for i, r := range rs {
			errs[i] = r.Err
		}
		sort.SliceStable(rs, func(i, j int) bool { return math.Abs(rs[i].Err) > math.Abs(rs[j].Err) })
		if len(rs) > worst {
			rs = rs[:worst]
		}
		out = append(out, ClassScore{Name: n, Stats: newStats(errs), Worst: rs})
	}
	return out, warns
}

// inside reports whether (x, y, z) lies within the table's axes, with
// half an octave to spare.
func inside(r *model.Residual, x, y, z float64) bool {
	in := func(ax []float64, v float64) bool {
		l := math.Log2(v)
		return l >= ax[0]-0.5 && l <= ax[len(ax)-1]+0.5
	}
	return in(r.Log2M, x) && in(r.Log2N, y) && in(r.Log2K, z)
}
