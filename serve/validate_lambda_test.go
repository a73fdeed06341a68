package serve_test

// An independent check of the vllm-0.6 preset's decode step on H100 SXM
// and A100 SXM at TP 1, 2, 4 and 8: Lambda's vLLM
// benchmark runs of 2024-09-07 and 08 (testdata/lambda_vllm/README.md
// gives the source of every figure).
// Unlike ../shared's rows these are in the repository: the request
// lengths and the medians the runs published, transcribed, nothing else.

import (
	"math"
	"os"
	"path/filepath"
	"slices"
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

// lambdaGuard is each run's allowed |error| (median TPOT and duration)
// outside PERFSIM_LONG where it misses the 15%: a few points
// beyond the miss measured when the run was added (docs/serving.md), so
// that a change making it worse fails. The other runs are held to 15%.
var lambdaGuard = map[string]float64{
	"tp8_70b_10.csv":     0.22, // TPOT −17.3%, duration −16.2%
	"tp8_70b_40.csv":     0.22, // TPOT −19.4%, duration −16.7%
	"tp2_8b_10.csv":      0.23, // TPOT −19.7%, duration −19.9%
	"tp4_8b_10.csv":      0.32, // TPOT −28.3%, duration −28.9%
	"tp8_8b_10.csv":      0.39, // TPOT −33.9%, duration −35.7%
	"a100_tp8_8b_10.csv": 0.28, // TPOT −25.0%, duration −20.7%
	"tp2_8b_40.csv":      0.22, // TPOT −7.0%, duration −18.4%
	"tp4_8b_40.csv":      0.29, // TPOT −13.5%, duration −25.2%
	"tp8_8b_40.csv":      0.36, // TPOT −18.6%, duration −32.0%
}

// TestValidate_lambda compares the vllm-0.6 preset with 21 runs of vLLM
// (10 scheduler steps, bf16) by another lab than the one behind
// ../shared's vLLM rows: Llama 3 8B at TP 1, 2, 4 and 8 and Llama 3 70B
// at TP 2, 4 and 8, on H100 SXM and on A100 SXM, 10 ShareGPT prompts
// sent at once, and on H100 the same with 40 prompts. The median TPOT
// and the run's duration measure the decode step; TTFT is logged only
// (it carries the client's and API's time per request, which the preset
// does not price). It logs the median signed and median |error| of each
// device's runs by model and by TP. The goal is the 15%; the figures
// (docs/serving.md) are −3% to −34% for TPOT and −2% to −36% for the
// duration, perfsim fast in every run, most on H100 with the 8B model at
// TP > 1. Runs within the goal are held to it, the others to a guard a
// few points beyond their miss (lambdaGuard), and all to the goal under
// PERFSIM_LONG.
func TestValidate_lambda(t *testing.T) {
	rows := csvtest.Rows(t, filepath.Join("testdata", "lambda_vllm", "runs.csv"),
		"trace", "model", "gpu", "tp", "num_prompts", "duration_s", "median_tpot_ms", "median_ttft_ms", "source")
	if len(rows) != 21 {
		t.Fatalf("runs.csv: %d runs, want 21", len(rows))
	}
	type group struct{ tpot, dur []float64 }
	groups := map[string]*group{}
	var order []string
	for _, row := range rows {
		if row["source"] == "" {
			t.Errorf("%s: no source", row["trace"])
		}
		res := lambdaRun(t, row)
		check := func(metric string, got float64, col string, guard float64) float64 {
			want, err := strconv.ParseFloat(row[col], 64)
			if err != nil {
				t.Fatalf("%s: %s: %v", row["trace"], col, err)
			}
			e := got/want - 1
			t.Logf("%-20s tp%s %-20s measured %9.4g predicted %9.4g (%+5.1f%%)", row["trace"], row["tp"], metric, want, got, 100*e)
			if guard > 0 && math.Abs(e) > tol(0.15, guard) {
				t.Errorf("%s: %s %.4g, measured %.4g (%+.1f%%, beyond ±%.0f%%)", row["trace"], metric, got, want, 100*e, 100*tol(0.15, guard))
			}
			return e
		}
		guard := 0.15
		if g, ok := lambdaGuard[row["trace"]]; ok {
			guard = g
		}
		tpot := check("median TPOT ms", 1e3*res.TPOT.P50, "median_tpot_ms", guard)
		dur := check("duration s", float64(res.Duration), "duration_s", guard)
		for _, key := range []string{row["gpu"] + " " + row["model"], row["gpu"] + " TP " + row["tp"]} {
			g := groups[key]
			if g == nil {
				g = &group{}
				groups[key] = g
				order = append(order, key)
			}
			g.tpot, g.dur = append(g.tpot, tpot), append(g.dur, dur)
		}
		check("median TTFT ms", 1e3*res.TTFT.P50, "median_ttft_ms", 0)
	}
	slices.Sort(order)
	for _, key := range order {
		g := groups[key]
		t.Logf("%-45s %d runs: TPOT median %+5.1f%% (|error| %4.1f%%), duration median %+5.1f%% (|error| %4.1f%%)",
			key, len(g.tpot), 100*medianOf(g.tpot), 100*medianAbs(g.tpot), 100*medianOf(g.dur), 100*medianAbs(g.dur))
	}
}

// medianOf returns the median of x (not modified): the mean of the two
// middle values when there is an even number of them.
func medianOf(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// medianAbs returns the median of |x|.
func medianAbs(x []float64) float64 {
	a := make([]float64, len(x))
	for i, v := range x {
		a[i] = math.Abs(v)
	}
	return medianOf(a)
}
