package mlperf

import (
	"math"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/internal/simload"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
	"github.com/perfsim/perfsim/workloads"
)

func resolveCatalog(name string) (sim.Workload, error) {
	m, err := workloads.Resolve(name)
	if err != nil {
		return nil, err
	}
	return simload.Workload{M: m}, nil
}

func dgxH100(t *testing.T) *hardware.System {
	t.Helper()
	sys, err := hardware.LookupSystem("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	return sys
}

// TestLoRA_ops: Llama 2 70B's adapters, rank 16 on the fused QKV
// (8192 → 8192 + 2·1024) and the output projection (8192 → 8192) of 80
// layers: 80·16·(8192 + 10240 + 8192 + 8192) = 44,564,480 parameters.
// The backward pass keeps every base data gradient and drops every base
// weight gradient; the adapters have both.
func TestLoRA_ops(t *testing.T) {
	b, err := FindTraining("llama2_70b_lora")
	if err != nil {
		t.Fatal(err)
	}
	base, err := resolveCatalog("llama2-70b")
	if err != nil {
		t.Fatal(err)
	}
	if want := 80 * 16 * (8192 + 10240 + 8192 + 8192); want != 44564480 {
		t.Fatalf("the count by hand is %d", want)
	}
	if p, err := b.LoRA.AdapterParams(base); err != nil || p != 44564480 {
		t.Errorf("adapter parameters %.0f (%v), want 44,564,480", p, err)
	}
	lw := lora{base, *b.LoRA}
	ph := sim.Phase{Kind: sim.TrainBackward, Batch: 1, Seq: 512, Weights: model.BF16, Act: model.BF16, KV: model.BF16, TP: 4}
	full, err := base.Ops(ph)
	if err != nil {
		t.Fatal(err)
	}
	bwd, err := lw.Ops(ph)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, op := range bwd {
		names[op.Name] = true
	}
	var dgrads int
	for _, op := range full {
		switch {
		case strings.HasSuffix(op.Name, ".wgrad") && names[op.Name]:
			t.Errorf("base weight gradient %s kept", op.Name)
		case strings.HasSuffix(op.Name, ".dgrad"):
			dgrads++
			if !names[op.Name] {
				t.Errorf("base data gradient %s dropped", op.Name)
			}
		}
	}
	for _, n := range []string{"lora.attn.qkv.a.wgrad", "lora.attn.qkv.b.dgrad", "lora.attn.out.a.dgrad", "lora.attn.out.b.wgrad", "lora.attn.qkv.dropout.bwd"} {
		if !names[n] {
			t.Errorf("backward lacks %s", n)
		}
	}
	if dgrads == 0 {
		t.Error("no base data gradients")
	}
	// Under TP 4 the QKV adapter's B is split with its column-parallel
	// layer (N = 10240/4), the output projection's A with its
	// row-parallel layer (K = 8192/4).
	ph.Kind = sim.TrainForward
	fwd, err := lw.Ops(ph)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range fwd {
		g, ok := op.Kernel.(model.GEMM)
		switch {
		case !ok:
		case op.Name == "lora.attn.qkv.b" && (g.K != 16 || g.N != 2560 || g.M != 512):
			t.Errorf("%s: %d×%d·%d, want 512×16·2560", op.Name, g.M, g.K, g.N)
		case op.Name == "lora.attn.out.a" && (g.K != 2048 || g.N != 16):
			t.Errorf("%s: K %d N %d, want 2048, 16", op.Name, g.K, g.N)
		}
	}
}

// TestLoRA_step: on a DGX H100 at NVIDIA's layout, a LoRA step is
// cheaper than a full fine-tuning step of the same model and layout
// (no base weight gradients, no base optimizer), and fits where full
// training does not.
func TestLoRA_step(t *testing.T) {
	sys := dgxH100(t)
	b, _ := FindTraining("llama2_70b_lora")
	r := TimeToTrain(sys, b, 8, resolveCatalog)
	if r.Total <= 0 {
		t.Fatalf("no time to train: %s", r.Note)
	}
	full := b
	full.LoRA = nil
	f := TimeToTrain(sys, full, 8, resolveCatalog)
	if f.Total > 0 || !strings.Contains(f.Note, "does not fit") {
		t.Errorf("full fine-tuning of 70B on 8 H100s at TP 4: %v, %q; want does not fit", f.Total, f.Note)
	}
	sc := sim.Default()
	sc.Mode, sc.Batch, sc.Seq, sc.TP, sc.DP, sc.GlobalBatch = sim.Training, 1, 8192, 4, 2, 8
	sc.SP, sc.TPOverlap = true, true
	sc.Weights, sc.Act, sc.KV = model.FP8, model.FP8, model.FP8
	w, _ := resolveCatalog("llama2-70b")
	rep, err := sim.Run(sys, w, sc)
	if err != nil {
		t.Fatal(err)
	}
	if ratio := float64(r.StepTime / rep.Training.StepTime); ratio >= 0.9 || ratio < 0.6 {
		t.Errorf("LoRA step %v against full %v (×%.3f): want between ×0.6 and ×0.9 (a third of the GEMM work gone, TP comm less hidden)", r.StepTime, rep.Training.StepTime, ratio)
	}
	if r.Memory <= 0 || r.Memory > r.Usable {
		t.Errorf("LoRA memory %v of %v usable", r.Memory, r.Usable)
	}
	// 3,178.67 samples at 8 a step: 398 steps; evaluations every 384,
	// the first 3 skipped: ceil(3178.67/384) − 3 = 6.
	if r.Steps != 398 || r.Evals != 6 {
		t.Errorf("steps %d evals %d, want 398, 6", r.Steps, r.Evals)
	}
}

// TestTraining_againstMLPerf compares the times to train on one DGX H100
// with NVIDIA's published MLPerf Training v4.0 results, each the
// olympic mean of the run_start to run_stop times of its 10 result logs
// (mlcommons/training_results_v4.0 @6fe9543,
// NVIDIA/results/eos_ngc24.04_*/BENCHMARK/result_*.txt; the fastest and
// slowest run dropped, as MLPerf scores them). The goal is 15%: perfsim's
// convergence is the RCP mean, the submission's its own runs'.
//
// The HGX H200 rows (NVIDIA/results/h200_ngc24.04_*) are a second system,
// held out: nothing in perfsim was set from either. NVIDIA's H200 LoRA
// run used TP 2 and micro-batch 2 (config_DGXH200_1x8x2xtp2pp1cp1.sh);
// perfsim keeps the H100 layout.
func TestTraining_againstMLPerf(t *testing.T) {
	for _, tt := range []struct {
		system   string
		bench    string
		gbs      int
		measured float64 // minutes
		bound    float64
	}{
		// Llama 2 70B LoRA, GBS 8: 27.15, 27.39, 30.82, 27.11, 27.08,
		// 27.17, 27.14, 30.75, 23.54, 30.76 min → 28.07.
		{"dgx-h100", "llama2_70b_lora", 8, 28.07, 0.15},
		// Stable Diffusion v2, GBS 512: 41.96, 42.43, 42.33, 42.19,
		// 42.36, 42.27, 42.42, 42.15, 33.61, 42.20 min → 42.23. perfsim
		// is 21% fast (1,282 images/s against the logs' 1,022 between
		// checkpoints): the 15% goal is not met, and the bound guards
		// against regression only.
		{"dgx-h100", "stable_diffusion", 512, 42.23, 0.25},
		// DLRM-DCNv2, GBS 55296: 4.05, 3.81, 3.56, 4.07, 3.56, 3.82,
		// 4.06, 3.82, 3.79, 3.82 min → 3.844.
		{"dgx-h100", "dlrm_dcnv2", 55296, 3.844, 0.15},
		// HGX H200, olympic means of 10 runs: LoRA 24.69 min
		// (23.43 to 26.69), SD 41.35 (33.00 to 49.70), DLRM 3.469
		// (3.229 to 3.489). perfsim: +7.7%, −26.7% and −17.3%; the last
		// two miss the goal and their bounds are regression guards.
		{"hgx-h200", "llama2_70b_lora", 8, 24.69, 0.15},
		{"hgx-h200", "stable_diffusion", 512, 41.35, 0.30},
		{"hgx-h200", "dlrm_dcnv2", 55296, 3.469, 0.20},
		// 3D U-Net (v4.0, its last round), GBS 56 (NVIDIA/results/
		// eos_ngc24.04_mxnet/unet3d, 1xNVIDIA DGX H100): 40 runs, 8.19
		// to 16.40 min, the 4 fastest and 4 slowest dropped as
		// training_rules.adoc scores unet3d → 12.01 min. perfsim is 77%
		// slow: its 281 windows/s against the logs' about 570 between
		// evaluations (r00: 352,800 windows in 718 s less 56
		// evaluations of 1.81 s), and its evaluations are not priced.
		// The 15% goal is not met; the bound guards against regression.
		{"dgx-h100", "unet3d", 56, 12.01, 0.80},
		// HGX H200 (NVIDIA/results/h200_ngc24.04_mxnet/unet3d, GBS 56),
		// held out: 40 runs of 7.19 to 21.11 min, 4 + 4 dropped → 11.46
		// min; the logs give 601 windows/s (5% over the H100's) and
		// 1.69 s an evaluation. perfsim is 37.5% slow, its step 1.35×
		// faster than on the H100: it prices the full-resolution
		// convolutions memory-bound, so it follows the H200's 43% more
		// bandwidth where NVIDIA's step did not. A regression guard.
		{"hgx-h200", "unet3d", 56, 11.46, 0.45},
	} {
		sys, err := hardware.LookupSystem(tt.system, 8)
		if err != nil {
			t.Fatal(err)
		}
		b, err := FindTraining(tt.bench)
		if err != nil {
			t.Fatal(err)
		}
		r := TimeToTrain(sys, b, tt.gbs, resolveCatalog)
		got := float64(r.Total) / 60
		e := got/tt.measured - 1
		t.Logf("%s %s at GBS %d: %.2f min predicted, %.2f measured: %+.1f%%", tt.system, tt.bench, tt.gbs, got, tt.measured, 100*e)
		if math.Abs(e) > tt.bound {
			t.Errorf("%s %s: %.2f min, measured %.2f (%+.1f%%), over %.0f%%", tt.system, tt.bench, got, tt.measured, 100*e, 100*tt.bound)
		}
	}
}

// TestTraining_lora_rules: the LoRA RCPs are rcp_checker's olympic
// means, its evaluation every 384 sequences with FLOOR(0.125·GBS + 2)
// skipped.
func TestTraining_lora_rules(t *testing.T) {
	b, _ := FindTraining("llama2_70b_lora")
	// BS 8's 20 runs: 2,688 ×3, 3,072 ×9, 3,456 ×7, 3,840; less one
	// 2,688 and the 3,840: (2·2688 + 9·3072 + 7·3456)/18.
	if s, ok := b.Converge(8); s != (2*2688+9*3072+7*3456)/18.0 || !ok {
		t.Errorf("Converge(8) = %g, %v", s, ok)
	}
	if s, _ := b.Converge(12); math.Abs(s-(57216.0/18+72576.0/18)/2) > 1e-9 {
		t.Errorf("Converge(12) = %g, want halfway between BS 8 and 16", s)
	}
	for _, tt := range []struct {
		gbs, skip int
		every     float64
	}{{8, 3, 384}, {16, 4, 384}, {128, 18, 384}, {256, 34, 512}, {100, 14, 400}} {
		if s, e := b.EvalSkip(tt.gbs), b.EvalEvery(tt.gbs); s != tt.skip || e != tt.every {
			t.Errorf("GBS %d: skip %d every %g, want %d, %g", tt.gbs, s, e, tt.skip, tt.every)
		}
	}
}

// TestStableDiffusion: the v2 UNet trains data parallel (micro-batch 32,
// 2 accumulation steps at GBS 512 on 8 GPUs), its evaluations are off
// the clock, and the RCP at 512 is 2,560,000 samples (13 runs at
// 2,560,000 and one at 3,072,000, less the fastest and slowest).
func TestStableDiffusion(t *testing.T) {
	b, _ := FindTraining("stable_diffusion")
	if s, ok := b.Converge(512); s != 2560000 || !ok {
		t.Errorf("Converge(512) = %g, %v", s, ok)
	}
	if e := b.EvalEvery(768); e != 667*768 {
		t.Errorf("checkpoint interval at GBS 768: %g, want CEIL(512000/768)·768", e)
	}
	r := TimeToTrain(dgxH100(t), b, 512, resolveCatalog)
	if r.Total <= 0 || r.Evals != 0 || r.EvalTime != 0 || r.Steps != 5000 {
		t.Errorf("total %v, evals %d (%v), steps %d; want a time, no evaluations on the clock, 5000 steps (%s)", r.Total, r.Evals, r.EvalTime, r.Steps, r.Note)
	}
	if got := float64(r.Total) / (float64(r.StepTime) * 5000); math.Abs(got-1) > 1e-12 {
		t.Errorf("time to train is %.6f steps' time, want 5000 steps", got)
	}
}

// TestDLRM_sharded: the tables are out of the data-parallel part (its
// parameters are the MLPs' and cross layers' 16,044,545) and in each
// device's memory as an eighth of their fp32 weights and Adagrad state;
// the step adds the gathers, the sparse update and two all-to-alls to
// the dense step (overlapped by resource), and a larger batch per device
// raises the throughput.
func TestDLRM_sharded(t *testing.T) {
	base, err := resolveCatalog("dlrm-dcnv2")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := FindTraining("dlrm_dcnv2")
	d := dense{base, b.TableParams}
	if d.Params() != 16044545 {
		t.Errorf("dense parameters %.0f, want 16,044,545", d.Params())
	}
	if rows, width, err := bagRows(base); rows != 214 || width != 128 || err != nil || bagTables(base) != 26 {
		t.Errorf("rows %g width %d tables %g (%v); want 214, 128, 26", rows, width, bagTables(base), err)
	}
	ops, _ := d.Ops(sim.Phase{Kind: sim.TrainBackward, Batch: 4, Seq: 1, Weights: model.FP16, Act: model.FP16, KV: model.FP16, TP: 1})
	for _, op := range ops {
		if isBag(op) {
			t.Errorf("dense keeps %s", op.Name)
		}
	}
	sys := dgxH100(t)
	r := TimeToTrain(sys, b, 55296, resolveCatalog)
	if r.Total <= 0 {
		t.Fatalf("no time: %s", r.Note)
	}
	tables := model.Bytes(2 * 4 * b.TableParams / 8)
	if r.Memory < tables || r.Memory > r.Usable {
		t.Errorf("memory %v: want at least the tables' share %v and within %v", r.Memory, tables, r.Usable)
	}
	// 0.7615 epochs at 55,296: 57,771 steps, an evaluation every
	// FLOOR(4195197692/(55296·20)) = 3,793 steps: 16.
	if r.Steps != 57771 || r.Evals != 16 {
		t.Errorf("steps %d evals %d, want 57771, 16", r.Steps, r.Evals)
	}
	// The embedding's memory-bound work shares the memory with the dense
	// pass's memory-bound kernels, so the step is at least their sum and
	// at most the sum of everything.
	sc := sim.Default()
	sc.Mode, sc.Batch, sc.DP, sc.GlobalBatch = sim.Training, 6912, 8, 55296
	sc.Weights, sc.Act, sc.KV = model.FP16, model.FP16, model.FP16
	rep, err := sim.Run(sys, d, sc)
	if err != nil {
		t.Fatal(err)
	}
	if r.StepTime <= rep.Training.StepTime {
		t.Errorf("step %v not above the dense step %v", r.StepTime, rep.Training.StepTime)
	}
	small := TimeToTrain(sys, b, 32768, resolveCatalog)
	if small.Throughput >= r.Throughput {
		t.Errorf("throughput at GBS 32768 %g ≥ at 55296 %g", small.Throughput, r.Throughput)
	}
}

// TestTraining_fallbackType: a device without the benchmark's precision
// trains in bf16 and says so.
func TestTraining_fallbackType(t *testing.T) {
	dev, err := hardware.Resolve("a100")
	if err != nil {
		t.Fatal(err)
	}
	sys, err := hardware.NewSystem(dev, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := FindTraining("llama2_70b_lora")
	r := TimeToTrain(sys, b, 8, resolveCatalog)
	if !strings.Contains(r.Note, "has no fp8: bf16") {
		t.Errorf("A100 note %q, want it to say fp8 fell back to bf16", r.Note)
	}
	if got, note := trainingType(dgxH100(t), model.FP8); got != model.FP8 || note != "" {
		t.Errorf("H100 fp8: %v %q", got, note)
	}
}

// TestUNet3D: the RCPs are rcp_checker's olympic means with 4 runs
// dropped at each end (unet3d's rule), in samples; the evaluations start
// at CEILING(1000·168/spe) epochs and come every CEILING(20·168/spe),
// spe = CEILING(168/GBS)·GBS; they are counted and, lacking the cases'
// window counts, not priced.
func TestUNet3D(t *testing.T) {
	b, err := FindTraining("unet3d")
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := b.Converge(56); s != 67549440.0/189 || !ok {
		t.Errorf("Converge(56) = %g, %v; want 67,549,440/189", s, ok)
	}
	if s, _ := b.Converge(60); math.Abs(s-(67549440.0/189+32583296.0/83)/2) > 1e-9 {
		t.Errorf("Converge(60) = %g, want halfway between BS 56 and 64", s)
	}
	for _, tt := range []struct {
		gbs, skip int
		every     float64
	}{
		{56, 49, 20 * 168},  // 168 a epoch: from epoch 1000, every 20
		{64, 48, 18 * 192},  // 192 a epoch: from CEIL(875), every CEIL(17.5) = 18; ceil(875/18) − 1
		{28, 49, 20 * 168},  // 168 a epoch, as at 56
		{84, 49, 20 * 168},  // 2 steps an epoch, no padding
		{200, 49, 17 * 200}, // 200 a epoch: from CEIL(840), every CEIL(16.8) = 17; ceil(840/17) − 1
	} {
		if s, e := b.EvalSkip(tt.gbs), b.EvalEvery(tt.gbs); s != tt.skip || e != tt.every {
			t.Errorf("GBS %d: skip %d every %g, want %d, %g", tt.gbs, s, e, tt.skip, tt.every)
		}
	}
	r := TimeToTrain(dgxH100(t), b, 56, resolveCatalog)
	if r.Total <= 0 {
		t.Fatalf("no time: %s", r.Note)
	}
	// 357,404 samples at 56 a step: 6,383 steps; evaluation slots of
	// 3,360 samples: ceil(106.4) = 107, less the first 49: 58
	// evaluations (epochs 1000 to 2140), none priced.
	if r.Steps != 6383 || r.Evals != 58 || r.EvalTime != 0 {
		t.Errorf("steps %d evals %d (%v), want 6383, 58, 0", r.Steps, r.Evals, r.EvalTime)
	}
	if got := float64(r.Total) / (float64(r.StepTime) * 6383); math.Abs(got-1) > 1e-12 {
		t.Errorf("time to train is %.6f steps' time, want 6383 steps", got)
	}
	if !strings.Contains(r.Note, "not priced") {
		t.Errorf("note %q does not say the evaluations are not priced", r.Note)
	}
}
