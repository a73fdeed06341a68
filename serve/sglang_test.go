package serve_test

import (
	"testing"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// TestSGLangDefaults: the sglang preset derives mem_fraction_static from
// the TP size and chunked_prefill_size and cuda_graph_max_bs from the
// device's memory as SGLang v0.4.0's ServerArgs.__post_init__ does
// (server_args.py at sgl-project/sglang@f8b03269): 0.88 at TP 1, 0.87 at
// 2 and 3, 0.85 at 4 to 7, 0.81 at 8 to 15, 0.79 from 16; 8192 and 160 on
// 25,000 MiB or more, 2048 and 8 under. The other presets do not depend
// on the TP size.
func TestSGLangDefaults(t *testing.T) {
	const mib = 1 << 20
	h100 := model.Bytes(79.11 * (1 << 30)) // the CUDA total of an H100 80GB
	for _, c := range []struct {
		name     string
		capacity model.Bytes
		tp       int
		frac     float64
		chunk    int
		graphs   int
	}{
		{"h100 tp1", h100, 1, 0.88, 8192, 160},
		{"h100 tp2", h100, 2, 0.87, 8192, 160},
		{"h100 tp3", h100, 3, 0.87, 8192, 160},
		{"h100 tp4", h100, 4, 0.85, 8192, 160},
		{"h100 tp6", h100, 6, 0.85, 8192, 160},
		{"h100 tp8", h100, 8, 0.81, 8192, 160},
		{"h100 tp16", h100, 16, 0.79, 8192, 160},
		{"h100 tp32", h100, 32, 0.79, 8192, 160},
		{"24 GiB tp1", 24 << 30, 1, 0.88, 2048, 8},
		{"24 GiB tp4", 24 << 30, 4, 0.85, 2048, 8},
		{"just under 25,000 MiB", 25000*mib - 1, 2, 0.87, 2048, 8},
		{"25,000 MiB", 25000 * mib, 2, 0.87, 8192, 160},
		{"32 GiB", 32 << 30, 8, 0.81, 8192, 160},
	} {
		e, err := serve.PresetFor("sglang", c.capacity, c.tp)
		if err != nil {
			t.Fatal(err)
		}
		if e.MemFraction != c.frac || e.MaxTokens != c.chunk || e.GraphMaxBatch != c.graphs {
			t.Errorf("%s: mem fraction %g, chunk %d, graphs to batch %d; want %g, %d, %d", c.name, e.MemFraction, e.MaxTokens, e.GraphMaxBatch, c.frac, c.chunk, c.graphs)
		}
		if !e.ReqPool || !e.LPM || !e.RequeueBack || e.MaxSeqs != serve.SGLangMaxRunning {
			t.Errorf("%s: request pool %v, LPM %v, retracted to the back %v, max seqs %d", c.name, e.ReqPool, e.LPM, e.RequeueBack, e.MaxSeqs)
		}
		if err := e.Validate(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if e, _ := serve.Preset("sglang", h100); e.MemFraction != 0.88 {
		t.Errorf("Preset (one device): mem fraction %g, want 0.88", e.MemFraction)
	}
	for _, name := range []string{"vllm", "vllm-0.6", "trtllm"} {
		a, _ := serve.PresetFor(name, h100, 1)
		b, _ := serve.PresetFor(name, h100, 8)
		if a.MemFraction != b.MemFraction || a.MaxTokens != b.MaxTokens || a.MaxSeqs != b.MaxSeqs || b.GraphMaxBatch != 0 || b.ReqPool || b.LPM || b.RequeueBack {
			t.Errorf("%s: TP 8 changed the preset: %+v against %+v", name, b, a)
		}
	}
}

// TestSGLangReqSlots: max_running_requests as SGLang v0.4.0 derives it
// from the KV cache (max_total_num_tokens) and the model's context:
// min(tokens / 2, the request pool), the pool min(max(⌊tokens / context
// × 512⌋, 2048), 4096) + 1 (tp_worker.py, model_runner.py
// init_memory_pool).
func TestSGLangReqSlots(t *testing.T) {
	for _, c := range []struct {
		tokens, context, want int
	}{
		{428466, 131072, 2049},    // Llama 3.1 70B at TP 4 on H100s: ⌊1673.7⌋ → 2048
		{433639, 8192, 4097},      // Llama 3 8B on an A100: ⌊27102.4⌋ → 4096
		{40000, 8192, 2501},       // ⌊2500⌋ between the bounds
		{3000, 8192, 1500},        // tokens / 2
		{2000000, 131072, 4097},   // ⌊7812.5⌋ → 4096
		{1048576, 131072, 4097},   // exactly 4096
		{1048575, 131072, 4096},   // ⌊4095.99⌋
		{1, 8192, 1},              // at least one
		{100000, 0, 4097},         // no context known: the pool's largest
		{600000, 32768, 4096 + 1}, // ⌊9375⌋ → 4096
	} {
		if got := serve.SGLangReqSlots(c.tokens, c.context); got != c.want {
			t.Errorf("%d tokens, context %d: %d running, want %d", c.tokens, c.context, got, c.want)
		}
	}
}

// TestSGLangPreset_runs: a run reports the running cap the request pool
// sets (2049 for Llama 3.1 8B, context 131,072, on an A100: 445,894 KV
// tokens), and a user's --max-seqs under it stands.
func TestSGLangPreset_runs(t *testing.T) {
	sys, w := setup(t, "a100", "llama3.1-8b", 1)
	e, err := serve.PresetFor("sglang", sys.Device.Memory.Limit(), 1)
	if err != nil {
		t.Fatal(err)
	}
	p := pricer(t, sys, w, e.Scenario(sim.Default()))
	reqs, err := (&serve.Workload{N: 20, Rate: 2, Arrival: serve.Poisson, Input: serve.Fixed(300), Output: serve.Fixed(20), Seed: 1}).Requests()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ set, want int }{{0, 2049}, {100, 100}, {5000, 2049}} {
		e := e
		if c.set > 0 {
			e.MaxSeqs = c.set
		}
		res, err := serve.Run(p, e, reqs, serve.Options{MaxContext: w.Shape().MaxContext})
		if err != nil {
			t.Fatal(err)
		}
		if res.Engine.MaxSeqs != c.want || res.KVTokens != 445894 {
			t.Errorf("max seqs set to %d: ran with %d and %d KV tokens, want %d and 445,894", c.set, res.Engine.MaxSeqs, res.KVTokens, c.want)
		}
	}
}

// TestSGLangGraphMaxBatch: a decode step of more requests than
// cuda_graph_max_bs is launched kernel by kernel (SGLang v0.4.0's
// CudaGraphRunner.can_run). 32 requests of 100 + 50 tokens at once on
// Llama 3 8B on an H100: one prefill, then 49 decode steps of 32. With
// graphs to batch 32 or more the run is the one with no limit; to 31 its
// steps cost more; to 1 they cost what an engine without CUDA graphs
// pays, to the bit.
func TestSGLangGraphMaxBatch(t *testing.T) {
	sys, w := setup(t, "h100", "llama3-8b", 1)
	e, err := serve.PresetFor("sglang", sys.Device.Memory.Limit(), 1)
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := (&serve.Workload{N: 32, Arrival: serve.AllAtOnce, Input: serve.Fixed(100), Output: serve.Fixed(50)}).Requests()
	if err != nil {
		t.Fatal(err)
	}
	run := func(e serve.Engine) float64 {
		t.Helper()
		res, err := serve.Run(pricer(t, sys, w, e.Scenario(sim.Default())), e, reqs, serve.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return res.TPOT.P50
	}
	tpot := func(most int) float64 {
		e := e
		e.GraphMaxBatch = most
		return run(e)
	}
	all, at32, at160, at31, at1 := tpot(0), tpot(32), tpot(160), tpot(31), tpot(1)
	noGraphs := e
	noGraphs.Graphs = false
	eager := run(noGraphs)
	if at32 != all || at160 != all {
		t.Errorf("graphs to batch 32: TPOT %g s, to 160: %g, no limit: %g; want equal", at32, at160, all)
	}
	if !(at31 > all) || at31 != at1 || at1 != eager {
		t.Errorf("graphs to batch 31: TPOT %g s, to 1: %g, no graphs: %g, graphed: %g; want the first three equal and above the last", at31, at1, eager, all)
	}
}

// TestSGLangKVPool: the sglang preset sizes its KV pool as SGLang v0.4.0's
// ModelRunner.profile_max_num_token does (model_executor/model_runner.py,
// utils.py get_available_gpu_memory; serve.SGLangKVTokens): "total" is the
// memory free once the CUDA context and NCCL are up, before the weights
// (the usable memory less SGLangKeptBack: 79.11 − 0.30 GiB on an H100 at
// TP 1, 79.11 − 1.94 GiB at TP > 1), "available" what the weights leave
// of it, and the pool available − (1 − mem_fraction_static) × total, in
// whole cells of the KV bytes of one token (2 × KV heads per rank ×
// head_dim × layers × 2 bytes). At TP > 1 both readings pass through
// float32 (the MIN all-reduce). By hand (python, the same arithmetic):
//   - Llama 3 8B, TP 1 (0.88): total 84,621,593,149 B, weights
//     16,060,522,496 B, cell 131,072 B: ⌊445,606.1⌋;
//   - Llama 3 70B, TP 4 (0.85): total 82,860,654,592 B (float32),
//     weights 35,276,853,248 B, cell 81,920 B: ⌊429,134.6⌋;
//   - Llama 3 70B, TP 8 (0.81): weights 17,638,426,624 B, cell 40,960 B:
//     ⌊1,207,976.2⌋.
//
// The device's flat 2 GiB reserve had been taken off instead (433,350,
// 428,466 and 1,206,702); the whole usable memory before that (447,768,
// 450,748 and 1,249,169). With a reserve set in the scenario it stands
// for SGLangKeptBack; the activations of an iteration (SGLang's share
// outside the static fraction) never move the pool.
func TestSGLangKVPool(t *testing.T) {
	for _, c := range []struct {
		mdl      string
		tp, want int
	}{{"llama3-8b", 1, 445606}, {"llama3-70b", 4, 429134}, {"llama3-70b", 8, 1207976}} {
		sys, w := setup(t, "h100", c.mdl, c.tp)
		e, err := serve.PresetFor("sglang", sys.Device.Memory.Limit(), c.tp)
		if err != nil {
			t.Fatal(err)
		}
		sc := sim.Default()
		sc.TP = c.tp
		kv, _, err := e.KVCapacity(pricer(t, sys, w, e.Scenario(sc)))
		if err != nil {
			t.Fatal(err)
		}
		if kv != c.want {
			t.Errorf("%s TP %d: %d KV tokens, want %d", c.mdl, c.tp, kv, c.want)
		}
		small := e
		small.MaxTokens = 512 // other activations: SGLang does not take them off the pool
		if kv2, _, err := small.KVCapacity(pricer(t, sys, w, small.Scenario(sc))); err != nil || kv2 != kv {
			t.Errorf("%s TP %d: %d KV tokens at 512 tokens an iteration, %d at %d (%v); want equal", c.mdl, c.tp, kv2, kv, e.MaxTokens, err)
		}
	}
	sys, w := setup(t, "h100", "llama3-8b", 1)
	e, _ := serve.PresetFor("sglang", sys.Device.Memory.Limit(), 1)
	sc := e.Scenario(sim.Default())
	none := model.Bytes(0)
	sc.Reserve = &none
	if kv, _, err := e.KVCapacity(pricer(t, sys, w, sc)); err != nil || kv != 447768 {
		t.Errorf("no reserve: %d KV tokens (%v), want 447,768 (0.88 × 84,943,715,697 B − 16,060,522,496 B, over 131,072 B)", kv, err)
	}
}

// TestSGLangKeptBack: SGLang v0.4.0 finds the CUDA context gone before its
// first reading at TP 1, and the communicators too at TP > 1; the
// preset's report names that figure as its reserve, whatever the
// device's own reserve.
func TestSGLangKeptBack(t *testing.T) {
	for _, c := range []struct {
		ranks int
		want  model.Bytes
	}{{1, serve.SGLangContext}, {2, serve.SGLangDistributed}, {8, serve.SGLangDistributed}} {
		if got := serve.SGLangKeptBack(c.ranks); got != c.want {
			t.Errorf("%d ranks: %v kept back, want %v", c.ranks, got, c.want)
		}
	}
	if !(serve.SGLangContext < serve.SGLangDistributed) {
		t.Errorf("context %v, with the communicators %v: want more with them", serve.SGLangContext, serve.SGLangDistributed)
	}
	for _, c := range []struct {
		mdl string
		tp  int
	}{{"llama3-8b", 1}, {"llama3-70b", 4}} {
		tp := c.tp
		sys, w := setup(t, "h100", c.mdl, tp)
		saved := sys.Device.Memory.Reserve
		sys.Device.Memory.Reserve = 6 << 30 // not the device's: SGLang's own
		e, _ := serve.PresetFor("sglang", sys.Device.Memory.Limit(), tp)
		sc := sim.Default()
		sc.TP = tp
		_, m, err := e.KVCapacity(pricer(t, sys, w, e.Scenario(sc)))
		sys.Device.Memory.Reserve = saved
		if err != nil {
			t.Fatal(err)
		}
		if m.Reserve != serve.SGLangKeptBack(tp) {
			t.Errorf("TP %d: reserve %v, want SGLang's %v", tp, m.Reserve, serve.SGLangKeptBack(tp))
		}
	}
}

// TestSGLangKVPool_log: SGLang's own log of Llama 3.1 8B on an 80 GB GPU
// at TP 1 with the default mem_fraction_static 0.88
// (docs.sglang.ai/start/send_request.html, built 2025-01-23) reads
// "max_total_num_tokens=444500". Its first reading (78.81 GiB) is where
// SGLangContext comes from, so this checks the rest of the chain: the
// weights (the log's 15.09 GiB against perfsim's 14.96), the fraction
// and the cell. Within 0.5% (445,606 here, +0.25%).
func TestSGLangKVPool_log(t *testing.T) {
	sys, w := setup(t, "h100", "llama3.1-8b", 1)
	e, _ := serve.PresetFor("sglang", sys.Device.Memory.Limit(), 1)
	kv, _, err := e.KVCapacity(pricer(t, sys, w, e.Scenario(sim.Default())))
	if err != nil {
		t.Fatal(err)
	}
	const logged = 444500
	if d := float64(kv)/logged - 1; d < -0.005 || d > 0.005 {
		t.Errorf("%d KV tokens, SGLang's log %d: %+.2f%%, want within 0.5%%", kv, logged, 100*d)
	}
}
