package model

import "testing"

// TestProcessor_For: a what-if processor prices a kernel with its Kept
// (calibrated) efficiencies exactly when the kernel's time reads none of
// the numbers it changed: an fp8 peak reaches fp8 GEMMs, attention and
// grouped GEMMs, and the types that fall back to fp8, not bf16 ones nor
// elementwise passes; the L2 reaches GEMMs (and grouped GEMMs the GEMM
// model prices), the vector peaks elementwise passes, the bandwidth and
// the compute units every kernel; a collective reads the links alone.
func TestProcessor_For(t *testing.T) {
	kept := &Processor{Name: "kept"}
	gemm := func(d DType) GEMM { return GEMM{M: 64, N: 64, K: 64, A: d, B: d, C: BF16} }
	attn := func(d DType) Attention {
		return Attention{Batch: 1, Heads: 8, KVHeads: 8, QLen: 128, KVLen: 128, HeadDim: 128, DType: d, KVDType: d}
	}
	group := GroupedGEMM{Rows: 64, Experts: 8, K: 64, N: 64, A: FP8, B: FP8, C: BF16}
	ew := Elementwise{Work: 1, Read: 1, Written: 1}
	coll := Collective{Kind: AllReduce, Size: 1, Ranks: 2}
	fp8 := PeakBit(FP8) | PeakBit(FP8E5M2) | PeakBit(FP4)
	for _, tc := range []struct {
		name string
		c    Changes
		moe  bool // the processor has an MoE table
		k    Kernel
		want bool // priced with the changed (carried) efficiencies
	}{
		{"fp8 peak, bf16 GEMM", Changes{Peaks: fp8}, false, gemm(BF16), false},
		{"fp8 peak, fp8 GEMM", Changes{Peaks: fp8}, false, gemm(FP8), true},
		{"fp8 peak, fp4 GEMM at fp8", Changes{Peaks: fp8}, false, gemm(FP4), true},
		{"fp8 peak, bf16 attention", Changes{Peaks: fp8}, false, attn(BF16), false},
		{"fp8 peak, fp8 attention", Changes{Peaks: fp8}, false, attn(FP8), true},
		{"fp8 peak, fp8 grouped GEMM", Changes{Peaks: fp8}, true, group, true},
		{"fp8 peak, elementwise", Changes{Peaks: fp8}, false, ew, false},
		{"fp32 peak, elementwise", Changes{Peaks: PeakBit(FP32)}, false, ew, true},
		{"vector peak, elementwise", Changes{Vector: true}, false, ew, true},
		{"vector peak, bf16 GEMM", Changes{Vector: true}, false, gemm(BF16), false},
		{"L2, bf16 GEMM", Changes{L2: true}, false, gemm(BF16), true},
		{"L2, attention", Changes{L2: true}, false, attn(BF16), false},
		{"L2, grouped GEMM with an MoE table", Changes{L2: true}, true, group, false},
		{"L2, grouped GEMM by the GEMM model", Changes{L2: true}, false, group, true},
		{"bandwidth, bf16 GEMM", Changes{Bandwidth: true}, false, gemm(BF16), true},
		{"bandwidth, elementwise", Changes{Bandwidth: true}, false, ew, true},
		{"units, bf16 attention", Changes{Units: true}, false, attn(BF16), true},
		{"bandwidth, collective", Changes{Bandwidth: true}, false, coll, false},
	} {
		p := &Processor{Name: "what-if", Kept: kept, Changed: tc.c}
		if tc.moe {
			p.Eff.MoE.Source = "fitted"
		}
		if got := p.Reads(tc.k); got != tc.want {
			t.Errorf("%s: Reads %v, want %v", tc.name, got, tc.want)
		}
		want := kept
		if tc.want {
			want = p
		}
		if got := p.For(tc.k); got != want {
			t.Errorf("%s: For gives %s, want %s", tc.name, got.Name, want.Name)
		}
	}
	// Without Kept every kernel is p's.
	p := &Processor{Name: "p"}
	if p.For(gemm(BF16)) != p {
		t.Error("a processor without Kept priced a kernel with another")
	}
}

// TestProcessor_keptPrices: the cost functions price a kernel that reads
// nothing changed with the Kept processor's efficiencies, byte for byte,
// and one that reads a change with the processor's own.
func TestProcessor_keptPrices(t *testing.T) {
	base := Processor{Name: "base", ComputeUnits: 132, Bandwidth: 3.35e12, L2: 50e6, Launch: 4e-6,
		Matrix: map[DType]FLOPRate{BF16: 989.5e12, FP8: 1979e12}}
	base.Eff.GEMM = map[DType]GEMMParams{BF16: {Compute: 0.8, Memory: 0.9}, FP8: {Compute: 0.7, Memory: 0.9}}
	base.Eff.Attention = AttentionParams{Compute: 0.6, Memory: 0.8}
	carried := base
	carried.Matrix = map[DType]FLOPRate{BF16: 989.5e12, FP8: 4000e12}
	carried.Eff.GEMM = map[DType]GEMMParams{BF16: {Compute: 0.5, Memory: 0.5}, FP8: {Compute: 0.5, Memory: 0.5}}
	carried.Eff.Attention = AttentionParams{Compute: 0.3, Memory: 0.4}
	kept := carried
	kept.Eff = base.Eff
	what := carried
	what.Kept, what.Changed = &kept, Changes{Peaks: PeakBit(FP8) | PeakBit(FP8E5M2) | PeakBit(FP4)}
	g := GEMM{M: 4096, N: 4096, K: 4096, A: BF16, B: BF16, C: BF16}
	if a, b := what.GEMMCost(g), base.GEMMCost(g); a != b {
		t.Errorf("bf16 GEMM: %v, want the base's %v", a.Time, b.Time)
	}
	if a, b := what.Cost(g), base.Cost(g); a != b {
		t.Errorf("bf16 GEMM through Cost: %v, want the base's %v", a.Time, b.Time)
	}
	a := Attention{Batch: 1, Heads: 32, KVHeads: 8, QLen: 2048, KVLen: 2048, HeadDim: 128, DType: BF16, KVDType: BF16}
	if x, y := what.AttentionCost(a), base.AttentionCost(a); x != y {
		t.Errorf("bf16 attention: %v, want the base's %v", x.Time, y.Time)
	}
	g.A, g.B = FP8, FP8
	if x, y := what.GEMMCost(g), carried.GEMMCost(g); x != y {
		t.Errorf("fp8 GEMM: %v, want the carried %v", x.Time, y.Time)
	}
	a.DType, a.KVDType = FP8, FP8
	if x, y := what.AttentionCost(a), carried.AttentionCost(a); x != y {
		t.Errorf("fp8 attention: %v, want the carried %v", x.Time, y.Time)
	}
}
