package main

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/calibrate"
	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// writeSynthetic writes n bf16 GEMMs and a few copies timed by the
// catalog's H100 with known tile-model parameters and 2% noise (seeded), in
// perfsim's CSV schema, and returns the path.
func writeSynthetic(t *testing.T, dir, device string, n int, seed uint64) string {
	t.Helper()
	dev, err := hardware.Resolve("h100")
	if err != nil {
		t.Fatal(err)
	}
	eff := dev.Eff
	eff.GEMM = map[model.DType]model.GEMMParams{model.BF16: {Compute: 0.78, Memory: 0.83, Launch: 3e-6, CTAOverhead: 0.8e-6,
		StepFloor: 1.2e-9, SplitK: 2.5e-6, Overlap: 2.2, L2Factor: 1.8, Waves: model.WavesFractional}}
	eff.Memory = model.MemoryParams{Efficiency: 0.9, Launch: 3e-6}
	dev.Eff = eff
	p := dev.Processor()
	rng := rand.New(rand.NewPCG(seed, 12))
	dim := func(lo, hi float64) int { return int(math.Exp2(lo + rng.Float64()*(hi-lo))) }
	var ms []calibrate.Measurement
	for i := 0; i < n; i++ {
		g := model.GEMM{M: dim(0, 13), N: dim(8, 14), K: dim(8, 14), A: model.BF16, B: model.BF16, C: model.BF16}
		ms = append(ms, calibrate.Measurement{Device: device, Source: "synthetic", Kernel: calibrate.KernelGEMM, DType: model.BF16,
			M: g.M, N: g.N, K: g.K, Batch: 1, FLOPs: g.FLOPs(), Bytes: g.Bytes(),
			Time: p.GEMMCost(g).Time * model.Seconds(math.Exp(0.02*rng.NormFloat64())), Reps: 10})
	}
	for b := 1e5; b < 1e10; b *= 3 {
		ms = append(ms, calibrate.Measurement{Device: device, Source: "synthetic", Kernel: calibrate.KernelCopy, DType: model.FP32,
			Bytes: model.Bytes(b), Time: p.StreamCost(0, model.Bytes(b), model.FP32).Time, Reps: 10})
	}
	path := filepath.Join(dir, "h100-synthetic.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := calibrate.WriteCSV(f, ms); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCalibrate_fitValidate(t *testing.T) {
	dir := t.TempDir()
	csv := writeSynthetic(t, dir, "NVIDIA H100 80GB HBM3", 400, 1)
	out := filepath.Join(dir, "h100-calibrated.toml")
	stdout, stderr, code := perfsim(t, "calibrate", "fit", "--hw", "h100", "--measurements", csv, "--folds", "3", "--date", "2026-01-01", "-o", out)
	if code != 0 {
		t.Fatalf("fit: exit %d\n%s", code, stderr)
	}
	golden(t, "calibrate-fit.stdout", stdout)
	dev, err := hardware.LoadFile(out)
	if err != nil {
		t.Fatalf("the calibrated file does not load: %v", err)
	}
	g := dev.Eff.GEMM[model.BF16]
	// The synthetic times are the model's own plus noise: the residual
	// table has nothing to learn and the fit leaves it out (its 3-fold
	// check on the training points); one written must be valid.
	if (g.Residual != nil && !g.Residual.Valid()) || g.Points != 400 || !strings.Contains(g.Source, "fitted: perfsim calibrate fit, 400 points, 2026-01-01, from h100-synthetic.csv; 3-fold held-out") {
		t.Errorf("calibrated bf16 parameters lack their provenance: %q", g.Source)
	}
	// Validate the fit on other measurements of the same kind.
	other := t.TempDir()
	csv2 := writeSynthetic(t, other, "NVIDIA H100 80GB HBM3", 100, 2)
	stdout, stderr, code = perfsim(t, "calibrate", "validate", "--hw", out, "--measurements", csv2, "--worst", "2")
	if code != 0 {
		t.Fatalf("validate: exit %d\n%s", code, stderr)
	}
	golden(t, "calibrate-validate.stdout", stdout)
	stdout, _, code = perfsim(t, "calibrate", "validate", "--hw", out, "--measurements", csv2, "--format", "json")
	if code != 0 || !strings.Contains(stdout, `"class": "gemm/bf16"`) {
		t.Errorf("validate --format json: exit %d\n%s", code, stdout)
	}
}

func TestCalibrate_badInput(t *testing.T) {
	dir := t.TempDir()
	good := writeSynthetic(t, dir, "NVIDIA H100 80GB HBM3", 40, 3)
	a100 := filepath.Join(t.TempDir(), "a100.csv")
	data, _ := os.ReadFile(good)
	os.WriteFile(a100, []byte(strings.ReplaceAll(string(data), "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB")), 0o644)
	nonNumeric := filepath.Join(dir, "bad.csv")
	lines := strings.SplitN(string(data), "\n", 3)
	cells := strings.Split(lines[1], ",")
	for i, c := range cells {
		if strings.Contains(c, "e-") { // the time_s cell
			cells[i] = "fast"
		}
	}
	os.WriteFile(nonNumeric, []byte(lines[0]+"\n"+strings.Join(cells, ",")+"\n"+lines[2]), 0o644)
	missing := filepath.Join(dir, "missing-col.csv")
	os.WriteFile(missing, []byte("device,kernel,dtype,m,n,k,bytes,flops\nH100,gemm,bf16,1,1,1,6,2\n"), 0o644)
	misspelt := filepath.Join(dir, "misspelt.csv")
	os.WriteFile(misspelt, []byte("device,kernal,dtype,m,n,k,bytes,flops,time_ms\nH100,gemm,bf16,1,1,1,6,2,0.19\n"), 0o644)
	empty := filepath.Join(dir, "empty.csv")
	os.WriteFile(empty, nil, 0o644)
	out := filepath.Join(dir, "out.toml")
	tests := []struct {
		name string
		args []string
		code int
		want string
		more []string // further text stderr must hold
	}{
		{"no subcommand", []string{"calibrate"}, 2, "give one subcommand", nil},
		{"unknown subcommand", []string{"calibrate", "tune"}, 2, `unknown subcommand "tune"`, nil},
		{"no hw", []string{"calibrate", "fit", "--measurements", good, "-o", out}, 2, "--hw", nil},
		{"no measurements", []string{"calibrate", "fit", "--hw", "h100", "-o", out}, 2, "--measurements", nil},
		{"no out", []string{"calibrate", "fit", "--hw", "h100", "--measurements", good}, 2, "-o", nil},
		{"bad format", []string{"calibrate", "fit", "--hw", "h100", "--measurements", good, "--input-format", "parquet", "-o", out}, 2, `unknown format "parquet"`, nil},
		{"bad time", []string{"calibrate", "fit", "--hw", "h100", "--measurements", good, "--time", "mean", "-o", out}, 2, `--time: "mean", want median or min`, nil},
		// A bad measurements file is bad input (exit 2, as a bad flag);
		// it had exited 1.
		{"missing file", []string{"calibrate", "fit", "--hw", "h100", "--measurements", filepath.Join(dir, "nope.csv"), "-o", out}, 2, "--measurements: calibrate: open " + filepath.Join(dir, "nope.csv") + ": no such file", nil},
		{"other device", []string{"calibrate", "fit", "--hw", "h100", "--measurements", a100, "-o", out}, 2, `a100.csv:2: device: rows measured on "NVIDIA A100-SXM4-80GB"`, nil},
		{"non-numeric", []string{"calibrate", "fit", "--hw", "h100", "--measurements", nonNumeric, "-o", out}, 2, "bad.csv:2: time_s", nil},
		{"missing column", []string{"calibrate", "validate", "--hw", "h100", "--measurements", missing}, 2, "missing-col.csv:1: time_s: missing column", nil},
		// A perfsim header with misspelt columns names each of them; it
		// had said only that the header was of no known format.
		{"misspelt columns", []string{"calibrate", "fit", "--hw", "h100", "--measurements", misspelt, "-o", out}, 2, "misspelt.csv:1: kernal: unknown column",
			[]string{"misspelt.csv:1: time_ms: unknown column", "misspelt.csv:1: kernel: missing column", "misspelt.csv:1: time_s: missing column"}},
		// An empty file says so; it had said its header "" was of no known format.
		{"empty file", []string{"calibrate", "fit", "--hw", "h100", "--measurements", empty, "-o", out}, 2, "empty.csv: empty file", nil},
		// Every file's problems at once, and the output's.
		{"every problem", []string{"calibrate", "fit", "--hw", "h100", "--measurements", nonNumeric + "," + missing, "-o", filepath.Join(dir, "no-dir", "out.toml")}, 2, "bad.csv:2: time_s",
			[]string{"missing-col.csv:1: time_s: missing column", "-o: "}},
		// Every flag's problem at once: a missing -o, an unknown --hw and
		// a bad --time had each hidden the ones after it.
		{"every flag problem", []string{"calibrate", "fit", "--hw", "h10", "--measurements", good, "--time", "max", "--input-format", "foo"}, 2, "calibrate fit: -o: give",
			[]string{`--hw: hardware: unknown device "h10"`, `--time: "max"`, `--input-format: unknown format "foo"`}},
		{"validate, every flag problem", []string{"calibrate", "validate", "--hw", "h10"}, 2, `--hw: hardware: unknown device "h10"`,
			[]string{"--measurements: give at least one file"}},
		// An -o that cannot be written fails the run (exit 1, as every
		// command's outputs: cmd/perfsim/output.go checkOutputs).
		{"unwritable out", []string{"calibrate", "fit", "--hw", "h100", "--measurements", good, "-o", filepath.Join(dir, "no-dir", "out.toml")}, 1, "calibrate fit: -o: ", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := perfsim(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("perfsim %q: exit %d, stderr:\n%s\nwant exit %d and %q", tt.args, code, stderr, tt.code, tt.want)
			}
			for _, w := range tt.more {
				if !strings.Contains(stderr, w) {
					t.Errorf("perfsim %q: stderr:\n%s\nwant also %q", tt.args, stderr, w)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written by a failed fit", out)
			}
		})
	}
}

// TestCalibrate_merge checks perfsim calibrate merge: the overlay it
// writes holds the fitted tables only, is what the catalog carries (up to
// its header, which names the fitted file as given), and --check tells a
// current overlay from a stale one.
func TestCalibrate_merge(t *testing.T) {
	dir := t.TempDir()
	fitted := filepath.Join("..", "..", "calibrate", "fitted", "h100-sxm.toml")
	out := filepath.Join(dir, "h100-sxm.toml")
	stdout, stderr, code := perfsim(t, "calibrate", "merge", "--hw", fitted, "-o", out)
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "fitted parameters of H100 SXM") {
		t.Errorf("merge stdout %q", stdout)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	shipped, err := os.ReadFile(filepath.Join("..", "..", "hardware", "devices", "fitted", "h100-sxm.toml"))
	if err != nil {
		t.Fatal(err)
	}
	// The header's second line names the fitted file as given.
	body := func(b []byte) string {
		lines := strings.SplitN(string(b), "\n", 3)
		return lines[len(lines)-1]
	}
	if body(got) != body(shipped) {
		t.Errorf("merge of calibrate/fitted/h100-sxm.toml differs from hardware/devices/fitted/h100-sxm.toml (run calibrate/fitted/regen.sh -merge-only)")
	}
	for _, no := range []string{"[peak.", "[memory]", "gemm.fp32]", "gemm.tf32]", "\nbandwidth =", "\nname ="} {
		if strings.Contains(string(got), no) {
			t.Errorf("the overlay has %q, which is not fitted", no)
		}
	}
	if _, stderr, code := perfsim(t, "calibrate", "merge", "--check", "--hw", fitted, "-o", out); code != 0 {
		t.Errorf("merge --check of a fresh overlay: exit %d: %s", code, stderr)
	}
	if err := os.WriteFile(out, append(got, "# edited\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := perfsim(t, "calibrate", "merge", "--check", "--hw", fitted, "-o", out); code != 1 || !strings.Contains(stderr, "differs") {
		t.Errorf("merge --check of an edited overlay: exit %d, stderr %q; want 1 and 'differs'", code, stderr)
	}

	// Usage errors (exit 2) and a device with nothing fitted (exit 1).
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no --hw", []string{"-o", out}, 2, "--hw"},
		{"no -o", []string{"--hw", fitted}, 2, "-o"},
		{"stem of another device", []string{"--hw", fitted, "-o", filepath.Join(dir, "h200-sxm.toml")}, 2, "file stem"},
		{"stem of no device", []string{"--hw", fitted, "-o", filepath.Join(dir, "mine.toml")}, 2, "file stem"},
		{"nothing fitted", []string{"--hw", "h100-pcie", "-o", filepath.Join(dir, "h100-pcie.toml")}, 1, "nothing fitted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := perfsim(t, append([]string{"calibrate", "merge"}, tt.args...)...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("merge %v: exit %d, stderr %q; want %d and %q", tt.args, code, stderr, tt.code, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "h100-pcie.toml")); err == nil {
		t.Errorf("a failed merge wrote its output")
	}
}
