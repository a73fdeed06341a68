package hardware

import (
	"errors"
	"testing"
)

func TestLookupSystem_catalog(t *testing.T) {
	tests := []struct {
		name     string
		devices  int
		perNode  int
		nodes    int
		interBW  float64 // per device, per direction (B/s)
		intraBW  float64
		wantFrom string
	}{
		// Datasheets: DGX A100 8 x 200 Gb/s; DGX H100 8 x 400 Gb/s; NVLink 3 300 GB/s,
		// NVLink 4 450 GB/s, NVLink 5 900 GB/s per direction.
		{"dgx-a100", 64, 8, 8, 25e9, 300e9, "A100"},
		{"dgx-h100", 1024, 8, 128, 50e9, 450e9, "H100"},
		{"hgx-h200", 9, 8, 2, 50e9, 450e9, "H200"},
		{"gb200-nvl72", 144, 72, 2, 50e9, 900e9, "GB200"},
		{"mi300x-platform", 8, 8, 1, 50e9, 448e9, "MI300X"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := LookupSystem(tt.name, tt.devices)
			if err != nil {
				t.Fatal(err)
			}
			if s.DevicesPerNode != tt.perNode || s.Nodes != tt.nodes {
				t.Errorf("%d per node x %d nodes, want %d x %d", s.DevicesPerNode, s.Nodes, tt.perNode, tt.nodes)
			}
			if float64(s.Inter.Bandwidth) != tt.interBW || float64(s.Intra.Bandwidth) != tt.intraBW {
				t.Errorf("inter %v intra %v, want %v %v", s.Inter.Bandwidth, s.Intra.Bandwidth, tt.interBW, tt.intraBW)
			}
			for _, k := range []string{"devices_per_node", "fabric.nics_per_node", "fabric.nic_bandwidth", "fabric.rail_optimized", "fabric.oversubscription"} {
				if s.Sources[k] == "" {
					t.Errorf("no source for %s", k)
				}
			}
			if SystemAbout(tt.name) == "" {
				t.Errorf("no description")
			}
		})
	}
}

func TestLookupSystem_errors(t *testing.T) {
	if _, err := LookupSystem("dgx-h10", 8); !errors.Is(err, ErrUnknownSystem) {
		t.Errorf("LookupSystem(dgx-h10) = %v, want ErrUnknownSystem", err)
	}
	if _, err := LookupSystem("dgx-h100", 0); err == nil {
		t.Errorf("LookupSystem(dgx-h100, 0 devices) succeeded")
	}
}

func TestFabric_PerDevice(t *testing.T) {
	f := Fabric{NICsPerNode: 4, NICBandwidth: 50e9, Oversubscription: 2}
	// 4 NICs x 50 GB/s shared by 8 devices, halved by 2:1 oversubscription.
	if got := f.PerDevice(8); got != 12.5e9 {
		t.Errorf("PerDevice(8) = %v, want 12.5 GB/s", got)
	}
}

func TestSystem_GroupPerNode(t *testing.T) {
	s := &System{DevicesPerNode: 8, Nodes: 16}
	tests := []struct{ ranks, stride, want int }{
		{8, 1, 8},   // TP 8 in one node
		{16, 1, 8},  // a group wider than a node
		{4, 2, 4},   // CP 4 after TP 2
		{48, 8, 1},  // DP after TP 8: one per node
		{16, 4, 2},  // DP after TP 4: two per node
		{1, 1, 1},   // no group
		{64, 16, 1}, // PP after TP·DP
	}
	for _, tt := range tests {
		if got := s.GroupPerNode(tt.ranks, tt.stride); got != tt.want {
			t.Errorf("GroupPerNode(%d, stride %d) = %d, want %d", tt.ranks, tt.stride, got, tt.want)
		}
	}
}
