package hardware

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// FuzzLoad checks that Load never panics, and that what it accepts
// validates. It is seeded with the catalog and the bad files:
//
//	go test -fuzz=FuzzLoad ./hardware
func FuzzLoad(f *testing.F) {
	for _, glob := range []string{"devices/*.toml", "testdata/bad/*.toml", "testdata/good/*.toml"} {
		files, err := filepath.Glob(glob)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Load(bytes.NewReader(data), "fuzz.toml")
		if err != nil {
			return
		}
		if err := d.Validate(); err != nil {
			t.Errorf("Load accepted a device that does not validate: %v", err)
		}
		checkReduction(t, d.Intra, d.Inter, d.Host)
		// What hardware show derives from an accepted device is finite.
		for _, peaks := range []map[model.DType]model.FLOPRate{d.Matrix, d.Vector} {
			for dt, p := range peaks {
				if r := float64(model.Ridge(p, d.Memory.Bandwidth)); math.IsNaN(r) || math.IsInf(r, 0) {
					t.Errorf("%v ridge point of an accepted device is %v", dt, r)
				}
			}
		}
	})
}

// FuzzLoadSystem checks that LoadSystem never panics, and that a system it
// accepts validates, has at least one device without overflow, and has
// finite networks. Device files named in the input resolve beside an
// empty directory.
//
//	go test -fuzz=FuzzLoadSystem ./hardware
func FuzzLoadSystem(f *testing.F) {
	for _, s := range []string{
		"device = \"mi300x\"\nnodes = 2\nsource = \"our cluster\"\n\n[inter]\nname = \"RoCE 400G\"\nbandwidth = \"40 GB/s\"\n",
		"device = \"h100\"\ndevices_per_node = 8\nnodes = 4\n[intra]\nbandwidth = \"450 GB/s\"\nlatency = \"2 us\"\nefficiency = 0.8\ndevices_per_node = 8\ntopology = \"switch\"\n",
		"device = \"h1000\"\nnodez = 2\n",
		"device = \"a100\"\nnodes = 9223372036854775807\n",
		"device = \"missing.toml\"\n",
		"device = \"h100\"\nnodes = -1\ndevices_per_node = 0\n",
		"device = \"h100\"\nsource = \"ours\"\n[intra]\nin_network_reduction = \"none\"\n",
		"device = \"h100\"\nsource = \"ours\"\n[intra]\ntopology = \"mesh\"\n",
		"device = \"mi300x\"\nsource = \"ours\"\n[intra]\nin_network_reduction = \"nvlink-sharp\"\n",
		"device = \"a100\"\n[intra]\nin_network_reduction = \"NVLS\"\n",
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, src string) {
		s, err := LoadSystem(strings.NewReader(src), filepath.Join(dir, "system.toml"))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error message")
			}
			return
		}
		if err := s.Device.Validate(); err != nil {
			t.Errorf("LoadSystem accepted a device that does not validate: %v", err)
		}
		checkReduction(t, s.Intra, s.Inter, s.Device.Host)
		if s.DevicesPerNode < 1 || s.Nodes < 1 || s.Devices()/s.Nodes != s.DevicesPerNode {
			t.Errorf("LoadSystem accepted %d devices per node × %d nodes = %d devices", s.DevicesPerNode, s.Nodes, s.Devices())
		}
		for _, n := range []Network{s.Intra, s.Inter} {
			for _, v := range []float64{float64(n.Bandwidth), float64(n.Latency), n.Efficiency} {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					t.Errorf("LoadSystem accepted a network with %v in it: %+v", v, n)
				}
			}
		}
	})
}

// FuzzDerive checks that Derive never panics and that what it accepts
// validates with a positive bandwidth:
//
//	go test -fuzz=FuzzDerive ./hardware
func FuzzDerive(f *testing.F) {
	for _, s := range []string{"memory.bandwidth=8TB/s", "peak.matrix.fp8=4PFLOP/s", "memory.capacity=160 GB", "clock=2 GHz",
		"compute_units=160", "memory.bandwidth=8", "peak.matrix.fp9=1 PFLOP/s", "x", "=", "memory.l2=-1 MB", "interconnect.intra.bandwidth=1.8 TB/s",
		"interconnect.intra.in_network_reduction=none", "interconnect.intra.in_network_reduction=NVLS", "interconnect.intra.in_network_reduction="} {
		f.Add(s)
	}
	base, err := Lookup("h100")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Derive(base, []string{s})
		if err != nil {
			return
		}
		if !(d.Memory.Bandwidth > 0) || d.Validate() != nil {
			t.Errorf("%q: accepted a device with bandwidth %v: %v", s, d.Memory.Bandwidth, d.Validate())
		}
		checkReduction(t, d.Intra, d.Inter, d.Host)
	})
}

// checkReduction fails t unless an accepted device's in-network reduction
// is one of Reductions on its scale-up tier, NVLink SHARP only on a
// switch, and absent from the other tiers (in_network_reduction is the
// scale-up tier's key alone).
func checkReduction(t *testing.T, intra Network, others ...Network) {
	t.Helper()
	if r := intra.Reduction; r != "" && !slices.Contains(Reductions, r) {
		t.Errorf("accepted in_network_reduction %q", r)
	}
	if intra.Reduction == ReductionNVLinkSHARP && intra.Topology != "switch" {
		t.Errorf("accepted NVLink SHARP on a %q", intra.Topology)
	}
	for _, n := range others {
		if n.Reduction != "" {
			t.Errorf("accepted in_network_reduction %q off the scale-up tier", n.Reduction)
		}
	}
}
