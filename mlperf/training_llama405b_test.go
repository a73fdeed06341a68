package mlperf

import (
	"math"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/hardware"
)

// NVIDIA's MLPerf Training v5.0 Llama 3.1 405B on 64 HGX H100 nodes
// (Eos-dfw, 512 H100-SXM5-80GB, global batch 1152):
// mlcommons/training_results_v5.0 (mirror prishajain1/training_results_v5.0
// @0fdc28f0), NVIDIA/results/eos-dfw_n64_ngc25.01_nemo/llama31_405b/
// result_{0,1,2}.txt, run_stop less run_start: 13,837.001 s, 13,846.065 s
// and 13,840.538 s; each run converged at 276,480 sequences (240 steps,
// six evaluations), below the RCP mean of 322,560 that perfsim takes. The
// middle run (the score drops the fastest and the slowest of three):
// 13,840.538 s. A step: tracked_stats train_step_time 54.9 s (54.90 to
// 55.01 s after the first two steps of result_0); an evaluation about
// 105.6 s (eval_start to eval_accuracy, five validation steps).
const (
	llama405NVIDIATime    = 13840.538 // s, the middle of the three runs
	llama405NVIDIAStep    = 54.94     // s, train_step_time in steady state
	llama405NVIDIASamples = 276480    // sequences each run trained to converge
)

// TestLlama405B_vsNVIDIA prices Llama 3.1 405B at NVIDIA's layout (tp 8,
// pp 8 × 8 virtual stages with the embedding and the loss as layer
// slots, cp 2, fp8) on 512 H100s. Measured when written (nothing fitted
// to it): step 54.49 s against 54.94 s (-0.8%), an evaluation 74.2 s
// against about 105.6 s, the time to train 263.0 min against 230.7 min
// (+14.0%; 225.4 min, -2.3%, at NVIDIA's 240 steps). The time to train takes
// the RCP mean, 322,560 sequences (280 steps), where NVIDIA's runs
// converged in 276,480 (240 steps): the step is what perfsim predicts,
// the convergence point what the rules take (it varies run to run).
// The bounds sit just outside today's errors.
func TestLlama405B_vsNVIDIA(t *testing.T) {
	b, err := FindTraining("llama31_405b")
	if err != nil {
		t.Fatal(err)
	}
	sys, err := hardware.LookupSystem("dgx-h100", 512)
	if err != nil {
		t.Fatal(err)
	}
	r := TimeToTrain(sys, b, 1152, resolveCatalog)
	if r.Total <= 0 {
		t.Fatalf("no time to train: %s", r.Note)
	}
	// 322,560 sequences at 1152: 280 steps, 7 evaluations of 40 steps.
	if r.Steps != 280 || r.Evals != 7 || r.Samples != 322560 {
		t.Errorf("steps %d, evals %d, samples %.1f; want 280, 7, 322,560", r.Steps, r.Evals, r.Samples)
	}
	stepErr := float64(r.StepTime)/llama405NVIDIAStep - 1
	totalErr := float64(r.Total)/llama405NVIDIATime - 1
	// The same step at NVIDIA's convergence point: 240 steps, 6 evaluations.
	perEval := float64(r.EvalTime) / float64(r.Evals)
	atNVIDIA := 240*float64(r.StepTime) + 6*perEval
	t.Logf("step %.2f s vs %.2f s (%+.1f%%); eval %.1f s each; time to train %.1f min vs %.1f min (%+.1f%%); at NVIDIA's 240 steps %.1f min (%+.1f%%)",
		float64(r.StepTime), llama405NVIDIAStep, 100*stepErr, perEval, float64(r.Total)/60, llama405NVIDIATime/60, 100*totalErr,
		atNVIDIA/60, 100*(atNVIDIA/llama405NVIDIATime-1))
	if math.Abs(stepErr) > 0.05 {
		t.Errorf("step time error %+.1f%%, over the 5%% bound (-0.8%% when written)", 100*stepErr)
	}
	if math.Abs(totalErr) > 0.15 {
		t.Errorf("time-to-train error %+.1f%%, over the 15%% bound (+14.0%% when written, the RCP's 40 steps more)", 100*totalErr)
	}
	if r.Memory <= 0 || r.Memory > r.Usable {
		t.Errorf("memory %.1f GiB of %.1f GiB usable", float64(r.Memory)/(1<<30), float64(r.Usable)/(1<<30))
	}
	if !strings.Contains(r.Note, "layer slots") {
		t.Errorf("note %q does not name the layer slots", r.Note)
	}
}

// TestLlama405B_layoutRows: on one node the row says the layout needs a
// multiple of 128 devices and that the submission ran 512; without the
// layer slots NVIDIA's layout is refused, naming them.
func TestLlama405B_layoutRows(t *testing.T) {
	b, _ := FindTraining("llama31_405b")
	sys, err := hardware.LookupSystem("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	r := TimeToTrain(sys, b, 1152, resolveCatalog)
	if want := "needs a multiple of 128 devices, not 8 (the layout's submission ran 512: --gpus 512)"; r.Total != 0 || !strings.Contains(r.Note, want) {
		t.Errorf("8 GPUs: total %v, note %q; want %q", r.Total, r.Note, want)
	}
	if sys, err = hardware.LookupSystem("dgx-h100", 512); err != nil {
		t.Fatal(err)
	}
	b.LayerSlots = false
	r = TimeToTrain(sys, b, 1152, resolveCatalog)
	if want := "does not divide the 126 layers (126 + 2 = 128 would"; r.Total != 0 || !strings.Contains(r.Note, want) {
		t.Errorf("no layer slots: total %v, note %q; want %q", r.Total, r.Note, want)
	}
}
