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
