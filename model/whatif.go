package model

// What a kernel's time reads of a device, for what-if devices.
//
// A what-if device (hardware.Derive) is a calibrated device with some
// datasheet numbers changed. A kernel whose roofline reads none of the
// changed numbers takes the time it takes on the calibrated device, with
// that device's own fitted tables (residuals and held-out figures
// included); one that reads a changed number is priced with the
// calibration carried to the what-if (hardware.Derive: fractions kept,
// per-unit times by the clock ratio, the calibrated device's residual
// tables kept, the measured transfer error as its band). Such a processor holds both: Eff, the carried efficiencies, and
// Kept, the processor with the calibrated device's own; Changed says
// which numbers changed, and For picks, per kernel, the processor that
// prices it.

// Changes are the datasheet numbers of a what-if processor that differ
// from those of the calibrated device its Kept efficiencies were fitted
// on. The zero value changes nothing.
type Changes struct {
	// Peaks has bit t set when a kernel computing in type t (as it asks,
	// before Supported's fallback) runs at another rate, or in another
	// type, than on the calibrated device: the matrix peak of t changed,
	// or the peak t falls back to, or t gained or lost a peak of its own.
	Peaks uint32
	// Vector: a vector peak changed (elementwise arithmetic).
	Vector bool
	// L2: the last-level cache's size changed (the GEMM model's activation
	// reads, gemm.go).
	L2 bool
	// Bandwidth: the memory bandwidth changed, which every kernel reads.
	Bandwidth bool
	// Units: the compute units, the clock or what follows from them
	// (the shared memory's and the special-function units' rates, the
	// carried per-unit times), which every kernel reads.
	Units bool
}

// PeakBit returns the bit of Changes.Peaks that stands for type d.
func PeakBit(d DType) uint32 {
	if d <= Invalid || d >= 32 {
		return 0
	}
	return 1 << d
}

// Any reports whether c changes a number some kernel reads.
func (c Changes) Any() bool { return c.Peaks != 0 || c.Vector || c.L2 || c.Every() }

// Every reports whether c changes a number every kernel reads (the
// bandwidth, the compute units, the clock).
func (c Changes) Every() bool { return c.Bandwidth || c.Units }

// reads reports whether a kernel computing in type d, reading the L2
// (l2) or the vector peaks (vec) or not, reads a number c changes.
func (c Changes) reads(d DType, l2, vec bool) bool {
	return c.Every() || c.Peaks&PeakBit(d) != 0 || (l2 && c.L2) || (vec && c.Vector)
}

// Reads reports whether k's time on p reads a datasheet number that
// p.Changed changes: its compute type's peak (GEMM, grouped GEMM,
// attention, scan), the L2 (a GEMM, and a grouped GEMM the GEMM model
// prices), the vector peaks and the fp32 rate (elementwise passes,
// gathers, a scan's streaming decode), and the bandwidth, compute units
// and clock (every kernel). A collective reads the links, not the chip.
func (p *Processor) Reads(k Kernel) bool {
	c := p.Changed
	switch k := k.(type) {
	case GEMM:
		return c.reads(k.Compute(), true, false)
	case GroupedGEMM:
		return c.reads(k.Compute(), p.Eff.MoE.Source == "", false)
	case Attention:
		return c.reads(k.DType, false, false)
	case Scan:
		return c.reads(k.DType, false, true) || c.Peaks&PeakBit(FP32) != 0
	case Collective:
		return false
	}
	return c.reads(FP32, false, true)
}

// For returns the processor that prices k: p, or, where p is a what-if
// processor (Kept set) and k's time reads none of the numbers it changed
// (Reads), its Kept processor, with the calibrated device's own
// efficiencies.
func (p *Processor) For(k Kernel) *Processor {
	if p.Kept == nil || p.Reads(k) {
		return p
	}
	return p.Kept
}

// forType is For for a kernel computing in type d that reads the L2 or
// not, without boxing the kernel.
func (p *Processor) forType(d DType, l2 bool) *Processor {
	if p.Kept == nil || p.Changed.reads(d, l2, false) {
		return p
	}
	return p.Kept
}
