package plan

import (
	"fmt"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// A ScalingPoint is the best layout's step at one GPU count, under strong
// scaling (the global batch of the request) and weak scaling (the batch
// per GPU of the request's first count).
type ScalingPoint struct {
	GPUs int
	// Strong is the best step at the request's global batch; Speedup is
	// t(ref)/t(GPUs) and Efficiency Speedup·ref/GPUs, ref the smallest
	// count at which a layout fits. Zero when no layout fits or the batch
	// does not divide.
	Strong               model.Seconds
	StrongLayout         TrainLayout
	Speedup, StrongEff   float64
	WeakBatch            int // the first count's batch per GPU times GPUs; 0 where that is not whole (no weak point)
	Weak                 model.Seconds
	WeakLayout           TrainLayout
	WeakEff              float64 // t(ref)/t(GPUs) at the first count's batch per GPU, ref the smallest count that fits
	StrongMFU, WeakMFU   float64
	StrongFits, WeakFits bool
}

// Scaling runs the search at each GPU count of counts (ascending, the
// first the reference) on the catalog system, for strong and weak
// scaling.
func Scaling(system string, w sim.Workload, req TrainRequest, counts []int) ([]ScalingPoint, error) {
	if len(counts) == 0 {
		return nil, nil
	}
	first := counts[0]
	var out []ScalingPoint
	for _, n := range counts {
		pt := ScalingPoint{GPUs: n}
		if req.GlobalBatch*n%first == 0 {
			pt.WeakBatch = req.GlobalBatch * n / first
		}
		sys, err := hardware.LookupSystem(system, n)
		if err != nil {
			return nil, err
		}
		for weak := range 2 {
			r := req
			r.GPUs, r.Top = n, 1
			if weak == 1 {
				if pt.WeakBatch == 0 {
					continue // the first count's batch per GPU makes no whole batch here
				}
				r.GlobalBatch = pt.WeakBatch
			}
			p, err := Train(sys, w, r)
			if err != nil {
				return nil, fmt.Errorf("plan: scaling at %d GPUs: %w", n, err)
			}
			if len(p.Best) == 0 {
				continue
			}
			b := &p.Best[0]
			if weak == 0 {
				pt.Strong, pt.StrongLayout, pt.StrongMFU, pt.StrongFits = b.Step, b.Layout(), b.MFU, true
			} else {
				pt.Weak, pt.WeakLayout, pt.WeakMFU, pt.WeakFits = b.Step, b.Layout(), b.MFU, true
			}
		}
		out = append(out, pt)
	}
	// Each is relative to the smallest count at which a layout fits: a
	// first count that fits nothing had left every point at speedup 0,
	// efficiency 0%, as if measured. The weak batch stays the first
	// count's batch per GPU.
	var strongRef, weakRef *ScalingPoint
	for i := range out {
		if strongRef == nil && out[i].StrongFits {
			strongRef = &out[i]
		}
		if weakRef == nil && out[i].WeakFits {
			weakRef = &out[i]
		}
	}
	for i := range out {
		if ref := strongRef; ref != nil && out[i].StrongFits {
			out[i].Speedup = float64(ref.Strong / out[i].Strong)
			out[i].StrongEff = out[i].Speedup * float64(ref.GPUs) / float64(out[i].GPUs)
		}
		if ref := weakRef; ref != nil && out[i].WeakFits {
			out[i].WeakEff = float64(ref.Weak / out[i].Weak)
		}
	}
	return out, nil
}
