package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputs_checkedFirst: every output file a command writes besides
// stdout (serve's --requests-out, --series-plot, --series-out; plan
// serve's --front-plot and --load-plot; plan train's --plot and
// --scaling-plot) is checked before the run, as plot's -o and calibrate's
// -o are: a missing directory, a directory, an unknown chart format or
// two flags naming one file fail at once, naming the flag, and nothing
// is written. serve had written --requests-out and then failed on
// --series-plot's missing directory, with "cannot write a file beside
// it"; plan serve ran its whole search before failing on --front-plot.
func TestOutputs_checkedFirst(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "r.csv")
	missing := filepath.Join(dir, "nodir", "x.svg")
	serveArgs := []string{"serve", "--hw", "h100", "--model", "llama3-8b", "--input", "128", "--output", "8", "--requests", "10", "--rate", "5"}
	planArgs := []string{"plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "5", "--ttft-p99", "1s", "--tp", "1", "--pp", "1", "--dtypes", "bf16", "--max-seqs", "0", "--requests", "20"}
	trainArgs := []string{"plan", "train", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8", "--global-batch", "64", "--seq", "2048", "--top", "1"}
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{append(serveArgs, "--requests-out", csv, "--series-plot", missing), []string{"--series-plot", "no such directory"}},
		{append(serveArgs, "--requests-out", dir), []string{"--requests-out", "is a directory"}},
		{append(serveArgs, "--requests-out", csv, "--series-out", csv), []string{"--series-out", "--requests-out", "same file"}},
		{append(serveArgs, "--requests-out", csv, "--series-out", missing), []string{"--series-out", "no such directory"}},
		{append(planArgs, "--front-plot", missing), []string{"--front-plot", "no such directory"}},
		{append(planArgs, "--front-plot", filepath.Join(dir, "f.gif")), []string{"--front-plot", ".gif"}},
		{append(trainArgs, "--plot", missing), []string{"--plot", "no such directory"}},
	} {
		_, stderr, code := perfsim(t, tt.args...)
		if code == 0 {
			t.Errorf("%v: exit 0", tt.args[len(tt.args)-4:])
		}
		for _, w := range tt.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr lacks %q: %s", tt.args[len(tt.args)-4:], w, stderr)
			}
		}
		if strings.Contains(stderr, "layouts seen") {
			t.Errorf("%v: the search ran before the output was checked: %s", tt.args[len(tt.args)-4:], stderr)
		}
		if _, err := os.Stat(csv); err == nil {
			t.Errorf("%v: %s written by a failed run", tt.args[len(tt.args)-4:], csv)
			os.Remove(csv)
		}
	}
}

// TestPlanTrain_formatAndGPUs: plan train has no CSV: --format csv is a
// usage error naming the formats it has (it printed the table); a GPU
// count beyond the limit names --gpus (it was "hardware: H100 SXM:
// 12500000 nodes of 8 devices is more than 16777216 devices", exit 1).
func TestPlanTrain_formatAndGPUs(t *testing.T) {
	base := []string{"plan", "train", "--model", "llama3-8b", "--system", "dgx-h100", "--global-batch", "64", "--seq", "2048"}
	out, stderr, code := perfsim(t, append(base, "--gpus", "8", "--format", "csv")...)
	if code != 2 || !strings.Contains(stderr, "--format") || !strings.Contains(stderr, "table or json") || out != "" {
		t.Errorf("--format csv: exit %d, stdout %d bytes: %s", code, len(out), stderr)
	}
	_, stderr, code = perfsim(t, append(base, "--gpus", "100000000")...)
	if code != 2 || !strings.Contains(stderr, "--gpus") {
		t.Errorf("--gpus 1e8: exit %d, want 2 naming --gpus: %s", code, stderr)
	}
}

// TestPlanTrain_tokens: a token budget beyond sim.MaxTrainTokens names
// --tokens; every layout had been refused and the report said "no layout
// divides the model and the GPUs".
func TestPlanTrain_tokens(t *testing.T) {
	_, stderr, code := perfsim(t, "plan", "train", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8", "--global-batch", "64", "--seq", "2048", "--tokens", "1e308")
	if code != 2 || !strings.Contains(stderr, "--tokens") {
		t.Errorf("--tokens 1e308: exit %d: %s", code, stderr)
	}
}

// TestExpertImbalance_dense: --expert-imbalance on a dense model names
// the flag in simulate and plan train (simulate ignored it; plan train
// would refuse every layout).
func TestExpertImbalance_dense(t *testing.T) {
	for _, args := range [][]string{
		{"simulate", "--hw", "h100", "--model", "llama3-8b", "--expert-imbalance", "5"},
		{"plan", "train", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8", "--global-batch", "64", "--seq", "2048", "--expert-imbalance", "2"},
	} {
		_, stderr, code := perfsim(t, args...)
		if code != 2 || !strings.Contains(stderr, "--expert-imbalance") {
			t.Errorf("%v: exit %d: %s", args[:2], code, stderr)
		}
	}
}

// TestPlot_noTokens: plot sweep and plot energy draw output tokens; for a
// model that generates none (a CNN, an encoder, a ViT) they say so,
// naming --model and the model, before any work, and write nothing. They
// had failed with "chart: no line has a point that can be drawn".
func TestPlot_noTokens(t *testing.T) {
	dir := t.TempDir()
	for _, chartName := range []string{"sweep", "energy"} {
		for _, m := range []string{"resnet50", "bert-large", "vit-b16"} {
			path := filepath.Join(dir, chartName+"-"+m+".svg")
			_, stderr, code := perfsim(t, "plot", chartName, "--hw", "h100", "--model", m, "-o", path)
			if code != 2 || !strings.Contains(stderr, "--model") || !strings.Contains(stderr, m) || !strings.Contains(stderr, "tokens") {
				t.Errorf("plot %s --model %s: exit %d: %s", chartName, m, code, stderr)
			}
			if _, err := os.Stat(path); err == nil {
				t.Errorf("plot %s --model %s: wrote %s", chartName, m, path)
			}
		}
	}
}

// TestPlanTrain_flagsReviewed: --grad-dtype fp8 is a usage error naming
// the flag (every layout had been refused and the report said "no layout
// divides the model and the GPUs"); a --scaling count beyond the device
// limit names --scaling before the search (it failed after it, exit 1,
// "hardware: ... nodes of 8 devices is more than 16777216 devices").
func TestPlanTrain_flagsReviewed(t *testing.T) {
	base := []string{"plan", "train", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8", "--global-batch", "64", "--seq", "2048"}
	for _, tt := range [][]string{{"--grad-dtype", "fp8"}, {"--scaling", "8,16,1000000000"}} {
		_, stderr, code := perfsim(t, append(base, tt...)...)
		if code != 2 || !strings.Contains(stderr, tt[0]) || strings.Contains(stderr, "configurations") {
			t.Errorf("%v: exit %d: %s", tt, code, stderr)
		}
	}
}

// TestPlanTrain_dtypeWarned: a data type the system's device has no peak
// for is warned about once (plan train ranked fp8 layouts on a DGX A100,
// priced at the fp16 rate, without a word).
func TestPlanTrain_dtypeWarned(t *testing.T) {
	_, stderr, code := perfsim(t, "plan", "train", "--model", "llama3-8b", "--system", "dgx-a100", "--gpus", "8", "--global-batch", "64", "--seq", "2048", "--dtype", "fp8")
	if code != 0 || strings.Count(stderr, "warning: A100 80GB SXM has no fp8 peak") != 1 {
		t.Errorf("exit %d, want the fp8 warning once: %s", code, stderr)
	}
}
