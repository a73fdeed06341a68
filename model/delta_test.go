package model

import (
	"math"
	"testing"
)

// qwen3NextRule is one Qwen3-Next-80B-A3B Gated DeltaNet layer on one
// GPU (config.json: 32 value heads and 16 key heads of 128, convolution
// 4; chunk 64 as flash-linear-attention runs it).
func qwen3NextRule(batch, tokens int) Scan {
	return Scan{Batch: batch, Tokens: tokens, Heads: 32, HeadDim: 128, State: 128, Groups: 16, Conv: 4, Chunk: 64,
		DType: BF16, StateDType: BF16, Delta: true}
}

// TestDeltaRule checks the gated delta rule's work and traffic against
// counts written out by hand from the formulas of delta.go.
func TestDeltaRule(t *testing.T) {
	const (
		h, p, n, g, w, c = 32.0, 128.0, 128.0, 16.0, 4.0, 64.0
		hp               = h * p
		conv             = hp + 2*g*n // q, k and v: 8,192 channels
	)
	tests := []struct {
		name         string
		s            Scan
		flops, bytes float64
	}{
		{"prefill 1×4096", qwen3NextRule(1, 4096),
			4096 * (2*conv*w + h*deltaGateFLOPs + 2*g*n*deltaL2FLOPs + h*(6*c*n+4*c*p+c*c/3) + 6*n*hp),
			4096*(8*hp+13*g*n+2*h+2*h*c+2*h*n+2*h*n*p/c)*2 + 4096*(2*h*c+8*h)*4 + (h*n*p+conv*(w-1))*2},
		// A prompt shorter than a chunk is one chunk of its length.
		{"prefill 2×16", qwen3NextRule(2, 16),
			2 * 16 * (2*conv*w + h*deltaGateFLOPs + 2*g*n*deltaL2FLOPs + h*(6*16*n+4*16*p+16*16/3.0) + 6*n*hp),
			2*16*(8*hp+13*g*n+2*h+2*h*16+2*h*n+2*h*n*p/16)*2 + 2*16*(2*h*16+8*h)*4 + 2*(h*n*p+conv*(w-1))*2},
		// One token: the recurrent update, 7·d_k·d_v per head; the state
		// (and the convolution's) read and written.
		{"decode 8", qwen3NextRule(8, 1),
			8 * (2*conv*w + h*deltaGateFLOPs + 2*g*n*deltaL2FLOPs + 7*n*hp),
			8*(4*hp+6*g*n+2*h)*2 + 8*4*h*4 + 2*8*(h*n*p+conv*(w-1))*2},
	}
	for _, tt := range tests {
		if got := float64(tt.s.FLOPs()); math.Abs(got-tt.flops) > 1e-9*tt.flops {
			t.Errorf("%s: FLOPs %v, want %v", tt.name, got, tt.flops)
		}
		if got := float64(tt.s.Bytes()); math.Abs(got-tt.bytes) > 1e-9*tt.bytes {
			t.Errorf("%s: bytes %v, want %v", tt.name, got, tt.bytes)
		}
	}
	// The state of a sequence: 32 heads of 128 × 128 and three inputs of
	// the 8,192 convolution channels, whatever the length.
	want := (h*n*p + conv*(w-1)) * 2
	for _, tok := range []int{1, 64, 100000} {
		if got := float64(qwen3NextRule(1, tok).StateBytes(BF16)); got != want {
			t.Errorf("StateBytes at %d tokens = %v, want %v", tok, got, want)
		}
	}
}

// TestDeltaRuleCost: decoding streams the state (memory-bound, a launch
// per kernel), prefill's work grows linearly with the prompt at a fixed
// chunk, and the rule's time is never below its roofline.
func TestDeltaRuleCost(t *testing.T) {
	p := Processor{Name: "h100", ComputeUnits: 132, Matrix: map[DType]FLOPRate{BF16: 989e12, FP32: 67e12}, Bandwidth: 3.35e12, Launch: 4e-6}
	p.Eff.Attention.Compute = 0.5
	dec := p.ScanCost(qwen3NextRule(64, 1))
	if dec.Bound != MemoryBound {
		t.Errorf("decode at batch 64: %v-bound, want memory", dec.Bound)
	}
	if floor := Seconds(float64(dec.Bytes)/3.35e12) + deltaDecodeKernels*4e-6; dec.Time < floor {
		t.Errorf("decode %v below its traffic and launches %v", dec.Time, floor)
	}
	// A decode step's traffic is per sequence: twice the batch, twice the bytes.
	if a, b := qwen3NextRule(8, 1).Bytes(), qwen3NextRule(16, 1).Bytes(); b != 2*a {
		t.Errorf("decode bytes %v at batch 16, want twice batch 8's %v", float64(b), float64(a))
	}
	pre, half := qwen3NextRule(1, 8192), qwen3NextRule(1, 4096)
	if r := float64(pre.FLOPs()) / float64(half.FLOPs()); math.Abs(r-2) > 1e-9 {
		t.Errorf("prefill FLOPs not linear in tokens: ratio %v", r)
	}
	c := p.ScanCost(pre)
	floor := math.Max(float64(pre.FLOPs())/(989e12*0.5), float64(pre.Bytes())/3.35e12) + deltaPrefillKernels*4e-6
	if !(float64(c.Time) >= floor*(1-1e-12)) || math.IsInf(float64(c.Time), 0) {
		t.Errorf("prefill %v below its roofline %v", c.Time, floor)
	}
	// Intensity about 30 FLOP/byte: the chunked rule is memory-bound on an H100 (ridge ~295).
	if c.Bound != MemoryBound {
		t.Errorf("prefill of 8k tokens: %v-bound, want memory (intensity %.1f)", c.Bound, float64(pre.FLOPs())/float64(pre.Bytes()))
	}
}

// TestDeltaChain: the state recurrence's chain is one chunk step per
// chunk and wave, a step two dependent tiles of the GEMM model's per-CTA
// time; it binds a long prompt at few heads, not a short one at many.
func TestDeltaChain(t *testing.T) {
	p := Processor{Name: "x", ComputeUnits: 132, Matrix: map[DType]FLOPRate{BF16: 989e12}, Bandwidth: 3.35e12, Launch: 4e-6,
		Eff: Efficiency{GEMM: map[DType]GEMMParams{BF16: {Compute: 0.8, Memory: 0.9, CTAOverhead: 500e-9, StepFloor: 1e-9}}}}
	perCU := 989e12 * 0.8 / 132
	step := func(tm, tn, k float64) float64 { return 500e-9 + k*math.Max(2*tm*tn/perCU, 1e-9) }
	one := step(64, 64, 128) + step(128, 64, 64)
	for _, tt := range []struct {
		batch, heads, tokens int
		waves                float64
	}{{1, 8, 65536, 1}, {4, 32, 4096, 2}, {1, 66, 64, 1}, {1, 67, 64, 2}} {
		s := Scan{Batch: tt.batch, Tokens: tt.tokens, Heads: tt.heads, HeadDim: 128, State: 128, Groups: 2, Conv: 4, Chunk: 64, DType: BF16, StateDType: BF16, Delta: true}
		want := tt.waves * math.Ceil(float64(tt.tokens)/64) * one
		if got := float64(p.deltaChain(s)); math.Abs(got-want) > 1e-12*want {
			t.Errorf("%+v: chain %v, want %v", tt, got, want)
		}
	}
	long := Scan{Batch: 1, Tokens: 65536, Heads: 8, HeadDim: 128, State: 128, Groups: 2, Conv: 4, Chunk: 64, DType: BF16, StateDType: BF16, Delta: true}
	if c := p.ScanCost(long); c.Bound != LatencyBound || float64(c.Time) < float64(p.deltaChain(long)) {
		t.Errorf("64k tokens at 8 heads: %v-bound in %v, want the chain (%v) to bind", c.Bound, c.Time, p.deltaChain(long))
	}
	if p.deltaChain(Scan{Batch: 8, Tokens: 1, Heads: 8, HeadDim: 128, State: 128, Groups: 2, Conv: 4, Chunk: 64, DType: BF16, StateDType: BF16, Delta: true}) != 0 {
		t.Error("a decode step has no chain")
	}
}
