package hardware

import (
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// readmeFile is the README's example hardware file: the H100's peaks,
// no efficiencies.
const readmeFile = `name = "My accelerator"
vendor = "Acme"
kind = "gpu"
compute_units = 132
source = "Acme X1 datasheet, rev 2"

[peak.matrix]
bf16 = "989.5 TFLOP/s"
fp8 = "1979 TFLOP/s"

[memory]
capacity = "80 GB"
bandwidth = "3.35 TB/s"
`

func mustLoad(t *testing.T, src string) *Device {
	t.Helper()
	d, err := Load(strings.NewReader(src), "test.toml")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestKindDefaults(t *testing.T) {
	h100, err := Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		src       string
		changed   bool
		from      string // DefaultsFrom
		transfer  string // TransferredFrom
		label     string // a part of the label
		bf16Comp  float64
		noLabelOf string
	}{
		{"README example: the H100's fitted efficiencies as defaults", readmeFile, true, "H100 SXM", "",
			"uncalibrated: datasheet peaks at 80% efficiency; default efficiencies of H100 SXM, the nearest calibrated gpu", h100.Eff.GEMM[model.BF16].Compute, ""},
		{"a file with its own efficiency keeps it", readmeFile + "\n[efficiency]\nvector = 0.5\n[efficiency.gemm.bf16]\ncompute = 0.6\nmemory = 0.7\n", false, "", "",
			"uncalibrated: datasheet peaks at 60% efficiency", 0.6, "default efficiencies"},
		{"a CPU: no calibrated CPU to take defaults from", strings.Replace(strings.Replace(readmeFile, `kind = "gpu"`, `kind = "cpu"`, 1), "[peak.matrix]\nbf16", "[peak.matrix]\nfp32", 1), false, "", "",
			"uncalibrated: datasheet peaks at 100% efficiency (fp32 GEMM)", 0, "default efficiencies"},
		{"an NVIDIA Hopper file: its family's transfer", strings.Replace(readmeFile, `vendor = "Acme"`, "vendor = \"NVIDIA\"\narchitecture = \"Hopper GH100\"", 1), true, "", "H100 SXM",
			"transferred from H100 SXM", h100.Eff.GEMM[model.BF16].Compute, "uncalibrated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := mustLoad(t, tc.src)
			if got := KindDefaults(d); got != tc.changed {
				t.Errorf("KindDefaults = %v, want %v", got, tc.changed)
			}
			if d.DefaultsFrom != tc.from || d.TransferredFrom != tc.transfer {
				t.Errorf("defaults from %q, transferred from %q; want %q, %q", d.DefaultsFrom, d.TransferredFrom, tc.from, tc.transfer)
			}
			l := d.CalibrationLabel()
			if !strings.Contains(l, tc.label) || (tc.noLabelOf != "" && strings.Contains(l, tc.noLabelOf)) {
				t.Errorf("label %q, want it to contain %q and not %q", l, tc.label, tc.noLabelOf)
			}
			if g := d.Eff.GEMM[model.BF16].Compute; g != tc.bf16Comp {
				t.Errorf("bf16 GEMM compute %v, want %v", g, tc.bf16Comp)
			}
			if tc.from != "" {
				// Defaults, not a measurement: no interval, nothing fitted.
				for dt, g := range d.Eff.GEMM {
					if g.ErrP90 != 0 || g.Points != 0 || g.Residual != nil {
						t.Errorf("%s GEMM: err_p90 %v, points %d, residual %v: want none", dt, g.ErrP90, g.Points, g.Residual != nil)
					}
				}
				if d.Eff.Attention.ErrP90 != 0 || d.Eff.Memory.Efficiency != h100.Eff.Memory.Efficiency || d.Launch != h100.Launch {
					t.Errorf("attention err_p90 %v, memory efficiency %v (H100 %v), launch %v (H100 %v)",
						d.Eff.Attention.ErrP90, d.Eff.Memory.Efficiency, h100.Eff.Memory.Efficiency, d.Launch, h100.Launch)
				}
				if _, ok := d.Eff.GEMM[model.FP8]; !ok {
					t.Error("no fp8 GEMM defaults for a device with an fp8 peak")
				}
				if err := d.Validate(); err != nil {
					t.Errorf("the device with defaults does not validate: %v", err)
				}
			}
			if KindDefaults(d) {
				t.Error("a second KindDefaults changed the device again")
			}
		})
	}
	// A catalog device already has its efficiencies.
	for _, name := range []string{"h100", "mi300x", "tpu-v5e", "epyc7742"} {
		d, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if KindDefaults(d) {
			t.Errorf("%s: KindDefaults changed a catalog device", name)
		}
	}
}
