package mlperf

import (
	"math"
	"testing"

	"github.com/perfsim/perfsim/hardware"
)

// NVIDIA's DLRM-DCNv2 (dlrm-v2-99) results, in LoadGen samples/s. Held
// out: nothing in perfsim is fitted to them.
//   - DGX H100, v4.1: mlcommons/inference_results_v4.1 closed/NVIDIA/
//     results/DGX-H100_H100-SXM-80GBx8_TRT/dlrm-v2-99/{Offline,Server}/
//     performance/run_1/mlperf_log_summary.txt ("Samples per second:
//     595658", "Completed samples per second: 510155.11").
//   - Eight H200s, v5.0: inference_results_v5.0 closed/NVIDIA/results/
//     H200-SXM-141GBx8_TRT/dlrm-v2-99/{Offline,Server}/performance/run_1/
//     mlperf_log_summary.txt, read in the copy ntuhpc/
//     mlperf_inference_results_v5.0 ("Samples per second: 641629",
//     "Completed samples per second: 585163.61").
var nvidiaDLRM = []struct {
	system          string
	offline, server float64
}{
	{"dgx-h100", 595658, 510155.11},
	{"hgx-h200", 641629, 585163.61},
}

// TestDLRMSample: a DLRM sample is the mean of the reference's pairs a
// sample, the batch search stays within NVIDIA's engine batch, and the
// rows priced at MLPerf's sample land within 20% of NVIDIA's results
// (a row taken for a sample, as before, was 200 times over).
func TestDLRMSample(t *testing.T) {
	// tools/dist_quantile.txt: 20 equally likely sizes.
	quantile := []float64{100, 100, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 300, 300, 400, 500, 600, 700}
	var sum float64
	for _, q := range quantile {
		sum += q
	}
	if mean := sum / float64(len(quantile)); mean != dlrmPairsPerSample {
		t.Errorf("quantile mean %v pairs a sample, suite %d", mean, dlrmPairsPerSample)
	}
	// The trace NVIDIA loads: 89,137,319 rows in 330,067 samples.
	if got := 89137319.0 / 330067; math.Abs(got/dlrmPairsPerSample-1) > 0.001 {
		t.Errorf("trace: %.2f pairs a sample, suite %d", got, dlrmPairsPerSample)
	}
	b, err := Find("dlrm-v2-99")
	if err != nil {
		t.Fatal(err)
	}
	if b.PerSample != dlrmPairsPerSample || b.MaxBatch*b.PerSample > nvidiaDLRMBatchPairs {
		t.Fatalf("dlrm-v2-99: %d pairs a sample, batch up to %d samples", b.PerSample, b.MaxBatch)
	}
	for _, n := range nvidiaDLRM {
		sys, err := hardware.LookupSystem(n.system, 8)
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range []Scenario{Offline, Server} {
			want := n.offline
			if sc == Server {
				want = n.server
			}
			r := Run(sys, b, sc, resolveCatalog, Options{})
			if !r.OK() {
				t.Fatalf("%s %s: no figure: %s", n.system, sc, r.Note)
			}
			if r.Batch*b.PerSample > nvidiaDLRMBatchPairs {
				t.Errorf("%s %s: batch %d samples, %d pairs, over NVIDIA's %d", n.system, sc, r.Batch, r.Batch*b.PerSample, nvidiaDLRMBatchPairs)
			}
			rel := r.Value/want - 1
			t.Logf("%s %s: %.0f samples/s at %d a GPU against NVIDIA's %.0f (%+.1f%%)", n.system, sc, r.Value, r.Batch, want, 100*rel)
			if math.Abs(rel) > 0.2 {
				t.Errorf("%s %s: %.0f samples/s against NVIDIA's %.0f: %+.1f%%", n.system, sc, r.Value, want, 100*rel)
			}
		}
	}
}
