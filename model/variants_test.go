package model

import (
	"math"
	"testing"
)

// pairsBrute counts the query–key pairs of a by enumeration.
func pairsBrute(a Attention) float64 {
	n := 0
	for i := 0; i < a.QLen; i++ {
		pos := a.KVLen - a.QLen + i // this query's own position
		for j := 0; j < a.KVLen; j++ {
			if a.Causal && j > pos {
				continue
			}
			if a.Window > 0 && (a.Causal && pos-j >= a.Window || !a.Causal && j >= a.Window) {
				continue
			}
			n++
		}
	}
	return float64(n)
}

func TestAttention_windowPairs(t *testing.T) {
	for _, q := range []int{1, 3, 7, 16} {
		for _, kv := range []int{16, 17, 40} {
			for _, w := range []int{0, 1, 4, 16, 64} {
				for _, causal := range []bool{true, false} {
					a := Attention{QLen: q, KVLen: kv, Window: w, Causal: causal}
					if got, want := a.Pairs(), pairsBrute(a); got != want {
						t.Errorf("Pairs(q %d kv %d window %d causal %v) = %v, want %v", q, kv, w, causal, got, want)
					}
				}
			}
		}
	}
}

func TestAttention_variantsBytes(t *testing.T) {
	// Mistral 7B v0.1 decoding at 32k with a 4,096-token window reads
	// 4,096 keys, not 32k (mistralai/Mistral-7B-v0.1 config.json:
	// sliding_window 4096, 8 KV heads of 128).
	a := Attention{Batch: 1, Heads: 32, KVHeads: 8, QLen: 1, KVLen: 32768, HeadDim: 128, Window: 4096, Causal: true, Fused: true, DType: BF16, KVDType: BF16}
	if got := a.KeysRead(); got != 4096 {
		t.Errorf("KeysRead = %d, want 4096", got)
	}
	wantKV := 8.0 * 4096 * 256 * 2
	wantQO := 32.0 * 256 * 2
	if got := float64(a.Bytes()); got != wantKV+wantQO {
		t.Errorf("Bytes = %v, want %v", got, wantKV+wantQO)
	}
	// DeepSeek-V3's absorbed MLA decode: one latent of 512 + 64 per token,
	// read once for all 128 heads; scores over 576, values over 512.
	m := Attention{Batch: 1, Heads: 128, KVHeads: 1, QLen: 1, KVLen: 1000, HeadDim: 576, VDim: 512, Latent: true, Causal: true, Fused: true, DType: BF16, KVDType: BF16}
	if got, want := float64(m.Bytes()), 1000.0*576*2+128*(576+512)*2; got != want {
		t.Errorf("MLA Bytes = %v, want %v", got, want)
	}
	if got, want := float64(m.FLOPs()), 1000.0*128*(2*576+2*512+5); got != want {
		t.Errorf("MLA FLOPs = %v, want %v", got, want)
	}
}

func TestExpectedExperts(t *testing.T) {
	tests := []struct {
		t, k, e int
		want    float64
	}{
		{1, 2, 8, 2},
		{4, 2, 8, 8 * (1 - math.Pow(0.75, 4))}, // ≈ 5.47 (issue 13)
		{0, 2, 8, 0},
		{1000, 8, 256, 256 * (1 - math.Pow(1-8.0/256, 1000))},
		{3, 8, 8, 8},
	}
	for _, tt := range tests {
		if got := ExpectedExperts(tt.t, tt.k, tt.e); math.Abs(got-tt.want) > 1e-9*tt.want {
			t.Errorf("ExpectedExperts(%d, %d, %d) = %v, want %v", tt.t, tt.k, tt.e, got, tt.want)
		}
	}
	if got := ExpectedExperts(4, 2, 8); math.Abs(got-5.47) > 0.005 {
		t.Errorf("Mixtral at 4 tokens: %v experts, want ≈ 5.47", got)
	}
}

func TestGroupedGEMM(t *testing.T) {
	// Mixtral 8x7B's expert up-projection at batch 4 decode: 8 routed
	// rows over 5.47 experts of 4096×14336.
	e := ExpectedExperts(4, 2, 8)
	g := GroupedGEMM{Rows: 8, Experts: e, K: 4096, N: 14336, A: BF16, B: BF16, C: BF16}
	want := 8*4096*2 + e*4096*14336*2 + 8*14336*2
	if got := float64(g.Bytes()); math.Abs(got-want) > 1e-6*want {
		t.Errorf("Bytes = %v, want %v", got, want)
	}
	if got, want := float64(g.FLOPs()), 2.0*8*4096*14336; got != want {
		t.Errorf("FLOPs = %v, want %v", got, want)
	}
	p := Processor{Name: "x", ComputeUnits: 108, Matrix: map[DType]FLOPRate{BF16: 312e12}, Bandwidth: 2.039e12, Launch: 4e-6}
	c := p.GroupedGEMMCost(g)
	floor := math.Max(float64(g.FLOPs())/312e12, float64(g.Bytes())/2.039e12)
	if !(float64(c.Time) >= floor) {
		t.Errorf("time %v below the roofline %v", c.Time, floor)
	}
	// One grouped launch costs less than the experts as separate GEMMs
	// (each with its own launch), and more rows never cost less.
	one := p.GEMMCost(GEMM{M: 2, K: 4096, N: 14336, A: BF16, B: BF16, C: BF16})
	if sep := 6 * one.Time; !(c.Time < sep) {
		t.Errorf("grouped %v not below 6 separate GEMMs %v", c.Time, sep)
	}
	prev := Seconds(0)
	for _, rows := range []int{1, 8, 64, 512, 4096} {
		g := GroupedGEMM{Rows: rows, Experts: ExpectedExperts(rows/2+1, 2, 8), K: 4096, N: 14336, A: BF16, B: BF16, C: BF16}
		c := p.GroupedGEMMCost(g)
		if c.Time < prev {
			t.Errorf("rows %d: %v less than %v at fewer rows", rows, c.Time, prev)
		}
		prev = c.Time
	}
}

// TestMoETable checks the fitted MoE table's finalisation and 4-bit
// fixed costs: a finalisation is the streaming pass unless the table's
// reduction time per element makes it slower; a 4-bit grouped GEMM takes
// the 4-bit launch and per-expert time, other types the table's own.
func TestMoETable(t *testing.T) {
	base := Processor{Name: "x", ComputeUnits: 148, Matrix: map[DType]FLOPRate{BF16: 2.25e15, FP8: 4.5e15, FP4: 9e15}, Bandwidth: 8e12, Launch: 4e-6}
	fin := MoEFinalize(4096, 4096*8, 7168, BF16)
	stream := base.StreamCost(fin.FLOPs(), fin.Bytes(), FP32).Time
	moe := MoEParams{Compute: 0.9, Memory: 0.9, Launch: 6e-6, ExpertOverhead: 100e-9, Launch4: 10e-6, ExpertOverhead4: 300e-9, Source: "test"}
	for _, tt := range []struct {
		name   string
		reduce Seconds
		source string
		want   Seconds
	}{
		{"no table", 3e-12, "", stream},
		{"no reduction time", 0, "test", stream},
		{"reduction bound", 3e-12, "test", 4e-6 + Seconds(3e-12*fin.Elements)},
		{"bandwidth bound", 1e-15, "test", stream},
	} {
		p := base
		p.Eff.MoE = moe
		p.Eff.MoE.ReduceElement, p.Eff.MoE.Source = tt.reduce, tt.source
		got := p.Cost(fin).Time
		if math.Abs(float64(got-tt.want)) > 1e-12*float64(tt.want) {
			t.Errorf("%s: finalize %v, want %v", tt.name, got, tt.want)
		}
	}
	p := base
	p.Eff.MoE = moe
	for _, tt := range []struct {
		d    DType
		want Seconds // the fixed part: launch + experts · a_e
	}{
		{BF16, 6e-6 + 8*100e-9},
		{FP8, 6e-6 + 8*100e-9},
		{FP4, 10e-6 + 8*300e-9},
	} {
		// One row per expert of a tiny GEMM: the fixed part dominates.
		g := GroupedGEMM{Rows: 8, Experts: 8, K: 16, N: 16, A: tt.d, B: tt.d, C: BF16}
		got := p.GroupedGEMMCost(g).Time
		if d := math.Abs(float64(got - tt.want)); d > 1e-7 {
			t.Errorf("%v: grouped GEMM %v, want ≈ %v", tt.d, got, tt.want)
		}
	}
}

func TestScan(t *testing.T) {
	// Mamba-2 2.7B (state-spaces/mamba2-2.7b config.json: d_model 2560,
	// expand 2, headdim 64, d_state 128, ngroups 1, d_conv 4): 80 heads.
	s := Scan{Batch: 1, Tokens: 1, Heads: 80, HeadDim: 64, State: 128, Groups: 1, Conv: 4, DType: BF16, StateDType: BF16}
	state := (80.0*64*128 + (80*64+2*128)*3) * 2
	if got := float64(s.StateBytes(BF16)); got != state {
		t.Errorf("StateBytes = %v, want %v", got, state)
	}
	if got := float64(s.Bytes()); !(got > 2*state) {
		t.Errorf("decode Bytes %v should read and write the state (%v)", got, 2*state)
	}
	pre := Scan{Batch: 1, Tokens: 4096, Heads: 80, HeadDim: 64, State: 128, Groups: 1, Conv: 4, Chunk: 256, DType: BF16, StateDType: BF16}
	half := pre
	half.Tokens = 2048
	if r := float64(pre.FLOPs()) / float64(half.FLOPs()); math.Abs(r-2) > 1e-9 {
		t.Errorf("prefill FLOPs not linear in tokens at a fixed chunk: ratio %v", r)
	}
	p := Processor{Name: "x", ComputeUnits: 132, Matrix: map[DType]FLOPRate{BF16: 989e12}, Bandwidth: 3.35e12, Launch: 4e-6}
	if c := p.ScanCost(pre); !(c.Time > 0) || math.IsInf(float64(c.Time), 0) {
		t.Errorf("ScanCost = %v", c.Time)
	}
}
