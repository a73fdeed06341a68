package serve_test

import (
	"fmt"
	"sort"
	"testing"

	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// heldBytes returns, at every request's start and first token, a lower
// bound on the KV cache the running requests hold on one device: each
// request between its start and its finish (never preempted) holds its
// fixed state, and once its first token is out, its whole prompt's
// attention KV at growth bytes per token. It returns the largest, and
// the most requests running at once.
func heldBytes(res *serve.Result, state, growth float64) (most float64, running int) {
	var times []float64
	for _, m := range res.Requests {
		times = append(times, float64(m.Start), float64(m.FirstToken))
	}
	sort.Float64s(times)
	for _, t := range times {
		held, n := 0.0, 0
		for _, m := range res.Requests {
			if m.Preemptions > 0 || t < float64(m.Start) || t >= float64(m.Finish) {
				continue
			}
			n++
			held += state
			if t >= float64(m.FirstToken) {
				held += float64(m.Input) * growth
			}
		}
		most, running = max(most, held), max(running, n)
	}
	return most, running
}

// kvBudget returns the bytes vLLM gives its KV cache on one device
// (gpu_memory_utilization of the usable memory less weights,
// activations, runtime buffers and reserve) or SGLang does
// (mem_fraction_static of what the memory it keeps back, SGLangKeptBack,
// leaves, less the weights and runtime buffers), with the state of one
// sequence and the attention KV per token of m.
func kvBudget(t *testing.T, e serve.Engine, p *sim.Pricer) (budget, state, growth float64) {
	t.Helper()
	_, m, err := e.KVCapacity(p)
	if err != nil {
		t.Fatal(err)
	}
	switch e.MemBase {
	case serve.OfTotal:
		budget = e.MemFraction*float64(m.Usable) - float64(m.Weights+m.Activations+m.Reserve+m.Buffers)
	case serve.OfTotalStatic:
		budget = e.MemFraction*float64(m.Usable-m.Reserve) - float64(m.Weights+m.Buffers)
	default:
		t.Fatalf("engine %s: the test sizes the budget of vLLM and SGLang only", e.Name)
	}
	seq := e.MaxTokens + 1 // the sequence Footprint sizes
	growth = (float64(m.KVCache) - float64(m.KVState)) / float64(seq)
	return budget, float64(m.KVState), growth
}

// TestServe_hybridStatePerSequence: a hybrid model's Mamba-2 state is
// held once per running sequence (vLLM V1's MambaManager, SGLang's
// per-request state pool), not averaged per token at MaxTokens: with
// nemotron-h-8b at TP 2 (24.7 MiB of state per sequence per device) and
// 1,024 + 256-token requests all at once under SGLang, the requests running at once
// never hold more than the KV budget. The per-token average charged a
// 1,280-token request about 1,280/8,193 of its state and ran about 1.7×
// as many as the memory holds (3.3×).
func TestServe_hybridStatePerSequence(t *testing.T) {
	sys, w := setup(t, "h100", "nemotron-h-8b", 2)
	sc := sim.Default()
	sc.TP = 2
	p := pricer(t, sys, w, sc)
	// SGLang prefills first: every request at once fills the memory.
	e, err := serve.Preset("sglang", sys.Device.Memory.Limit())
	if err != nil {
		t.Fatal(err)
	}
	e.MaxSeqs = 8192 // the memory, not the batch cap, limits
	budget, state, growth := kvBudget(t, e, p)
	if !(state > 20<<20) || !(growth > 0) {
		t.Fatalf("nemotron-h-8b TP 2: state %.0f bytes per sequence, %.0f per token: want a hybrid's", state, growth)
	}
	reqs, err := (&serve.Workload{N: 6000, Arrival: serve.AllAtOnce, Input: serve.Fixed(1024), Output: serve.Fixed(256)}).Requests()
	if err != nil {
		t.Fatal(err)
	}
	res, err := serve.Run(p, e, reqs, serve.Options{Records: true})
	if err != nil {
		t.Fatal(err)
	}
	held, running := heldBytes(res, state, growth)
	t.Logf("budget %.2f GiB, state %.1f MiB + %.0f B/token: most running %d, holding at least %.2f GiB; %.0f output tok/s",
		budget/(1<<30), state/(1<<20), growth, running, held/(1<<30), res.OutputTokensPerSecond)
	if held > budget {
		t.Errorf("%d requests running at once hold at least %.2f GiB of state and KV, more than the KV budget of %.2f GiB", running, held/(1<<30), budget/(1<<30))
	}
	// The memory, not the work, limits: at least 90% of what it holds.
	if fit := budget / (state + 1280*growth); float64(running) < 0.9*fit {
		t.Errorf("at most %d running, the memory holds %.0f of 1,280 tokens", running, fit)
	}
}

// TestServe_hybridStateProperty: for every hybrid in the catalog, on
// one device and at TP 2, under any workload of fixed lengths, the
// running requests never hold more state and KV than the budget.
func TestServe_hybridStateProperty(t *testing.T) {
	for _, mdl := range []string{"nemotron-h-8b", "qwen3-next-80b-a3b"} {
		for _, c := range []struct {
			engine           string
			dev, tp, in, out int
		}{{"sglang", 2, 2, 512, 128}, {"vllm", 2, 2, 3000, 64}, {"sglang", 4, 4, 200, 400}, {"vllm", 4, 4, 1000, 100}} {
			t.Run(fmt.Sprintf("%s/%s/tp%d/%d+%d", mdl, c.engine, c.tp, c.in, c.out), func(t *testing.T) {
				sys, w := setup(t, "h200", mdl, c.dev)
				sc := sim.Default()
				sc.TP = c.tp
				p := pricer(t, sys, w, sc)
				e, err := serve.Preset(c.engine, sys.Device.Memory.Limit())
				if err != nil {
					t.Fatal(err)
				}
				e.MaxSeqs = 8192
				budget, state, growth := kvBudget(t, e, p)
				if !(state > 0) {
					t.Fatalf("%s: no state per sequence", mdl)
				}
				n := int(1.3 * budget / (state + float64(c.in+c.out)*growth))
				reqs, err := (&serve.Workload{N: n, Arrival: serve.AllAtOnce, Input: serve.Fixed(c.in), Output: serve.Fixed(c.out)}).Requests()
				if err != nil {
					t.Fatal(err)
				}
				res, err := serve.Run(p, e, reqs, serve.Options{Records: true})
				if err != nil {
					t.Fatal(err)
				}
				if held, running := heldBytes(res, state, growth); held > budget {
					t.Errorf("%d running hold at least %.3f GiB, more than the budget of %.3f GiB", running, held/(1<<30), budget/(1<<30))
				}
			})
		}
	}
}

// TestDisagg_hybridState: disaggregated, the decode pool's schedulers
// charge each sequence its state too: nemotron-h-8b at TP 2, SGLang,
// eight prefill instances feeding one decode instance, 1,024 + 1,024-
// token requests all at once: the decode scheduler's running sequences
// never hold more than its KV budget (1,902 at most, 60.7 of 62.1 GiB,
// with blocks set aside before each prefill as SGLang does, transfer.go;
// 1,928 and 61.6 GiB when a request took them on arrival; the per-token
// average had run 5,500, at least 175.7 GiB).
func TestDisagg_hybridState(t *testing.T) {
	sys, w := setup(t, "h100", "nemotron-h-8b", 2)
	sc := sim.Default()
	sc.TP = 2
	p := pricer(t, sys, w, sc)
	e, err := serve.Preset("sglang", sys.Device.Memory.Limit())
	if err != nil {
		t.Fatal(err)
	}
	e.MaxSeqs = 8192
	budget, state, growth := kvBudget(t, e, p)
	d := serve.Deployment{Serve: serve.Pool{Pricer: p, Engine: e, Instances: 8}, Decode: serve.Pool{Pricer: p, Engine: e, Instances: 1}}
	reqs := mustRequests(t, serve.Workload{N: 6000, Arrival: serve.AllAtOnce, Input: serve.Fixed(1024), Output: serve.Fixed(1024)})
	res := mustDeploy(t, d, reqs, serve.Options{SeriesPoints: 100000})
	most := 0
	for _, s := range res.Series {
		most = max(most, s.Running)
	}
	// A decode sequence arrives with its prompt's KV: state + 1,024 tokens.
	held := float64(most) * (state + 1024*growth)
	t.Logf("decode scheduler: most running %d, holding at least %.2f GiB of a %.2f GiB budget", most, held/(1<<30), budget/(1<<30))
	if held > budget {
		t.Errorf("%d decode sequences running hold at least %.2f GiB, more than the KV budget of %.2f GiB", most, held/(1<<30), budget/(1<<30))
	}
}
