package model

import (
	"math"
	"testing"
)

// vllmKernel is vLLM's custom all-reduce as hardware fits it on an H100
// SXM (hardware.EngineAllReduceOn): the dispatch of vLLM v0.6.0's code.
var vllmKernel = AllReduceKernel{
	OneStageLatency: 4.480e-6, OneStageEfficiency: 0.6039, TwoStageLatency: 8.146e-6, TwoStageEfficiency: 0.6513,
	OneStageBelow4: 512 << 10, OneStageBelow8: 256 << 10, MaxSize: 8 << 20, Ranks: 1<<2 | 1<<4 | 1<<6 | 1<<8,
}

func TestAllReduceKernel_Time(t *testing.T) {
	l := Link{Bandwidth: 450e9, Efficiency: 0.86, Base: 4.9e-6, OneShotLatency: 2.954e-6, OneShotEfficiency: 0.671}
	one := func(p int, s Bytes) Seconds {
		return 4.480e-6 + Bytes(float64(p-1)*float64(s)).At(ByteRate(450e9*0.6039))
	}
	two := func(p int, s Bytes) Seconds {
		return 8.146e-6 + Bytes(2*float64(p-1)/float64(p)*float64(s)).At(ByteRate(450e9*0.6513))
	}
	for _, c := range []struct {
		name  string
		k     CollectiveKind
		p     int
		size  Bytes
		want  Seconds
		taken bool
	}{
		{"2 ranks: one stage at any size below the limit", AllReduce, 2, 4 << 20, one(2, 4<<20), true},
		{"4 ranks below 512 KiB: one stage", AllReduce, 4, 256 << 10, one(4, 256<<10), true},
		{"4 ranks at 512 KiB: two stages", AllReduce, 4, 512 << 10, two(4, 512<<10), true},
		{"8 ranks below 256 KiB: one stage", AllReduce, 8, 128 << 10, one(8, 128<<10), true},
		{"8 ranks at 256 KiB: two stages", AllReduce, 8, 256 << 10, two(8, 256<<10), true},
		{"6 ranks at 300 KiB: two stages", AllReduce, 6, 300 << 10, two(6, 300<<10), true},
		{"8 MiB: handed to NCCL", AllReduce, 4, 8 << 20, 0, false},
		{"3 ranks: unsupported, NCCL", AllReduce, 3, 64 << 10, 0, false},
		{"16 ranks: unsupported, NCCL", AllReduce, 16, 64 << 10, 0, false},
		{"an all-gather is not its", AllGather, 4, 64 << 10, 0, false},
	} {
		got, ok := vllmKernel.Time(Collective{Kind: c.k, Size: c.size, Ranks: c.p}, l)
		if ok != c.taken || math.Abs(float64(got-c.want)) > 1e-15 {
			t.Errorf("%s: %v, %v; want %v, %v", c.name, got, ok, c.want, c.taken)
		}
		// CollectiveTime follows the kernel where it takes the message,
		// else NCCL's ring alone, never the link's one-shot kernel.
		withK := l
		withK.Engine = vllmKernel
		ring := l
		ring.OneShotLatency = 0
		want := CollectiveTime(Collective{Kind: c.k, Size: c.size, Ranks: c.p}, ring)
		if c.taken {
			want = c.want
		}
		if got := CollectiveTime(Collective{Kind: c.k, Size: c.size, Ranks: c.p}, withK); math.Abs(float64(got-want)) > 1e-15 {
			t.Errorf("%s: CollectiveTime %v, want %v", c.name, got, want)
		}
	}
	if _, ok := (AllReduceKernel{}).Time(Collective{Kind: AllReduce, Size: 1 << 10, Ranks: 4}, l); ok {
		t.Error("the zero kernel took an all-reduce")
	}
	// Without an engine kernel nothing changes: the cheaper of the ring
	// and the one-shot kernel.
	c := Collective{Kind: AllReduce, Size: 256 << 10, Ranks: 4}
	ring := l
	ring.OneShotLatency = 0
	if got, want := CollectiveTime(c, l), Seconds(math.Min(float64(CollectiveTime(c, ring)), float64(OneShotTime(c, l)))); got != want {
		t.Errorf("no engine kernel: %v, want %v", got, want)
	}
}
