package calibrate

import (
	"path/filepath"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestInferSim_H800 checks the MLA decode (FlashMLA) and grouped-GEMM
// (DeepGEMM, fp8) kernel models on InferSim's H800 tables
// (../shared/validation/raw/alibaba__InferSim; SOURCES.md). The H800 is
// the H100's silicon with its NVLink cut, so the catalog's H100 is its
// datasheet; its MoE and MLA tables are fitted to aiconfigurator's
// TensorRT-LLM kernels (CUTLASS MoE modules, TRT-LLM's MLA), not to
// these. Two figures per class:
//
//   - transferred: the catalog H100's fitted model, never shown these
//     rows or these libraries' kernels (reported);
//   - calibrated: the class fitted to these rows with calibrate.Fit, 5-fold
//     held out; the target is a median |error| ≤ 15%.
//
// Grouped GEMMs faster than the HBM floor (decode rows at one token per
// expert: 256 experts' fp8 weights in under 2.2 ms) are impossible on
// 3.35 TB/s and left out.
func TestInferSim_H800(t *testing.T) {
	root := filepath.Join(filepath.Dir(validationDir(t)), "raw", "alibaba__InferSim", "bench_data")
	read := func(p string) []Measurement {
		ms, _, err := ReadFile(filepath.Join(root, p), FormatAuto, "")
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	h100 := catalogDevice(t, "h100")
	bw := float64(h100.Memory.Bandwidth)
	var gg []Measurement
	for _, p := range []string{"decode", "prefill"} {
		for _, m := range read(filepath.Join("grouped_gemm", p, "h800", "data.csv")) {
			if float64(m.Bytes)/float64(m.Time) <= bw {
				gg = append(gg, m)
			}
		}
	}
	for _, c := range []struct {
		class string
		ms    []Measurement
	}{
		{KernelMLADecode, read(filepath.Join("mla", "decode", "h800", "128-512-64.csv"))},
		{KernelGroupedGEMM, gg},
	} {
		tr := scoreClass(h100, c.ms)
		dev := catalogDevice(t, "h100")
		res, err := Fit(dev, c.ms, Options{Folds: 5})
		if err != nil {
			t.Fatal(err)
		}
		var cf ClassFit
		for _, x := range res.Classes {
			if x.Class == c.class {
				cf = x
			}
		}
		t.Logf("H800 (InferSim) %s, %d rows: transferred (catalog H100) median %.1f%% p90 %.1f%%; calibrated 5-fold held out median %.1f%% p90 %.1f%%",
			c.class, len(c.ms), 100*tr.Median, 100*tr.P90, 100*cf.HeldOut.Median, 100*cf.HeldOut.P90)
		if !cf.Fitted || !(cf.HeldOut.Median <= 0.15) {
			t.Errorf("%s: calibrated held-out median %.1f%%, want ≤ 15%%", c.class, 100*cf.HeldOut.Median)
		}
	}
}

// TestMoE_routing checks the rebuilt routings of aiconfigurator's MoE
// collector: balanced gives every expert T·k/E rows; a power law keeps
// T·k rows, caps each expert at T, and the measured rank is the busiest.
func TestMoE_routing(t *testing.T) {
	for _, tt := range []struct {
		t, e, k, ep int
		dist        string
	}{
		{64, 8, 2, 1, "balanced"}, {4096, 256, 8, 8, "balanced"}, {7, 128, 8, 1, "balanced"},
		{64, 8, 2, 1, "power_law_1.2"}, {16384, 256, 8, 16, "power_law_1.01"}, {3, 128, 8, 4, "power_law_1.2"},
	} {
		loads := rankLoads(tt.t, tt.e, tt.k, tt.ep, tt.dist, 0)
		if len(loads) != tt.e/tt.ep {
			t.Fatalf("%+v: %d local experts, want %d", tt, len(loads), tt.e/tt.ep)
		}
		rows := 0
		for _, l := range loads {
			if l < 0 || l > tt.t {
				t.Errorf("%+v: an expert with %d rows of %d tokens", tt, l, tt.t)
			}
			rows += l
		}
		mean := float64(tt.t*tt.k) / float64(tt.ep)
		if tt.dist == "balanced" && tt.t >= tt.e && float64(rows) != mean {
			t.Errorf("%+v: balanced rank has %d rows, want %v", tt, rows, mean)
		}
		if float64(rows) < mean-float64(tt.e) { // the busiest rank holds at least the mean (less rounding)
			t.Errorf("%+v: measured rank has %d rows, below the mean %v", tt, rows, mean)
		}
		t.Logf("%+v: %d rows on the measured rank (max/mean %.2f)", tt, rows, float64(rows)/mean)
	}
	if rankLoads(8, 8, 2, 1, "zipf", 0) != nil {
		t.Error("an unknown routing gave loads")
	}
}

// TestMoE_moduleKernels checks that a measured MoE module is priced as
// workloads builds the layer: permute, gate-and-up, activation, down,
// finalise after the top-k, with the rank's rows and distinct experts.
func TestMoE_moduleKernels(t *testing.T) {
	m := Measurement{Kernel: KernelMoE, DType: model.BF16, M: 64, K: 4096, N: 14336, TopK: 2, Experts: 8, MoETP: 1, MoEEP: 1, Routing: "balanced"}
	ks := moeKernelsOf(m)
	if len(ks) != 1 || len(ks[0]) != 6 {
		t.Fatalf("got %d draws of %v kernels, want 1 of 6", len(ks), ks)
	}
	up := ks[0][2].(model.GroupedGEMM)
	if up.Rows != 128 || up.Experts != 8 || up.K != 4096 || up.N != 2*14336 {
		t.Errorf("gate-and-up = %+v, want 128 rows over 8 experts, 4096×28672", up)
	}
	m.Routing, m.MoEEP = "power_law_1.2", 2
	if got := len(moeKernelsOf(m)); got != powerDraws {
		t.Errorf("power law: %d draws, want %d", got, powerDraws)
	}
}
