package sim

import (
	"fmt"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// A KernelReport is the prediction for one kernel launch on one device:
// what perfsim kernel prints, and what calibration checks first.
type KernelReport struct {
	Kind      string
	FLOPs     model.FLOPs
	Bytes     model.Bytes
	Intensity model.Intensity
	Bound     model.Bound
	DType     model.DType // the type it computed at (after any fallback)
	// Time is the prediction; Low and High its interval (see Interval).
	Time, Low, High model.Seconds
	Interval        string // "p90" when the device carries held-out errors, else "none"
	// Peak is the compute peak of DType, Bandwidth the memory bandwidth.
	Peak      model.FLOPRate
	Bandwidth model.ByteRate
	// Achieved is FLOPs/Time for arithmetic kernels; AchievedBandwidth is
	// Bytes/Time. Efficiency is the achieved fraction of what bounds the
	// kernel's kind: of Peak for a GEMM or attention, of Bandwidth for a
	// memory pass.
	Achieved          model.FLOPRate
	AchievedBandwidth model.ByteRate
	Efficiency        float64
	// Power is the device's draw during the kernel (0 without a power
	// model), Energy that over Time.
	Power    model.Watts
	Energy   model.Joules
	Warnings []error
}

// Kernel prices one launch of k on d.
func Kernel(d *hardware.Device, k model.Kernel, strict bool) (*KernelReport, error) {
	if d == nil || k == nil {
		return nil, fmt.Errorf("sim: kernel: no device or kernel")
	}
	sys := &hardware.System{Device: d, DevicesPerNode: 1, Nodes: 1, Intra: d.Intra, Inter: d.Inter}
	c := newCoster(sys, strict)
	if err := c.p.Validate(); err != nil {
		return nil, err
	}
	co, rel := c.price(k)
	if c.err != nil {
		return nil, c.err
	}
	r := &KernelReport{
		Kind: kindOf(k).String(), FLOPs: co.FLOPs, Bytes: co.Bytes, Intensity: co.Intensity(), Bound: co.Bound, DType: co.DType,
		Time: co.Time, Low: model.Seconds(low(float64(co.Time), rel)), High: model.Seconds(high(float64(co.Time), rel)),
		Interval: intervalName(&c.p.Eff), Bandwidth: c.p.Bandwidth, Warnings: c.warnings,
		Power: co.Power, Energy: co.Energy(),
	}
	if r.Intensity > 1e300 {
		r.Intensity = 0
	}
	r.Peak, _ = c.p.Peak(co.DType)
	if co.Time > 0 {
		r.Achieved = co.FLOPs.Rate(co.Time)
		r.AchievedBandwidth = co.Bytes.Rate(co.Time)
	}
	switch k.(type) {
	case model.GEMM, model.Attention, model.GroupedGEMM:
		if r.Peak > 0 {
			r.Efficiency = float64(r.Achieved) / float64(r.Peak)
		}
	default:
		if r.Bandwidth > 0 {
			r.Efficiency = float64(r.AchievedBandwidth) / float64(r.Bandwidth)
		}
	}
	return r, nil
}
