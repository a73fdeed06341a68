package plan

import (
	"flag"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/internal/csvtest"
	"github.com/perfsim/perfsim/internal/simload"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
	"github.com/perfsim/perfsim/workloads"
)

// adapter is a model as the simulator takes it (internal/simload, as cmd has it).
type adapter = simload.Workload

type megatronRow struct {
	size                                        string
	heads, hidden, layers, tp, pp, dp, gb, gpus int
}

// readMegatron reads the Megatron-Core weak-scaling runs, or skips.
func readMegatron(t testing.TB) []megatronRow {
	t.Helper()
	col, recs := csvtest.Read(t, filepath.Join("..", "..", "shared", "validation", "e2e", "megatron_core_h100_weak_scaling.csv"), "model_size", "attention_heads", "hidden_size", "layers", "tensor_parallel", "pipeline_parallel", "data_parallel", "global_batch_size", "num_gpus")
	var rows []megatronRow
	for _, r := range recs {
		n := func(k string) int {
			v, err := strconv.Atoi(r[col[k]])
			if err != nil {
				t.Fatalf("%s: %v", k, err)
			}
			return v
		}
		rows = append(rows, megatronRow{size: r[col["model_size"]], heads: n("attention_heads"), hidden: n("hidden_size"),
			layers: n("layers"), tp: n("tensor_parallel"), pp: n("pipeline_parallel"), dp: n("data_parallel"),
			gb: n("global_batch_size"), gpus: n("num_gpus")})
	}
	return rows
}

// gpt builds the GPT of a row (as sim's Megatron validation does).
func gpt(t testing.TB, r megatronRow) sim.Workload {
	m, err := workloads.New(workloads.Config{Name: "gpt-" + r.size, Kind: workloads.Decoder, Layers: r.layers, DModel: r.hidden,
		Heads: r.heads, FFN: 4 * r.hidden, Vocab: 131072, MaxContext: 4096, Norm: "layernorm", Activation: "gelu", Position: "rope"})
	if err != nil {
		t.Fatal(err)
	}
	return adapter{M: m}
}

// megatronRequest searches a row's GPUs and batch. The search tries
// what Megatron-Core offers beside the layout (micro-batch, virtual
// stages, recomputation, ZeRO 0 and the distributed optimizer, TP
// communication overlap on and off); what it keeps fixed is as sim's
// validation of the same runs prices them: bf16 gradients reduced in
// fp32, Megatron-LM's default.
func megatronRequest(r megatronRow) TrainRequest {
	base := sim.Default()
	base.GradType = model.FP32
	return TrainRequest{GPUs: r.gpus, GlobalBatch: r.gb, Seq: 4096, Base: base, ZeROStages: []int{0, 1}, Top: 5}
}

// TestTrain_megatronLayouts: for each Megatron-Core run, the published
// TP/PP/DP layout ranks among the search's top 5 or within 5% of its
// best. The full table is in the log. By default a sample of rows runs
// (1.7B, 70B, 462B: ranks 1, 2 and 1); -full runs all nine, of which
// 32B ranks 7th, 5.0% from the best: at the bound (docs/training.md).
func TestTrain_megatronLayouts(t *testing.T) {
	rows := readMegatron(t)
	for i, r := range rows {
		if testing.Short() && !*full && i%4 != 0 {
			continue // under -short a sample (1.7B, 70B, 462B) unless -full
		}
		sys, err := hardware.LookupSystem("dgx-h100", r.gpus)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Train(sys, gpt(t, r), megatronRequest(r))
		if err != nil {
			t.Fatal(err)
		}
		pub := TrainLayout{TP: r.tp, PP: r.pp, DP: r.dp, CP: 1, EP: 1}
		rank, gap := p.Rank(pub)
		w := &p.All[0]
		why := "it is the winner"
		if rank > 1 {
			why = "loses on " + Why(&p.All[rank-1], w)
		}
		t.Logf("%5s on %d GPUs: published %s ranks %d of %d layouts, %+.1f%% from the best (%s, %v, MFU %.1f%%); %s; %d configurations, %d fit",
			r.size, r.gpus, pub, rank, len(p.All), 100*gap, w.Layout(), w.Step, 100*w.MFU, why, p.Seen, p.Simulated-p.NoFit)
		if rank == 0 || (rank > 5 && gap > 0.05) {
			t.Errorf("%s: the published layout ranks %d, %+.1f%% from the best", r.size, rank, 100*gap)
		}
	}
}

// TestTrain_nothingFits: a model too large for its GPUs gets no layout
// and the closest miss.
func TestTrain_nothingFits(t *testing.T) {
	r := megatronRow{size: "462B", heads: 144, hidden: 18432, layers: 112, gb: 64, gpus: 8}
	sys, err := hardware.LookupSystem("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Train(sys, gpt(t, r), TrainRequest{GPUs: 8, GlobalBatch: 64, Seq: 4096, Base: sim.Default()})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Best) != 0 || p.ClosestMiss == nil || p.ClosestMiss.Memory.Headroom >= 0 {
		t.Fatalf("462B on 8 GPUs: %d layouts fit, closest miss %+v", len(p.Best), p.ClosestMiss)
	}
}

// TestTrain_deterministic: the same request gives the same ranking.
func TestTrain_deterministic(t *testing.T) {
	r := megatronRow{size: "1.7B", heads: 16, hidden: 2048, layers: 24, gb: 64, gpus: 16}
	sys, _ := hardware.LookupSystem("dgx-h100", 16)
	req := TrainRequest{GPUs: 16, GlobalBatch: 64, Seq: 4096, Base: sim.Default(), Top: 10}
	a, err := Train(sys, gpt(t, r), req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Train(sys, gpt(t, r), req)
	if len(a.All) != len(b.All) || len(a.All) == 0 {
		t.Fatalf("%d vs %d layouts", len(a.All), len(b.All))
	}
	for i := range a.All {
		if a.All[i].Scenario != b.All[i].Scenario || a.All[i].Step != b.All[i].Step {
			t.Fatalf("rank %d: %+v vs %+v", i, a.All[i].Scenario, b.All[i].Scenario)
		}
	}
}

func TestTrain_badRequest(t *testing.T) {
	sys, _ := hardware.LookupSystem("dgx-h100", 8)
	w := gpt(t, megatronRow{size: "1.7B", heads: 16, hidden: 2048, layers: 24})
	for _, req := range []TrainRequest{{GPUs: 16, GlobalBatch: 8, Seq: 4096}, {GPUs: 8, Seq: 4096}, {GPUs: 8, GlobalBatch: 8}} {
		if _, err := Train(sys, w, req); err == nil {
			t.Errorf("Train(%+v) accepted", req)
		}
	}
}

var full = flag.Bool("full", false, "run every Megatron-Core row in TestTrain_megatronLayouts (about 40 s)")

// BenchmarkTrain70B: the layout search for a 70B model on 1,024 H100s
// (≥ 10,000 configurations).
func BenchmarkTrain70B(b *testing.B) {
	r := megatronRow{size: "70B", heads: 64, hidden: 8192, layers: 80, gb: 1536, gpus: 1024}
	sys, _ := hardware.LookupSystem("dgx-h100", 1024)
	w := gpt(b, r)
	req := TrainRequest{GPUs: 1024, GlobalBatch: 1536, Seq: 4096, Base: sim.Default()}
	b.ReportAllocs()
	var seen int
	for b.Loop() {
		p, err := Train(sys, w, req)
		if err != nil {
			b.Fatal(err)
		}
		seen = p.Seen
	}
	b.ReportMetric(float64(seen), "configs/op")
}

// BenchmarkTrainingStep: one training step at scale priced by sim.Run
// (70B, tp 8 pp 4 dp 32, interleaved).
func BenchmarkTrainingStep(b *testing.B) {
	r := megatronRow{size: "70B", heads: 64, hidden: 8192, layers: 80}
	sys, _ := hardware.LookupSystem("dgx-h100", 1024)
	w := gpt(b, r)
	sc := sim.Default()
	sc.Mode, sc.Seq, sc.Batch, sc.GlobalBatch = sim.Training, 4096, 1, 1536
	sc.TP, sc.PP, sc.DP, sc.SP, sc.ZeRO, sc.Schedule, sc.VirtualStages = 8, 4, 32, true, 1, sim.Interleaved, 5
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sim.Run(sys, w, sc); err != nil {
			b.Fatal(err)
		}
	}
}
