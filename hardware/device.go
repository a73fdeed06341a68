package hardware

import "github.com/perfsim/perfsim/model"

// A Device is one accelerator or CPU as a hardware file describes it.
//
// The Go names below are the package's API (sim and cmd use them); the
// TOML layout is documented in doc.go and the README.
type Device struct {
	Name         string
	Vendor       string
	Kind         string   // gpu, cpu, tpu, accelerator
	Aliases      []string // short names accepted by --hw: "h100", ...
	Architecture string   // "Hopper GH100"; informative
	ComputeUnits int      // SMs, CUs, cores, TensorCores
	Clock        model.Hertz
	TDP          model.Watts
	Launch       model.Seconds // kernel launch overhead

	// Dense peaks per data type. Matrix holds the tensor-core (matrix
	// unit) peaks, Vector the CUDA-core (vector unit) peaks where they
	// differ, Sparse the 2:4 structured-sparsity peaks where given.
	Matrix map[model.DType]model.FLOPRate
	Vector map[model.DType]model.FLOPRate
	Sparse map[model.DType]model.FLOPRate

	Memory Memory
	Eff    model.Efficiency // achievable fractions: defaults or fitted

	Intra Network // scale-up link within a node (NVLink, Infinity Fabric, ICI)
	Inter Network // scale-out network between nodes (InfiniBand, Ethernet)
	Host  Network // host link (PCIe, C2C)

	// Power is the device's power model ([power], power.go); NodePower the
	// rest of a node (CPUs, memory, NICs, fans), 0 when not given.
	Power     model.PowerParams
	NodePower model.Watts

	// Sources maps a field's TOML key (e.g. "peak.matrix.bf16") to where
	// its number came from.
	// TransferredFrom names the calibrated device whose efficiencies were
	// carried to this one (transfer.go), "" for none.
	TransferredFrom string
	// DefaultsFrom names the calibrated device whose efficiencies a
	// hand-written device took as defaults (KindDefaults), "" for none.
	// The device stays uncalibrated.
	DefaultsFrom string
	// WhatIfBase names the device a what-if device was derived from
	// (Derive), "" for none; WhatIfChanges are its settings, key=value.
	WhatIfBase    string
	WhatIfChanges []string
	// Kept, on a what-if device whose changes reach only some kernels
	// (Derive), is its calibrated base's own efficiencies, which price the
	// kernels whose time reads none of the numbers Changed says changed
	// (model.Processor.For); Eff, carried from that base (Transfer),
	// prices the others. nil otherwise.
	Kept    *model.Efficiency
	Changed model.Changes
	// root is the calibrated device a what-if's efficiencies are kept
	// from or carried from (Derive), nil for a device that is not a
	// what-if of one.
	root *Device

	Sources map[string]string
	File    string // the file it was loaded from, or "catalog:<name>"

	pos map[string]int // dotted key -> line in File, for Validate's messages
}

// Memory is the device's main memory and caches.
//
// Capacity is the physical memory (HBM and GDDR are sized in binary
// units: an "80 GB" H100 has 80 GiB); Usable is what the driver gives
// programs (the total that cudaMemGetInfo or hipMemGetInfo reports, less
// than Capacity by what the driver and ECC keep back). Fits are sized
// against Usable less Reserve.
type Memory struct {
	Type      string // "HBM3", "GDDR6", "DDR5"; informative
	Capacity  model.Bytes
	Usable    model.Bytes // what programs can allocate; 0 means Capacity
	Bandwidth model.ByteRate
	L2        model.Bytes
	Reserve   model.Bytes // held back for the framework, CUDA context and workspace
}

// Limit returns the memory a fit is sized against: Usable, or Capacity
// when Usable is not set (a Device built in Go rather than loaded).
func (m Memory) Limit() model.Bytes {
	if m.Usable > 0 {
		return m.Usable
	}
	return m.Capacity
}

// A Network is one tier of interconnect, as one device sees it.
type Network struct {
	Name           string         // "NVLink 4", "InfiniBand NDR", "PCIe 5.0 x16"
	Bandwidth      model.ByteRate // per device, per direction
	Latency        model.Seconds  // per message step
	Efficiency     float64        // achievable fraction of Bandwidth (NCCL bus bandwidth / link rate)
	DevicesPerNode int            // devices that share this tier in one node (intra-node only)
	Topology       string         // switch, ring, mesh, torus
	// Reduction (TOML in_network_reduction, intra-node only) is the
	// reduction the tier's switch does in the network: ReductionNVLinkSHARP
	// (NVSwitch 3 and later: HGX H100, H200, B200, GB200 NVL72) or
	// ReductionNone; "" where the file does not say, which counts as none
	// (SHARP reports whether a tier states that it has one).
	Reduction string
	// Base is a fixed cost per collective (TOML base_latency), on top of
	// Latency per ring step; AllReduceLatency and AllReduceEfficiency
	// (allreduce_latency, allreduce_efficiency) model a one-shot
	// all-reduce kernel for small messages (model.Link). 0 for none.
	Base                model.Seconds
	AllReduceLatency    model.Seconds
	AllReduceEfficiency float64
	// EfficiencyHalf and EfficiencySlope (efficiency_half_size,
	// efficiency_slope) make the ring efficiency rise with message size
	// (model.Link HalfSize, Slope); 0 for a flat efficiency.
	EfficiencyHalf  model.Bytes
	EfficiencySlope float64
	// RankFactor (efficiency_rank_factor) makes the ring efficiency rise
	// with the rank count (model.Link RankFactor); 0 for none.
	RankFactor float64
}

// The values of Network.Reduction (in_network_reduction).
const (
	// ReductionNVLinkSHARP is NVLink SHARP (NVLS): the NVSwitch reduces
	// and multicasts in the switch (third-generation NVSwitch and later;
	// NCCL's NVLS algorithms and buffers need it).
	ReductionNVLinkSHARP = "nvlink-sharp"
	// ReductionNone is a tier without in-network reduction: the A100's
	// second-generation NVSwitch, PCIe, NVLink bridges, Infinity Fabric,
	// ICI.
	ReductionNone = "none"
)

// Reductions lists the values in_network_reduction may take.
var Reductions = []string{ReductionNVLinkSHARP, ReductionNone}

// SHARP reports whether n is a switch that reduces in the network
// (NVLink SHARP), and whether n says at all (in_network_reduction given):
// a tier that does not say is read as having none, and a consumer whose
// result it changes warns (serve.NVLinkSHARPUnstated).
func (n Network) SHARP() (sharp, stated bool) {
	return n.Reduction == ReductionNVLinkSHARP && n.Topology == "switch", n.Reduction != ""
}

// Link returns the network as the alpha-beta model sees it.
func (n Network) Link() model.Link {
	return model.Link{Bandwidth: n.Bandwidth, Latency: n.Latency, Efficiency: n.Efficiency,
		Base: n.Base, OneShotLatency: n.AllReduceLatency, OneShotEfficiency: n.AllReduceEfficiency,
		HalfSize: n.EfficiencyHalf, Slope: n.EfficiencySlope, RankFactor: n.RankFactor}
}

// Processor returns what the cost model needs of d.
func (d *Device) Processor() model.Processor {
	sb, _ := SharedBandwidth(d)
	p := model.Processor{
		SharedBandwidth: sb,
		Name:            d.Name,
		ComputeUnits:    d.ComputeUnits,
		Matrix:          d.Matrix,
		Vector:          d.Vector,
		Bandwidth:       d.Memory.Bandwidth,
		L2:              d.Memory.L2,
		Launch:          d.Launch,
		Eff:             d.Eff,
		CPU:             d.Kind == "cpu",
		PowerModel:      d.Power,
	}
	if d.Kept != nil {
		k := p
		k.Eff = *d.Kept
		p.Kept, p.Changed = &k, d.Changed
	}
	return p
}

// A System is a number of identical devices in nodes, joined by the
// device's networks.
type System struct {
	Device         *Device
	DevicesPerNode int
	Nodes          int
	Intra, Inter   Network

	// Name is the catalog system's name ("dgx-h100"), empty for a system
	// built from a device alone. Fabric describes its scale-out network
	// (zero when only the device's per-device figure is known); Sources
	// maps a field ("fabric.nic_bandwidth") to where its number came from.
	Name    string
	Fabric  Fabric
	Sources map[string]string
}

// Devices returns the total device count.
func (s *System) Devices() int { return s.DevicesPerNode * s.Nodes }

// Link returns the network a collective over tier t uses.
func (s *System) Link(t model.Tier) model.Link {
	if t == model.InterNode {
		return s.Inter.Link()
	}
	return s.Intra.Link()
}
