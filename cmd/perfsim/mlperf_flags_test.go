package main

import (
	"strings"
	"testing"
)

// TestMLPerf_suiteFlags: a flag of the other suite is refused rather
// than ignored (issue 17 item 11, as simulate and maxmodel do), and an
// explicit --global-batch 0 is an error rather than the silent default.
// mlperf --suite training --scenario server ran the training suite, and
// --global-batch 64 with the inference suite was dropped.
func TestMLPerf_suiteFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"--suite", "training", "--benchmark", "resnet", "--scenario", "server", "--queries", "500", "--seed", "2"}, []string{"--scenario", "--queries", "--seed"}},
		{[]string{"--suite", "training", "--benchmark", "resnet", "--input", "gptj-99=100", "--output", "gptj-99=100"}, []string{"--input", "--output"}},
		{[]string{"--benchmark", "resnet50", "--global-batch", "64"}, []string{"--global-batch"}},
		{[]string{"--suite", "training", "--benchmark", "resnet", "--global-batch", "0"}, []string{"--global-batch"}},
	} {
		_, stderr, code := perfsim(t, append([]string{"mlperf", "--hw", "h100"}, tt.args...)...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", tt.args, code, stderr)
		}
		for _, w := range tt.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr lacks %s: %s", tt.args, w, stderr)
			}
		}
	}
}

// TestMLPerf_systemGPUs: --gpus with --system that is not whole nodes is
// refused, naming --gpus; mlperf --system dgx-h100 --gpus 3 had run and
// reported 8 GPUs.
func TestMLPerf_systemGPUs(t *testing.T) {
	_, stderr, code := perfsim(t, "mlperf", "--system", "dgx-h100", "--gpus", "3", "--benchmark", "resnet50", "--scenario", "offline")
	if code != 2 || !strings.Contains(stderr, "--gpus") {
		t.Errorf("--system dgx-h100 --gpus 3: exit %d: %s", code, stderr)
	}
	out, stderr, code := perfsim(t, "mlperf", "--system", "dgx-h100", "--gpus", "16", "--benchmark", "resnet50", "--scenario", "offline")
	if code != 0 || !strings.Contains(out, "16 × H100") {
		t.Errorf("--system dgx-h100 --gpus 16: exit %d: %s%s", code, out, stderr)
	}
}

// TestMLPerf_precisionWarned: a benchmark run in a precision the device
// has no peak for (llama2-70b-99 in fp8 on an A100) is warned about, as
// simulate warns; mlperf had priced it at the fp16 rate silently.
func TestMLPerf_precisionWarned(t *testing.T) {
	_, stderr, code := perfsim(t, "mlperf", "--hw", "a100", "--benchmark", "llama2-70b-99", "--scenario", "offline")
	if code != 0 || !strings.Contains(stderr, "warning: A100 80GB SXM has no fp8 peak") || !strings.Contains(stderr, "llama2-70b-99") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	_, stderr, _ = perfsim(t, "mlperf", "--hw", "h100", "--benchmark", "llama2-70b-99", "--scenario", "offline")
	if strings.Contains(stderr, "warning") {
		t.Errorf("H100 has fp8, yet: %s", stderr)
	}
}

// TestMLPerf_inputOfAnotherBenchmark: an --input or --output for a
// benchmark --benchmark does not run is a usage error naming it; it had
// been ignored without a word.
func TestMLPerf_inputOfAnotherBenchmark(t *testing.T) {
	_, stderr, code := perfsim(t, "mlperf", "--hw", "h100", "--gpus", "8", "--benchmark", "resnet50", "--input", "llama2-70b=100")
	if code != 2 || !strings.Contains(stderr, "--input: llama2-70b-99 is not the benchmark run (--benchmark resnet50)") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestMLPerf_inputValue: a bad --input value names the item and what a
// count is; it had said pflag's "strconv.Atoi: parsing "abc": invalid
// syntax". Suffixes are taken (1k).
func TestMLPerf_inputValue(t *testing.T) {
	_, stderr, code := perfsim(t, "mlperf", "--hw", "h100", "--gpus", "8", "--benchmark", "llama2-70b", "--input", "llama2-70b=abc")
	if code != 2 || !strings.Contains(stderr, `llama2-70b=abc: "abc" is not a count`) || strings.Contains(stderr, "strconv") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = perfsim(t, "mlperf", "--hw", "h100", "--gpus", "8", "--benchmark", "llama2-70b", "--input", "llama2-70b")
	if code != 2 || !strings.Contains(stderr, "want NAME=TOKENS") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestMLPerf_queriesIgnored: --queries where no Server trial of a
// benchmark other than the LLMs runs is refused, naming it: the LLM
// benchmarks run LoadGen's own query counts, Offline runs no trial, and
// mlperf --benchmark llama2-70b-99 --queries 500 had run as without it.
// Where it applies it is taken.
func TestMLPerf_queriesIgnored(t *testing.T) {
	for _, args := range [][]string{
		{"--benchmark", "llama2-70b-99", "--queries", "500"},
		{"--benchmark", "resnet50", "--scenario", "offline", "--queries", "500"},
		{"--benchmark", "rgat", "--queries", "500"},
	} {
		_, stderr, code := perfsim(t, append([]string{"mlperf", "--hw", "h100"}, args...)...)
		if code != 2 || !strings.Contains(stderr, "--queries: only the Server scenario") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
	if _, stderr, code := perfsim(t, "mlperf", "--hw", "h100", "--gpus", "1", "--benchmark", "resnet50", "--scenario", "server", "--queries", "500"); code != 0 {
		t.Errorf("resnet50 Server --queries 500: exit %d: %s", code, stderr)
	}
}

// TestMLPerf_footerQueries: the table's footer names the Server trial's
// query count only where such a trial ran; an LLM-only run's footer had
// named 20,000 queries per trial that no row used.
func TestMLPerf_footerQueries(t *testing.T) {
	out, stderr, code := perfsim(t, "mlperf", "--hw", "h100", "--gpus", "1", "--benchmark", "mixtral-8x7b", "--scenario", "offline")
	if code != 0 || strings.Contains(out, "queries per trial") {
		t.Errorf("exit %d, %s:\n%s", code, stderr, out)
	}
}
