package calibrate

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// The CUDA suite's first runs on GPUs (kernels/README.md, "First runs"):
// kernels/run.sh's programs on one H100 80GB HBM3 and one H200, driver
// 580.159.04, CUDA 13.0, cuBLAS 13.1, on 2026-11-26, with the L2 flushed
// by a read sweep before each repetition; and the bf16 GEMM grid again
// with the other two flushes, for the comparison common.h gives.
var measuredRuns = []struct {
	file, device, catalog string
}{
	{"h100-2026-11-26.csv.gz", "NVIDIA H100 80GB HBM3", "h100"},
	{"h200-2026-11-26.csv.gz", "NVIDIA H200", "h200"},
	{"h100-bf16-flush-write-2026-11-26.csv.gz", "NVIDIA H100 80GB HBM3", "h100"},
	{"h100-bf16-flush-none-2026-11-26.csv.gz", "NVIDIA H100 80GB HBM3", "h100"},
	{"h200-bf16-flush-write-2026-11-26.csv.gz", "NVIDIA H200", "h200"},
	{"h200-bf16-flush-none-2026-11-26.csv.gz", "NVIDIA H200", "h200"},
	{"launch-h100-2026-11-26.csv", "NVIDIA H100 80GB HBM3", "h100"},
	{"launch-h200-2026-11-26.csv", "NVIDIA H200", "h200"},
}

// readMeasured returns a measured file of kernels/testdata, unzipped.
func readMeasured(t *testing.T, file string) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "kernels", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !strings.HasSuffix(file, ".gz") {
		raw, err := io.ReadAll(f)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	raw, err := io.ReadAll(z)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return raw
}

// TestKernelsMeasured_read: what the CUDA programs printed on the GPUs
// reads without an error or a warning, names one device throughout, says
// how it flushed the L2, and holds every GEMM of the grid in every data
// type it ran (fp8 and int8 skip the shapes whose k is not a multiple of
// 16, or that cuBLASLt has no algorithm for).
func TestKernelsMeasured_read(t *testing.T) {
	for _, r := range measuredRuns {
		raw := readMeasured(t, r.file)
		ms, warns, err := ReadCSV(bytes.NewReader(raw), r.file)
		if err != nil || len(warns) > 0 {
			t.Errorf("ReadCSV(%s): %v, warnings %v", r.file, err, warns)
			continue
		}
		for _, e := range CheckDevice(ms, r.catalog) {
			t.Errorf("%s: %v", r.file, e)
		}
		if ms[0].Device != r.device {
			t.Errorf("%s: device %q, want %q", r.file, ms[0].Device, r.device)
		}
		gemms := map[string]int{}
		launches := map[string]float64{}
		for _, m := range ms {
			switch {
			case m.Kernel == KernelGEMM:
				gemms[m.DType.String()]++
			case strings.HasPrefix(m.Kernel, "launch"):
				launches[m.Kernel] = float64(m.Time)
			}
		}
		flush := "read"
		if strings.Contains(r.file, "flush-") {
			flush = strings.SplitN(strings.SplitN(r.file, "flush-", 2)[1], "-", 2)[0]
		}
		if want := "# gemm: L2 flush before each repetition: " + flush + "\n"; len(gemms) > 0 && !bytes.Contains(raw, []byte(want)) {
			t.Errorf("%s: no line %q", r.file, strings.TrimSpace(want))
		}
		// A kernel replayed from a graph pays less than one launched to a
		// stream, which pays less than a launch the host waits for.
		if strings.HasPrefix(r.file, "launch-") && !(launches["launch_graph"] > 0 && launches["launch_graph"] < launches["launch"] && launches["launch"] < launches["launch_sync"]) {
			t.Errorf("%s: launch_graph %v, launch %v, launch_sync %v: want 0 < graph < stream < sync", r.file, launches["launch_graph"], launches["launch"], launches["launch_sync"])
		}
		for dt, n := range gemms {
			if min := 724; n < min || n > 742 {
				t.Errorf("%s: %d %s GEMMs, want the grid's 742 (fp8 and int8: at least %d)", r.file, n, dt, min)
			}
		}
	}
}

// TestKernelsMeasured_catalog scores the catalog's H100 and H200, whose
// GEMM efficiencies were fitted to aiconfigurator's TensorRT-LLM tables
// alone, against the suite's cuBLAS measurements, which the fit never saw.
// bf16 and fp16 are checked (median |error| on 2026-11-26: H100 3.1% and
// 3.4%, H200 4.5% and 5.1%); the other types are logged, with what
// kernels/README.md says of them (fp8: TensorRT-LLM's fp8 GEMMs, which the
// fit follows, are 20-28% slower than cuBLASLt's even at decode counts;
// fp32, tf32 and int8 are not fitted). A refit that drifts from cuBLAS
// fails.
func TestKernelsMeasured_catalog(t *testing.T) {
	for _, r := range measuredRuns[:2] {
		dev, err := hardware.Lookup(r.catalog)
		if err != nil {
			t.Fatal(err)
		}
		ms, _, err := ReadCSV(bytes.NewReader(readMeasured(t, r.file)), r.file)
		if err != nil {
			t.Fatal(err)
		}
		scores, _ := Score(dev, ms, 0)
		for _, s := range scores {
			t.Logf("%s %s: %d points, |error| median %.1f%% p90 %.1f%%, bias %+.1f%%", r.catalog, s.Name, s.Stats.N, 100*s.Stats.Median, 100*s.Stats.P90, 100*s.Stats.Bias)
			switch s.Name {
			case "gemm/bf16", "gemm/fp16":
				if s.Stats.Median > 0.06 {
					t.Errorf("%s %s: median |error| %.1f%% against the suite's cuBLAS rows, want ≤ 6%%", r.catalog, s.Name, 100*s.Stats.Median)
				}
			}
		}
	}
}

// TestKernelsMeasured_decodeGEMMs: the bf16 GEMMs at decode token counts
// (m ≤ 256, n a multiple of 8, over 20 µs: memory-bound weight streams)
// are the bulk of a decode step. On both GPUs the catalog's price of them
// is within 3% of cuBLAS at the median (on 2026-11-26: H100 +0.3%, H200
// +0.6%, predicted over measured) when the L2 is flushed by reads; the
// write flush, which makes each GEMM write back the flush's dirty lines,
// measured them 14% slower (common.h).
func TestKernelsMeasured_decodeGEMMs(t *testing.T) {
	for _, r := range measuredRuns[:2] {
		dev, err := hardware.Lookup(r.catalog)
		if err != nil {
			t.Fatal(err)
		}
		p := dev.Processor()
		ms, _, err := ReadCSV(bytes.NewReader(readMeasured(t, r.file)), r.file)
		if err != nil {
			t.Fatal(err)
		}
		var errs []float64
		for _, m := range ms {
			if m.Kernel != KernelGEMM || m.DType != model.BF16 || m.M > 256 || m.N%8 != 0 || m.Time < 20e-6 {
				continue
			}
			pred, _ := Predict(dev, &p, m)
			errs = append(errs, float64(pred)/float64(m.Time)-1)
		}
		sort.Float64s(errs)
		med := median(errs)
		t.Logf("%s: %d bf16 decode GEMMs, predicted/measured − 1 median %+.1f%%", r.catalog, len(errs), 100*med)
		if len(errs) < 400 || med < -0.03 || med > 0.03 {
			t.Errorf("%s: %d bf16 decode GEMMs, median error %+.1f%%, want at least 400 within ±3%%", r.catalog, len(errs), 100*med)
		}
	}
}

// TestKernelsMeasured_fit fits the catalog's H100 to the suite's own run
// on an H100, as the README's "Calibrate your own device" does, and
// checks the fit's 5-fold held-out error on the cuBLAS rows (on
// 2026-11-26: bf16 2.5% / 10.9%, fp16 2.3% / 11.6%, fp8 3.1% / 10.6%,
// median / p90; the p90 holds the unaligned rows, which no price
// follows). The fit then predicts aiconfigurator's TensorRT-LLM GEMMs,
// which it never saw, at a median 12.8% (bias +12.0%: cuBLAS's default
// kernels are the slower), logged where ../shared is present.
func TestKernelsMeasured_fit(t *testing.T) {
	if testing.Short() {
		t.Skip("fits 4,400 GEMMs (about 10 s of CPU)")
	}
	dev, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	ms, _, err := ReadCSV(bytes.NewReader(readMeasured(t, "h100-2026-11-26.csv.gz")), "h100-2026-11-26.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Fit(dev, ms, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Classes {
		t.Logf("%s: %d points, fitted %v, held out median %.1f%% p90 %.1f%%", c.Name(), c.Points, c.Fitted, 100*c.HeldOut.Median, 100*c.HeldOut.P90)
		switch c.Name() {
		case "gemm/bf16", "gemm/fp16", "gemm/fp8":
			if !c.Fitted || c.HeldOut.Median > 0.04 {
				t.Errorf("%s: fitted %v, held-out median %.1f%%, want fitted and ≤ 4%%", c.Name(), c.Fitted, 100*c.HeldOut.Median)
			}
		}
	}
	v := filepath.Join("..", "..", "shared", "validation", "derived", "aiconfigurator", "h100_sxm_gemm_trtllm_1.3.0rc20_gemm_perf.csv")
	if _, err := os.Stat(v); err != nil {
		t.Log("../shared absent: the cross-source score is not logged")
		return
	}
	other, _, err := ReadFile(v, FormatAuto, "")
	if err != nil {
		t.Fatal(err)
	}
	scores, _ := Score(res.Device, other, 0)
	for _, s := range scores {
		t.Logf("suite-fitted H100 on aiconfigurator's %s: %d points, median %.1f%%, bias %+.1f%%", s.Name, s.Stats.N, 100*s.Stats.Median, 100*s.Stats.Bias)
	}
}
