package hardware_test

import (
	"fmt"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// ExampleLookupSystem sizes the catalog's DGX H100 for 64 GPUs: 8 nodes
// of 8, NVLink within a node, and 8 NICs a node between them.
func ExampleLookupSystem() {
	s, err := hardware.LookupSystem("dgx-h100", 64)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Name, s.Device.Name, s.Nodes, "nodes of", s.DevicesPerNode)
	fmt.Println("scale-up:", s.Intra.Name, s.Intra.Bandwidth)
	fmt.Println("scale-out:", s.Fabric.Name, s.Fabric.NICsPerNode, "NICs of", s.Fabric.NICBandwidth, "=", s.Fabric.PerDevice(s.DevicesPerNode), "per GPU")
	// Output:
	// dgx-h100 H100 SXM 8 nodes of 8
	// scale-up: NVLink 4 450 GB/s
	// scale-out: InfiniBand NDR 8 NICs of 50 GB/s = 50 GB/s per GPU
}

// ExampleDerive makes a what-if H100 with 8 TB/s of memory bandwidth and
// the fp8 peak doubled; a malformed setting and one without its unit are
// both said at once, each naming the flag.
func ExampleDerive() {
	h100, err := hardware.Lookup("h100")
	if err != nil {
		fmt.Println(err)
		return
	}
	d, err := hardware.Derive(h100, []string{"memory.bandwidth=8TB/s", "peak.matrix.fp8=3958TFLOP/s"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Name)
	fmt.Println(d.Memory.Bandwidth, d.Matrix[model.FP8])
	_, err = hardware.Derive(h100, []string{"memory.bandwidth", "compute_units=132 SMs", "clock=2"})
	fmt.Println(err)
	// Output:
	// H100 SXM what-if (memory.bandwidth=8TB/s, peak.matrix.fp8=3958TFLOP/s)
	// 8 TB/s 3.958 PFLOP/s
	// --set "memory.bandwidth": want key=value with a unit, e.g. memory.bandwidth=8TB/s
	// --set compute_units=132 SMs: want a positive whole number of compute units, not "132 SMs"
	// --set clock=2: "2" is not a frequency: missing unit (expected "1.98 GHz")
}
