package calibrate

import (
	"fmt"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// beatsDRAM reports whether an attention measurement is faster than the
// device's DRAM allows: its working set, the bytes the fused kernel must
// move (a.Bytes(): the K and V, or latent, cache of the keys it reads,
// and Q and O), is larger than the L2, so it cannot be served from the
// cache, and yet the measured time is less than those bytes over the
// peak DRAM bandwidth. No kernel can do that; a point that does measured
// something other than the shape it names (a cache whose blocks the
// collector's sequences share, or that the kernel does not read whole),
// and is not fitted.
//
// The rule is the same for every device and every attention table. It
// drops none of H100's, H200's or B200's generation attention points
// (their fastest large-cache points reach 0.93, 0.95 and 0.97 of peak)
// and 359 of the A100's 5026 (TensorRT-LLM 1.0.0), up to 1.69× the
// A100's 2.04 TB/s: e.g. 16 query heads on 8 KV heads, batch 64, 16384
// keys, 4.3 GB of bf16 cache in 1.24 ms (docs/hardware.md, "Decode
// attention faster than DRAM").
//
// A device without an L2 size or a DRAM bandwidth drops nothing: the rule
// needs both.
func beatsDRAM(dev *hardware.Device, a model.Attention, t model.Seconds) bool {
	bw, l2 := float64(dev.Memory.Bandwidth), float64(dev.Memory.L2)
	if !(bw > 0) || !(l2 > 0) {
		return false
	}
	b := float64(a.Bytes())
	return b > l2 && float64(t) < b/bw
}

// dropBeatsDRAM returns ms less the points beatsDRAM rejects, and a
// warning saying how many it dropped (nil when none).
func dropBeatsDRAM(dev *hardware.Device, class string, ms []Measurement) ([]Measurement, int, error) {
	keep := make([]Measurement, 0, len(ms))
	for _, m := range ms {
		if !beatsDRAM(dev, AttentionOf(m), m.Time) {
			keep = append(keep, m)
		}
	}
	n := len(ms) - len(keep)
	if n == 0 {
		return ms, 0, nil
	}
	return keep, n, fmt.Errorf("%s: %d of %d points dropped: faster than %s of DRAM bandwidth allows for a working set larger than the %s L2 (a measurement artifact, not a kernel)",
		class, n, len(ms), dev.Memory.Bandwidth, dev.Memory.L2)
}
