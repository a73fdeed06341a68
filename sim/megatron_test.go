package sim_test

import (
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/internal/csvtest"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
	"github.com/perfsim/perfsim/workloads"
	"gonum.org/v1/gonum/stat"
)

// megatronRow is one run of megatron_core_h100_weak_scaling.csv.
type megatronRow struct {
	size                                  string
	heads, hidden, layers, tp, pp, dp, gb int
	seq, vocab, gpus                      int
	tflops                                float64 // achieved per GPU, Megatron's formula
}

// readMegatron reads the Megatron-Core weak-scaling runs, or skips.
func readMegatron(t testing.TB) []megatronRow {
	t.Helper()
	col, recs := csvtest.Read(t, filepath.Join("..", "..", "shared", "validation", "e2e", "megatron_core_h100_weak_scaling.csv"), "model_size", "per_gpu_tflops", "attention_heads", "hidden_size", "layers", "tensor_parallel", "pipeline_parallel", "data_parallel", "global_batch_size", "num_gpus", "seq_len", "vocab_size")
	var rows []megatronRow
	for _, r := range recs {
		n := func(k string) int {
			v, err := strconv.Atoi(r[col[k]])
			if err != nil {
				t.Fatalf("%s: %v", k, err)
			}
			return v
		}
		fl, err := strconv.ParseFloat(r[col["per_gpu_tflops"]], 64)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, megatronRow{size: r[col["model_size"]], heads: n("attention_heads"), hidden: n("hidden_size"),
			layers: n("layers"), tp: n("tensor_parallel"), pp: n("pipeline_parallel"), dp: n("data_parallel"),
			gb: n("global_batch_size"), seq: n("seq_len"), vocab: n("vocab_size"), gpus: n("num_gpus"), tflops: fl})
	}
	return rows
}

// megatronFLOPs is Megatron-LM's model-FLOPs count of one iteration
// (megatron/training/training.py num_floating_point_operations, r0.8: a
// GPT with multi-head attention, a 4h GELU MLP, no MoE):
// 12·B·s·L·h²·((2 + s/h) + 4 + V/(2·L·h)).
func megatronFLOPs(r megatronRow) float64 {
	B, s, L, h, V := float64(r.gb), float64(r.seq), float64(r.layers), float64(r.hidden), float64(r.vocab)
	return 12 * B * s * L * h * h * ((2 + s/h) + 4 + V/(2*L*h))
}

// megatronModel is the GPT of a row: multi-head attention, a 4h GELU MLP,
// LayerNorm, rotary positions, untied embeddings (Megatron-Core's GPT
// defaults for the benchmark's models).
func megatronModel(t testing.TB, r megatronRow) sim.Workload {
	m, err := workloads.New(workloads.Config{Name: "gpt-" + r.size, Source: "megatron_core_h100_weak_scaling.csv", Kind: workloads.Decoder,
		Layers: r.layers, DModel: r.hidden, Heads: r.heads, FFN: 4 * r.hidden, Vocab: r.vocab, MaxContext: r.seq,
		Norm: "layernorm", Activation: "gelu", Position: "rope"})
	if err != nil {
		t.Fatal(err)
	}
	return adapter{M: m}
}

// megatronScenario is a row's published layout on DGX H100 nodes (the
// source does not state the network; NVIDIA's own clusters are DGX
// SuperPODs). The source (NVIDIA/Megatron-LM README, "Training Speed and
// Scalability") states the overlaps: data-parallel (--overlap-grad-reduce
// --overlap-param-gather, which go with the distributed optimizer: ZeRO
// 1), tensor-parallel (--tp-comm-overlap, which needs sequence
// parallelism) and pipeline-parallel communication. What it does not
// state is the same for every row: micro-batch 1 (Megatron-LM requires
// --micro-batch-size and has no default; its example scripts, e.g.
// examples/gpt3/train_gpt3_175b_distributed.sh, set 1), and Megatron-LM's
// defaults: 1F1B without virtual stages, no recomputation, bf16
// gradients accumulated and reduced in fp32, accumulated inside the
// weight-gradient GEMMs (gradient_accumulation_fusion), NaN checks on,
// hidden and attention dropout 0.1 (megatron/training/arguments.py,
// r0.8; the attention's is drawn inside the fused kernel and not priced,
// sim.Scenario.Dropout).
func megatronScenario(r megatronRow) sim.Scenario {
	sc := sim.Default()
	sc.Mode, sc.Seq, sc.Batch, sc.GlobalBatch = sim.Training, r.seq, 1, r.gb
	sc.TP, sc.PP, sc.DP, sc.SP, sc.ZeRO = r.tp, r.pp, r.dp, r.tp > 1, 1
	sc.TPOverlap, sc.GradType, sc.Dropout = sc.SP, model.FP32, 0.1
	return sc
}

// TestMegatronCore_weakScaling: achieved TFLOP/s per GPU, Megatron's FLOPs
// formula over perfsim's step time, against the nine Megatron-Core r0.8
// runs on H100 (48 to 6,144 GPUs). The goal, a median |error| of
// at most 10%, is asserted (6.21% when written, p90 21.2%; 6.28% and
// 21.1% with the intra-node ring's efficiency by rank count; 6.06% and
// 21.3% with Megatron-LM's default hidden dropout; 5.31% and 21.65% with
// the loss's 52 bytes, the embedding's bucket, the accumulating weight
// gradients and the loss's all-reduce; docs/training.md); the p90 is
// reported.
func TestMegatronCore_weakScaling(t *testing.T) {
	rows := readMegatron(t)
	var errs []float64
	for _, r := range rows {
		sys, err := hardware.LookupSystem("dgx-h100", r.gpus)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := sim.Run(sys, megatronModel(t, r), megatronScenario(r))
		if err != nil {
			t.Fatalf("%s: %v", r.size, err)
		}
		if !rep.Memory.Fits {
			t.Errorf("%s: the published layout does not fit: %v of %v", r.size, rep.Memory.Total, rep.Memory.Capacity)
		}
		got := megatronFLOPs(r) / float64(rep.Training.StepTime) / float64(r.gpus) / 1e12
		e := got/r.tflops - 1
		errs = append(errs, math.Abs(e))
		b := rep.Training.Breakdown
		st := float64(rep.Training.StepTime)
		t.Logf("%5s %4d GPUs tp %d pp %2d dp %d: perfsim %.1f TFLOP/s, measured %.1f (%+.2f%%); step %v: compute %.0f%%, TP %.0f%%, bubble %.0f%%, DP %.0f%%",
			r.size, r.gpus, r.tp, r.pp, r.dp, got, r.tflops, 100*e, rep.Training.StepTime,
			100*float64(b.Compute)/st, 100*float64(b.TPComm)/st, 100*float64(b.Bubble)/st, 100*float64(b.DPComm)/st)
	}
	sort.Float64s(errs)
	med := stat.Quantile(0.5, stat.Empirical, errs, nil)
	p90 := stat.Quantile(0.9, stat.Empirical, errs, nil)
	t.Logf("median |error| %.2f%%, p90 %.2f%% (empirical quantiles over %d runs)", 100*med, 100*p90, len(errs))
	const want = 0.10
	if med > want {
		t.Errorf("median |error| %.2f%%, want at most %.0f%% (the issue's goal)", 100*med, 100*want)
	}
}
