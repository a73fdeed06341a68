package model

import "math"

// FlashRates is a fused attention kernel priced from its measured forward
// throughput rather than from the calibrated attention model: the kernel
// an eager PyTorch pipeline calls (FlashAttention-2 through the flash_attn
// package or PyTorch's scaled_dot_product_attention), which engines'
// calibrated kernels do not stand for. Rates are in FlashAttention's FLOP
// count, 4·d per query-key pair (the two matrix products at head dim d),
// without a causal mask, measured at the head dims Dims and the KV
// lengths KV. Set as AttentionParams.Rates; a pointer, so that a
// processor carrying a table still compares by value.
type FlashRates struct {
	// DimStep is the head-dim step the kernels are compiled for: a head
	// dim between two steps runs the next step's kernel on zero-padded
	// operands (FlashAttention-2: 32, flash_api.cpp's
	// round_multiple(head_size, 32)), so its time is that of the padded
	// width. 0: none.
	DimStep int
	Dims    []int        // measured head dims, ascending
	KV      []int        // measured KV lengths, ascending
	Rate    [][]FLOPRate // Rate[i][j]: head dim Dims[i] at KV length KV[j]
	Source  string
}

// Padded returns the head dim d runs at: d rounded up to DimStep.
func (f *FlashRates) Padded(d int) int {
	if f.DimStep <= 0 || d <= 0 {
		return d
	}
	return (d + f.DimStep - 1) / f.DimStep * f.DimStep
}

// At returns the throughput at head dim d and KV length kv, interpolated
// in log₂ of each between the measured points and held at the nearest
// outside them; 0 for an empty table.
func (f *FlashRates) At(d, kv int) FLOPRate {
	if len(f.Dims) == 0 || len(f.KV) == 0 || len(f.Rate) != len(f.Dims) {
		return 0
	}
	row := func(i int) float64 {
		r := f.Rate[i]
		if len(r) != len(f.KV) {
			return 0
		}
		return interpLog2(f.KV, func(j int) float64 { return float64(r[j]) }, kv)
	}
	return FLOPRate(interpLog2(f.Dims, row, d))
}

// interpLog2 interpolates y over the ascending points xs at x, linearly
// in log₂ x, holding the end values outside.
func interpLog2(xs []int, y func(int) float64, x int) float64 {
	n := len(xs)
	if x <= xs[0] {
		return y(0)
	}
	if x >= xs[n-1] {
		return y(n - 1)
	}
	i := 1
	for xs[i] < x {
		i++
	}
	lo, hi := math.Log2(float64(xs[i-1])), math.Log2(float64(xs[i]))
	f := (math.Log2(float64(x)) - lo) / (hi - lo)
	return y(i-1) + f*(y(i)-y(i-1))
}

// flashPrefill returns the compute, memory and total time of a prefill
// attention priced from f, the FLOPs its tensor cores execute (the padded
// head dims) and its launch cost.
func (p *Processor) flashPrefill(a Attention, f *FlashRates, e *AttentionParams, bw float64) (tc, tm, t, t0 float64, flops FLOPs) {
	t0 = nonNeg(float64(e.Launch))
	if !(e.Launch > 0) {
		t0 = nonNeg(float64(p.Launch))
	}
	hd, vd := f.Padded(a.HeadDim), f.Padded(a.ValueDim())
	pairs := a.Pairs() * float64(max(a.Batch, 0)) * float64(max(a.Heads, 0))
	flops = FLOPs(pairs * (2*float64(hd) + 2*float64(vd) + 5))
	// The table's rate counts 4·d per pair at equal widths: 2·(d + d_v).
	if r := float64(f.At(max(hd, vd), a.KVLen)); r > 0 {
		tc = 2 * float64(hd+vd) * pairs / r
	}
	// The measured rate includes the kernel's own traffic: the memory time
	// binds only where it is longer (a plain roofline, not the
	// calibrated kernel's overlap).
	if bw > 0 {
		tm = float64(a.Bytes()) / (bw * clampEff(e.Memory))
	}
	return tc, tm, math.Max(tc, tm) + t0, t0, flops
}
