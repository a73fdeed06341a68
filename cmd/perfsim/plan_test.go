package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlanServe: the plan's JSON names a best layout that meets the
// SLOs, and the Pareto chart is written.
func TestPlanServe(t *testing.T) {
	dir := t.TempDir()
	front := filepath.Join(dir, "front.svg")
	out, errOut, code := perfsim(t, "plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "30", "--ttft-p99", "500ms", "--tpot-p99", "30ms",
		"--tp", "1,2", "--pp", "1", "--max-seqs", "0", "--requests", "300", "--format", "json", "--front-plot", front)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var v struct {
		Best *struct {
			GPUs     int     `json:"gpus"`
			TTFT     float64 `json:"ttft_p99_s"`
			TPOT     float64 `json:"tpot_p99_s"`
			MeetsSLO bool    `json:"meets_slo"`
		} `json:"best"`
		Simulated int `json:"simulated"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if v.Best == nil || !v.Best.MeetsSLO || v.Best.TTFT > 0.5 || v.Best.TPOT > 0.03 || v.Simulated == 0 {
		t.Errorf("plan: %s", out)
	}
	if st, err := os.Stat(front); err != nil || st.Size() == 0 {
		t.Errorf("front plot: %v", err)
	}
	load := filepath.Join(dir, "load.svg")
	out, errOut, code = perfsim(t, "plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--max-rate", "--tp", "1", "--dtypes", "bf16",
		"--ttft-p99", "500ms", "--tpot-p99", "30ms", "--requests", "300", "--format", "csv", "--load-plot", load)
	if code != 0 || !strings.HasPrefix(out, "layout,dp,gpus,max_requests_per_s") {
		t.Fatalf("--max-rate exit %d: %s%s", code, out, errOut)
	}
	if st, err := os.Stat(load); err != nil || st.Size() == 0 {
		t.Errorf("load plot: %v", err)
	}
}

// TestPlanServe_bad: objectives need units; the rate must be positive.
func TestPlanServe_bad(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--rate", "10", "--ttft-p99", "1"}, "ttft-p99"},
		{[]string{"--rate", "0", "--ttft-p99", "1s"}, "--rate"},
		{[]string{"--rate", "10"}, "objective"},
		{[]string{"--rate", "10", "--ttft-p99", "1s", "--tp", "0"}, "--tp"},
		// Too few requests for the overload verdict to judge a run:
		// --max-rate over 19 had answered 2,095 req/s (one H100).
		{[]string{"--rate", "10", "--ttft-p99", "1s", "--requests", "19"}, "--requests: a plan needs at least 20 requests a run, got 19"},
		{[]string{"--max-rate", "--ttft-p99", "1s", "--requests", "1"}, "--requests: a plan needs at least 20 requests a run, got 1"},
		// One output token: no TPOT (it had been met at "0 s").
		{[]string{"--rate", "5", "--output", "1", "--tpot-p99", "1ms"}, "--tpot-p99: every request generates one token (--output 1), so there is no TPOT to bound"},
	} {
		_, errOut, code := perfsim(t, append([]string{"plan", "serve", "--hw", "h100", "--model", "llama3-8b"}, tt.args...)...)
		if code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
	if _, _, code := perfsim(t, "plan", "train"); code != 2 {
		t.Errorf("plan train exited %d", code)
	}
}

// TestPlanServe_noLayoutRuns: when no layout can run at all, plan serve
// fails saying why; it had printed "no layout within 64 GPUs meets the
// objectives" with exit status 0 for a pure state-space model, every
// layout counted as pruned.
func TestPlanServe_noLayoutRuns(t *testing.T) {
	out, stderr, code := perfsim(t, "plan", "serve", "--hw", "h100", "--model", "mamba2-2.7b", "--rate", "1", "--ttft-p99", "1s", "--tpot-p99", "50ms", "--tp", "1,2", "--pp", "1", "--dtypes", "bf16")
	if code != 1 || !strings.Contains(stderr, "plan serve: no layout could run: 6 layouts (tp1 pp1 bf16 max-seqs 256, ...)") || !strings.Contains(stderr, "has no attention layer") || out != "" {
		t.Errorf("exit %d, stderr %q, stdout %q", code, stderr, out)
	}
}

// TestPlanServe_maxRateOneDeployment: --max-rate prices one deployment;
// a list given to --tp, --pp, --dtypes or --max-seqs is a usage error
// naming the flag (--tp 1,2 had priced tp 1 alone, without a word).
func TestPlanServe_maxRateOneDeployment(t *testing.T) {
	_, stderr, code := perfsim(t, "plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--max-rate", "--tp", "1,2", "--dtypes", "bf16,fp8", "--ttft-p99", "500ms", "--requests", "100")
	for _, want := range []string{"--tp: 2 values, but --max-rate prices one deployment", "--dtypes: 2 values, but --max-rate prices one deployment"} {
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("exit %d, stderr %q lacks %q", code, stderr, want)
		}
	}
}

// TestPlanServe_maxRateNone: a deployment that meets the objectives at
// no rate has max_requests_per_s 0 and no latency or throughput at it:
// the JSON's are null and the CSV's cells empty. Both had given
// a p99 TTFT and TPOT of 0 s, which no run measured. The run exits 3
// (no answer), its report written; it had exited 0.
func TestPlanServe_maxRateNone(t *testing.T) {
	args := []string{"plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--max-rate", "--tp", "1", "--dtypes", "bf16",
		"--max-seqs", "0", "--ttft-p99", "1us", "--tpot-p99", "1us", "--requests", "50"}
	js, stderr, code := perfsim(t, append(args, "--format", "json")...)
	if code != 3 || stderr != "perfsim: plan serve --max-rate: tp1 pp1 bf16 × dp 1 meets the objectives at no rate\n" {
		t.Fatalf("exit %d (want 3): %s", code, stderr)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		t.Fatal(err)
	}
	if v["max_requests_per_s"] != 0.0 {
		t.Errorf("max_requests_per_s %v, want 0", v["max_requests_per_s"])
	}
	for _, k := range []string{"ttft_p99_s", "tpot_p99_s", "output_tokens_per_s"} {
		if x, ok := v[k]; !ok || x != nil {
			t.Errorf("%s: %v (present %v), want null", k, x, ok)
		}
	}
	cs, stderr, code := perfsim(t, append(args, "--format", "csv")...)
	if code != 3 {
		t.Fatalf("exit %d (want 3): %s", code, stderr)
	}
	if lines := strings.Split(strings.TrimSpace(cs), "\n"); len(lines) != 2 || !strings.HasSuffix(lines[1], ",1,1,0,,,") {
		t.Errorf("CSV %q: want max_requests_per_s 0 and empty cells", cs)
	}
}

// TestPlanServe_context: requests longer than the model's context are
// refused naming --input and --output, as perfsim serve refuses them;
// the plan had searched layouts for 9,000 + 256-token requests of an
// 8,192-token model and reported one.
func TestPlanServe_context(t *testing.T) {
	base := []string{"plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--ttft-p99", "1s", "--input", "9000", "--requests", "20"}
	for _, extra := range [][]string{{"--rate", "5"}, {"--rate", "5", "--disagg"}, {"--max-rate", "--tp", "1", "--dtypes", "bf16", "--max-seqs", "0"}} {
		_, stderr, code := perfsim(t, append(append([]string{}, base...), extra...)...)
		if code != 2 || !strings.Contains(stderr, "--input, --output: request 0: 9000 + 256 tokens exceed the model's context of 8192") {
			t.Errorf("%v: exit %d, stderr %q", extra, code, stderr)
		}
	}
}

// TestPlan_noAnswerExit3: a plan that ran but found no layout meeting
// the objectives writes its report and exits 3, saying so on stderr;
// plan serve, its load plot and plan train had all exited 0 (a script
// could not tell the answer from a non-answer), and a --front-plot,
// --load-plot or --plot with nothing to draw had failed (exit 1) before
// the report was written. A front with no candidate says so (its header
// had been printed over no rows).
func TestPlan_noAnswerExit3(t *testing.T) {
	dir := t.TempDir()
	serveArgs := []string{"plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "5", "--tp", "1", "--pp", "1", "--dtypes", "bf16",
		"--max-seqs", "0", "--max-gpus", "2", "--requests", "100"}
	for _, tt := range []struct {
		args         []string
		stdout, want string
		file         string // written (or not: "!" before it)
	}{
		// Every candidate keeps up but misses the 1 µs TTFT: the front
		// is drawn, the answer is none.
		{append(serveArgs, "--ttft-p99", "1us", "--front-plot", filepath.Join(dir, "front.svg")), "best    no layout within 2 GPUs meets the objectives",
			"perfsim: plan serve: no layout within 2 GPUs meets the objectives\n", filepath.Join(dir, "front.svg")},
		{append(serveArgs, "--ttft-p99", "1us", "--format", "json"), `"best": null`,
			"perfsim: plan serve: no layout within 2 GPUs meets the objectives\n", ""},
		// Every candidate is overloaded: nothing kept up to draw.
		{append(serveArgs[:6:6], "--rate", "400", "--ttft-p99", "1s", "--tp", "1", "--pp", "1", "--dtypes", "bf16", "--max-seqs", "0", "--max-gpus", "1", "--requests", "200", "--front-plot", filepath.Join(dir, "none.svg")),
			"best    no layout within 1 GPU meets the objectives\n\nPareto front  none: every candidate was overloaded (the queue grew without bound)\n",
			"perfsim: plan serve: no layout within 1 GPU meets the objectives; --front-plot not drawn: no candidate kept up with the load\n", "!" + filepath.Join(dir, "none.svg")},
		{[]string{"plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--max-rate", "--tp", "1", "--dtypes", "bf16", "--max-seqs", "0",
			"--ttft-p99", "1us", "--requests", "50", "--load-plot", filepath.Join(dir, "load.svg")}, "max rate    0 req/s under p99 TTFT ≤ 1 us (0: none meets them)",
			"perfsim: plan serve --max-rate: tp1 pp1 bf16 × dp 1 meets the objectives at no rate; --load-plot not drawn: no rate to draw around\n", "!" + filepath.Join(dir, "load.svg")},
		{[]string{"plan", "train", "--model", "llama3-70b", "--system", "dgx-a100", "--gpus", "2", "--global-batch", "8", "--seq", "4096", "--plot", filepath.Join(dir, "train.svg")},
			"no layout fits: the closest", "perfsim: plan train: no layout of llama3-70b fits 2 GPUs of dgx-a100; --plot not drawn: no layout to draw\n", "!" + filepath.Join(dir, "train.svg")},
	} {
		out, stderr, code := perfsim(t, tt.args...)
		if code != 3 || !strings.Contains(out, tt.stdout) || !strings.HasSuffix(stderr, tt.want) {
			t.Errorf("%v: exit %d (want 3), stderr %q (want %q), stdout lacks %q:\n%s", tt.args, code, stderr, tt.want, tt.stdout, out)
		}
		if f, ok := strings.CutPrefix(tt.file, "!"); ok {
			if _, err := os.Stat(f); err == nil {
				t.Errorf("%v: %s written", tt.args, f)
			}
		} else if tt.file != "" {
			if _, err := os.Stat(f); err != nil {
				t.Errorf("%v: %v", tt.args, err)
			}
		}
	}
}

// TestPlanServe_someLayoutsCannotRun: layouts asked for that cannot run
// are named on stderr with why, while the others are planned (exit 0):
// --tp 3 for a model of 32 heads had been dropped with only the pruned
// count ("24 layouts seen, 12 pruned") to show for it.
func TestPlanServe_someLayoutsCannotRun(t *testing.T) {
	out, stderr, code := perfsim(t, "plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "5", "--ttft-p99", "1s", "--tp", "3,1", "--pp", "1", "--dtypes", "bf16", "--requests", "100")
	want := "perfsim: warning: 3 of 6 layouts could not run: 3 layouts (tp3 pp1 bf16 max-seqs 256, ...): --tp: tensor parallelism 3 does not divide the 32 attention heads\n"
	if code != 0 || !strings.Contains(stderr, want) || !strings.Contains(out, "best    tp1 pp1 bf16") {
		t.Errorf("exit %d, stderr %q (want %q), stdout:\n%s", code, stderr, want, out)
	}
	// All runnable: no warning.
	if _, stderr, _ := perfsim(t, "plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "5", "--ttft-p99", "1s", "--tp", "1", "--pp", "1", "--dtypes", "bf16", "--requests", "100"); strings.Contains(stderr, "warning") {
		t.Errorf("a plan of runnable layouts warns: %q", stderr)
	}
}

// TestPlanServe_helpObjectives: the objective flags' help says they have
// no default, not "(default 0 s)" (an objective of 0 s reads as the
// tightest there is), and serve's goodput objectives likewise.
func TestPlanServe_helpObjectives(t *testing.T) {
	for _, cmd := range [][]string{{"plan", "serve", "--help"}, {"serve", "--help"}} {
		_, help, _ := perfsim(t, cmd...)
		for _, line := range strings.Split(help, "\n") {
			f := strings.TrimSpace(line)
			flag := strings.HasPrefix(f, "--ttft-") || strings.HasPrefix(f, "--tpot-")
			if flag && (strings.Contains(line, "(default 0") || !strings.Contains(line, "(default: none")) {
				t.Errorf("%v: %q", cmd, line)
			}
		}
	}
}

// TestPlanServe_settledRequests: a candidate whose run of --requests had
// not settled is judged over more, and the report says how many: the
// table under the best, JSON and CSV per candidate.
func TestPlanServe_settledRequests(t *testing.T) {
	args := []string{"plan", "serve", "--hw", "h100", "--model", "llama3-70b", "--rate", "50", "--ttft-p99", "1s", "--tpot-p99", "50ms",
		"--input", "1024", "--output", "256", "--tp", "2", "--pp", "1", "--dtypes", "fp8", "--max-seqs", "0", "--requests", "600"}
	out, errOut, code := perfsim(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "judged over 2400 requests: its run of 600 had not settled") {
		t.Errorf("the table does not say the best was judged over more requests:\n%s", out)
	}
	out, errOut, code = perfsim(t, append(args, "--format", "json")...)
	if code != 0 {
		t.Fatalf("json: exit %d: %s", code, errOut)
	}
	var j struct {
		Best struct {
			GPUs     int `json:"gpus"`
			Requests int `json:"requests"`
		} `json:"best"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	if j.Best.GPUs != 14 || j.Best.Requests != 2400 {
		t.Errorf("best: %d GPUs judged over %d requests, want 14 over 2400 (600 had not settled)", j.Best.GPUs, j.Best.Requests)
	}
}
