package mlperf

import (
	"strings"
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// nvidiaRGATH200 is NVIDIA's MLPerf Inference v5.0 R-GAT Offline result
// on eight H200s: 441,817 samples/s (mlcommons inference_results_v5.0
// closed/NVIDIA/results/H200-SXM-141GBx8_TRT/rgat/Offline/performance/
// run_1/mlperf_log_summary.txt, "Samples per second: 441817"). Held
// out: nothing in perfsim is fitted to it.
const nvidiaRGATH200 = 441817

// TestRGAT: the R-GAT row prints a figure on eight GPUs with the feature
// store split over them, and says why not where the store does not fit.
// perfsim prices a seed's expected subgraph bounded from above
// (min(mean in-degree, fanout) a relation, which Jensen puts over the
// mean of min(D, fanout); the fanout where IGB publishes no degree; no
// node repeated), so its figure must stay below NVIDIA's measured one;
// the gap is reported, not fitted.
func TestRGAT(t *testing.T) {
	b, err := Find("rgat")
	if err != nil {
		t.Fatal(err)
	}
	if !b.OfflineOnly || !b.Sharded || b.Model != "rgat" || b.Lacks != "" {
		t.Fatalf("rgat: %+v", b)
	}
	for _, tt := range []struct {
		system  string
		devices int
		want    string // a note's text, or "" for a figure
	}{
		{"dgx-h100", 8, ""},
		{"hgx-h200", 8, ""},
		// 560.5 GB of fp8 features: whole on one device, or a quarter
		// (140.1 GB) on each of four H100s, is over 80 GB.
		{"dgx-h100", 1, "does not fit in one device's memory at batch 1, with the 560.5 GB feature store whole on each device"},
		{"dgx-h100", 4, "split over 4 devices (140.1 GB each)"},
	} {
		sys, err := hardware.LookupSystem(tt.system, 8)
		if err != nil {
			t.Fatal(err)
		}
		if tt.devices < sys.Devices() {
			if sys, err = hardware.NewSystem(sys.Device, tt.devices, 1); err != nil {
				t.Fatal(err)
			}
		}
		r := Run(sys, b, Offline, resolveCatalog, Options{})
		switch {
		case tt.want == "" && !r.OK():
			t.Errorf("%s × %d: no figure: %s", tt.system, tt.devices, r.Note)
		case tt.want != "" && (r.OK() || !strings.Contains(r.Note, tt.want)):
			t.Errorf("%s × %d: %v samples/s, note %q; want no figure and %q", tt.system, tt.devices, r.Value, r.Note, tt.want)
		}
		if tt.system == "hgx-h200" && tt.devices == 8 {
			if r.Value >= nvidiaRGATH200 {
				t.Errorf("hgx-h200: %.0f samples/s, at or over NVIDIA's measured %d: the subgraph priced is no longer an upper bound on the mean", r.Value, nvidiaRGATH200)
			}
			t.Logf("hgx-h200 rgat Offline: %.0f samples/s against NVIDIA's %d (%+.1f%%)", r.Value, nvidiaRGATH200, 100*(r.Value/nvidiaRGATH200-1))
		}
		if s := Run(sys, b, Server, resolveCatalog, Options{}); s.OK() || s.Note != "Offline only in MLPerf" {
			t.Errorf("%s × %d Server: %q", tt.system, tt.devices, s.Note)
		}
	}
}

// TestStore_gather: the store's share and the link's extra time.
func TestStore_gather(t *testing.T) {
	w, err := resolveCatalog("rgat")
	if err != nil {
		t.Fatal(err)
	}
	fs := w.(FeatureStore)
	if got := fs.FeatureBytes(model.FP16); got != 547360534*1024 {
		t.Fatalf("store %v bytes", got)
	}
	link := model.Link{Bandwidth: 450e9}
	// No report: the whole gather is on the link, 7/8 of a batch of
	// 1000 seeds' 13,546 rows of 1024 fp8 bytes at 450 GB/s.
	share, extra := store{shards: 8, link: link}.gather(w, &sim.Report{}, 1000, model.FP16)
	if want := model.Bytes(547360534 * 1024 / 8.0); share != want {
		t.Errorf("share %v, want %v", share, want)
	}
	if want := 7.0 / 8 * 1000 * 13546 * 1024 / 450e9; float64(extra) < want*0.999 || float64(extra) > want*1.001 {
		t.Errorf("extra %v, want %.4g s", extra, want)
	}
	// Whole on one device: no link.
	if _, extra := (store{shards: 1}).gather(w, &sim.Report{}, 1000, model.FP16); extra != 0 {
		t.Errorf("one shard: extra %v", extra)
	}
	// A workload without a store costs nothing.
	r, err := resolveCatalog("resnet50")
	if err != nil {
		t.Fatal(err)
	}
	if share, extra := (store{shards: 8, link: link}).gather(r, &sim.Report{}, 1000, model.FP16); share != 0 || extra != 0 {
		t.Errorf("resnet50: %v, %v", share, extra)
	}
}
