package hardware

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/perfsim/perfsim/model"
)

func TestCatalog(t *testing.T) {
	devs := Catalog()
	if len(devs) < 24 {
		t.Errorf("catalog has %d devices, want at least 24", len(devs))
	}
	for _, d := range devs {
		if err := d.Validate(); err != nil {
			t.Errorf("%s: %v", d.Name, err)
		}
		if p := d.Processor(); p.Validate() != nil {
			err := p.Validate()
			t.Errorf("%s: %v", d.Name, err)
		}
		if len(d.Aliases) == 0 {
			t.Errorf("%s has no alias", d.Name)
		}
		if len(d.Eff.GEMM) == 0 || d.Eff.Memory.Efficiency == 0 {
			t.Errorf("%s has no default efficiencies", d.Name)
		}
	}
}

// TestCatalog_files checks that catalogOrder lists every embedded file
// once, so none is silently left out of the catalog.
func TestCatalog_files(t *testing.T) {
	entries, err := fs.ReadDir(devicesFS, "devices")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		if e.IsDir() {
			continue // devices/fitted: overlays, TestCatalog_fittedOverlays
		}
		files = append(files, strings.TrimSuffix(e.Name(), ".toml"))
	}
	order := append([]string(nil), catalogOrder...)
	sort.Strings(order)
	if !reflect.DeepEqual(files, order) {
		t.Errorf("devices/ holds %v, catalogOrder lists %v", files, order)
	}
}

// TestCatalog_namesUnique checks that no two devices answer to the same
// name or alias, after folding case, spaces and hyphens.
func TestCatalog_namesUnique(t *testing.T) {
	owner := map[string]string{}
	for _, d := range Catalog() {
		seen := map[string]bool{}
		for _, n := range d.names() {
			k := normName(n)
			if seen[k] {
				continue // a device may repeat its own name as an alias
			}
			seen[k] = true
			if o, dup := owner[k]; dup {
				t.Errorf("%q names both %s and %s", n, o, d.Name)
			}
			owner[k] = d.Name
		}
	}
}

// TestCatalog_sources checks that every number of every device has a
// source.
func TestCatalog_sources(t *testing.T) {
	for _, d := range Catalog() {
		keys := []string{"compute_units", "memory.capacity", "memory.bandwidth", "memory.reserve", "efficiency.memory.efficiency"}
		for kind, m := range map[string]map[model.DType]model.FLOPRate{"matrix": d.Matrix, "vector": d.Vector, "sparse": d.Sparse} {
			for dt := range m {
				keys = append(keys, "peak."+kind+"."+dt.String())
			}
		}
		for dt := range d.Eff.GEMM {
			keys = append(keys, "efficiency.gemm."+dt.String()+".compute")
		}
		if d.Memory.L2 > 0 {
			keys = append(keys, "memory.l2")
		}
		for tier, n := range map[string]Network{"intra": d.Intra, "inter": d.Inter, "host": d.Host} {
			if n.Bandwidth > 0 {
				keys = append(keys, "interconnect."+tier+".bandwidth", "interconnect."+tier+".efficiency", "interconnect."+tier+".latency")
			}
		}
		for _, k := range keys {
			if strings.TrimSpace(d.Sources[k]) == "" {
				t.Errorf("%s: %s has no source", d.Name, k)
			}
		}
		for dt, g := range d.Eff.GEMM {
			if g.Source == "" {
				t.Errorf("%s: efficiency.gemm.%s has no source", d.Name, dt)
			}
		}
	}
}

// TestCatalog_h100 checks the figures the issue names: 989.5 TFLOP/s
// bf16 dense, 3.35 TB/s, 80 GB, and a bf16 ridge of about 295 FLOP/byte
// (989.5e12 / 3.35e12 = 295.4).
func TestCatalog_h100(t *testing.T) {
	d, err := Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	if d.Matrix[model.BF16] != 989.5e12 || d.Memory.Bandwidth != 3.35e12 || d.Memory.Capacity != 80<<30 {
		t.Errorf("h100: bf16 %v, bandwidth %v, capacity %v", d.Matrix[model.BF16], d.Memory.Bandwidth, d.Memory.Capacity)
	}
	if r := model.Ridge(d.Matrix[model.BF16], d.Memory.Bandwidth); math.Abs(float64(r)-295.37) > 0.01 {
		t.Errorf("h100 bf16 ridge = %v, want 295.37", r)
	}
	if d.Intra.DevicesPerNode != 8 || d.Intra.Bandwidth != 450e9 {
		t.Errorf("h100 NVLink = %+v", d.Intra)
	}
}

// TestCatalog_memory checks the physical and usable memory of the devices
// whose driver-reported totals are known (want: the vendors' "80GB" etc. in
// binary units, and the total PyTorch prints from cudaMemGetInfo or
// hipMemGetInfo, as each file's source cites), and that every other GPU's
// usable memory is GPUUsableFraction of its capacity, said so.
func TestCatalog_memory(t *testing.T) {
	const gib = 1 << 30
	tests := []struct {
		hw               string
		physical, usable float64 // bytes
	}{
		{"h100", 85899345920, 79.11 * gib},
		{"a100", 80 * gib, 79.15 * gib},
		{"h200", 141 * gib, 139.81 * gib},
		{"mi300x", 192 * gib, 191.98 * gib},
	}
	for _, tt := range tests {
		d, err := Lookup(tt.hw)
		if err != nil {
			t.Fatal(err)
		}
		m := d.Memory
		if float64(m.Capacity) != tt.physical || math.Abs(float64(m.Usable)-tt.usable) > 1 || m.Limit() != m.Usable {
			t.Errorf("%s: capacity %.0f, usable %.0f; want %.0f, %.0f", tt.hw, float64(m.Capacity), float64(m.Usable), tt.physical, tt.usable)
		}
		for _, k := range []string{"memory.capacity", "memory.usable"} {
			if s := d.Sources[k]; s == "" || strings.HasPrefix(s, "default") {
				t.Errorf("%s: %s has source %q, want a datasheet or a measurement", tt.hw, k, s)
			}
		}
	}
	for _, d := range Catalog() {
		m := d.Memory
		if m.Usable <= 0 || m.Usable > m.Capacity || m.Reserve >= m.Usable {
			t.Errorf("%s: usable %v of capacity %v, reserve %v", d.Name, m.Usable, m.Capacity, m.Reserve)
		}
		src := d.Sources["memory.usable"]
		if strings.HasPrefix(src, "default") && d.Kind == "gpu" && math.Abs(float64(m.Usable)-float64(m.Capacity)*GPUUsableFraction) > 1 {
			t.Errorf("%s: default usable %v, want %v of %v", d.Name, m.Usable, GPUUsableFraction, m.Capacity)
		}
	}
}

// TestCatalog_a100Seed checks the A100's default GEMM efficiencies
// against seed 003's cuBLAS timings of a 4096³ GEMM (FP16 tensor cores
// 0.58 ms, FP32 CUDA cores 7.14 ms) under the plain roofline, within
// ±15%. The efficiencies come from other measurements (M1, M2, M3), so
// this is a check, not a fit. fp32 must run at the CUDA-core peak, 19.5
// TFLOP/s, not at the TF32 tensor rate.
func TestCatalog_a100Seed(t *testing.T) {
	tests := []struct {
		dt   model.DType
		want float64 // seconds, seed 003
	}{
		{model.FP16, 0.58e-3},
		{model.FP32, 7.14e-3},
	}
	for _, name := range []string{"a100", "a100-40gb", "a100-pcie"} {
		d, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		p := d.Processor()
		for _, tt := range tests {
			g := model.GEMM{M: 4096, N: 4096, K: 4096, A: tt.dt, B: tt.dt, C: tt.dt}
			dt, ok := p.Supported(g.Compute())
			if !ok {
				t.Fatalf("%s: no peak for %s", name, tt.dt)
			}
			peak, _ := p.Peak(dt)
			if tt.dt == model.FP32 && peak != 19.5e12 {
				t.Errorf("%s: fp32 peak %v, want the 19.5 TFLOP/s CUDA-core peak", name, peak)
			}
			e := d.Eff.GEMM[dt]
			// A fitted table's compute fraction is the per-tile rate of
			// the tile-aware model (devices/fitted), not a flat fraction:
			// only the hand-written defaults are checked as a plain
			// roofline (a transferred table is the tile-aware model's too).
			if e.Points == 0 && d.TransferredFrom == "" {
				compute := float64(g.FLOPs()) / (float64(peak) * e.Compute)
				memory := float64(g.Bytes()) / (float64(d.Memory.Bandwidth) * e.Memory)
				got := math.Max(compute, memory) + float64(e.Launch)
				if rel := got/tt.want - 1; math.Abs(rel) > 0.15 {
					t.Errorf("%s %s 4096³ roofline = %.3g ms, seed 003 %.3g ms (%+.0f%%)", name, tt.dt, got*1e3, tt.want*1e3, rel*100)
				}
			}
			// The cost model proper (tile-aware) must stay within the
			// same band, with defaults or fitted parameters (fitted to
			// aiconfigurator's timings, not to seed 003's).
			c := p.GEMMCost(g)
			if math.Abs(float64(c.Time)/tt.want-1) > 0.15 {
				t.Errorf("%s %s 4096³ GEMMCost = %v, seed 003 %.3g ms", name, tt.dt, c.Time, tt.want*1e3)
			}
			t.Logf("%s %s 4096³: %v (seed 003 %.3g ms; %d fitted points)", name, tt.dt, c.Time, tt.want*1e3, e.Points)
		}
	}
}

func TestLookup(t *testing.T) {
	tests := []struct{ arg, want string }{
		{"h100", "H100 SXM"},
		{"H100", "H100 SXM"},
		{"H100 SXM", "H100 SXM"},
		{"h100_sxm", "H100 SXM"},
		{"a100", "A100 80GB SXM"},
		{"MI300X", "MI300X"},
		{"mi250x", "MI250X GCD"},
		{"v5e", "TPU v5e"},
		{"xeon-8480+", "Xeon 8480+"},
		{"gaudi3", "Gaudi 3"},
	}
	for _, tt := range tests {
		d, err := Lookup(tt.arg)
		if err != nil {
			t.Errorf("Lookup(%q): %v", tt.arg, err)
			continue
		}
		if d.Name != tt.want {
			t.Errorf("Lookup(%q) = %s, want %s", tt.arg, d.Name, tt.want)
		}
	}
	_, err := Lookup("h1000")
	if !errors.Is(err, ErrUnknownDevice) || err.Error() != `hardware: unknown device "h1000" (did you mean "h100"?)` {
		t.Errorf("Lookup(h1000) = %v", err)
	}
	if _, err := Lookup("quantum-9000"); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("Lookup(quantum-9000) = %v, want an error without a suggestion", err)
	}
}

func TestResolve(t *testing.T) {
	d, err := Resolve("h200")
	if err != nil || d.Name != "H200 SXM" || d.File != "catalog:h200-sxm" {
		t.Errorf("Resolve(h200) = %v, %v", d, err)
	}
	path := filepath.Join("testdata", "good", "minimal.toml")
	d, err = Resolve(path)
	if err != nil || d.Name != "Acme X1" || d.File != path {
		t.Errorf("Resolve(%s) = %v, %v", path, d, err)
	}
	// A bare file name in the working directory resolves too.
	dir := t.TempDir()
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(filepath.Join(dir, "mine"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	if d, err := Resolve("mine"); err != nil || d.Name != "Acme X1" {
		t.Errorf("Resolve(mine) = %v, %v", d, err)
	}
	if _, err := Resolve("nosuch.toml"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Resolve(nosuch.toml) = %v, want ErrNotExist", err)
	}
	if _, err := Resolve(""); err == nil {
		t.Error("Resolve(\"\") succeeded")
	}
}

func TestNewSystem(t *testing.T) {
	h100, _ := Lookup("h100")
	s, err := NewSystem(h100, 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	if s.Devices() != 32 || s.Intra.Name != "NVLink 4" || s.Link(model.InterNode).Bandwidth != 50e9 {
		t.Errorf("NewSystem(h100, 0, 4) = %+v", s)
	}
	bad := []struct {
		name      string
		dev       string
		per, node int
		want      string
	}{
		{"too many per node", "h100", 16, 1, "hardware: H100 SXM: 16 devices per node, but its NVLink 4 joins at most 8 (interconnect.intra.devices_per_node)"},
		{"no nodes", "h100", 8, 0, "hardware: H100 SXM: nodes must be at least 1, not 0"},
		{"cpu has no network", "epyc7742", 2, 2, "hardware: EPYC 7742: 2 devices per node, but the device has no intra-node network (interconnect.intra)\nhardware: EPYC 7742: 2 nodes, but the device has no inter-node network (interconnect.inter)"},
	}
	for _, tt := range bad {
		d, _ := Lookup(tt.dev)
		if _, err := NewSystem(d, tt.per, tt.node); err == nil || err.Error() != tt.want {
			t.Errorf("%s: NewSystem = %v, want %s", tt.name, err, tt.want)
		}
	}
}

func TestLoadSystem(t *testing.T) {
	const src = `device = "mi300x"
nodes = 2
source = "our cluster"

[inter]
name = "RoCE 400G"
bandwidth = "40 GB/s"
`
	s, err := LoadSystem(strings.NewReader(src), "cluster.toml")
	if err != nil {
		t.Fatal(err)
	}
	if s.Device.Name != "MI300X" || s.DevicesPerNode != 8 || s.Nodes != 2 || s.Inter.Bandwidth != 40e9 || s.Inter.Name != "RoCE 400G" || s.Inter.Efficiency != 0.85 {
		t.Errorf("LoadSystem = %+v", s)
	}
	_, err = LoadSystem(strings.NewReader("device = \"h1000\"\nnodez = 2\n"), "bad.toml")
	// The package once: it had read "device: hardware: unknown device".
	want := `hardware: bad.toml:1: device: unknown device "h1000" (did you mean "h100"?)` + "\n" +
		`hardware: bad.toml:2: unknown key "nodez" (did you mean "nodes"?)`
	if err == nil || err.Error() != want {
		t.Errorf("LoadSystem(bad) = %v\nwant %s", err, want)
	}
	// A device file with problems of its own: each at its own
	// file:line:key, not under the system's device key (it read
	// "sys.toml:1: device: hardware: d.toml:1: base: ...").
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "d.toml"), []byte("base = \"h999\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadSystem(strings.NewReader("device = \"d.toml\"\nsource = \"assumed\"\n"), filepath.Join(dir, "sys.toml"))
	want = "hardware: " + filepath.Join(dir, "d.toml") + `:1: base: unknown device "h999": not in the catalog (`
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("LoadSystem(device file with an unknown base) = %v\nwant one line starting %s", err, want)
	}
}

// TestCatalog_documented checks that the catalog tables of
// docs/hardware.md and README.md have a row for every device, with its
// aliases.
func TestCatalog_documented(t *testing.T) {
	for _, name := range []string{filepath.Join("..", "docs", "hardware.md"), filepath.Join("..", "README.md")} {
		checkCatalogTable(t, name)
	}
}

func checkCatalogTable(t *testing.T, name string) {
	doc, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range Catalog() {
		var row string
		for _, line := range strings.Split(string(doc), "\n") {
			if strings.HasPrefix(line, "| "+d.Name+" |") {
				row = line
			}
		}
		if row == "" {
			t.Errorf("%s has no catalog row for %s", name, d.Name)
			continue
		}
		for _, a := range d.Aliases {
			if !strings.Contains(row, "`"+a+"`") {
				t.Errorf("%s: the row of %s lacks the alias %s", name, d.Name, a)
			}
		}
	}
}

// TestCatalogHead checks that Lookup's quick read of each catalog file's
// name and aliases agrees with the TOML parser.
func TestCatalogHead(t *testing.T) {
	for _, stem := range catalogOrder {
		data, err := devicesFS.ReadFile("devices/" + stem + ".toml")
		if err != nil {
			t.Fatal(err)
		}
		got, ok := scanHead(data)
		if !ok {
			t.Errorf("%s: name and aliases are not written plainly at the top of the file", stem)
			continue
		}
		var want deviceHead
		if _, err := toml.Decode(string(data), &want); err != nil {
			t.Fatal(err)
		}
		if got.Name != want.Name || len(got.Aliases) != len(want.Aliases) || len(got.Aliases) > 0 && !reflect.DeepEqual(got.Aliases, want.Aliases) {
			t.Errorf("%s: scanned %+v, the TOML parser says %+v", stem, got, want)
		}
	}
	// What it does not read plainly it leaves to the parser.
	for _, text := range []string{
		`name = "a\"b"`, "name = 'a'", `aliases = ["x"]`, "name = \"a\" # c", "name = \"a\"\nname = \"b\"",
		"name = \"a\"\naliases = [\"x\",\n\"y\"]",
	} {
		if h, ok := scanHead([]byte(text)); ok {
			t.Errorf("%q: scanned %+v, want it left to the parser", text, h)
		}
	}
}

// TestLoadSystem_givenZero: a system file that gives devices_per_node or
// nodes as 0 (or less) is told so at the key's line; devices_per_node 0
// had taken the device's own domain (8 on an H100) without a word, as
// leaving the key out does, and nodes 0 had named no file or line.
func TestLoadSystem_givenZero(t *testing.T) {
	_, err := LoadSystem(strings.NewReader("device = \"h100\"\nsource = \"x\"\ndevices_per_node = 0\nnodes = 0\n"), "zero.toml")
	want := `hardware: zero.toml:3: devices_per_node: must be at least 1, not 0 (leave the key out for the device's own, 8)` + "\n" +
		`hardware: zero.toml:4: nodes: must be at least 1, not 0`
	if err == nil || err.Error() != want {
		t.Errorf("LoadSystem(zeros) = %v\nwant %s", err, want)
	}
	s, err := LoadSystem(strings.NewReader("device = \"h100\"\nsource = \"x\"\n"), "absent.toml")
	if err != nil || s.DevicesPerNode != 8 || s.Nodes != 1 {
		t.Errorf("LoadSystem(keys left out) = %+v, %v; want the device's 8 per node, 1 node", s, err)
	}
}

// TestLoadSystem_systemProblems: what NewSystem finds wrong with a system
// file's counts (more devices a node than the device's link joins, a link
// the device lacks, too many devices) is said at the file's line and key,
// as the file's other problems are. It had read "hardware: f.toml:
// hardware: H100 SXM: ...", the prefix twice and no line.
func TestLoadSystem_systemProblems(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"device = \"h100\"\nsource = \"x\"\ndevices_per_node = 16\n",
			`hardware: f.toml:3: devices_per_node: H100 SXM: 16 devices per node, but its NVLink 4 joins at most 8 (interconnect.intra.devices_per_node)`},
		{"device = \"epyc-7742\"\nsource = \"x\"\ndevices_per_node = 2\nnodes = 2\n",
			`hardware: f.toml:3: devices_per_node: EPYC 7742: 2 devices per node, but the device has no intra-node network (interconnect.intra)` + "\n" +
				`hardware: f.toml:4: nodes: EPYC 7742: 2 nodes, but the device has no inter-node network (interconnect.inter)`},
		{"device = \"h100\"\nsource = \"x\"\ndevices_per_node = 8\nnodes = 16777216\n",
			`hardware: f.toml:4: nodes: H100 SXM: 16777216 nodes of 8 devices is more than 16777216 devices`},
	} {
		_, err := LoadSystem(strings.NewReader(tc.src), "f.toml")
		if err == nil || err.Error() != tc.want {
			t.Errorf("LoadSystem(%q) = %v\nwant %s", tc.src, err, tc.want)
		}
	}
}

// TestLoadSystem_networkProblems: a value a system file's [intra] or
// [inter] gives that the device's checks refuse is said at the system
// file's line and key. It had been said at the catalog file's ("hardware:
// catalog:h100-sxm:99: interconnect.inter.bandwidth: must be positive").
func TestLoadSystem_networkProblems(t *testing.T) {
	src := "device = \"h100\"\nsource = \"x\"\nnodes = 2\n[inter]\nbandwidth = \"0 GB/s\"\n[intra]\nefficiency = 3\n"
	_, err := LoadSystem(strings.NewReader(src), "f.toml")
	want := `hardware: f.toml:5: inter.bandwidth: must be positive, not 0 B/s` + "\n" +
		`hardware: f.toml:7: intra.efficiency: 3 is more than twice the link rate`
	if err == nil || err.Error() != want {
		t.Errorf("LoadSystem = %v\nwant %s", err, want)
	}
}

// TestCatalog_readmeCount checks the device count the README's
// "Hardware" section states against the catalog.
func TestCatalog_readmeCount(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, hw, ok := strings.Cut(string(b), "\n## Hardware\n")
	if !ok {
		t.Fatal(`README.md has no "## Hardware" section`)
	}
	want := fmt.Sprintf("%d accelerators and CPUs", len(Catalog()))
	if !strings.HasPrefix(strings.TrimSpace(hw), want) {
		t.Errorf(`README.md's "Hardware" does not begin %q`, want)
	}
}
