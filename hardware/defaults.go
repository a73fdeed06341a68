package hardware

import (
	"fmt"
	"math"
	"strings"

	"github.com/perfsim/perfsim/model"
)

// Default efficiencies for a hand-written device.
//
// A hardware file that sets no [efficiency] at all would otherwise run at
// its datasheet peaks with no launch cost: a perfect roofline, faster
// than any device perfsim has measured. Such a device takes, instead, the
// efficiencies of a calibrated catalog device:
//
//   - of its own family when it has one (an NVIDIA GPU of a known
//     generation, NearestCalibrated): carried by Transfer and labelled
//     "transferred", as the catalog's uncalibrated GPUs are;
//   - else of the calibrated device of the same kind (gpu, cpu, tpu, ...)
//     nearest to it in ridge point (bf16 matrix peak over bandwidth), by
//     the same rules (fractions carried, per-unit times by the clock
//     ratio, residual tables dropped), with that device's streaming
//     fraction, vector fraction and launch cost. These are defaults, not
//     a measurement: the device stays "uncalibrated", its label names the
//     efficiency and where it came from, and no interval is printed (no
//     transfer error has been measured across vendors).
//
// A kind without a calibrated device (today every kind but gpu) keeps
// the file's own figures, and its label says so.

// KindDefaults returns a hand-written device's efficiencies as above: it
// changes d when d is uncalibrated and its file set no efficiency key,
// and reports whether it did.
func KindDefaults(d *Device) bool {
	if d.Calibration().Kind != "uncalibrated" || !effUnset(d) {
		return false
	}
	cal := calibratedDevices()
	if base := NearestCalibrated(d, cal); base != nil {
		seedEff(d, base)
		Transfer(d, base)
		return true
	}
	base := nearestOfKind(d, cal)
	if base == nil {
		return false
	}
	seedEff(d, base)
	Transfer(d, base)
	d.TransferredFrom = ""
	d.DefaultsFrom = base.Name
	note := fmt.Sprintf("default for a hand-written %s: the fitted efficiencies of %s, the calibrated %s nearest in bf16 peak over bandwidth (not measured on this device)", d.Kind, base.Name, d.Kind)
	for t, g := range d.Eff.GEMM {
		g.ErrMedian, g.ErrP90 = 0, 0
		g.Source = note
		d.Eff.GEMM[t] = g
	}
	d.Eff.Attention.ErrMedian, d.Eff.Attention.ErrP90 = 0, 0
	d.Eff.Attention.Source = note
	d.Eff.Memory.ErrMedian, d.Eff.Memory.ErrP90 = 0, 0
	d.Eff.Memory.Source = note
	if d.Sources == nil {
		d.Sources = map[string]string{}
	}
	d.Sources["efficiency"] = note
	for t := range d.Eff.GEMM {
		for _, k := range []string{"compute", "memory", "launch"} {
			d.Sources["efficiency.gemm."+t.String()+"."+k] = note
		}
	}
	for _, k := range []string{"memory.efficiency", "attention.compute", "attention.memory", "vector"} {
		d.Sources["efficiency."+k] = note
	}
	if d.Sources["launch_overhead"] == "" || strings.HasPrefix(d.Sources["launch_overhead"], "default") {
		d.Sources["launch_overhead"] = note
	}
	return true
}

// effUnset reports whether d's file set no efficiency at all.
func effUnset(d *Device) bool {
	e := d.Eff
	if e.Vector != 0 || e.Memory.Efficiency != 0 || e.Attention.Compute != 0 || e.Attention.Memory != 0 {
		return false
	}
	for _, g := range e.GEMM {
		if g.Compute != 0 || g.Memory != 0 {
			return false
		}
	}
	return true
}

// seedEff gives d an entry for every GEMM type base has fitted and d has
// a peak for (Transfer fills only the entries d has), and base's
// streaming and vector fractions and launch cost where d has none.
func seedEff(d, base *Device) {
	if d.Eff.GEMM == nil {
		d.Eff.GEMM = map[model.DType]model.GEMMParams{}
	}
	for t, g := range base.Eff.GEMM {
		if g.Points == 0 && t != model.FP16 {
			continue
		}
		if _, has := d.Matrix[t.Peak()]; has {
			if _, set := d.Eff.GEMM[t]; !set {
				d.Eff.GEMM[t] = model.GEMMParams{}
			}
		}
	}
	if _, has := d.Matrix[model.FP16]; has {
		if _, set := d.Eff.GEMM[model.FP16]; !set {
			d.Eff.GEMM[model.FP16] = model.GEMMParams{}
		}
	}
	if d.Eff.Memory.Efficiency == 0 {
		d.Eff.Memory = base.Eff.Memory
	}
	if d.Eff.Vector == 0 {
		d.Eff.Vector = base.Eff.Vector
	}
	if d.Launch == 0 {
		d.Launch = base.Launch
	}
}

// nearestOfKind returns the calibrated device of d's kind nearest to it
// in ridge point (bf16 matrix peak over bandwidth), ties by name, or nil.
func nearestOfKind(d *Device, among []*Device) *Device {
	var best *Device
	bestKey := math.Inf(1)
	for _, c := range among {
		if c.Kind != d.Kind || c.Name == d.Name || c.Calibration().Kind != "calibrated" {
			continue
		}
		k := math.Abs(math.Log(ridgePoint(c) / ridgePoint(d)))
		if best == nil || k < bestKey || (k == bestKey && c.Name < best.Name) {
			best, bestKey = c, k
		}
	}
	return best
}
