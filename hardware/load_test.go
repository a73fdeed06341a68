package hardware

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestLoad_bad checks the exact message for every file in testdata/bad:
// each names the file, the line and the key.
func TestLoad_bad(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		{"bad_kind.toml", `hardware: testdata/bad/bad_kind.toml:3: kind: "gpuu" is not a kind of device (want gpu, cpu, tpu, accelerator); did you mean "gpu"?`},
		{"bad_reduction.toml", strings.Join([]string{
			`hardware: testdata/bad/bad_reduction.toml:19: interconnect.intra.in_network_reduction: "NVLS" is not an in-network reduction (want nvlink-sharp, none); did you mean "nvlink-sharp"?`,
			`hardware: testdata/bad/bad_reduction.toml:24: interconnect.host.latency: "10" is not a time: missing unit (expected "4.5 us")`,
		}, "\n")},
		{"reduction_not_switch.toml", `hardware: testdata/bad/reduction_not_switch.toml:20: interconnect.intra.in_network_reduction: "nvlink-sharp" is done in an NVSwitch, but the topology is "mesh", not switch`},
		{"bare_number.toml", `hardware: testdata/bad/bare_number.toml:12: memory.bandwidth: "3.35" is not a bandwidth: missing unit (expected "3.35 TB/s")`},
		{"duplicate_table.toml", `hardware: testdata/bad/duplicate_table.toml:14: "memory" is defined twice (a duplicate table or key)`},
		{"empty.toml", `hardware: testdata/bad/empty.toml: empty file`},
		{"fraction_above_one.toml", `hardware: testdata/bad/fraction_above_one.toml:15: efficiency.gemm.bf16.compute: is a fraction of the peak: 1.2 is above 1`},
		{"implausible.toml", strings.Join([]string{
			`hardware: testdata/bad/implausible.toml:14: memory.bandwidth: 1e-300 B/s is outside the range perfsim accepts, 1 to 1e+24 in base units`,
			`hardware: testdata/bad/implausible.toml:17: efficiency.gemm.bf16.compute: is a fraction of the peak: 1e-300 is below 1e-06`,
		}, "\n")},
		{"inf.toml", `hardware: testdata/bad/inf.toml:15: efficiency.gemm.bf16.compute: must be a finite number, not +Inf`},
		{"many_problems.toml", strings.Join([]string{
			`hardware: testdata/bad/many_problems.toml:12: memory.bandwidth: "3.35" is not a bandwidth: missing unit (expected "3.35 TB/s")`,
			`hardware: testdata/bad/many_problems.toml:13: memory.l2: "-1" is not a size in bytes: missing unit (expected "80 GB" or "80 GiB")`,
			`hardware: testdata/bad/many_problems.toml:18: interconnect.intra.devices_per_node: must be at least 1, not 0`,
			`hardware: testdata/bad/many_problems.toml:19: interconnect.intra.topology: "star" is not a topology (want switch, ring, mesh, torus)`,
		}, "\n")},
		{"missing_name.toml", `hardware: testdata/bad/missing_name.toml: missing required key "name"`},
		{"misspelt_key.toml", strings.Join([]string{
			`hardware: testdata/bad/misspelt_key.toml:10: missing required key "memory.bandwidth"`,
			`hardware: testdata/bad/misspelt_key.toml:12: unknown key "memory.bandwith" (did you mean "memory.bandwidth"?)`,
		}, "\n")},
		{"nan.toml", `hardware: testdata/bad/nan.toml:15: efficiency.memory.efficiency: must be a finite number, not NaN`},
		{"bad_number_list.toml", `hardware: testdata/bad/bad_number_list.toml:22: efficiency.gemm.bf16.residual.values: number 2 of the list, "zero", is not a finite number`},
		{"bad_residual.toml", `hardware: testdata/bad/bad_residual.toml:19: efficiency.gemm.bf16.residual.log2_m: residual: log2_m must be finite and strictly increasing (node 1 is 2)`},
		{"residual_values.toml", `hardware: testdata/bad/residual_values.toml:22: efficiency.gemm.bf16.residual.values: residual: 1 values for 2×1×1 nodes, want 2`},
		{"bad_waves.toml", strings.Join([]string{
			`hardware: testdata/bad/bad_waves.toml:16: efficiency.gemm.bf16.waves: "sometimes" is not a wave model (want "whole" or "fractional")`,
			`hardware: testdata/bad/bad_waves.toml:21: efficiency.attention.waves: "Fractional" is not a wave model (want "whole" or "fractional")`,
		}, "\n")},
		{"negative.toml", `hardware: testdata/bad/negative.toml:11: memory.capacity: must be positive, not -80 GB`},
		{"no_source.toml", strings.Join([]string{
			`hardware: testdata/bad/no_source.toml: missing required key "source": every number needs a source (a datasheet, "measured", "assumed"), or give sources = { key = "..." }`,
			`hardware: testdata/bad/no_source.toml:6: missing required key "peak.matrix.source": every number needs a source (a datasheet, "measured", "assumed"), or give sources = { key = "..." }`,
			`hardware: testdata/bad/no_source.toml:9: missing required key "memory.source": every number needs a source (a datasheet, "measured", "assumed"), or give sources = { key = "..." }`,
		}, "\n")},
		{"not_toml.toml", `hardware: testdata/bad/not_toml.toml:1: not valid TOML: expected '.' or '=', but got 'i' instead`},
		{"sparse_below_dense.toml", `hardware: testdata/bad/sparse_below_dense.toml:15: peak.sparse.bf16: 200 TFLOP/s is below the dense peak.matrix.bf16, 400 TFLOP/s (sparse peaks are the 2:4 structured-sparsity rates, usually twice the dense)`},
		{"sustained_above_one.toml", `hardware: testdata/bad/sustained_above_one.toml:17: power.sustained: must be a share of the compute rate between 0 and 1, not 1.2`},
		{"unknown_dtype.toml", strings.Join([]string{
			`hardware: testdata/bad/unknown_dtype.toml:7: peak: no dense peak: give [peak.matrix] or [peak.vector] rates`,
			`hardware: testdata/bad/unknown_dtype.toml:8: unknown data type "peak.matrix.bf61" (did you mean "peak.matrix.bf16"?)`,
		}, "\n")},
		{"unknown_key.toml", `hardware: testdata/bad/unknown_key.toml:13: unknown key "memory.hbm_bw"`},
		{"unknown_table.toml", strings.Join([]string{
			`hardware: testdata/bad/unknown_table.toml: missing required key "memory"`,
			`hardware: testdata/bad/unknown_table.toml:10: unknown key "memroy" (did you mean "memory"?)`,
		}, "\n")},
		{"wrong_type.toml", `hardware: testdata/bad/wrong_type.toml:5: compute_units: expected an integer, found the string "64"`},
		{"wrong_unit.toml", `hardware: testdata/bad/wrong_unit.toml:12: memory.bandwidth: "989.5 TFLOP/s" is not a bandwidth: unknown unit "TFLOP/s" ("TFLOP/s" is a compute rate unit; expected "3.35 TB/s")`},
		{"zero.toml", `hardware: testdata/bad/zero.toml:12: memory.bandwidth: must be positive, not 0 B/s`},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.file] = true
		t.Run(tt.file, func(t *testing.T) {
			d, err := LoadFile(filepath.Join("testdata", "bad", tt.file))
			if err == nil {
				t.Fatalf("LoadFile(%s) = %v, want an error", tt.file, d.Name)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("LoadFile(%s) error:\n got: %s\nwant: %s", tt.file, got, tt.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.File == "" {
				t.Errorf("LoadFile(%s): error is not a *ParseError naming the file: %#v", tt.file, err)
			}
		})
	}
	files, err := filepath.Glob(filepath.Join("testdata", "bad", "*.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 12 {
		t.Errorf("testdata/bad has %d files, want at least 12", len(files))
	}
	for _, f := range files {
		if !covered[filepath.Base(f)] {
			t.Errorf("%s has no row in TestLoad_bad", f)
		}
	}
}

// TestLoad_bareNumberIsUnitError checks that callers can find the unit
// error behind a positioned one.
func TestLoad_bareNumberIsUnitError(t *testing.T) {
	_, err := LoadFile(filepath.Join("testdata", "bad", "bare_number.toml"))
	var ue *model.UnitError
	if !errors.As(err, &ue) || !errors.Is(err, model.ErrNoUnit) {
		t.Errorf("error %v does not wrap a *model.UnitError with ErrNoUnit", err)
	}
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 12 || pe.Key != "memory.bandwidth" {
		t.Errorf("ParseError = %+v, want line 12, key memory.bandwidth", pe)
	}
}

func TestLoad_minimal(t *testing.T) {
	d, err := LoadFile(filepath.Join("testdata", "good", "minimal.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "Acme X1" || d.ComputeUnits != 64 || d.Matrix[model.BF16] != 400e12 ||
		d.Memory.Capacity != 64e9 || d.Memory.Bandwidth != 2e12 {
		t.Errorf("LoadFile(minimal.toml) = %+v", d)
	}
	// Defaults: the framework reserve, and no networks.
	if d.Memory.Reserve != DefaultReserve {
		t.Errorf("reserve = %v, want the default %v", d.Memory.Reserve, DefaultReserve)
	}
	if d.Intra != (Network{}) || d.Inter != (Network{}) {
		t.Errorf("networks = %+v, %+v, want none", d.Intra, d.Inter)
	}
	// No launch_overhead: zero, and the source says it is a default.
	if d.Launch != 0 || !strings.HasPrefix(d.Sources["launch_overhead"], "default: 0") {
		t.Errorf("launch overhead %v, source %q, want 0 with a default source", d.Launch, d.Sources["launch_overhead"])
	}
	// The top-level source covers every number below it.
	for _, k := range []string{"compute_units", "peak.matrix.bf16", "memory.capacity", "memory.bandwidth"} {
		if d.Sources[k] != "Acme X1 datasheet, rev. 3" {
			t.Errorf("Sources[%q] = %q, want the file's source", k, d.Sources[k])
		}
	}
}

// TestLoad_features covers aliases for data types, per-key sources,
// fields of the efficiency parameters and the launch default.
func TestLoad_features(t *testing.T) {
	const src = `name = "X"
vendor = "V"
kind = "gpu"
source = "datasheet"
compute_units = 10
launch_overhead = "3 us"
sources = { launch_overhead = "assumed" }

[peak.matrix]
bfloat16 = "100 TFLOP/s"
fp8 = "200 TFLOP/s"
sources = { fp8 = "errata" }

[peak.sparse]
bf16 = "200 TFLOP/s"

[memory]
capacity = "16 GiB"
bandwidth = "1 TB/s"
reserve = "1 GiB"

[efficiency]
vector = 0.5
source = "measured"

[efficiency.gemm.bf16]
compute = 0.8
memory = 0.9
k_step_floor = "20 ns"
overlap_exponent = 2

[efficiency.gemm.fp8]
compute = 0.7
launch = "5 us"
`
	d, err := Load(strings.NewReader(src), "x.toml")
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"bf16 by alias", d.Matrix[model.BF16], model.FLOPRate(100e12)},
		{"source of fp8", d.Sources["peak.matrix.fp8"], "errata"},
		{"source of bf16", d.Sources["peak.matrix.bf16"], "datasheet"},
		{"source of launch", d.Sources["launch_overhead"], "assumed"},
		{"capacity GiB", d.Memory.Capacity, model.Bytes(16 << 30)},
		{"reserve", d.Memory.Reserve, model.Bytes(1 << 30)},
		{"vector", d.Eff.Vector, 0.5},
		{"gemm compute", d.Eff.GEMM[model.BF16].Compute, 0.8},
		{"gemm step floor", d.Eff.GEMM[model.BF16].StepFloor, model.Seconds(20e-9)},
		{"gemm overlap", d.Eff.GEMM[model.BF16].Overlap, 2.0},
		{"gemm launch default", d.Eff.GEMM[model.BF16].Launch, model.Seconds(3e-6)},
		{"gemm launch given", d.Eff.GEMM[model.FP8].Launch.String(), "5 us"},
		{"gemm source inherited", d.Eff.GEMM[model.BF16].Source, "measured"},
		{"source of gemm", d.Sources["efficiency.gemm.bf16.compute"], "measured"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestValidate_goDevice(t *testing.T) {
	d := &Device{Name: "g", Vendor: "v", Kind: "gpu", ComputeUnits: 1,
		Matrix: map[model.DType]model.FLOPRate{model.BF16: 1e12},
		Sparse: map[model.DType]model.FLOPRate{model.FP8: 1e12},
		Memory: Memory{Capacity: 1e9, Bandwidth: 1e9, Reserve: 2e9},
		Intra:  Network{Name: "link", Bandwidth: 1e9, Efficiency: 3, DevicesPerNode: 2, Topology: "switch"},
	}
	err := d.Validate()
	want := strings.Join([]string{
		"hardware: interconnect.intra.efficiency: 3 is more than twice the link rate",
		"hardware: memory.reserve: 2 GB leaves nothing of the usable memory, 1 GB",
		"hardware: peak.sparse.fp8: a sparse peak needs a dense one: peak.matrix.fp8 is not given",
	}, "\n")
	if err == nil || err.Error() != want {
		t.Errorf("Validate() =\n%v\nwant\n%s", err, want)
	}
}

func TestLoad_tooLarge(t *testing.T) {
	big := strings.NewReader(strings.Repeat("# comment\n", maxFileSize/10+10))
	if _, err := Load(big, "big.toml"); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("Load(big) = %v, want a size error", err)
	}
}

func TestLoadFile_missing(t *testing.T) {
	_, err := LoadFile(filepath.Join("testdata", "nosuch.toml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadFile(nosuch) = %v, want ErrNotExist", err)
	}
}

func TestSuggest(t *testing.T) {
	keys := []string{"capacity", "bandwidth", "l2", "reserve"}
	tests := []struct{ in, want string }{
		{"bandwith", "bandwidth"},
		{"bandwdith", "bandwidth"},
		{"capcity", "capacity"},
		{"hbm_bw", ""},
		{"l3", "l2"},
		{"xy", ""}, // as far from every key as it is long
		{"reserv", "reserve"},
	}
	for _, tt := range tests {
		if got := suggest(tt.in, keys); got != tt.want {
			t.Errorf("suggest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if d := editDistance("kitten", "sitting"); d != 3 {
		t.Errorf("editDistance(kitten, sitting) = %d, want 3", d)
	}
}

// TestLoad_integerOutOfRange: an integer too large for a count is said to
// be out of range, not of the wrong type.
func TestLoad_integerOutOfRange(t *testing.T) {
	src := "name = \"X\"\nvendor = \"V\"\nkind = \"gpu\"\nsource = \"s\"\ncompute_units = 99999999999\n" +
		"[peak.matrix]\nbf16 = \"1 TFLOP/s\"\n[memory]\ncapacity = \"1 GB\"\nbandwidth = \"1 GB/s\"\nreserve = \"0 B\"\n"
	_, err := Load(strings.NewReader(src), "big.toml")
	want := "hardware: big.toml:5: compute_units: 99999999999 is out of range (at most 2147483647)"
	if err == nil || err.Error() != want {
		t.Errorf("Load error:\n got: %v\nwant: %s", err, want)
	}
}

// TestParseShortDecimal checks the fast path of the fitted lists against
// strconv.ParseFloat, bit for bit, and that it leaves what it does not
// take to strconv.
func TestParseShortDecimal(t *testing.T) {
	for _, s := range []string{"0", "-0", "0.0", "-0.0", "5.0", "-0.0962", "0.0323", "123456789012345", "1234567890.12345",
		"0.000000000000001", "-99999.9999999999", "11.321928094887362", "9.584962500721156", "1e5", "1.5e-3", "1.", ".5", "-", "", "--1", "1.2.3", "0x10", "+1", "1_0", "inf", "NaN",
		"0.1", "0.2", "0.3", "2.275", "0.7982", "1234567890123456"} {
		x, ok := parseShortDecimal(s)
		y, err := strconv.ParseFloat(s, 64)
		if ok && (err != nil || math.Float64bits(x) != math.Float64bits(y)) {
			t.Errorf("%q: %v (%x), strconv %v (%x, %v)", s, x, math.Float64bits(x), y, math.Float64bits(y), err)
		}
	}
	// Every 4-decimal number in [-2, 2], as the fitted values are written.
	for i := -20000; i <= 20000; i++ {
		s := strconv.FormatFloat(float64(i)/1e4, 'f', -1, 64)
		x, ok := parseShortDecimal(s)
		y, _ := strconv.ParseFloat(s, 64)
		if !ok || math.Float64bits(x) != math.Float64bits(y) {
			t.Fatalf("%q: %v, %v; strconv %v", s, x, ok, y)
		}
	}
}
