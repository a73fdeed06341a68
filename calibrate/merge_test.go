package calibrate

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// The fitted devices in fitted/ and the catalog overlays made from them
// (hardware/devices/fitted, by perfsim calibrate merge; see
// fitted/README.md).

// overlayDir is the catalog's directory of fitted overlays.
var overlayDir = filepath.Join("..", "hardware", "devices", "fitted")

// fittedStems lists the devices of fitted/ by file stem.
func fittedStems(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("fitted", "*.toml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fitted devices in fitted/: %v", err)
	}
	var stems []string
	for _, f := range files {
		stems = append(stems, strings.TrimSuffix(filepath.Base(f), ".toml"))
	}
	return stems
}

// TestFitted_catalogNoDrift checks that the catalog carries what fitted/
// holds: each overlay is byte for byte what perfsim calibrate merge makes
// of its fitted device, and the catalog device (hand-written file plus
// overlay) has the fitted device's parameters in every fitted table and
// interconnect key.
func TestFitted_catalogNoDrift(t *testing.T) {
	stems := fittedStems(t)
	for _, stem := range stems {
		t.Run(stem, func(t *testing.T) {
			fitted, err := hardware.LoadFile(filepath.Join("fitted", stem+".toml"))
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := WriteFitted(&want, fitted, "calibrate/fitted/"+stem+".toml"); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(overlayDir, stem+".toml"))
			if err != nil {
				t.Fatalf("%v: run calibrate/fitted/regen.sh -merge-only", err)
			}
			if line, w, g := firstDiff(want.String(), string(got)); line > 0 {
				t.Errorf("hardware/devices/fitted/%s.toml drifted from calibrate/fitted/%s.toml at line %d:\n want: %.120s\n  got: %.120s\n(run calibrate/fitted/regen.sh -merge-only)", stem, stem, line, w, g)
			}
			cat, err := hardware.Lookup(stem)
			if err != nil {
				t.Fatal(err)
			}
			if cat.Name != fitted.Name {
				t.Fatalf("catalog %s is %q, the fitted file %q", stem, cat.Name, fitted.Name)
			}
			n := 0
			for dt, g := range fitted.Eff.GEMM {
				if g.Points == 0 {
					continue
				}
				n++
				if !reflect.DeepEqual(cat.Eff.GEMM[dt], g) {
					t.Errorf("catalog gemm.%s differs from the fitted one", dt)
				}
			}
			if a := fitted.Eff.Attention; a.Points > 0 {
				n++
				if !reflect.DeepEqual(cat.Eff.Attention, a) {
					t.Errorf("catalog attention differs from the fitted one")
				}
			}
			if m := fitted.Eff.Memory; m.Points > 0 {
				n++
				if cat.Eff.Memory != m {
					t.Errorf("catalog memory %+v, fitted %+v", cat.Eff.Memory, m)
				}
			}
			for _, k := range []string{"latency", "efficiency", "base_latency", "allreduce_latency", "allreduce_efficiency", "efficiency_half_size", "efficiency_slope"} {
				key := "interconnect.intra." + k
				if !strings.Contains(fitted.Sources[key], "fitted") {
					continue
				}
				n++
				if cat.Sources[key] != fitted.Sources[key] {
					t.Errorf("catalog %s source %q, fitted %q", key, cat.Sources[key], fitted.Sources[key])
				}
			}
			// The hand-written link plus the overlay's keys is the fitted link.
			if cat.Intra != fitted.Intra || cat.Inter != fitted.Inter || cat.Host != fitted.Host {
				t.Errorf("catalog links %+v %+v %+v, fitted %+v %+v %+v", cat.Intra, cat.Inter, cat.Host, fitted.Intra, fitted.Inter, fitted.Host)
			}
			if n == 0 {
				t.Errorf("fitted/%s.toml has nothing fitted", stem)
			}
		})
	}
	// No overlay without its fitted device.
	overlays, _ := filepath.Glob(filepath.Join(overlayDir, "*.toml"))
	for _, o := range overlays {
		stem := strings.TrimSuffix(filepath.Base(o), ".toml")
		if !contains(stems, stem) {
			t.Errorf("hardware/devices/fitted/%s.toml has no calibrate/fitted/%s.toml", stem, stem)
		}
	}
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// firstDiff returns the first line (1-based) where a and b differ, with
// the two lines, or 0 when they are equal.
func firstDiff(a, b string) (int, string, string) {
	if a == b {
		return 0, "", ""
	}
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; ; i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y || i >= len(al) || i >= len(bl) {
			return i + 1, x, y
		}
	}
}

// TestWriteFitted checks the overlay of a fitted device: the fitted
// tables and interconnect keys only, and that it reads back through
// hardware.ApplyFitted to the same parameters.
func TestWriteFitted(t *testing.T) {
	base := catalogDeviceFile(t, "h100-sxm")
	d := *base
	d.Eff = copyEff(base.Eff)
	g := d.Eff.GEMM[model.BF16]
	g.Compute, g.Points, g.ErrMedian, g.ErrP90, g.Source = 0.7, 123, 0.02, 0.07, "fitted: test"
	g.Residual = &model.Residual{Log2M: []float64{0, 1}, Log2N: []float64{5}, Log2K: []float64{5}, Values: []float64{0.1, -0.05}}
	d.Eff.GEMM[model.BF16] = g
	d.Intra.Base, d.Intra.Latency = 3e-6, 0.4e-6
	d.Sources = map[string]string{}
	for k, v := range base.Sources {
		d.Sources[k] = v
	}
	d.Sources["interconnect.intra.base_latency"] = "collective fitted: test"
	d.Sources["interconnect.intra.latency"] = "collective fitted: test"
	var b bytes.Buffer
	if err := WriteFitted(&b, &d, "test.toml"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, w := range []string{"[efficiency.gemm.bf16]\n", "[efficiency.gemm.bf16.residual]\n", "[interconnect.intra]\nsource = \"collective fitted: test\"\nlatency = ", "base_latency = \"3 us\"\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("overlay lacks %q:\n%s", w, out)
		}
	}
	for _, no := range []string{"gemm.fp32", "gemm.fp8", "[efficiency.memory]", "[efficiency.attention]", "bandwidth", "interconnect.inter"} {
		if strings.Contains(out, no) {
			t.Errorf("overlay has %q, which was not fitted:\n%s", no, out)
		}
	}
	back := catalogDeviceFile(t, "h100-sxm")
	if err := hardware.ApplyFitted(back, strings.NewReader(out), "test.toml"); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Eff.GEMM[model.BF16], g) || back.Intra != d.Intra {
		t.Errorf("read back: bf16 %+v intra %+v, want %+v %+v", back.Eff.GEMM[model.BF16], back.Intra, g, d.Intra)
	}
	// Nothing fitted: an error, not an empty overlay.
	if err := WriteFitted(&b, base, "x"); err == nil || !strings.Contains(err.Error(), "nothing fitted") {
		t.Errorf("WriteFitted(unfitted) = %v, want a 'nothing fitted' error", err)
	}
}

// catalogDeviceFile loads the hand-written catalog file of stem, without
// its overlay.
func catalogDeviceFile(t *testing.T, stem string) *hardware.Device {
	t.Helper()
	d, err := hardware.LoadFile(filepath.Join("..", "hardware", "devices", stem+".toml"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestFitted_refitSample re-fits a small deterministic sample of the
// third-party GEMMs each shipped fit came from, from the hand-written
// device, and checks that it lands in the shipped figures' range: the
// compute and memory fractions within 30%, and the sample's median
// |error| under the shipped parameters no more than twice the shipped
// held-out median (plus half a point). It reads ../shared/validation and
// skips without it.
func TestFitted_refitSample(t *testing.T) {
	v := validationDir(t)
	tests := []struct{ stem, file string }{
		{"h100-sxm", "h100_sxm_gemm_trtllm_1.3.0rc20_gemm_perf.csv"},
		{"a100-sxm-80gb", "a100_sxm_gemm_trtllm_1.0.0_gemm_perf.csv"},
		{"b200", "b200_sxm_gemm_trtllm_1.3.0rc20_gemm_perf.csv"},
	}
	for _, tt := range tests {
		t.Run(tt.stem, func(t *testing.T) {
			base := catalogDeviceFile(t, tt.stem)
			shipped, err := hardware.Lookup(tt.stem)
			if err != nil {
				t.Fatal(err)
			}
			sg := shipped.Eff.GEMM[model.BF16]
			if sg.Points == 0 {
				t.Skipf("the catalog %s has no fitted bf16 GEMM", tt.stem)
			}
			names := strings.Join(append([]string{base.Name}, base.Aliases...), "|")
			all := readKind(t, filepath.Join(v, "aiconfigurator", tt.file), names, "gemm", model.BF16)
			// Every 40th point: about 900 of H100's 35,700.
			var ms []Measurement
			for i := 0; i < len(all); i += 40 {
				ms = append(ms, all[i])
			}
			res, err := Fit(base, ms, Options{Folds: 1, NoResidual: true, MaxPoints: 600, Date: "test"})
			if err != nil {
				t.Fatal(err)
			}
			rg := res.Device.Eff.GEMM[model.BF16]
			for _, p := range []struct {
				name          string
				refit, parity float64
			}{{"compute", rg.Compute, sg.Compute}, {"memory", rg.Memory, sg.Memory}} {
				if math.Abs(p.refit/p.parity-1) > 0.3 {
					t.Errorf("re-fitted %s fraction %.4g, shipped %.4g: more than 30%% apart", p.name, p.refit, p.parity)
				}
			}
			scores, _ := Score(shipped, ms, 0)
			var got Stats
			for _, s := range scores {
				if s.Name == "gemm/bf16" {
					got = s.Stats
				}
			}
			t.Logf("%s: sample of %d; re-fit η_c %.4g η_m %.4g (shipped %.4g %.4g); shipped parameters on the sample: median %.1f%% p90 %.1f%% (shipped held-out %.1f%% / %.1f%%)",
				tt.stem, len(ms), rg.Compute, rg.Memory, sg.Compute, sg.Memory, 100*got.Median, 100*got.P90, 100*sg.ErrMedian, 100*sg.ErrP90)
			if got.N != len(ms) || got.Median > 2*sg.ErrMedian+0.005 || got.P90 > 2*sg.ErrP90+0.005 {
				t.Errorf("shipped parameters on %d sampled points: median %.1f%% p90 %.1f%%, the catalog says %s",
					got.N, 100*got.Median, 100*got.P90, fmt.Sprintf("%.1f%% / %.1f%%", 100*sg.ErrMedian, 100*sg.ErrP90))
			}
		})
	}
}
