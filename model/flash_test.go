package model

import (
	"math"
	"testing"
)

// TestFlashRates_at: the measured points exactly, log₂ interpolation
// between them in KV length and head dim, the nearest held outside, and
// the head dim padded to the kernel's step.
func TestFlashRates_at(t *testing.T) {
	f := &FlashRates{DimStep: 32, Dims: []int{64, 128}, KV: []int{512, 2048},
		Rate: [][]FLOPRate{{100e12, 200e12}, {300e12, 500e12}}}
	for _, tt := range []struct {
		name  string
		d, kv int
		want  float64
	}{
		{"point", 64, 512, 100e12},
		{"point far", 128, 2048, 500e12},
		{"kv midpoint in log2", 64, 1024, 150e12},
		{"kv below held", 64, 300, 100e12},
		{"kv above held", 128, 1 << 20, 500e12},
		{"dim between: log2(96/64) of the way", 96, 512, 100e12 + math.Log2(1.5)*200e12},
		{"dim below held", 32, 2048, 200e12},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := float64(f.At(tt.d, tt.kv)); math.Abs(got/tt.want-1) > 1e-12 {
				t.Errorf("At(%d, %d) = %g, want %g", tt.d, tt.kv, got, tt.want)
			}
		})
	}
	for d, want := range map[int]int{72: 96, 64: 64, 1: 32, 128: 128, 130: 160} {
		if got := f.Padded(d); got != want {
			t.Errorf("Padded(%d) = %d, want %d", d, got, want)
		}
	}
	if got := (&FlashRates{}).At(64, 512); got != 0 {
		t.Errorf("an empty table: %v, want 0", got)
	}
}

// TestAttentionCost_flashRates: a prefill priced from a kernel's measured
// rate takes the padded head dims' FLOPs at that rate plus the launch, and
// reports the FLOPs its tensor cores execute; a decode step keeps the
// calibrated model.
func TestAttentionCost_flashRates(t *testing.T) {
	f := &FlashRates{DimStep: 32, Dims: []int{64, 128}, KV: []int{4096}, Rate: [][]FLOPRate{{300e12}, {400e12}}}
	p := &Processor{Name: "x", ComputeUnits: 132, Matrix: map[DType]FLOPRate{BF16: 989e12}, Bandwidth: 3.35e12, Launch: 5e-6,
		Eff: Efficiency{Attention: AttentionParams{Compute: 0.8, Memory: 0.9, Rates: f}}}
	a := Attention{Batch: 2, Heads: 16, KVHeads: 16, QLen: 4096, KVLen: 4096, HeadDim: 72, Fused: true, DType: BF16, KVDType: BF16}
	pairs := 2 * 16 * 4096.0 * 4096
	rate := 300e12 + math.Log2(1.5)*100e12 // head dim 96, between 64 and 128
	want := 2*(96+96)*pairs/rate + 5e-6
	c := p.AttentionCost(a)
	if got := float64(c.Time); math.Abs(got/want-1) > 1e-9 {
		t.Errorf("time %g, want %g", got, want)
	}
	if got, want := float64(c.FLOPs), pairs*(2*96+2*96+5); got != want {
		t.Errorf("FLOPs %g, want the padded %g", got, want)
	}
	p.Eff.Attention.Rates = nil
	if c2 := p.AttentionCost(a); c2.Time == c.Time {
		t.Error("without the table the calibrated model prices the same time")
	}
	p.Eff.Attention.Rates = f
	p.Eff.Attention.DecodeMemory, p.Eff.Attention.DecodeLaunch = 0.9, 5e-6
	d := Attention{Batch: 2, Heads: 16, KVHeads: 16, QLen: 1, KVLen: 4096, HeadDim: 72, Fused: true, DType: BF16, KVDType: BF16}
	withTable := p.AttentionCost(d)
	p.Eff.Attention.Rates = nil
	if got := p.AttentionCost(d); got != withTable {
		t.Errorf("a decode step: %+v with the table, %+v without; want the same", withTable, got)
	}
}
