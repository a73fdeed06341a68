package model

import (
	"math"
	"testing"
)

// The split-KV decode model: few CTAs cannot saturate memory (per-CTA
// bandwidth cap), many do; a one-shot all-reduce undercuts the ring for
// small messages only.
func TestDecodeAttentionCTACap(t *testing.T) {
	p := &Processor{Name: "x", ComputeUnits: 132, Matrix: map[DType]FLOPRate{BF16: 989e12}, Bandwidth: 3.35e12, Launch: 5e-6,
		Eff: Efficiency{Attention: AttentionParams{DecodeMemory: 0.9, DecodeLaunch: 5e-6, DecodeCTABandwidth: 20e9,
			DecodeCTAOverhead: 1e-6, DecodeHeadOverhead: 1e-6, DecodeMaxGroup: 32}}}
	a := Attention{Batch: 1, Heads: 32, KVHeads: 8, QLen: 1, KVLen: 32768, HeadDim: 128, Causal: true, Fused: true, DType: BF16, KVDType: BF16}
	// 8 CTAs without a split: each streams 2·L·D·2 bytes at 20 GB/s.
	want := 5e-6 + 1e-6 + 2*32768*128*2/20e9
	if got := float64(p.AttentionCost(a).Time); math.Abs(got/want-1) > 1e-9 {
		t.Errorf("8 CTAs: %v, want %v", got, want)
	}
	// With splits of 256 tokens the CTAs fill the SMs: memory-bound.
	p.Eff.Attention.DecodeSplitTokens = 256
	full := float64(a.Bytes()) / (3.35e12 * 0.9)
	if got := float64(p.AttentionCost(a).Time); got < full || got > full+5e-6+1e-6+2*32768/16*128*2/20e9+1e-9 {
		t.Errorf("split: %v, want about %v", got, full)
	}
}

func TestCollectiveOneShot(t *testing.T) {
	l := Link{Bandwidth: 450e9, Latency: 0.8e-6, Efficiency: 0.8, Base: 5e-6, OneShotLatency: 3e-6, OneShotEfficiency: 0.4}
	small := Collective{Kind: AllReduce, Size: 16 << 10, Ranks: 8}
	if got, want := CollectiveTime(small, l), OneShotTime(small, l); got != want {
		t.Errorf("small all-reduce %v, want the one-shot %v", got, want)
	}
	big := Collective{Kind: AllReduce, Size: 256 << 20, Ranks: 8}
	ring := 5e-6 + 14*0.8e-6 + float64(big.Traffic())/(450e9*0.8)
	if got := float64(CollectiveTime(big, l)); math.Abs(got/ring-1) > 1e-9 {
		t.Errorf("large all-reduce %v, want the ring %v", got, ring)
	}
	ag := Collective{Kind: AllGather, Size: 16 << 10, Ranks: 8}
	if got := float64(CollectiveTime(ag, l)); math.Abs(got/(5e-6+7*0.8e-6+float64(ag.Traffic())/(360e9))-1) > 1e-9 {
		t.Errorf("all-gather %v ignores the base latency", got)
	}
}

// An 8-bit KV cache runs the grouped kernel with its own launch, CTA
// overhead and stream rate; the per-head kernel keeps its fixed cost and
// takes its own rates; unset 8-bit values fall back to the 16-bit ones.
func TestDecodeAttentionKV8(t *testing.T) {
	e := AttentionParams{DecodeMemory: 1, DecodeLaunch: 8e-6, DecodeCTABandwidth: 50e9, DecodeCTAOverhead: 4e-6, DecodeGroupOverhead: 0.1e-6,
		DecodeHeadOverhead: 1e-6, DecodeHeadBandwidth: 80e9, DecodeMaxGroup: 32, DecodeDimOverhead: 0.05e-6}
	p := &Processor{Name: "x", ComputeUnits: 132, Matrix: map[DType]FLOPRate{BF16: 989e12}, Bandwidth: 3.35e12, Eff: Efficiency{Attention: e}}
	a := Attention{Batch: 1, Heads: 32, KVHeads: 8, QLen: 1, KVLen: 4096, HeadDim: 128, Causal: true, Fused: true, DType: BF16, KVDType: BF16}
	stream := func(bytesPerElem, beta float64) float64 { return 2 * 4096 * 128 * bytesPerElem / beta }
	// One CTA per KV head (8 < 132 compute units, one wave): t0 + a +
	// the larger of memory time and one CTA's stream.
	fixed := 4e-6 + 4*0.1e-6 + 4*0.05e-6
	tm := float64(a.Bytes()) / 3.35e12
	tests := []struct {
		name  string
		kv    DType
		heads int
		set   func(*AttentionParams)
		want  float64
	}{
		{"bf16 grouped", BF16, 8, nil, 8e-6 + fixed + math.Max(tm, stream(2, 50e9))},
		{"fp8 grouped, 16-bit values", FP8, 8, nil, 8e-6 + fixed + stream(1, 50e9)},
		{"fp8 grouped, own values", FP8, 8, func(e *AttentionParams) {
			e.DecodeLaunch8, e.DecodeCTAOverhead8, e.DecodeGroupOverhead8, e.DecodeCTABandwidth8 = 5e-6, 1e-6, 0.2e-6, 20e9
		}, 5e-6 + 1e-6 + 4*0.2e-6 + 4*0.05e-6 + stream(1, 20e9)},
		{"fp8 per head", FP8, 32, func(e *AttentionParams) { e.DecodeHeadBandwidth8 = 40e9 }, 8e-6 + 1e-6 + 0.05e-6 + stream(1, 40e9)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := *p
			q.Eff.Attention = e
			if tt.set != nil {
				tt.set(&q.Eff.Attention)
			}
			b := a
			b.KVDType, b.KVHeads = tt.kv, tt.heads
			if got := float64(q.AttentionCost(b).Time); math.Abs(got/tt.want-1) > 1e-9 {
				t.Errorf("%v, want %v", got, tt.want)
			}
		})
	}
}

func TestIsDecode(t *testing.T) {
	for _, tt := range []struct {
		q, kv int
		want  bool
	}{{1, 4096, true}, {16, 4096, true}, {17, 4096, false}, {16, 16, false}, {1, 1, false}, {512, 512, false}} {
		if got := IsDecode(Attention{QLen: tt.q, KVLen: tt.kv}); got != tt.want {
			t.Errorf("QLen %d KVLen %d: %v, want %v", tt.q, tt.kv, got, tt.want)
		}
	}
}

// The ring efficiency rises with message size: half of Efficiency at
// HalfSize, nearly all of it far above, flat without HalfSize.
func TestCollectiveEfficiencyCurve(t *testing.T) {
	l := Link{Bandwidth: 450e9, Efficiency: 0.8, HalfSize: 4 << 20, Slope: 0.5}
	for _, tt := range []struct {
		size Bytes
		want float64
	}{{4 << 20, 0.4}, {1 << 20, 0.8 / 3}, {1 << 30, 0.8 / (1 + 1.0/16)}} {
		if got := l.ringEfficiency(tt.size, 0); math.Abs(got/tt.want-1) > 1e-12 {
			t.Errorf("%v: efficiency %v, want %v", tt.size, got, tt.want)
		}
		c := Collective{Kind: AllGather, Size: tt.size, Ranks: 8}
		if got, want := float64(CollectiveTime(c, l)), float64(c.Traffic())/(450e9*tt.want); math.Abs(got/want-1) > 1e-12 {
			t.Errorf("%v: all-gather %v, want %v", tt.size, got, want)
		}
	}
	l.HalfSize = 0
	if got := l.ringEfficiency(1<<10, 0); got != 0.8 {
		t.Errorf("flat link: %v, want 0.8", got)
	}
}

// The rank factor γ: a ring's bandwidth term is (Traffic + γ·Size)/
// (Bandwidth·Efficiency·(1+γ)), so its effective efficiency rises with
// the rank count toward Efficiency, a send keeps Efficiency, and γ 0 is
// the flat ring.
func TestCollectiveRankFactor(t *testing.T) {
	const bw, e, g = 450e9, 0.86, 0.5
	l := Link{Bandwidth: bw, Efficiency: e, RankFactor: g}
	var prev float64
	for _, p := range []int{2, 3, 4, 8, 16, 72} {
		for _, k := range []CollectiveKind{ReduceScatter, AllGather, AllToAll, AllReduce} {
			c := Collective{Kind: k, Size: 256 << 20, Ranks: p}
			want := (float64(c.Traffic()) + g*float64(c.Size)) / (bw * e * (1 + g))
			if got := float64(CollectiveTime(c, l)); math.Abs(got/want-1) > 1e-12 {
				t.Errorf("%v over %d ranks: %v s, want %v s", k, p, got, want)
			}
		}
		c := Collective{Kind: ReduceScatter, Size: 256 << 20, Ranks: p}
		busbw := float64(c.Traffic()) / float64(CollectiveTime(c, l))
		if busbw <= prev || busbw > bw*e {
			t.Errorf("%d ranks: bus bandwidth %v B/s, want above %v (the previous count) and at most %v", p, busbw, prev, bw*e)
		}
		prev = busbw
	}
	send := Collective{Kind: SendRecv, Size: 1 << 30}
	if got, want := float64(CollectiveTime(send, l)), float64(send.Size)/(bw*e); math.Abs(got/want-1) > 1e-12 {
		t.Errorf("send: %v s, want %v s", got, want)
	}
	flat := Collective{Kind: AllGather, Size: 1 << 30, Ranks: 2}
	l.RankFactor = 0
	if got, want := float64(CollectiveTime(flat, l)), float64(flat.Traffic())/(bw*e); math.Abs(got/want-1) > 1e-12 {
		t.Errorf("γ 0: %v s, want %v s", got, want)
	}
}
