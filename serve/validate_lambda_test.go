package serve_test

// An independent check of the vllm-0.6 preset's decode step on H100 SXM
// at TP 1, 2, 4 and 8 and on A100 SXM at TP 1 and 4: Lambda's vLLM
// benchmark runs of 2024-09-07 and 08 (testdata/lambda_vllm/README.md
// gives the source of every figure).
// Unlike ../shared's rows these are in the repository: the request
// lengths and the medians the runs published, transcribed, nothing else.

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/perfsim/perfsim/internal/csvtest"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// lambdaRun replays one of testdata/lambda_vllm's traces (every request
// at t=0, its prompt and generated tokens as the benchmark counted them)
// on the vllm-0.6 preset with the server's settings: --max-model-len
// 2048, so a budget of max(2048, max_model_len) = 2048 tokens without
// chunked prefill, and 10 scheduler steps (the stream came in chunks of
// ten tokens).
func lambdaRun(t *testing.T, row map[string]string) *serve.Result {
	t.Helper()
	tp, err := strconv.Atoi(row["tp"])
	if err != nil {
		t.Fatalf("tp: %v", err)
	}
	mdl := map[string]string{"Meta-Llama-3-8B-Instruct": "llama3-8b", "Meta-Llama-3-70B-Instruct": "llama3-70b"}[row["model"]]
	if mdl == "" {
		t.Fatalf("unknown model %q", row["model"])
	}
	hw := map[string]string{"H100-80GB-SXM": "h100", "A100-80GB-SXM": "a100"}[row["gpu"]]
	if hw == "" {
		t.Fatalf("unknown gpu %q", row["gpu"])
	}
	sys, w := setup(t, hw, mdl, tp)
	e, err := serve.Preset("vllm-0.6", sys.Device.Memory.Limit())
	if err != nil {
		t.Fatal(err)
	}
	e.MaxTokens, e.SchedulerSteps = 2048, 10
	sc := sim.Default()
	sc.TP = tp
	p, err := sim.NewPricer(sys, w, e.Scenario(sc))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "lambda_vllm", row["trace"])
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reqs, err := serve.ReadTrace(f, path, 2048)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := strconv.Atoi(row["num_prompts"]); n != len(reqs) {
		t.Fatalf("%s: %d requests, runs.csv says %s", path, len(reqs), row["num_prompts"])
	}
	res, err := serve.Run(p, e, reqs, serve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestValidate_lambda compares the vllm-0.6 preset with eight runs
// of vLLM (10 scheduler steps, bf16) by another lab than the one behind
// ../shared's vLLM rows: on H100 SXM Llama 3 8B at TP 1 and Llama 3 70B
// at TP 2, 4 and 8, on A100 SXM 8B at TP 1 and 70B at TP 4, 10 or 40
// ShareGPT prompts sent at once. The median
// TPOT and the run's duration measure the decode step; TTFT is logged
// only (it carries the client's and API's time per request, which the
// preset does not price). The goal is the 15%; the figures
// (docs/serving.md) are −6% to −19% for TPOT and −4% to −17% for the
// duration, perfsim fast in every run. Runs within the goal
// are held to it, the others (TP 8) to a guard a few points beyond
// their miss, and all to the goal under PERFSIM_LONG.
func TestValidate_lambda(t *testing.T) {
	rows := csvtest.Rows(t, filepath.Join("testdata", "lambda_vllm", "runs.csv"),
		"trace", "model", "gpu", "tp", "num_prompts", "duration_s", "median_tpot_ms", "median_ttft_ms", "source")
	if len(rows) != 8 {
		t.Fatalf("runs.csv: %d runs, want 8", len(rows))
	}
	for _, row := range rows {
		if row["source"] == "" {
			t.Errorf("%s: no source", row["trace"])
		}
		res := lambdaRun(t, row)
		check := func(metric string, got float64, col string, guard float64) {
			want, err := strconv.ParseFloat(row[col], 64)
			if err != nil {
				t.Fatalf("%s: %s: %v", row["trace"], col, err)
			}
			e := got/want - 1
			t.Logf("%-20s tp%s %-20s measured %9.4g predicted %9.4g (%+5.1f%%)", row["trace"], row["tp"], metric, want, got, 100*e)
			if guard > 0 && math.Abs(e) > tol(0.15, guard) {
				t.Errorf("%s: %s %.4g, measured %.4g (%+.1f%%, beyond ±%.0f%%)", row["trace"], metric, got, want, 100*e, 100*tol(0.15, guard))
			}
		}
		guard := 0.15
		if row["tp"] == "8" {
			guard = 0.22 // TPOT −17.3% and −19.4%, duration −16.2% and −16.7% (10 and 40 prompts)
		}
		check("median TPOT ms", 1e3*res.TPOT.P50, "median_tpot_ms", guard)
		check("duration s", float64(res.Duration), "duration_s", guard)
		check("median TTFT ms", 1e3*res.TTFT.P50, "median_ttft_ms", 0)
	}
}
