package model

import "testing"

// TestOpCounts checks what each kernel of the IR reports against hand
// counts.
func TestOpCounts(t *testing.T) {
	// A batched GEMM: 96 heads of 2048×128·128×2048 (seed 003's Q·Kᵀ per
	// head): 96·2048·128·2048 MACs; bf16 traffic 96·(2048·128 + 128·2048
	// + 2048·2048)·2 bytes.
	g := GEMM{M: 2048, K: 128, N: 2048, Batch: 96, A: BF16, B: BF16, C: BF16}
	if got, want := g.MACs(), 96.0*2048*128*2048; got != want {
		t.Errorf("GEMM.MACs() = %g, want %g", got, want)
	}
	if got, want := g.FLOPs(), FLOPs(2*96.0*2048*128*2048); got != want {
		t.Errorf("GEMM.FLOPs() = %g, want %g", float64(got), float64(want))
	}
	if got, want := g.Bytes(), Bytes(96*(2048*128+128*2048+2048*2048)*2); got != want {
		t.Errorf("GEMM.Bytes() = %v, want %v", got, want)
	}
	// Batch 0 means 1.
	if g1 := (GEMM{M: 2, K: 3, N: 4, A: FP32, B: FP32, C: FP32}); g1.MACs() != 24 || g1.Bytes() != 4*(6+12+8) {
		t.Errorf("GEMM 2x3x4: MACs %g bytes %v", g1.MACs(), g1.Bytes())
	}
	// An implicit-GEMM convolution states its operands in memory: a 3×3
	// conv over 2 × 8×8 inputs of 4 channels to 5 (M = 2·8·8 = 128, K =
	// 36, N = 5) reads the 2·4·8·8 = 512 input elements, not the 4,608 of
	// the unfolded matrix; its data gradient writes them (CElems). The
	// arithmetic is unchanged.
	cv := GEMM{M: 128, K: 36, N: 5, A: FP16, B: FP16, C: FP16, AElems: 512}
	if got, want := cv.Bytes(), Bytes(2*(512+36*5+128*5)); got != want || cv.MACs() != 128*36*5 {
		t.Errorf("conv GEMM: bytes %v (want %v), MACs %g", got, want, cv.MACs())
	}
	dg := GEMM{M: 128, K: 5, N: 36, Batch: 2, A: FP16, B: FP16, C: FP16, CElems: 512}
	if got, want := dg.Bytes(), Bytes(2*2*(128*5+5*36+512)); got != want || dg.AElements() != 640 || dg.CElements() != 512 {
		t.Errorf("dgrad GEMM: bytes %v (want %v), A %g C %g elements", got, want, dg.AElements(), dg.CElements())
	}
	// Weight-only int4: the weights are half a byte plus one fp16 scale
	// per 128, and the multiply runs at the activations' type.
	w4 := GEMM{M: 1, K: 128, N: 1, A: BF16, B: INT4, C: BF16}
	if got, want := w4.Bytes(), Bytes(128*2+128*0.5*(1+2.0/64)+2); got != want || w4.Compute() != BF16 {
		t.Errorf("int4 GEMM: bytes %v (want %v), computes in %v", got, want, w4.Compute())
	}

	op := Op{Name: "ffn.up", Count: 96, Kernel: GEMM{M: 2048, K: 12288, N: 49152, A: BF16, B: BF16, C: BF16}}
	// 2048·12288·49152 = 1,236,950,581,248 per layer (seed 003: 1.23695E+12).
	if got, want := op.MACs(), 96*1236950581248.0; got != want {
		t.Errorf("Op.MACs() = %g, want %g", got, want)
	}
	if op.FLOPs() != 96*op.Kernel.FLOPs() || op.Bytes() != 96*op.Kernel.Bytes() {
		t.Errorf("Op.FLOPs/Bytes are not Count × the kernel's")
	}

	e := Elementwise{Kind: "add", Elements: 10, Work: 10, Read: 40, Written: 20}
	if (Op{Count: 3, Kernel: e}).MACs() != 0 || e.FLOPs() != 10 || e.Bytes() != 60 {
		t.Errorf("Elementwise: MACs %g FLOPs %v bytes %v", (Op{Count: 3, Kernel: e}).MACs(), e.FLOPs(), e.Bytes())
	}
	// An embedding lookup of 2048 rows of 12288 bf16: read and written once.
	if ga := (Gather{Rows: 2048, Width: 12288, DType: BF16}); ga.FLOPs() != 0 || ga.Bytes() != 2*2048*12288*2 {
		t.Errorf("Gather: FLOPs %v bytes %v", ga.FLOPs(), ga.Bytes())
	}
	// Attention: causal, 4 queries over 4 keys is 10 pairs; 2 sequences ×
	// 3 heads × 10 pairs × (4·64 + 5) FLOPs.
	a := Attention{Batch: 2, Heads: 3, KVHeads: 1, QLen: 4, KVLen: 4, HeadDim: 64, Causal: true, Fused: true, DType: BF16, KVDType: FP8}
	if got, want := a.FLOPs(), FLOPs(2*3*10*(4*64+5)); got != want {
		t.Errorf("Attention.FLOPs() = %v, want %v", got, want)
	}
	// Fused: Q and O (2·2·3·4·64 bf16 elements) and K, V (2·2·1·4·64 fp8).
	if got, want := a.Bytes(), Bytes(2*2*3*4*64*2+2*2*1*4*64*1); got != want {
		t.Errorf("Attention.Bytes() = %v, want %v", got, want)
	}
	a.Fused = false // plus 4 passes over 2·3·10 scores in bf16
	if got, want := a.Bytes(), Bytes(2*2*3*4*64*2+2*2*1*4*64*1+4*2*3*10*2); got != want {
		t.Errorf("unfused Attention.Bytes() = %v, want %v", got, want)
	}
}

// TestCollectiveTraffic: ring algorithms (Patarasuk & Yuan 2009; the NCCL
// performance notes' bus-bandwidth factors): all-reduce 2(p−1)/p·S,
// all-gather, reduce-scatter and all-to-all (p−1)/p·S, send S.
func TestCollectiveTraffic(t *testing.T) {
	tests := []struct {
		c       Collective
		traffic Bytes
		steps   int
	}{
		{Collective{Kind: AllReduce, Size: 800, Ranks: 8}, 1400, 14},
		{Collective{Kind: AllGather, Size: 800, Ranks: 8}, 700, 7},
		{Collective{Kind: ReduceScatter, Size: 800, Ranks: 8}, 700, 7},
		{Collective{Kind: AllToAll, Size: 800, Ranks: 8}, 700, 7},
		{Collective{Kind: SendRecv, Size: 800, Ranks: 2}, 800, 1},
		{Collective{Kind: AllReduce, Size: 800, Ranks: 1}, 0, 0},
	}
	for _, tt := range tests {
		if got := tt.c.Traffic(); got != tt.traffic || tt.c.Bytes() != got || tt.c.FLOPs() != 0 {
			t.Errorf("%v over %d: traffic %v, want %v", tt.c.Kind, tt.c.Ranks, got, tt.traffic)
		}
		if got := tt.c.Steps(); got != tt.steps {
			t.Errorf("%v over %d: %d steps, want %d", tt.c.Kind, tt.c.Ranks, got, tt.steps)
		}
	}
}
