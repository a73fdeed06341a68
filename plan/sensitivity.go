package plan

import (
	"fmt"
	"sort"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// The question every architecture review asks: what does 10% more of
// each datasheet number buy? Sensitivity answers it for one scenario.

// A Knob is one datasheet number Sensitivity raises.
type Knob struct {
	Name string // "memory bandwidth", ...
	// sets returns the hardware.Derive settings that raise it by f on d.
	sets func(d *hardware.Device, f float64) []string
}

// Knobs are the numbers Sensitivity raises: the memory bandwidth, every
// matrix peak together, the memory capacity and the scale-up link
// bandwidth.
var Knobs = []Knob{
	{"memory bandwidth", func(d *hardware.Device, f float64) []string {
		return []string{fmt.Sprintf("memory.bandwidth=%g B/s", float64(d.Memory.Bandwidth)*f)}
	}},
	{"matrix peak", func(d *hardware.Device, f float64) []string {
		ts := make([]model.DType, 0, len(d.Matrix))
		for t := range d.Matrix {
			ts = append(ts, t)
		}
		sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
		var out []string
		for _, t := range ts {
			out = append(out, fmt.Sprintf("peak.matrix.%s=%g FLOP/s", t, float64(d.Matrix[t])*f))
		}
		return out
	}},
	{"memory capacity", func(d *hardware.Device, f float64) []string {
		return []string{fmt.Sprintf("memory.capacity=%g B", float64(d.Memory.Capacity)*f)}
	}},
	{"link bandwidth", func(d *hardware.Device, f float64) []string {
		if d.Intra.Bandwidth <= 0 {
			return nil
		}
		return []string{fmt.Sprintf("interconnect.intra.bandwidth=%g B/s", float64(d.Intra.Bandwidth)*f)}
	}},
}

// SensitivityPoint is a scenario's answers on one device.
type SensitivityPoint struct {
	TTFT, TPOT model.Seconds
	// Short is what the scenario's batch needs beyond the usable memory:
	// 0 when it fits; TTFT and TPOT are then those of a run that cannot
	// happen.
	Short    model.Bytes
	MaxBatch int
	// SLOBatch is the largest batch (at most MaxBatch) whose TPOT meets
	// the SLO, and SLOThroughput its output tokens per second per
	// system; 0 when none meets it.
	SLOBatch      int
	SLOThroughput float64
}

// A SensitivityRow is one knob raised by the step: its answers and their
// relative changes from the base (0.05 is 5% more); a change from a base
// of 0 (no batch fits, none meets the SLO) is 0, and Point says what the
// row's value is.
type SensitivityRow struct {
	Knob                                string
	Point                               SensitivityPoint
	TTFT, TPOT, MaxBatch, SLOThroughput float64 // relative changes
	Applies                             bool    // false when the device has no such number (no link)
}

// Sensitivity returns the scenario's answers on dev (the base) and, per
// knob, on dev with that number raised by step (0.1 for 10%), each a
// what-if device (hardware.Derive), relative to the base. A what-if
// prices the kernels its change reaches with dev's calibration carried to
// them, residual tables included, and keeps the others as calibrated, so
// it is continuous with dev and a row is its change's alone. Capacity
// acts through the max batch and the throughput at the SLO, not at the
// scenario's fixed batch. The scenario runs on TP·PP·DP devices.
func Sensitivity(dev *hardware.Device, w sim.Workload, sc sim.Scenario, slo model.Seconds, step float64) (base SensitivityPoint, rows []SensitivityRow, err error) {
	if !(step > 0) {
		return base, nil, fmt.Errorf("plan: sensitivity step %g, want > 0", step)
	}
	if base, err = sensitivityPoint(dev, w, sc, slo); err != nil {
		return base, nil, err
	}
	rel := func(a, b float64) float64 {
		if b == 0 {
			return 0
		}
		return a/b - 1
	}
	for _, k := range Knobs {
		sets := k.sets(dev, 1+step)
		row := SensitivityRow{Knob: k.Name}
		if len(sets) == 0 {
			rows = append(rows, row)
			continue
		}
		d, err := hardware.Derive(dev, sets)
		if err != nil {
			return base, nil, err
		}
		p, err := sensitivityPoint(d, w, sc, slo)
		if err != nil {
			return base, nil, err
		}
		row.Point, row.Applies = p, true
		row.TTFT, row.TPOT = rel(float64(p.TTFT), float64(base.TTFT)), rel(float64(p.TPOT), float64(base.TPOT))
		row.MaxBatch = rel(float64(p.MaxBatch), float64(base.MaxBatch))
		row.SLOThroughput = rel(p.SLOThroughput, base.SLOThroughput)
		rows = append(rows, row)
	}
	return base, rows, nil
}

// sensitivityPoint answers the scenario on d.
func sensitivityPoint(d *hardware.Device, w sim.Workload, sc sim.Scenario, slo model.Seconds) (SensitivityPoint, error) {
	var p SensitivityPoint
	n := max(sc.TP, 1) * max(sc.PP, 1) * max(sc.DP, 1)
	per := min(n, max(1, d.Intra.DevicesPerNode))
	sys, err := hardware.NewSystem(d, per, (n+per-1)/per)
	if err != nil {
		return p, err
	}
	r, err := sim.Run(sys, w, sc)
	if err != nil {
		return p, err
	}
	if r.Inference == nil {
		return p, fmt.Errorf("plan: sensitivity answers inference scenarios")
	}
	p.TTFT, p.TPOT = r.Inference.TTFT, r.Inference.TPOT
	if !r.Memory.Fits {
		p.Short = max(-r.Memory.Headroom, 0)
	}
	if p.MaxBatch, err = sim.MaxBatch(sys, w, sc); err != nil {
		return p, err
	}
	// The largest batch that meets the TPOT SLO: TPOT grows with the
	// batch, so bisect over [1, MaxBatch].
	at := func(b int) (*sim.Report, bool, error) {
		s := sc
		s.Batch = b
		r, err := sim.Run(sys, w, s)
		if err != nil {
			return nil, false, err
		}
		return r, r.Inference.TPOT <= slo, nil
	}
	lo, hi := 0, p.MaxBatch
	var best *sim.Report
	for lo < hi {
		mid := (lo + hi + 1) / 2
		r, ok, err := at(mid)
		if err != nil {
			return p, err
		}
		if ok {
			lo, best = mid, r
		} else {
			hi = mid - 1
		}
	}
	if best == nil && lo > 0 {
		best, _, _ = at(lo)
	}
	if best != nil {
		p.SLOBatch, p.SLOThroughput = lo, best.Inference.OutputTokensPerSecond
	}
	return p, nil
}
