package mlperf

import (
	"math"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// NVIDIA's MLPerf Training v4.0 GPT-3 175B on 64 DGX H100 (Eos, 512
// GPUs, global batch 2304): mlcommons/training_results_v4.0 @62f111b7,
// NVIDIA/results/eos_n64_ngc24.04_nemo/gpt3/result_{0,1,2}.txt, run_stop
// less run_start: 3147.895 s, 3043.679 s and 3038.247 s (24, 23 and 23
// evaluations). The score drops the fastest and slowest (training_rules.adoc,
// three runs for LLM pretraining): 3043.679 s. A step there: the first
// block of 11 steps in result_1 took 120.880 s (10.989 s a step), an
// evaluation 11.2 to 11.5 s.
const (
	gpt3NVIDIATime = 3043.679 // s, the olympic mean of the three runs
	gpt3NVIDIAStep = 120.880 / 11
)

// TestGPT3_vsNVIDIA prices GPT-3 175B at NVIDIA's layout on 512 H100s
// and checks the time to train against the published one. Measured when
// written (nothing fitted to it): step 9.804 s against 10.989 s
// (-10.8%), an evaluation 6.7 s against about 11.3 s, the time to train
// 43.75 min against 50.73 min (-13.8%). The bounds sit just outside
// those errors, so a change that moves the prediction further from the
// measurement fails here.
func TestGPT3_vsNVIDIA(t *testing.T) {
	b, err := FindTraining("gpt3")
	if err != nil {
		t.Fatal(err)
	}
	sys, err := hardware.LookupSystem("dgx-h100", 512)
	if err != nil {
		t.Fatal(err)
	}
	r := TimeToTrain(sys, b, 2304, resolveCatalog)
	if r.Total <= 0 {
		t.Fatalf("no time to train: %s", r.Note)
	}
	// 580,608 sequences to converge at 2304 (the RCPs at 2048 and 3072
	// interpolated): 252 steps, 23 evaluations of 11 steps each.
	if r.Steps != 252 || r.Evals != 23 || math.Abs(r.Samples-580608) > 0.5 {
		t.Errorf("steps %d, evals %d, samples %.1f; want 252, 23, 580,608", r.Steps, r.Evals, r.Samples)
	}
	stepErr := float64(r.StepTime)/gpt3NVIDIAStep - 1
	totalErr := float64(r.Total)/gpt3NVIDIATime - 1
	t.Logf("step %.3f s vs %.3f s (%+.1f%%); time to train %.2f min vs %.2f min (%+.1f%%); eval %.1f s in all",
		float64(r.StepTime), gpt3NVIDIAStep, 100*stepErr, float64(r.Total)/60, gpt3NVIDIATime/60, 100*totalErr, float64(r.EvalTime))
	if math.Abs(stepErr) > 0.12 {
		t.Errorf("step time error %+.1f%%, over the 12%% bound (-10.8%% when written)", 100*stepErr)
	}
	if math.Abs(totalErr) > 0.15 {
		t.Errorf("time-to-train error %+.1f%%, over the 15%% bound (-13.8%% when written)", 100*totalErr)
	}
	if r.Memory <= 0 || r.Memory > r.Usable {
		t.Errorf("memory %.1f GiB of %.1f GiB usable", float64(r.Memory)/(1<<30), float64(r.Usable)/(1<<30))
	}
}

// TestGPT3_layoutRows: on one node (or any count that tp 4 × pp 8 does
// not divide) the row says how many GPUs the layout needs; a global
// batch that does not split over the replicas says so; at global batch
// 2048 (36 micro-batches of 2304 over 32 replicas would not fill the
// interleaved schedule's 8 stages) 1024 GPUs train faster than 512.
func TestGPT3_layoutRows(t *testing.T) {
	b, _ := FindTraining("gpt3")
	for _, tt := range []struct {
		gpus, gbs int
		want      string
	}{
		{8, 2304, "needs a multiple of 32 devices, not 8 (the layout's submission ran 512: --gpus 512)"},
		{48, 2304, "needs a multiple of 32 devices, not 48"},
		{512, 2300, "does not split over 16 data-parallel replicas of micro-batch 2"},
	} {
		sys, err := hardware.LookupSystem("dgx-h100", tt.gpus)
		if err != nil {
			t.Fatal(err)
		}
		r := TimeToTrain(sys, b, tt.gbs, resolveCatalog)
		if r.Total != 0 || !strings.Contains(r.Note, tt.want) {
			t.Errorf("%d GPUs, batch %d: total %v, note %q; want %q", tt.gpus, tt.gbs, r.Total, r.Note, tt.want)
		}
	}
	at := func(n int) model.Seconds {
		sys, err := hardware.LookupSystem("dgx-h100", n)
		if err != nil {
			t.Fatal(err)
		}
		r := TimeToTrain(sys, b, 2048, resolveCatalog)
		if r.Total <= 0 {
			t.Fatalf("%d GPUs: %s", n, r.Note)
		}
		return r.Total
	}
	if t512, t1024 := at(512), at(1024); !(t1024 < t512) {
		t.Errorf("1024 GPUs %v not faster than 512 %v", t1024, t512)
	}
}

// TestLlama405B_RCPs: the olympic means of rcps_llama31_405b.json
// (six runs a batch, the fastest and slowest dropped) and v5.0's
// evaluation interval.
func TestLlama405B_RCPs(t *testing.T) {
	b, err := FindTraining("llama31_405b")
	if err != nil {
		t.Fatal(err)
	}
	if b.Lacks != "" || !b.LayerSlots {
		t.Errorf("Lacks %q, layer slots %v", b.Lacks, b.LayerSlots)
	}
	for _, tt := range []struct {
		gbs  int
		want float64
	}{
		{1152, 322560},
		{2304, (3*368640 + 414720) / 4.0},
		{4608, (460800 + 3*506880) / 4.0},
		{3456, (380160 + 495360) / 2.0},
	} {
		if got, in := b.Converge(tt.gbs); got != tt.want || !in {
			t.Errorf("Converge(%d) = %g (%v), want %g", tt.gbs, got, in, tt.want)
		}
	}
	// Every 46,080 sequences: 40 steps at 1152, CEIL(46080/1536) = 30 at 1536.
	if got := b.EvalEvery(1152); got != 46080 {
		t.Errorf("EvalEvery(1152) = %g", got)
	}
	if got := b.EvalEvery(1536); got != 46080 {
		t.Errorf("EvalEvery(1536) = %g", got)
	}
}

// TestLayout_contextParallel: a layout with context parallelism divides
// the devices by tp × pp × cp, and says how many it needs when they do
// not divide.
func TestLayout_contextParallel(t *testing.T) {
	b, _ := FindTraining("gpt3")
	b.CP = 2
	sys, err := hardware.LookupSystem("dgx-h100", 32)
	if err != nil {
		t.Fatal(err)
	}
	r := TimeToTrain(sys, b, 2304, resolveCatalog)
	if want := "tp 4 × pp 8 × cp 2 needs a multiple of 64 devices, not 32"; !strings.Contains(r.Note, want) {
		t.Errorf("note %q, want %q", r.Note, want)
	}
	if sys, err = hardware.LookupSystem("dgx-h100", 512); err != nil {
		t.Fatal(err)
	}
	// 512 / (4·8·2) = 8 replicas: 2300 does not split into them.
	r = TimeToTrain(sys, b, 2300, resolveCatalog)
	if want := "over 8 data-parallel replicas"; !strings.Contains(r.Note, want) {
		t.Errorf("note %q, want %q", r.Note, want)
	}
	if r = TimeToTrain(sys, b, 2304, resolveCatalog); r.Total <= 0 {
		t.Errorf("cp 2 on 512 GPUs: %s", r.Note)
	}
}
