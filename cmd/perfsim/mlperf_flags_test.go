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
