package model

import (
	"math"
	"testing"
)

// TestAttentionCost_operandRows checks the shared-memory bound of a
// prefill's matrix products. A score moves (D + D_v)·e·(1/R + 1/T) bytes
// of shared memory for its 2·(D + D_v) FLOPs: TensorRT-LLM's Ampere
// kernel (R = 16 rows a warp, T = 64 queries a CTA) at head size 128 in
// bf16 moves 512·(1/16 + 1/64) = 40 bytes, 12.8 FLOPs a byte, so an A100
// (108 SMs × 1.41 GHz × 128 B = 19.49 TB/s) feeds its tensor cores at
// most 249.5 TFLOP/s of their 312: a compute-bound prefill's matrix time
// is 312/249.5 = 1.2506× the peak's. A Hopper kernel (R = 64, T = 128:
// 12 bytes, 42.7 FLOPs a byte) on an H100 (33.45 TB/s: 1,427 TFLOP/s)
// is not bound at 989.5 TFLOP/s, but would be at twice that peak. An
// unset R, or a device without a shared-memory figure, prices the peak.
func TestAttentionCost_operandRows(t *testing.T) {
	const (
		a100Shared = 108 * 1.41e9 * 128
		h100Shared = 132 * 1.98e9 * 128
	)
	// A long causal prompt, whose time is its matrix products: the
	// exponentials are made free (a rate of 1e30 a second), the memory
	// time is far below and overlaps (the maximum), and there is no wave
	// overhead or launch cost.
	long := Attention{Batch: 1, Heads: 32, KVHeads: 8, QLen: 16384, KVLen: 16384, HeadDim: 128, Causal: true, Fused: true, DType: BF16, KVDType: BF16}
	proc := func(units int, peak, shared float64, rows, tile int) *Processor {
		return &Processor{
			Name: "test", ComputeUnits: units, Matrix: map[DType]FLOPRate{BF16: FLOPRate(peak), FP8: FLOPRate(2 * peak)},
			Bandwidth: 2e12, SharedBandwidth: ByteRate(shared),
			Eff: Efficiency{Attention: AttentionParams{Compute: 0.5, Memory: 1, SoftmaxRate: 1e30, QueryTile: tile, OperandRows: rows}},
		}
	}
	tests := []struct {
		name        string
		units       int
		peak        float64
		shared      float64
		rows, tile  int
		dtype       DType
		wantRateTFs float64 // the matrix products' attainable rate
	}{
		{"A100, Ampere kernel: bound by shared memory", 108, 312e12, a100Shared, 16, 64, BF16, a100Shared * 12.8 / 1e12},
		{"A100, rows unset: the peak", 108, 312e12, a100Shared, 0, 64, BF16, 312},
		{"A100, no shared-memory figure: the peak", 108, 312e12, 0, 16, 64, BF16, 312},
		{"H100, Hopper kernel: the peak", 132, 989.5e12, h100Shared, 64, 128, BF16, 989.5},
		{"H100 fp8 (1 byte, 85.3 FLOPs a byte): the peak", 132, 989.5e12, h100Shared, 64, 128, FP8, 1979},
		{"twice the H100's peak: bound by shared memory", 132, 1979e12, h100Shared, 64, 128, BF16, h100Shared * 512 / 12 / 1e12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := long
			a.DType, a.KVDType = tt.dtype, tt.dtype
			got := proc(tt.units, tt.peak, tt.shared, tt.rows, tt.tile).AttentionCost(a).Time
			// The compute time alone at the expected rate: 4·D·P at η_c,
			// over whole waves of T-query CTAs (a multiple here, so the
			// arithmetic spreads evenly), plus nothing else.
			scores := a.Pairs() * float64(a.Batch*a.Heads)
			ctas := float64(a.Batch*a.Heads) * float64(a.QLen/tt.tile)
			waves := math.Ceil(ctas / float64(tt.units))
			want := waves * float64(tt.units) / ctas * 4 * 128 * scores / (tt.wantRateTFs * 1e12 * 0.5)
			if math.Abs(float64(got)/want-1) > 1e-6 {
				t.Errorf("time %.6g s, want %.6g s (matrix products at %.1f TFLOP/s)", float64(got), want, tt.wantRateTFs)
			}
		})
	}
	// The bound is the one the doc comment states for the A100: 249.5
	// TFLOP/s, a 1.2506× longer matrix time than at the peak.
	if r := a100Shared * 12.8 / 312e12; math.Abs(r-0.7996) > 1e-3 {
		t.Errorf("A100 bound %.4f of the peak, want 0.7996", r)
	}
}
