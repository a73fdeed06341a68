package hardware

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Every catalog device with a scale-up tier says whether its switch
// reduces in the network, with a source; NVLink SHARP is the third
// generation of NVSwitch and later's (N21, N22): the H100 SXM, H200,
// B200 and GB200, on a switch. Nothing else has it: the A100's
// second-generation NVSwitch, bridges, PCIe, Infinity Fabric, RoCE, ICI.
func TestCatalog_inNetworkReduction(t *testing.T) {
	want := []string{"B200", "GB200", "H100 SXM", "H200 SXM"}
	var got []string
	for _, d := range Catalog() {
		if d.Intra == (Network{}) {
			continue
		}
		sharp, stated := d.Intra.SHARP()
		if !stated {
			t.Errorf("%s: interconnect.intra does not say in_network_reduction", d.Name)
		}
		if src := d.Sources["interconnect.intra.in_network_reduction"]; strings.TrimSpace(src) == "" {
			t.Errorf("%s: in_network_reduction has no source", d.Name)
		}
		if sharp {
			got = append(got, d.Name)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("devices with NVLink SHARP: %v, want %v", got, want)
	}
}

// minimalIntra is a device file with a scale-up tier and extra lines in it.
func minimalIntra(extra string) string {
	return `name = "x"
vendor = "v"
kind = "gpu"
compute_units = 1
source = "test"
[peak.matrix]
bf16 = "1 TFLOP/s"
[memory]
capacity = "80 GB"
bandwidth = "1 GB/s"
[interconnect.intra]
name = "link"
bandwidth = "1 GB/s"
devices_per_node = 8
` + extra
}

// in_network_reduction: its values, its source, and every problem with it
// at once, at its file:line:key.
func TestLoad_inNetworkReduction(t *testing.T) {
	for _, tt := range []struct {
		what, extra string
		sharp       bool
		stated      bool
		err         string
	}{
		{"nvlink-sharp on a switch", "topology = \"switch\"\nin_network_reduction = \"nvlink-sharp\"\n", true, true, ""},
		{"none", "topology = \"switch\"\nin_network_reduction = \"none\"\n", false, true, ""},
		{"not given: none, unstated", "topology = \"switch\"\n", false, false, ""},
		{"empty", "topology = \"switch\"\nin_network_reduction = \"\"\n", false, false,
			`x.toml:16: interconnect.intra.in_network_reduction: empty: want nvlink-sharp or none (or leave the key out when not known)`},
		{"misspelt", "topology = \"switch\"\nin_network_reduction = \"nonе\"\n", false, false,
			`x.toml:16: interconnect.intra.in_network_reduction: "nonе" is not an in-network reduction (want nvlink-sharp, none); did you mean "none"?`},
		{"SHARP by another name", "topology = \"switch\"\nin_network_reduction = \"SHARP\"\n", false, false,
			`did you mean "nvlink-sharp"?`},
		{"a boolean", "topology = \"switch\"\nin_network_reduction = true\n", false, false,
			`x.toml:16: interconnect.intra.in_network_reduction: expected a string`},
		{"on a ring", "topology = \"ring\"\nin_network_reduction = \"nvlink-sharp\"\n", false, false,
			`x.toml:16: interconnect.intra.in_network_reduction: "nvlink-sharp" is done in an NVSwitch, but the topology is "ring", not switch`},
		{"with a bad topology too", "topology = \"star\"\nin_network_reduction = \"nvls\"\n", false, false,
			"x.toml:15: interconnect.intra.topology: \"star\" is not a topology (want switch, ring, mesh, torus)\nhardware: x.toml:16: interconnect.intra.in_network_reduction: \"nvls\" is not an in-network reduction"},
	} {
		d, err := Load(strings.NewReader(minimalIntra(tt.extra)), "x.toml")
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: Load = %v, want an error containing %q", tt.what, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.what, err)
			continue
		}
		if sharp, stated := d.Intra.SHARP(); sharp != tt.sharp || stated != tt.stated {
			t.Errorf("%s: SHARP() = %v, %v, want %v, %v", tt.what, sharp, stated, tt.sharp, tt.stated)
		}
		if tt.stated && d.Sources["interconnect.intra.in_network_reduction"] != "test" {
			t.Errorf("%s: source %q, want the file's", tt.what, d.Sources["interconnect.intra.in_network_reduction"])
		}
	}
	// It is a fact of the hardware: without a source it is an error.
	src := strings.Replace(minimalIntra("topology = \"switch\"\nin_network_reduction = \"none\"\n"), "source = \"test\"\n", "", 1)
	src = strings.Replace(src, "[peak.matrix]\n", "[peak.matrix]\nsource = \"t\"\n", 1)
	src = strings.Replace(src, "[memory]\n", "[memory]\nsource = \"t\"\n", 1)
	src = strings.Replace(src, "name = \"link\"\nbandwidth = \"1 GB/s\"\n", "name = \"link\"\nbandwidth = \"1 GB/s\"\nsources = { bandwidth = \"t\", devices_per_node = \"t\" }\n", 1)
	if _, err := Load(strings.NewReader(src), "x.toml"); err == nil || !strings.Contains(err.Error(), `every number needs a source`) {
		t.Errorf("in_network_reduction without a source: %v, want the missing source", err)
	}
	// It is the scale-up tier's: the scale-out network has no such key.
	src = minimalIntra("topology = \"switch\"\n[interconnect.inter]\nname = \"IB\"\nbandwidth = \"50 GB/s\"\nin_network_reduction = \"none\"\n")
	if _, err := Load(strings.NewReader(src), "x.toml"); err == nil || !strings.Contains(err.Error(), `unknown key "interconnect.inter.in_network_reduction"`) {
		t.Errorf("in_network_reduction on the inter tier: %v, want an unknown key", err)
	}
}

// A system file's [intra] overrides in_network_reduction as any other key
// of the tier, and what it makes is checked at the system file's lines:
// the H100's NVLink SHARP on a tier the system makes a ring is an error
// there.
func TestLoadSystem_inNetworkReduction(t *testing.T) {
	s, err := LoadSystem(strings.NewReader("device = \"h100\"\nsource = \"our cluster\"\n[intra]\nin_network_reduction = \"none\"\n"), "cluster.toml")
	if err != nil {
		t.Fatal(err)
	}
	if sharp, stated := s.Intra.SHARP(); sharp || !stated {
		t.Errorf("h100 with [intra] in_network_reduction = none: SHARP() = %v, %v, want false, true", sharp, stated)
	}
	if got := s.Device.Sources["system.intra.in_network_reduction"]; got != "our cluster" {
		t.Errorf("the override's source: %q, want the system file's", got)
	}
	s, err = LoadSystem(strings.NewReader("device = \"h100\"\n"), "cluster.toml")
	if err != nil {
		t.Fatal(err)
	}
	if sharp, _ := s.Intra.SHARP(); !sharp {
		t.Error("a system file of h100s without [intra]: no NVLink SHARP, want the device's")
	}
	_, err = LoadSystem(strings.NewReader("device = \"h100\"\nsource = \"ours\"\n[intra]\ntopology = \"ring\"\n"), "cluster.toml")
	if err == nil || !strings.Contains(err.Error(), `cluster.toml:3: intra.in_network_reduction: "nvlink-sharp" is done in an NVSwitch, but the topology is "ring"`) {
		t.Errorf("h100 made a ring: %v, want the reduction's conflict at the system file's [intra]", err)
	}
}

// --set interconnect.intra.in_network_reduction: a what-if of the switch,
// which no kernel reads (the base's calibration is kept whole), checked
// as the file's key is, each problem naming the flag.
func TestDerive_inNetworkReduction(t *testing.T) {
	h100, err := Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	mi300x, err := Lookup("mi300x")
	if err != nil {
		t.Fatal(err)
	}
	if !KernelNeutral("interconnect.intra.in_network_reduction") {
		t.Error("in_network_reduction is not kernel-neutral")
	}
	d, err := Derive(h100, []string{"interconnect.intra.in_network_reduction=none"})
	if err != nil {
		t.Fatal(err)
	}
	if sharp, stated := d.Intra.SHARP(); sharp || !stated {
		t.Errorf("--set ...=none: SHARP() = %v, %v", sharp, stated)
	}
	if d.Kept != nil || d.TransferredFrom != "" || d.Calibration().Kind != "calibrated" {
		t.Errorf("--set ...=none: calibration %+v, want the H100's kept whole", d.Calibration())
	}
	// With a number that does move kernels set beside it, the base's
	// calibration is carried over (Transfer), and the reduction set must
	// stay the what-if's: the carried collective fit had brought the
	// H100's nvlink-sharp back with it.
	both, err := Derive(h100, []string{"memory.bandwidth=4TB/s", "interconnect.intra.in_network_reduction=none"})
	if err != nil {
		t.Fatal(err)
	}
	if sharp, stated := both.Intra.SHARP(); sharp || !stated {
		t.Errorf("--set memory.bandwidth=4TB/s --set ...=none: SHARP() = %v, %v; want false, true", sharp, stated)
	}
	if both.Intra.Base != h100.Intra.Base {
		t.Errorf("--set memory.bandwidth=4TB/s --set ...=none: intra base latency %v, want the H100's fitted %v carried", both.Intra.Base, h100.Intra.Base)
	}
	if same, err := Derive(h100, []string{"interconnect.intra.in_network_reduction=nvlink-sharp"}); err != nil || same.WhatIfBase != "" {
		t.Errorf("--set to the H100's own value: %v, %v; want the H100 itself", same.Name, err)
	}
	for _, tt := range []struct {
		base *Device
		set  string
		want string
	}{
		{h100, "interconnect.intra.in_network_reduction=nvls", `--set interconnect.intra.in_network_reduction=nvls: "nvls" is not an in-network reduction (want nvlink-sharp, none); did you mean "nvlink-sharp"?`},
		{mi300x, "interconnect.intra.in_network_reduction=nvlink-sharp", `--set interconnect.intra.in_network_reduction=nvlink-sharp: "nvlink-sharp" is done in an NVSwitch, but MI300X's scale-up link is a mesh, not a switch`},
	} {
		if _, err := Derive(tt.base, []string{tt.set}); err == nil || err.Error() != tt.want {
			t.Errorf("Derive(%s, %s) = %v, want %s", tt.base.Name, tt.set, err, tt.want)
		}
	}
}

// A derived file inherits its base's in_network_reduction, and may set
// it, its problems at its own file:line:key.
func TestDerived_inNetworkReduction(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	d, err := LoadFile(write("hbm4.toml", "base = \"h100\"\n[memory]\nbandwidth = \"8 TB/s\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if sharp, stated := d.Intra.SHARP(); !sharp || !stated {
		t.Errorf("a derived H100: SHARP() = %v, %v, want the base's", sharp, stated)
	}
	d, err = LoadFile(write("nosharp.toml", "base = \"h100\"\n[interconnect.intra]\nin_network_reduction = \"none\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if sharp, stated := d.Intra.SHARP(); sharp || !stated {
		t.Errorf("a derived H100 saying none: SHARP() = %v, %v", sharp, stated)
	}
	_, err = LoadFile(write("bad.toml", "base = \"h100\"\n[interconnect.intra]\nin_network_reduction = \"yes\"\n"))
	if err == nil || !strings.Contains(err.Error(), `bad.toml:3: interconnect.intra.in_network_reduction: "yes" is not an in-network reduction`) {
		t.Errorf("a derived file's bad reduction: %v, want it at its line", err)
	}
}
