package hardware

import (
	"io/fs"
	"path"
	"reflect"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// baseDevice is a small hand-written device for the overlay tests.
const baseDevice = `name = "Test GPU"
vendor = "Test"
kind = "gpu"
source = "test: base"
compute_units = 100
launch_overhead = "4 us"

[peak.matrix]
bf16 = "1000 TFLOP/s"

[peak.vector]
fp32 = "60 TFLOP/s"

[memory]
capacity = "80 GB"
bandwidth = "3 TB/s"

[efficiency.gemm.bf16]
compute = 0.8
memory = 0.85
l2_factor = 2.0

[efficiency.gemm.fp32]
compute = 0.9
memory = 0.85

[efficiency.memory]
efficiency = 0.85

[efficiency.attention]
compute = 0.7
memory = 0.8

[interconnect.intra]
name = "Link"
bandwidth = "400 GB/s"
latency = "2 us"
efficiency = 0.8
devices_per_node = 8
topology = "switch"
sources = { latency = "assumed: base latency" }
`

func loadBase(t *testing.T) *Device {
	t.Helper()
	d, err := Load(strings.NewReader(baseDevice), "base.toml")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestApplyFitted_rule checks the overlay rule: a fitted table replaces
// the device's table of that name whole, a fitted interconnect key that
// key; the rest, and its sources, stay.
func TestApplyFitted_rule(t *testing.T) {
	d := loadBase(t)
	const overlay = `# fitted
[efficiency.gemm.bf16]
compute = 0.75
memory = 0.8
source = "fitted: test, 100 points"
points = 100
err_median = 0.02
err_p90 = 0.08

[efficiency.gemm.bf16.residual]
log2_m = [0.0, 1.0]
log2_n = [0.0]
log2_k = [0.0]
values = [0.1, -0.1]

[efficiency.attention]
compute = 0.5
decode_memory = 0.9
source = "attention fitted: test"
points = 50

[interconnect.intra]
source = "collective fitted: test"
latency = "0.5 us"
base_latency = "3 us"
allreduce_efficiency = 0.3
`
	if err := ApplyFitted(d, strings.NewReader(overlay), "fitted.toml"); err != nil {
		t.Fatal(err)
	}
	g := d.Eff.GEMM[model.BF16]
	if g.Compute != 0.75 || g.Memory != 0.8 || g.L2Factor != 0 || g.Points != 100 || g.ErrP90 != 0.08 || !g.Residual.Valid() {
		t.Errorf("bf16 = %+v, want the overlay's table whole (l2_factor 0: not in the overlay)", g)
	}
	if g.Launch != 4e-6 || d.Sources["efficiency.gemm.bf16.launch"] != "default: launch_overhead" {
		t.Errorf("bf16 launch = %v (%q), want the device's launch_overhead by default", g.Launch, d.Sources["efficiency.gemm.bf16.launch"])
	}
	if d.Sources["efficiency.gemm.bf16.compute"] != "fitted: test, 100 points" {
		t.Errorf("bf16 compute source = %q", d.Sources["efficiency.gemm.bf16.compute"])
	}
	if _, ok := d.Sources["efficiency.gemm.bf16.l2_factor"]; ok {
		t.Errorf("the replaced table's l2_factor keeps its source")
	}
	if f := d.Eff.GEMM[model.FP32]; f.Compute != 0.9 || d.Sources["efficiency.gemm.fp32.compute"] != "test: base" {
		t.Errorf("fp32 = %+v (%q), want the hand-written table", f, d.Sources["efficiency.gemm.fp32.compute"])
	}
	a := d.Eff.Attention
	if a.Compute != 0.5 || a.Memory != 0 || a.DecodeMemory != 0.9 || a.Points != 50 {
		t.Errorf("attention = %+v, want the overlay's table whole", a)
	}
	if d.Eff.Memory.Efficiency != 0.85 {
		t.Errorf("memory efficiency = %v, want the hand-written 0.85", d.Eff.Memory.Efficiency)
	}
	n := d.Intra
	want := Network{Name: "Link", Bandwidth: 400e9, Latency: 0.5e-6, Efficiency: 0.8, DevicesPerNode: 8, Topology: "switch", Base: 3e-6, AllReduceEfficiency: 0.3}
	if n != want {
		t.Errorf("intra = %+v, want %+v", n, want)
	}
	for k, w := range map[string]string{
		"interconnect.intra.latency":              "collective fitted: test",
		"interconnect.intra.base_latency":         "collective fitted: test",
		"interconnect.intra.allreduce_efficiency": "collective fitted: test",
		"interconnect.intra.efficiency":           "test: base",
		"interconnect.intra.bandwidth":            "test: base",
	} {
		if got := d.Sources[k]; got != w {
			t.Errorf("Sources[%s] = %q, want %q", k, got, w)
		}
	}
	if d.File != "base.toml" {
		t.Errorf("File = %q, want the base file's", d.File)
	}
	if err := d.Validate(); err != nil {
		t.Errorf("the merged device does not validate: %v", err)
	}
}

// TestApplyFitted_errors checks that an overlay is read as strictly as a
// device file, positioned in the overlay, and that a failed overlay
// leaves the device as it was.
func TestApplyFitted_errors(t *testing.T) {
	tests := []struct {
		name, overlay string
		want          []string // substrings of the error
	}{
		{"datasheet key", "[interconnect.intra]\nsource = \"fitted\"\nbandwidth = \"900 GB/s\"\n",
			[]string{"fitted.toml:3", `unknown key "interconnect.intra.bandwidth"`}},
		{"device key", "name = \"Other\"\n[efficiency.memory]\nsource = \"fitted\"\nefficiency = 0.9\n",
			[]string{"fitted.toml:1", `unknown key "name"`}},
		{"unknown efficiency key", "[efficiency.gemm.bf16]\nsource = \"fitted\"\ncompute = 0.8\ncomptue = 0.7\n",
			[]string{"fitted.toml:4", `"efficiency.gemm.bf16.comptue"`}},
		{"fraction out of range", "[efficiency.gemm.bf16]\nsource = \"fitted\"\ncompute = 1.5\n",
			[]string{"fitted.toml:3", "efficiency.gemm.bf16.compute"}},
		{"no source", "[efficiency.memory]\nefficiency = 0.9\n",
			[]string{"fitted.toml:1", "every number needs a source"}},
		{"no such tier", "[interconnect.inter]\nsource = \"fitted\"\nlatency = \"1 us\"\n",
			[]string{"fitted.toml:1", "no [interconnect.inter] to calibrate"}},
		{"bare number", "[interconnect.intra]\nsource = \"fitted\"\nlatency = 2\n",
			[]string{"fitted.toml:3", "interconnect.intra.latency"}},
		{"not TOML", "[efficiency.memory\n", []string{"fitted.toml:2", "not valid TOML"}},
		{"empty", "# only a comment\n", []string{"fitted.toml", "no keys"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := loadBase(t)
			before := loadBase(t)
			err := ApplyFitted(d, strings.NewReader(tt.overlay), "fitted.toml")
			if err == nil {
				t.Fatalf("ApplyFitted(%q) = nil, want an error", tt.overlay)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ApplyFitted error %q does not contain %q", err, w)
				}
			}
			if !reflect.DeepEqual(d, before) {
				t.Errorf("a failed overlay changed the device")
			}
		})
	}
}

// TestCatalog_fittedOverlays checks every overlay in devices/fitted: it
// names a catalog device, applies, carries fitted tables with their
// points and held-out errors, and leaves the hand-written rest of the
// device as LoadFile reads it.
func TestCatalog_fittedOverlays(t *testing.T) {
	entries, err := fs.ReadDir(devicesFS, "devices/fitted")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 {
		t.Fatal("devices/fitted holds no overlay")
	}
	for _, e := range entries {
		stem := strings.TrimSuffix(e.Name(), ".toml")
		t.Run(stem, func(t *testing.T) {
			if !contains(catalogOrder, stem) {
				t.Fatalf("devices/fitted/%s: no catalog device devices/%s.toml", e.Name(), stem)
			}
			d, err := loadCatalogFile(stem)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := devicesFS.ReadFile(path.Join("devices", stem+".toml"))
			base, err := Load(strings.NewReader(string(data)), stem)
			if err != nil {
				t.Fatal(err)
			}
			fitted := 0
			for dt, g := range d.Eff.GEMM {
				bg := base.Eff.GEMM[dt]
				if g.Points == 0 {
					if !reflect.DeepEqual(g, bg) {
						t.Errorf("gemm.%s is not fitted but differs from the hand-written table", dt)
					}
					continue
				}
				fitted++
				if !strings.Contains(g.Source, "fitted") || g.ErrMedian <= 0 || g.ErrP90 < g.ErrMedian {
					t.Errorf("gemm.%s: points %d, source %q, err median %v p90 %v: want a fitted source and held-out errors", dt, g.Points, g.Source, g.ErrMedian, g.ErrP90)
				}
			}
			if a := d.Eff.Attention; a.Points > 0 {
				fitted++
				if !strings.Contains(a.Source, "fitted") || a.ErrP90 <= 0 {
					t.Errorf("attention: source %q, err p90 %v", a.Source, a.ErrP90)
				}
			}
			if fitted == 0 {
				t.Errorf("the overlay fits no efficiency table")
			}
			// The hand-written part is untouched.
			if !reflect.DeepEqual(d.Matrix, base.Matrix) || d.Memory != base.Memory || d.Name != base.Name ||
				d.Intra.Bandwidth != base.Intra.Bandwidth || d.Intra.Name != base.Intra.Name || d.Inter != base.Inter || d.Host != base.Host {
				t.Errorf("the overlay changed hand-written numbers")
			}
			if d.Eff.Memory.Points == 0 && d.Eff.Memory != base.Eff.Memory {
				t.Errorf("memory is not fitted but differs from the hand-written table")
			}
		})
	}
}

// FuzzApplyFitted: an overlay never panics, and a rejected one leaves the
// device as it was.
func FuzzApplyFitted(f *testing.F) {
	f.Add("[efficiency.memory]\nsource = \"fitted\"\nefficiency = 0.9\n")
	f.Add("[efficiency.gemm.bf16]\nsource = \"f\"\ncompute = 0.8\n[efficiency.gemm.bf16.residual]\nlog2_m = [0.0]\nlog2_n = [0.0]\nlog2_k = [0.0]\nvalues = [0.1]\n")
	f.Add("[interconnect.intra]\nsource = \"f\"\nlatency = \"1 us\"\nallreduce_efficiency = 0.4\n")
	f.Add("[efficiency.attention]\nsource = \"f\"\ncompute = 2\n")
	base, err := Load(strings.NewReader(baseDevice), "base.toml")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, overlay string) {
		d, _ := Load(strings.NewReader(baseDevice), "base.toml")
		if err := ApplyFitted(d, strings.NewReader(overlay), "fitted.toml"); err != nil {
			if !reflect.DeepEqual(d, base) {
				t.Errorf("a rejected overlay changed the device")
			}
			return
		}
		if err := d.Validate(); err != nil {
			t.Errorf("an accepted overlay gives an invalid device: %v", err)
		}
	})
}
