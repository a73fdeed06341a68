package serve_test

// Tests on the third-party end-to-end measurements in
// ../shared/validation/e2e (see its README.md). They never copy the
// data; they skip when it is absent. The full figures run with
// PERFSIM_LONG=1 (go test ./serve -run Validate -v); by default a sample
// of rows runs.

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/internal/csvtest"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
	"github.com/perfsim/perfsim/workloads"
)

// long reports whether the full validation figures were asked for.
// Then the tests hold the goals (median |error| ≤ 10% for
// TensorRT-LLM's throughput; ±15% latency and ±10% throughput for vLLM's
// ShareGPT rows), which today's model does not meet (docs/serving.md
// gives the figures); the default run holds a regression guard at the
// figures measured when the tests were written (a few points above them),
// so that a change that makes the predictions worse fails.
func long() bool { return os.Getenv("PERFSIM_LONG") != "" }

// tol returns the goal under PERFSIM_LONG and the guard otherwise.
func tol(goal, guard float64) float64 {
	if long() {
		return goal
	}
	return guard
}

// e2eDir returns ../shared/validation/e2e relative to the module root, or
// skips the test.
func e2eDir(t testing.TB) string {
	t.Helper()
	return csvtest.ValidationDir(t, "e2e")
}

// mistral7B is Mistral-7B-v0.1 (HF mistralai/Mistral-7B-v0.1
// config.json: hidden 4096, 32 layers, 32 heads, 8 KV heads,
// intermediate 14336, vocabulary 32000), which the catalog lacks.
const mistral7B = `name = "mistral-7b"
source = "HF mistralai/Mistral-7B-v0.1 config.json"
kind = "decoder"
layers = 32
d_model = 4096
heads = 32
kv_heads = 8
ffn = 14336
vocab = 32000
max_context = 32768
norm = "rmsnorm"
activation = "swiglu"
position = "rope"
bias = false
tied_embeddings = false
`

func trtModel(t testing.TB, name string) sim.Workload {
	t.Helper()
	var m *workloads.Model
	var err error
	switch name {
	case "LLaMA v3 70B", "LLaMA v3.1 70B":
		m, err = workloads.Resolve("llama3-70b")
	case "LLaMA v3.1 8B":
		m, err = workloads.Resolve("llama3-8b")
	case "LLaMA v3.1 405B":
		m, err = workloads.Resolve("llama3.1-405b")
	case "Mistral 7B":
		m, err = workloads.Load(strings.NewReader(mistral7B), "mistral-7b")
	default:
		t.Fatalf("unknown model %q", name)
	}
	if err != nil {
		t.Fatal(err)
	}
	return adapter{M: m}
}

// trtRequests is the requests trtllm-bench ran per length pair
// (e2e/README.md, from NVIDIA's perf-overview "Reproducing Benchmarked
// Results").
var trtRequests = map[[2]int]int{
	{128, 128}: 30000, {128, 2048}: 3000, {128, 4096}: 1500, {2048, 128}: 3000, {2048, 2048}: 1500,
	{5000, 500}: 1500, {500, 2000}: 3000, {1000, 1000}: 3000, {20000, 2000}: 1000,
}

// trtRow simulates one row of the TensorRT-LLM table and returns the
// predicted output tokens per second of the system.
func trtRow(t testing.TB, row map[string]string) (got, want float64, ok bool) {
	t.Helper()
	atoi := func(k string) int {
		v, err := strconv.Atoi(row[k])
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		return v
	}
	tp, pp, isl, osl := atoi("tp"), max(atoi("pp"), 1), atoi("isl"), atoi("osl")
	want, err := strconv.ParseFloat(row["value"], 64)
	if err != nil {
		t.Fatal(err)
	}
	hw := map[string]string{"H100-SXM-80GB": "h100", "A100-SXM4-80GB": "a100"}[row["gpu"]]
	sys, _ := setup(t, hw, "llama3-8b", tp*pp)
	w := trtModel(t, row["model"])
	sc := sim.Default()
	sc.TP, sc.PP = tp, pp
	if row["precision"] == "FP8" {
		sc.Weights, sc.Act, sc.KV = model.FP8, model.FP8, model.FP8
	}
	e, err := serve.Preset("trtllm", sys.Device.Memory.Limit())
	if err != nil {
		t.Fatal(err)
	}
	p, err := sim.NewPricer(sys, w, e.Scenario(sc))
	if err != nil {
		t.Fatal(err)
	}
	// trtllm-bench v0.14 read these from benchmark_config.yml by the
	// HuggingFace name; it lists no Llama 3.1 model, though NVIDIA's
	// perf-overview says its workflow ran only the models it lists, so
	// each Llama 3.1 row takes the entry of its Llama 3 twin (the same
	// architecture and sizes; an assumption, docs/serving.md).
	hf := map[string]string{
		"LLaMA v3 70B": "meta-llama/Meta-Llama-3-70B", "LLaMA v3.1 70B": "meta-llama/Meta-Llama-3-70B",
		"LLaMA v3.1 8B": "meta-llama/Meta-Llama-3-8B", "Mistral 7B": "mistralai/Mistral-7B-v0.1",
	}[row["model"]]
	e.MaxSeqs, e.MaxTokens, err = serve.TRTLLMBench014(hf, tp, pp, isl+osl)
	if err != nil {
		t.Fatalf("%s tp%d: %v", row["model"], tp, err)
	}
	// trtllm-bench build sets max_seq_len to the dataset's isl + osl
	// (bench/build/build.py @b0880169); the runtime's buffers are sized
	// by it (serve.TRTLLMBuffers).
	e.MaxSeqLen = isl + osl
	n := trtRequests[[2]int{isl, osl}]
	reqs, err := (&serve.Workload{N: n, Arrival: serve.AllAtOnce, Input: serve.Fixed(isl), Output: serve.Fixed(osl)}).Requests()
	if err != nil {
		t.Fatal(err)
	}
	res, err := serve.Run(p, e, reqs, serve.Options{})
	if err != nil {
		// The model does not fit (or a request exceeds the KV cache):
		// TensorRT-LLM ran it, so it is a miss, reported.
		t.Logf("%s %s %s tp%d %d/%d: %v", row["gpu"], row["precision"], row["model"], tp, isl, osl, err)
		return 0, want, false
	}
	return res.OutputTokensPerSecond, want, true
}

// TestValidate_trtllm compares the trtllm preset's throughput at maximum
// load with TensorRT-LLM v0.14's published figures (217 rows): median
// |error| ≤ 10%. max_batch_size and max_num_tokens are those v0.14's
// trtllm-bench build read from its benchmark_config.yml
// (serve.TRTLLMBench014); nothing is fitted per row. Every row runs
// (about 11 s), held to the goal; with -short every 12th, held to a 14%
// guard.
func TestValidate_trtllm(t *testing.T) {
	rows := csvtest.Rows(t, filepath.Join(e2eDir(t), "trtllm_0.14_inflight_a100_h100.csv"), "gpu", "precision", "model", "tp", "pp", "isl", "osl", "value")
	var errs []float64
	misses := 0
	for i, row := range rows {
		if testing.Short() && i%12 != 0 {
			continue
		}
		got, want, ok := trtRow(t, row)
		if !ok {
			misses++
			errs = append(errs, 1) // a row we cannot run counts as 100% off
			continue
		}
		e := got/want - 1
		errs = append(errs, math.Abs(e))
		if testing.Verbose() {
			t.Logf("%-15s %-4s %-15s tp%d %5d/%-5d measured %8.0f predicted %8.0f tok/s (%+5.1f%%)",
				row["gpu"], row["precision"], row["model"], atoiQuiet(row["tp"]), atoiQuiet(row["isl"]), atoiQuiet(row["osl"]), want, got, 100*e)
		}
	}
	slices.Sort(errs)
	med, p90 := quantile(errs, 0.5), quantile(errs, 0.9)
	t.Logf("TensorRT-LLM v0.14 throughput, %d rows (%d not runnable): median |error| %.1f%%, p90 %.1f%%", len(errs), misses, 100*med, 100*p90)
	lim := 0.10
	if testing.Short() {
		lim = 0.14
	}
	if med > lim {
		t.Errorf("median |error| %.1f%% > %.0f%%", 100*med, 100*lim)
	}
}

func atoiQuiet(s string) int { v, _ := strconv.Atoi(s); return v }

// quantile is the empirical quantile of sorted x.
func quantile(x []float64, p float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(p*float64(len(x)))) - 1
	return x[max(i, 0)]
}

// TestValidate_vllm compares the vllm-0.6 preset (prefill-first,
// --num-scheduler-steps 10, max_model_len 4096 so a budget of 4096
// tokens, CUDA graphs) on the ShareGPT approximation with vLLM 0.6.0's
// published medians (Llama 3.1 8B on one A100, 70B on four H100): TTFT,
// TPOT and E2E within 15%, throughput within 10%, with the preset's host
// time per sequence (fitted to the 8B offline row, TestFit_vllm06). The
// figures are logged row by row. The rows that meet the goals are held
// to them; the 70B latencies, which do not, to guards by default and to
// the goals with PERFSIM_LONG=1.
func TestValidate_vllm(t *testing.T) {
	rows := csvtest.Rows(t, filepath.Join(e2eDir(t), "vllm_0.6_sharegpt.csv"), "model", "scenario", "request_rate_rps", "num_prompts")
	for _, row := range rows {
		res := vllmRow(t, row, serve.VLLM06SeqOverhead)
		name := row["model"] + " " + row["scenario"] + " " + row["request_rate_rps"]
		check := func(metric string, got, want, tol float64) {
			if want == 0 || math.IsNaN(want) {
				return
			}
			e := got/want - 1
			t.Logf("%-40s %-22s measured %10.4g predicted %10.4g (%+5.1f%%)", name, metric, want, got, 100*e)
			if math.Abs(e) > tol {
				t.Errorf("%s: %s %.4g, measured %.4g (%+.1f%%, beyond ±%.0f%%)", name, metric, got, want, 100*e, 100*tol)
			}
		}
		f := func(k string) float64 {
			v, err := strconv.ParseFloat(row[k], 64)
			if err != nil {
				return math.NaN()
			}
			return v
		}
		// The 8B rows meet the goals (at 4 req/s TTFT −3.8%, TPOT −6.8%,
		// E2E +0.2%; at 8 req/s −11.0%, −4.3%, −2.9%; offline throughput
		// −0.1%, the row SeqOverhead is fitted to), and so does the
		// held-out 70B offline throughput (+6.8%): every run asserts them.
		// The 70B latencies hold guards a few points beyond today's misses
		// (docs/serving.md): TTFT −29.8% and −32.2%, TPOT −19.1% and
		// −22.6%, E2E −17.2% and −23.3% at 4 and 8 req/s.
		met := strings.Contains(row["model"], "8B")
		goal := func(g, guard float64) float64 {
			if met {
				return g
			}
			return tol(g, guard)
		}
		check("median TTFT ms", 1e3*res.TTFT.P50, f("median_ttft_ms"), goal(0.15, 0.37))
		check("median TPOT ms", 1e3*res.TPOT.P50, f("median_tpot_ms"), goal(0.15, 0.27))
		check("median E2E ms", 1e3*res.E2E.P50, f("median_e2e_latency_ms"), goal(0.15, 0.28))
		check("output tokens/s", res.OutputTokensPerSecond, f("output_token_throughput_tok_s"), 0.10)
	}
}

// vllmRow runs one row of vllm_0.6_sharegpt.csv with the vllm-0.6 preset
// (--num-scheduler-steps 10, max_model_len 4096 so a budget of 4096
// tokens) and a host time per sequence per step of seq.
func vllmRow(t testing.TB, row map[string]string, seq model.Seconds) *serve.Result {
	t.Helper()
	hw, mdl, tp := "a100", "llama3-8b", 1
	if strings.Contains(row["model"], "70B") {
		hw, mdl, tp = "h100", "llama3-70b", 4
	}
	sys, w := setup(t, hw, mdl, tp)
	e, err := serve.Preset("vllm-0.6", sys.Device.Memory.Limit())
	if err != nil {
		t.Fatal(err)
	}
	e.MaxTokens, e.SchedulerSteps = 4096, 10 // max(max_model_len 4096, 2048); --num-scheduler-steps 10
	e.SeqOverhead = seq
	sc := sim.Default()
	sc.TP = tp
	p, err := sim.NewPricer(sys, w, e.Scenario(sc))
	if err != nil {
		t.Fatal(err)
	}
	wl := serve.Workload{N: atoiQuiet(row["num_prompts"]), Arrival: serve.AllAtOnce, Joint: serve.ShareGPT{}, Seed: 1}
	if r, err := strconv.ParseFloat(row["request_rate_rps"], 64); err == nil && !math.IsInf(r, 0) {
		wl.Arrival, wl.Rate = serve.Poisson, r
	}
	reqs, err := wl.Requests()
	if err != nil {
		t.Fatal(err)
	}
	res, err := serve.Run(p, e, reqs, serve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestFit_vllm06 re-derives serve.VLLM06SeqOverhead, the vllm-0.6
// preset's one fitted setting: the host time per sequence per step at
// which the offline row of Llama 3.1 8B on one A100 (the training row;
// the other five rows are held out) is predicted exactly, by bisection
// (throughput falls as the overhead grows). The preset's value must be
// that fit, to the microsecond.
func TestFit_vllm06(t *testing.T) {
	rows := csvtest.Rows(t, filepath.Join(e2eDir(t), "vllm_0.6_sharegpt.csv"), "model", "scenario", "request_rate_rps", "num_prompts")
	var train map[string]string
	for _, row := range rows {
		if strings.Contains(row["model"], "8B") && row["scenario"] == "offline" {
			train = row
		}
	}
	if train == nil {
		t.Fatal("no offline 8B row")
	}
	want, err := strconv.ParseFloat(train["output_token_throughput_tok_s"], 64)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := 0.0, 200e-6
	for hi-lo > 0.1e-6 {
		mid := (lo + hi) / 2
		if vllmRow(t, train, model.Seconds(mid)).OutputTokensPerSecond > want {
			lo = mid
		} else {
			hi = mid
		}
	}
	fit := (lo + hi) / 2
	t.Logf("vllm-0.6 host time per sequence per step, fitted on the 8B offline row: %.1f µs (preset %v)", 1e6*fit, serve.VLLM06SeqOverhead)
	if math.Abs(fit-float64(serve.VLLM06SeqOverhead)) > 1e-6 {
		t.Errorf("the fit gives %.1f µs; serve.VLLM06SeqOverhead is %v", 1e6*fit, serve.VLLM06SeqOverhead)
	}
}
