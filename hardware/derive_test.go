package hardware

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perfsim/perfsim/model"
)

func TestDerive(t *testing.T) {
	base, err := Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Derive(base, []string{"memory.bandwidth=8TB/s", "peak.matrix.fp8=4PFLOP/s", "memory.capacity=160 GB"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Memory.Bandwidth != 8e12 || d.Matrix[model.FP8] != 4e15 || d.Memory.Capacity != 160e9 {
		t.Errorf("derived: bw %v fp8 %v capacity %v", d.Memory.Bandwidth, d.Matrix[model.FP8], d.Memory.Capacity)
	}
	if base.Memory.Bandwidth != 3.35e12 || base.Matrix[model.FP8] != 1.979e15 {
		t.Errorf("base changed: %v %v", base.Memory.Bandwidth, base.Matrix[model.FP8])
	}
	if !strings.Contains(d.Name, "H100 SXM what-if") || d.WhatIfBase != "H100 SXM" || !strings.Contains(d.CalibrationLabel(), "transferred from H100 SXM") {
		t.Errorf("name %q base %q label %q", d.Name, d.WhatIfBase, d.CalibrationLabel())
	}
	// The fitted fractions carry; the usable share of the capacity stays.
	if d.Eff.GEMM[model.BF16].Compute != base.Eff.GEMM[model.BF16].Compute {
		t.Errorf("bf16 compute %v, want the base's %v", d.Eff.GEMM[model.BF16].Compute, base.Eff.GEMM[model.BF16].Compute)
	}
	if got, want := float64(d.Memory.Usable)/float64(d.Memory.Capacity), float64(base.Memory.Usable)/float64(base.Memory.Capacity); math.Abs(got/want-1) > 1e-12 {
		t.Errorf("usable share %v, want %v", got, want)
	}
}

func TestDerive_badInput(t *testing.T) {
	base, _ := Lookup("h100")
	_, err := Derive(base, []string{"memory.bandwith=8TB/s", "memory.bandwidth=8", "peak.matrix.fp9=1 PFLOP/s", "clock", "compute_units=-3"})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`--set memory.bandwith=8TB/s: unknown key "memory.bandwith" (want one of memory.bandwidth`,
		`--set memory.bandwidth=8: "8" is not a bandwidth: missing unit`,
		`--set peak.matrix.fp9=1 PFLOP/s: unknown data type "fp9"`,
		`--set "clock": want key=value with a unit`,
		`--set compute_units=-3: want a positive whole number`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	// A value outside the accepted range names its --set flag, once: it
	// had been reported as the what-if device's key ("what-if:catalog:
	// h100-sxm: peak.matrix.bf16: ...") beside the 2:4 sparse peak scaled
	// from it, a key the user never set.
	_, err = Derive(base, []string{"peak.matrix.bf16=1e30FLOP/s", "memory.bandwidth=1e-3B/s"})
	for _, want := range []string{
		`--set peak.matrix.bf16=1e30FLOP/s: 1e30FLOP/s is outside the range perfsim accepts`,
		`--set memory.bandwidth=1e-3B/s: 1e-3B/s is outside the range perfsim accepts`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if err != nil && strings.Contains(err.Error(), "peak.sparse") {
		t.Errorf("error names the sparse peak the user did not set:\n%v", err)
	}
	// A key set twice is ambiguous: the last had won silently.
	_, err = Derive(base, []string{"memory.bandwidth=8TB/s", "peak.matrix.bf16=2PFLOP/s", "memory.bandwidth=9TB/s"})
	for _, want := range []string{
		`--set memory.bandwidth=9TB/s: memory.bandwidth is set twice (also memory.bandwidth=8TB/s)`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func TestDerive_file(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := write("hbm4.toml", "base = \"h100\"\nname = \"H100 HBM4\"\n[memory]\nbandwidth = \"8 TB/s\"\n[peak.matrix]\nfp8 = \"4 PFLOP/s\"\n")
	d, err := LoadFile(ok)
	if err != nil {
		t.Fatal(err)
	}
	if d.Memory.Bandwidth != 8e12 || d.Matrix[model.FP8] != 4e15 || d.Name != "H100 HBM4 (what-if of H100 SXM)" || d.WhatIfBase != "H100 SXM" {
		t.Errorf("derived file: %q bw %v fp8 %v base %q", d.Name, d.Memory.Bandwidth, d.Matrix[model.FP8], d.WhatIfBase)
	}
	// A derived file may name another derived file.
	two := write("two.toml", "base = \"hbm4.toml\"\n[memory]\ncapacity = \"192 GB\"\n")
	if d, err := LoadFile(two); err != nil || d.Memory.Bandwidth != 8e12 || d.Memory.Capacity != 192e9 {
		t.Errorf("derived of derived: %v", err)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"self.toml", "base = \"self.toml\"\n", "names itself"},
		{"selfname.toml", "base = \"h100\"\nname = \"h100\"\n", "names itself"},
		{"nobase.toml", "base = \"h999\"\n", "unknown device"},
		{"nounit.toml", "base = \"h100\"\n[memory]\nbandwidth = \"8\"\n", "nounit.toml:3: memory.bandwidth: \"8\" is not a bandwidth: missing unit"},
		{"badkey.toml", "base = \"h100\"\n[memory]\nspeed = \"8 TB/s\"\n", "badkey.toml:3: memory.speed: unknown key \"memory.speed\""},
		{"twobad.toml", "base = \"h100\"\n[memory]\nbandwidth = \"8\"\n[peak.matrix]\nfp8 = \"-1 PFLOP/s\"\n", "twobad.toml:5: peak.matrix.fp8: want a positive compute rate"},
		{"cycle-a.toml", "base = \"cycle-b.toml\"\n", "cycle"},
		// A base or a name not given as a string: the base had been taken
		// for no base (a device file missing compute_units, kind, memory,
		// name, peak and vendor), the name dropped without a word.
		{"intbase.toml", "base = 3\n[memory]\nbandwidth = \"8 TB/s\"\n", "intbase.toml:1: base: expected the name of a catalog device or a .toml file"},
		{"intname.toml", "base = \"h100\"\nname = 3\n", "intname.toml:2: name: expected a string"},
	} {
		p := write(tc.name, tc.body)
		if tc.name == "cycle-a.toml" {
			write("cycle-b.toml", "base = \"cycle-a.toml\"\n")
		}
		_, err := LoadFile(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("%s: %v, want an error naming the file and %q", tc.name, err, tc.want)
		}
	}
}

// TestDerive_baseNotRegular: a derived file's base file is read as every
// hardware file is, a regular file of at most MaxFileSize: a base linked
// to /dev/zero was read without end (os.ReadFile).
func TestDerive_baseNotRegular(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	dir := t.TempDir()
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.toml")); err != nil {
		t.Skip(err)
	}
	p := filepath.Join(dir, "d.toml")
	if err := os.WriteFile(p, []byte("base = \"zero.toml\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := LoadFile(p); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "base") || !strings.Contains(err.Error(), "character device") {
			t.Errorf("base linked to /dev/zero: error %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("base linked to /dev/zero: still reading after 10 s")
	}
}

// TestDerive_kernelNeutral: a what-if that changes only keys no kernel
// reads (the capacity, the link bandwidths) keeps its base's efficiencies
// whole, residual tables and held-out figures included, and says so; one
// that changes a key a kernel reads (the L2, read by the GEMM model)
// carries them to the kernels that read it, residual tables included. A
// derived file is the same. No setting at all is the base itself.
func TestDerive_kernelNeutral(t *testing.T) {
	base, err := Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	if base.Eff.GEMM[model.BF16].Residual == nil {
		t.Fatal("the H100 has no bf16 residual table to keep")
	}
	if d, err := Derive(base, nil); err != nil || d.Name != base.Name || d.CalibrationLabel() != base.CalibrationLabel() || !reflect.DeepEqual(d.Eff, base.Eff) {
		t.Errorf("no setting: %v: want the H100 itself", err)
	}
	for _, sets := range [][]string{
		{"memory.capacity=160GiB"},
		{"interconnect.intra.bandwidth=900GB/s", "interconnect.inter.bandwidth=100GB/s"},
	} {
		d, err := Derive(base, sets)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(d.Eff, base.Eff) || d.Calibration().Kind != "calibrated" || d.Intra.Efficiency != base.Intra.Efficiency {
			t.Errorf("%v: calibration %+v: want the H100's efficiencies whole", sets, d.Calibration())
		}
		label := d.CalibrationLabel()
		if !strings.HasPrefix(label, "what-if of H100 SXM: kernels as calibrated (bf16 GEMM held out: median 1.9%") || !strings.HasSuffix(label, "changed: "+strings.Join(sets, ", ")) {
			t.Errorf("%v: label %q", sets, label)
		}
	}
	for _, sets := range [][]string{{"memory.l2=100MiB"}, {"memory.capacity=160GiB", "memory.l2=100MiB"}} {
		d, err := Derive(base, sets)
		if err != nil {
			t.Fatal(err)
		}
		// Carried to the same chip: the fractions and the residual
		// tables (transferSameChip), the band the transfer's.
		if c := d.Calibration(); c.Kind != "transferred" || c.From != "H100 SXM" || d.Eff.GEMM[model.BF16].Residual != base.Eff.GEMM[model.BF16].Residual || d.Eff.GEMM[model.BF16].Points != 0 {
			t.Errorf("%v: calibration %+v: want it carried from the H100 with its residual table", sets, c)
		}
	}
	p := filepath.Join(t.TempDir(), "big.toml")
	if err := os.WriteFile(p, []byte("base = \"h100\"\nname = \"H100 160G\"\n[memory]\ncapacity = \"160 GiB\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := LoadFile(p)
	if err != nil || !reflect.DeepEqual(d.Eff, base.Eff) || !strings.HasPrefix(d.CalibrationLabel(), "what-if of H100 SXM: kernels as calibrated") {
		t.Errorf("derived file with a capacity: %v, label %q", err, d.CalibrationLabel())
	}
}

// TestDerive_baseErrorPrefix: a derived file's base error reads once as
// "hardware: FILE:LINE: base: ...": an unknown catalog base read
// "hardware: d1.toml:1: base: hardware: unknown device", and a base file's
// own problems were wrapped under the base key with the prefix doubled
// (a chain of derived files doubled it once per link).
func TestDerive_baseErrorPrefix(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	d1 := write("d1.toml", "base = \"h999\"\n")
	write("bad.toml", "name = \"x\"\n[memory]\nbandwidth = \"3\"\n")
	for _, tc := range []struct {
		file, body string
		want       []string
	}{
		{"d1.toml", "", []string{d1 + ":1: base: unknown device \"h999\""}},
		{"d4.toml", "base = \"d1.toml\"\n", []string{d1 + ":1: base: unknown device \"h999\""}},
		{"d2.toml", "base = \"bad.toml\"\n", []string{
			filepath.Join(dir, "bad.toml") + ":3: memory.bandwidth: \"3\" is not a bandwidth: missing unit",
			filepath.Join(dir, "bad.toml") + ": missing required key \"vendor\"",
		}},
	} {
		p := filepath.Join(dir, tc.file)
		if tc.body != "" {
			p = write(tc.file, tc.body)
		}
		_, err := LoadFile(p)
		if err == nil {
			t.Errorf("%s: no error", tc.file)
			continue
		}
		msg := err.Error()
		if n := strings.Count(msg, "hardware: "); n != strings.Count(msg, "\n")+1 {
			t.Errorf("%s: %d \"hardware: \" prefixes on %d lines:\n%s", tc.file, n, strings.Count(msg, "\n")+1, msg)
		}
		for _, line := range strings.Split(msg, "\n") {
			if !strings.HasPrefix(line, "hardware: ") {
				t.Errorf("%s: a line without its prefix: %q", tc.file, line)
			}
		}
		for _, w := range tc.want {
			if !strings.Contains(msg, "hardware: "+w) {
				t.Errorf("%s: %s\nwant %q", tc.file, msg, "hardware: "+w)
			}
		}
	}
	if _, err := Lookup("h999"); err == nil || !errors.Is(err, ErrUnknownDevice) || !strings.HasPrefix(err.Error(), "hardware: unknown device \"h999\"") {
		t.Errorf("Lookup(h999): %v", err)
	}
}

// TestDerive_invalidPlaced: a what-if whose device is invalid (a capacity
// below the reserve) names the setting that made it, the --set flag or
// the derived file's file:line:key; it had named the device
// "what-if:catalog:h100-sxm" and neither.
func TestDerive_invalidPlaced(t *testing.T) {
	h100, err := Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Derive(h100, []string{"memory.capacity=1B"})
	if err == nil || !strings.HasPrefix(err.Error(), "--set memory.capacity=1B: memory.reserve: ") || strings.Contains(err.Error(), "what-if:") {
		t.Errorf("--set memory.capacity=1B: %v", err)
	}
	p := filepath.Join(t.TempDir(), "cap.toml")
	if err := os.WriteFile(p, []byte("base = \"h100\"\n[memory]\ncapacity = \"1 B\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadFile(p)
	if err == nil || !strings.HasPrefix(err.Error(), "hardware: "+p+":3: memory.capacity: memory.reserve: ") || strings.Contains(err.Error(), "what-if:") {
		t.Errorf("derived file with capacity 1 B: %v", err)
	}
}

// TestDerive_derivedSources: a number a what-if derives from a setting
// (the 2:4 sparse peak, kept at its ratio to the dense one; the usable
// memory, kept at the base's share of the capacity) says so in its
// source. Both had kept the base's ("N6: H100 product page (with
// sparsity)" for 8 PFLOP/s of fp8; a measured 79.11 GiB for 158.2 GiB),
// citing a datasheet or a measurement for a number neither gives.
func TestDerive_derivedSources(t *testing.T) {
	base, err := Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Derive(base, []string{"peak.matrix.fp8=4PFLOP/s", "memory.capacity=160GiB"})
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"peak.sparse.fp8": "peak.matrix.fp8=4PFLOP/s",
		"memory.usable":   "memory.capacity=160GiB",
	} {
		if s := d.Sources[key]; !strings.HasPrefix(s, "what-if: ") || !strings.Contains(s, want) {
			t.Errorf("%s's source %q: want a what-if naming %s", key, s, want)
		}
	}
	// Those it does not derive keep the base's.
	if s, b := d.Sources["peak.sparse.bf16"], base.Sources["peak.sparse.bf16"]; s != b {
		t.Errorf("peak.sparse.bf16's source %q, want the base's %q", s, b)
	}
}

// TestDerive_noLinkToChange: setting the bandwidth of a link the device
// does not have is an error naming the setting and the missing link. On
// an EPYC 7742 (no [interconnect.intra]) --set
// interconnect.intra.bandwidth=100GB/s had made half a link and failed
// its validation: "what-if:catalog:epyc-7742: interconnect.intra.
// devices_per_node: must be at least 1, not 0", and its name and
// topology likewise.
func TestDerive_noLinkToChange(t *testing.T) {
	base, err := Lookup("epyc7742")
	if err != nil {
		t.Fatal(err)
	}
	if base.Intra.Bandwidth > 0 {
		t.Fatalf("epyc7742 has a scale-up link: %+v", base.Intra)
	}
	_, err = Derive(base, []string{"interconnect.intra.bandwidth=100GB/s"})
	if err == nil || !strings.Contains(err.Error(), "--set interconnect.intra.bandwidth=100GB/s") || !strings.Contains(err.Error(), "no scale-up link") || strings.Contains(err.Error(), "devices_per_node") {
		t.Errorf("error %v: want one naming the setting and the missing link", err)
	}
	if base.Inter.Bandwidth <= 0 {
		_, err = Derive(base, []string{"interconnect.inter.bandwidth=10GB/s"})
		if err == nil || !strings.Contains(err.Error(), "no scale-out network") {
			t.Errorf("inter: error %v: want one naming the missing network", err)
		}
	}
}
