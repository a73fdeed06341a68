package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlotTitles: every chart serve, plan serve and plan train draw names
// what was simulated (the model and the hardware or system) in its title,
// and, for a device whose efficiencies were not fitted to its own
// measurements, says so, as perfsim plot's charts do (docs/hardware.md:
// "the title of every plot"). They had said only "Engine state over time
// (vllm)", "Latency against load", "Serving: throughput per GPU against
// speed per user", "<model>: training layouts" and "<model>: scaling".
func TestPlotTitles(t *testing.T) {
	dir := t.TempDir()
	svg := func(name string) string { return filepath.Join(dir, name+".svg") }
	for _, tt := range []struct {
		args  []string
		files []string
		want  []string
	}{
		{[]string{"serve", "--hw", "mi300x", "--model", "llama3-8b", "--input", "512", "--output", "64", "--requests", "50", "--rate", "5", "--series-plot", svg("series")},
			[]string{"series"}, []string{"llama3-8b", "MI300X", "uncalibrated", "vllm"}},
		{[]string{"plan", "serve", "--hw", "mi300x", "--model", "llama3-8b", "--rate", "5", "--ttft-p99", "1s", "--tpot-p99", "100ms", "--input", "512", "--output", "64",
			"--tp", "1", "--pp", "1", "--dtypes", "bf16", "--requests", "100", "--front-plot", svg("front")},
			[]string{"front"}, []string{"llama3-8b", "MI300X", "uncalibrated", "5 req/s"}},
		{[]string{"plan", "serve", "--hw", "mi300x", "--model", "llama3-8b", "--max-rate", "--ttft-p99", "1s", "--tpot-p99", "100ms", "--input", "512", "--output", "64",
			"--tp", "1", "--dtypes", "bf16", "--requests", "100", "--load-plot", svg("load")},
			[]string{"load"}, []string{"llama3-8b", "MI300X", "uncalibrated", "tp1 pp1 bf16"}},
		{[]string{"plan", "train", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "64", "--global-batch", "512", "--seq", "4096", "--top", "3",
			"--scaling", "32,64", "--plot", svg("train"), "--scaling-plot", svg("scaling")},
			[]string{"train", "scaling"}, []string{"llama3-8b", "dgx-h100", "global batch 512"}},
	} {
		_, stderr, code := perfsim(t, tt.args...)
		if code != 0 {
			t.Fatalf("perfsim %s: exit %d: %s", strings.Join(tt.args, " "), code, stderr)
		}
		for _, f := range tt.files {
			b, err := os.ReadFile(svg(f))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("%s chart: its text lacks %q", f, w)
				}
			}
		}
	}
}
