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
	MaxBatch   int
	// SLOBatch is the largest batch (at most MaxBatch) whose TPOT meets
	// the SLO, and SLOThroughput its output tokens per second per
	// system; 0 when none meets it.
	SLOBatch      int
	SLOThroughput float64
}

// A SensitivityRow is one knob raised by the step: its answers and their
// relative changes from its base (0.05 is 5% more).
type SensitivityRow struct {
	Knob                                string
	Point                               SensitivityPoint
	TTFT, TPOT, MaxBatch, SLOThroughput float64 // relative changes
	Applies                             bool    // false when the device has no such number (no link)
	// Carried is true when the row's change reaches a kernel on a
	// calibrated device, so that the kernels it reaches are priced with
	// the efficiencies carried, in the row and in its base; false when
	// it is relative to the device as calibrated (SensitivityBases.Own).
	// Its base is SensitivityBases.Carried where the change reaches every
	// kernel, else Base.
	Carried bool
	// Base is the point the row is relative to where its change reaches
	// some kernels and not others: the device with nothing changed,
	// priced as the row is (hardware.PricedAs); zero otherwise.
	Base *SensitivityPoint
}

// SensitivityBases are the answers each row is relative to. A what-if
// whose changes reach no kernel (memory capacity, link bandwidth:
// hardware.KernelNeutral) keeps a calibrated device's own calibration,
// residual tables included, and is compared with the device as it is
// (Own, what simulate gives). One that changes every kernel's numbers
// (the bandwidth) carries the efficiencies to them, and is compared with
// the device priced the same way with nothing changed (Carried), so that
// the row is the change's alone. One that changes some kernels' (the
// matrix peaks: not the elementwise passes, which read the vector peaks)
// carries them to those alone, and is compared with the device priced as
// it is (SensitivityRow.Base). A carried kernel keeps the calibrated
// device's residual table (hardware.Derive), so with nothing changed the
// carried pricing gives the calibrated device's answers and the bases
// agree; they had differed by the residual tables (H100, llama3-8b,
// batch 8: TTFT 362.6 ms against 359 ms). Same is true when they agree,
// on a device that is not calibrated among others.
type SensitivityBases struct {
	Own, Carried SensitivityPoint
	Same         bool
}

// Sensitivity returns the scenario's answers on dev (its bases) and, per
// knob, on dev with that number raised by step (0.1 for 10%), each a
// what-if device (hardware.Derive), relative to the base priced as the
// row is (SensitivityBases). Capacity acts through the max batch and the
// throughput at the SLO, not at the scenario's fixed batch. The scenario
// runs on TP·PP·DP devices.
func Sensitivity(dev *hardware.Device, w sim.Workload, sc sim.Scenario, slo model.Seconds, step float64) (bases SensitivityBases, rows []SensitivityRow, err error) {
	if !(step > 0) {
		return bases, nil, fmt.Errorf("plan: sensitivity step %g, want > 0", step)
	}
	own, err := hardware.Derive(dev, nil)
	if err != nil {
		return bases, nil, err
	}
	if bases.Own, err = sensitivityPoint(own, w, sc, slo); err != nil {
		return bases, nil, err
	}
	bases.Carried, bases.Same = bases.Own, true
	if dev.Calibration().Kind == "calibrated" || dev.Kept != nil {
		carried, err := hardware.DeriveCarried(dev, nil)
		if err != nil {
			return bases, nil, err
		}
		if bases.Carried, err = sensitivityPoint(carried, w, sc, slo); err != nil {
			return bases, nil, err
		}
		bases.Same = bases.Carried == bases.Own
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
			return bases, nil, err
		}
		p, err := sensitivityPoint(d, w, sc, slo)
		if err != nil {
			return bases, nil, err
		}
		base := bases.Own
		switch k := d.TransferredKernels(); {
		case dev.Calibration().Kind != "calibrated" && dev.Kept == nil || k == "" || d.Changed == dev.Changed && (d.Kept == nil) == (dev.Kept == nil) && d.TransferredFrom == dev.TransferredFrom:
			// Priced as dev is (a capacity or link on a what-if dev).
		case k == "every kernel":
			base, row.Carried = bases.Carried, true
		default:
			ref, err := hardware.PricedAs(dev, d)
			if err != nil {
				return bases, nil, err
			}
			b, err := sensitivityPoint(ref, w, sc, slo)
			if err != nil {
				return bases, nil, err
			}
			base, row.Carried, row.Base = b, true, &b
		}
		row.Point, row.Applies = p, true
		row.TTFT, row.TPOT = rel(float64(p.TTFT), float64(base.TTFT)), rel(float64(p.TPOT), float64(base.TPOT))
		row.MaxBatch = rel(float64(p.MaxBatch), float64(base.MaxBatch))
		row.SLOThroughput = rel(p.SLOThroughput, base.SLOThroughput)
		rows = append(rows, row)
	}
	return bases, rows, nil
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
