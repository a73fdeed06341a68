package model

// An AllReduceKernel is an engine's own all-reduce within a node, run
// instead of NCCL for the messages it takes: vLLM's custom all-reduce
// (csrc/custom_all_reduce.cuh) and its kind. Below a size threshold it
// runs a one-stage kernel, each rank reading the whole message from every
// peer and reducing it locally, (p−1)·S bytes a rank; above it a
// two-stage kernel, a reduce-scatter and then an all-gather through the
// peers' buffers, 2(p−1)/p·S a rank. From MaxSize on, and at a rank count
// it does not support, the engine hands the message to NCCL: the link's
// ring alone. Its time is a latency plus those bytes at the link's
// bandwidth times an efficiency, one pair for each stage count.
//
// The zero value is no kernel (the link's own pricing). The struct has
// only comparable fields, so a Link holding one stays a map key.
type AllReduceKernel struct {
	OneStageLatency    Seconds
	OneStageEfficiency float64
	TwoStageLatency    Seconds
	TwoStageEfficiency float64
	// OneStageBelow4 and OneStageBelow8 are the message sizes below which
	// the one-stage kernel runs at up to 4 and up to 8 ranks (at 2 ranks
	// it always runs); MaxSize is the first size handed to NCCL.
	OneStageBelow4, OneStageBelow8, MaxSize Bytes
	// Ranks has bit p set for each rank count p the kernel supports.
	Ranks uint32
}

// Set reports whether k is a kernel (not the zero value).
func (k AllReduceKernel) Set() bool { return k.MaxSize > 0 }

// Time prices the all-reduce c over l by k, and reports whether k takes
// it (an all-reduce of a size below MaxSize over a supported rank count);
// when it does not, the engine runs NCCL instead.
func (k AllReduceKernel) Time(c Collective, l Link) (Seconds, bool) {
	p := c.Ranks
	if c.Kind != AllReduce || !k.Set() || p < 2 || p > 31 || k.Ranks&(1<<uint(p)) == 0 || c.Size <= 0 || c.Size >= k.MaxSize {
		return 0, false
	}
	one := p == 2 || (p <= 4 && c.Size < k.OneStageBelow4) || (p <= 8 && c.Size < k.OneStageBelow8)
	lat, e, traffic := k.TwoStageLatency, k.TwoStageEfficiency, 2*float64(p-1)/float64(p)*float64(c.Size)
	if one {
		lat, e, traffic = k.OneStageLatency, k.OneStageEfficiency, float64(p-1)*float64(c.Size)
	}
	if e <= 0 {
		e = 1
	}
	return lat + Bytes(traffic).At(ByteRate(float64(l.Bandwidth)*e)), true
}
