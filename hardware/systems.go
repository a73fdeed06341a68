package hardware

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/perfsim/perfsim/model"
)

// A Fabric is a system's scale-out network: the NICs of one node (its
// scale-up domain), their bandwidth, and the shape of the switch fabric.
type Fabric struct {
	Name         string
	NICsPerNode  int            // compute NICs per node (storage NICs not counted)
	NICBandwidth model.ByteRate // per NIC, per direction
	// RailOptimized says that NIC i of every node sits on the same leaf
	// switch (rail i), as in NVIDIA's DGX SuperPOD: a group made of the
	// same local rank in every node crosses one switch hop. Otherwise a
	// message crosses leaf and spine.
	RailOptimized bool
	// Oversubscription is the leaf's downlink to uplink ratio: 1 is a
	// non-blocking fat tree; 2 halves what each device can send to
	// another leaf at once.
	Oversubscription float64
	// Efficiency is the share of NICBandwidth a collective's bus
	// bandwidth reaches over this fabric; 0 takes the device file's
	// scale-out efficiency.
	Efficiency float64
}

// ndrNCCL is the share of an NDR 400 Gb/s NIC's 50 GB/s that NCCL's
// collectives reach: "For NDR @ 400Gbps you should see 46-48GB/s per NIC"
// (NVIDIA's NCCL maintainer, github NVIDIA/nccl-tests issue #290,
// 2025-03-03), the middle of that range, 47 of 50 GB/s.
const ndrNCCL = 0.94

// ndrNCCLSource is the source of ndrNCCL as the systems cite it.
const ndrNCCLSource = "NVIDIA/nccl-tests issue #290 (NCCL maintainer, 2025-03-03): 46-48 GB/s per NDR 400 Gb/s NIC; 47 of 50 GB/s"

// PerDevice returns the scale-out bandwidth one device can count on when
// every device of its node sends at once: the node's NICs shared by its
// devices, divided by the oversubscription.
func (f Fabric) PerDevice(devicesPerNode int) model.ByteRate {
	if f.NICsPerNode <= 0 || devicesPerNode <= 0 {
		return 0
	}
	o := f.Oversubscription
	if !(o >= 1) {
		o = 1
	}
	return model.ByteRate(float64(f.NICsPerNode) * float64(f.NICBandwidth) / float64(devicesPerNode) / o)
}

// extraHop is the latency a message pays for crossing the spine when the
// fabric is not rail-optimised: assumed, one more switch traversal at the
// order of a NDR switch's port-to-port latency (NVIDIA Quantum-2 QM9700
// datasheet: "sub-130ns" per switch) plus serialisation, rounded up.
const extraHop = model.Seconds(500e-9)

// A systemSpec is one entry of the system catalog.
type systemSpec struct {
	name, device string
	perNode      int // the scale-up domain: devices joined by NVLink / xGMI
	fabric       Fabric
	about        string
	sources      map[string]string
}

// systemCatalog holds the systems perfsim knows, each number with its
// source. Bandwidths are per direction (400 Gb/s = 50 GB/s).
var systemCatalog = []systemSpec{
	{
		name: "dgx-a100", device: "a100-sxm-80gb", perNode: 8,
		fabric: Fabric{Name: "InfiniBand HDR", NICsPerNode: 8, NICBandwidth: 25e9, RailOptimized: true, Oversubscription: 1},
		about:  "NVIDIA DGX A100: 8 A100 SXM 80GB on NVSwitch (NVLink 3), 8 HDR 200 Gb/s compute NICs",
		sources: map[string]string{
			"devices_per_node":        "NVIDIA DGX A100 datasheet: 8x A100 80GB, 6 NVSwitches, 600 GB/s GPU-to-GPU bidirectional",
			"fabric.nics_per_node":    "NVIDIA DGX A100 datasheet: 8x single-port ConnectX-6 VPI 200 Gb/s HDR InfiniBand (compute); 2 dual-port for storage not counted",
			"fabric.nic_bandwidth":    "NVIDIA DGX A100 datasheet: 200 Gb/s HDR = 25 GB/s per direction",
			"fabric.rail_optimized":   "NVIDIA DGX SuperPOD (A100) reference architecture: rail-optimised, full fat-tree compute fabric",
			"fabric.oversubscription": "NVIDIA DGX SuperPOD (A100) reference architecture: non-blocking fat tree (1:1)",
		},
	},
	{
		name: "dgx-h100", device: "h100-sxm", perNode: 8,
		fabric: Fabric{Name: "InfiniBand NDR", NICsPerNode: 8, NICBandwidth: 50e9, RailOptimized: true, Oversubscription: 1, Efficiency: ndrNCCL},
		about:  "NVIDIA DGX H100: 8 H100 SXM on NVSwitch (NVLink 4), 8 NDR 400 Gb/s compute NICs",
		sources: map[string]string{
			"devices_per_node":        "NVIDIA DGX H100 datasheet: 8x H100 80GB, 4 NVSwitches, 900 GB/s GPU-to-GPU bidirectional",
			"fabric.nics_per_node":    "NVIDIA DGX H100 datasheet: 8x single-port ConnectX-7 400 Gb/s InfiniBand/Ethernet (4 OSFP ports)",
			"fabric.nic_bandwidth":    "NVIDIA DGX H100 datasheet: 400 Gb/s NDR = 50 GB/s per direction",
			"fabric.rail_optimized":   "NVIDIA DGX SuperPOD (H100) reference architecture: rail-optimised compute fabric",
			"fabric.oversubscription": "NVIDIA DGX SuperPOD (H100) reference architecture: non-blocking fat tree (1:1)",
			"fabric.efficiency":       ndrNCCLSource,
		},
	},
	{
		name: "hgx-h200", device: "h200-sxm", perNode: 8,
		fabric: Fabric{Name: "InfiniBand NDR", NICsPerNode: 8, NICBandwidth: 50e9, RailOptimized: true, Oversubscription: 1, Efficiency: ndrNCCL},
		about:  "NVIDIA HGX H200 8-GPU: 8 H200 SXM on NVSwitch (NVLink 4), one 400 Gb/s NIC per GPU",
		sources: map[string]string{
			"devices_per_node":        "NVIDIA HGX H200 datasheet: 8x H200 141GB, NVLink 900 GB/s bidirectional per GPU through NVSwitch",
			"fabric.nics_per_node":    "assumed: one ConnectX-7 per GPU as in NVIDIA's HGX reference configurations and DGX H200 (same board as DGX H100)",
			"fabric.nic_bandwidth":    "NVIDIA DGX H200 datasheet: 8x ConnectX-7 400 Gb/s = 50 GB/s per direction",
			"fabric.rail_optimized":   "assumed: rail-optimised as the DGX SuperPOD reference architecture",
			"fabric.oversubscription": "assumed: non-blocking fat tree as the DGX SuperPOD reference architecture",
			"fabric.efficiency":       ndrNCCLSource,
		},
	},
	{
		name: "gb200-nvl72", device: "gb200", perNode: 72,
		fabric: Fabric{Name: "InfiniBand NDR", NICsPerNode: 72, NICBandwidth: 50e9, RailOptimized: true, Oversubscription: 1, Efficiency: ndrNCCL},
		about:  "NVIDIA GB200 NVL72: 72 Blackwell GPUs in one NVLink 5 domain, one 400 Gb/s NIC per GPU",
		sources: map[string]string{
			"devices_per_node":        "NVIDIA GB200 NVL72 datasheet: 72 Blackwell GPUs, NVLink 5 1.8 TB/s per GPU, 130 TB/s NVLink domain",
			"fabric.nics_per_node":    "NVIDIA DGX SuperPOD with DGX GB200 reference architecture: 4 ConnectX-7 per 4-GPU compute tray, 18 trays",
			"fabric.nic_bandwidth":    "NVIDIA DGX SuperPOD with DGX GB200 reference architecture: ConnectX-7 400 Gb/s = 50 GB/s per direction",
			"fabric.rail_optimized":   "NVIDIA DGX SuperPOD with DGX GB200 reference architecture: rail-optimised compute fabric",
			"fabric.oversubscription": "NVIDIA DGX SuperPOD with DGX GB200 reference architecture: non-blocking fat tree (1:1)",
			"fabric.efficiency":       ndrNCCLSource,
		},
	},
	{
		name: "mi300x-platform", device: "mi300x", perNode: 8,
		fabric: Fabric{Name: "InfiniBand NDR", NICsPerNode: 8, NICBandwidth: 50e9, RailOptimized: true, Oversubscription: 1},
		about:  "AMD Instinct MI300X platform: 8 MI300X fully connected by Infinity Fabric, 8 NDR 400 Gb/s NICs (as Azure ND MI300X v5)",
		sources: map[string]string{
			"devices_per_node":        "AMD Instinct MI300X platform datasheet: 8 MI300X OAM, fully connected 4th-gen Infinity Fabric",
			"fabric.nics_per_node":    "Microsoft Azure ND MI300X v5 documentation: 8x 400 Gb/s NVIDIA Quantum-2 ConnectX-7 InfiniBand, one per GPU (3.2 Tb/s per VM)",
			"fabric.nic_bandwidth":    "Microsoft Azure ND MI300X v5 documentation: 400 Gb/s = 50 GB/s per direction",
			"fabric.rail_optimized":   "assumed: rail-optimised, as Azure's NDR clusters and the DGX SuperPOD",
			"fabric.oversubscription": "assumed: non-blocking fat tree",
		},
	},
}

// ErrUnknownSystem is wrapped by LookupSystem's error for a name not in
// the system catalog.
var ErrUnknownSystem = errors.New("unknown system")

// SystemNames returns the catalog's system names, sorted.
func SystemNames() []string {
	n := make([]string, len(systemCatalog))
	for i, s := range systemCatalog {
		n[i] = s.name
	}
	sort.Strings(n)
	return n
}

// SystemAbout returns a one-line description of the catalog system name.
func SystemAbout(name string) string {
	for _, s := range systemCatalog {
		if s.name == normName(name) || strings.EqualFold(s.name, name) {
			return s.about
		}
	}
	return ""
}

// LookupSystem returns the catalog system name (dgx-a100, dgx-h100,
// hgx-h200, gb200-nvl72, mi300x-platform) with enough nodes for devices
// devices (at least one node). Its intra-node tier is the device's own
// (calibrated where the catalog holds a fit); its scale-out tier takes
// the device's latency, the fabric's bandwidth per device
// (Fabric.PerDevice) and the fabric's efficiency where it has one, else
// the device's.
func LookupSystem(name string, devices int) (*System, error) {
	var spec *systemSpec
	for i := range systemCatalog {
		if strings.EqualFold(systemCatalog[i].name, strings.TrimSpace(name)) {
			spec = &systemCatalog[i]
		}
	}
	if spec == nil {
		hint := fmt.Sprintf(" (the catalog has %s)", strings.Join(SystemNames(), ", "))
		if s := suggest(strings.ToLower(name), SystemNames()); s != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", s)
		}
		return nil, fmt.Errorf("hardware: %w %q%s", ErrUnknownSystem, name, hint)
	}
	if devices < 1 {
		return nil, fmt.Errorf("hardware: %s: devices must be at least 1, not %d", spec.name, devices)
	}
	d, err := Lookup(spec.device)
	if err != nil {
		return nil, err
	}
	d.Intra.DevicesPerNode = spec.perNode
	d.Inter.Bandwidth = spec.fabric.PerDevice(spec.perNode)
	d.Inter.Name = spec.fabric.Name
	if e := spec.fabric.Efficiency; e > 0 {
		d.Inter.Efficiency = e
	}
	if !spec.fabric.RailOptimized {
		d.Inter.Latency += extraHop
	}
	nodes := (devices + spec.perNode - 1) / spec.perNode
	s, err := NewSystem(d, spec.perNode, nodes)
	if err != nil {
		return nil, err
	}
	s.Name, s.Fabric = spec.name, spec.fabric
	s.Sources = make(map[string]string, len(spec.sources))
	for k, v := range spec.sources {
		s.Sources[k] = v
	}
	return s, nil
}

// GroupPerNode returns how many members of a group of ranks devices sit
// in one node when consecutive members are stride devices apart in the
// system's rank order (Megatron-LM orders ranks tensor-parallel first,
// then context, data and pipeline parallel): all of them when the group
// fits in one node's span, one when the stride is a node or more.
func (s *System) GroupPerNode(ranks, stride int) int {
	if ranks <= 1 {
		return 1
	}
	per := max(s.DevicesPerNode, 1)
	stride = max(stride, 1)
	if stride >= per {
		return 1
	}
	return max(1, min(ranks, per/stride))
}
