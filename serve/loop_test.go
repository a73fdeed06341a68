package serve_test

import (
	"math"
	"testing"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

func mustServe(t testing.TB, p *sim.Pricer, e serve.Engine, w serve.Workload) *serve.Result {
	t.Helper()
	reqs, err := w.Requests()
	if err != nil {
		t.Fatal(err)
	}
	res, err := serve.Run(p, e, reqs, serve.Options{Records: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func relErr(got, want float64) float64 { return math.Abs(got/want - 1) }

// TestStatic_equalsSimulate: static batching of B requests queued at
// t = 0 reproduces sim.Run's TTFT, TPOT and E2E within 0.5%.
func TestStatic_equalsSimulate(t *testing.T) {
	for _, tt := range []struct {
		name, hw, model    string
		tp, batch, in, out int
	}{
		{"llama3-8b-h100-b8", "h100", "llama3-8b", 1, 8, 512, 128},
		{"llama3-70b-h100-tp4-b32", "h100", "llama3-70b", 4, 32, 2048, 256},
		{"llama3-8b-a100-b1", "a100", "llama3-8b", 1, 1, 128, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sys, w := setup(t, tt.hw, tt.model, tt.tp)
			sc := sim.Default()
			sc.Batch, sc.Input, sc.Output, sc.TP = tt.batch, tt.in, tt.out, tt.tp
			// A static batch is prefilled in one pass: no token budget
			// chunks it (simulate's default budget would).
			sc.MaxNumTokens = tt.batch * tt.in
			rep, err := sim.Run(sys, w, sc)
			if err != nil {
				t.Fatal(err)
			}
			e, _ := serve.Preset("trtllm", sys.Device.Memory.Limit())
			e.Static, e.MaxSeqs = true, tt.batch
			res := mustServe(t, pricer(t, sys, w, sc), e, serve.Workload{N: tt.batch, Arrival: serve.AllAtOnce,
				Input: serve.Fixed(tt.in), Output: serve.Fixed(tt.out)})
			equalsSimulate(t, res, rep.Inference, "simulate")
		})
	}
}

// equalsSimulate checks a static serve run's mean TTFT, TPOT and E2E
// against simulate's report of the same batch (named by what) within 0.5%.
func equalsSimulate(t *testing.T, res *serve.Result, in *sim.InferenceResult, what string) {
	t.Helper()
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"TTFT", res.TTFT.Mean, float64(in.TTFT)},
		{"TPOT", res.TPOT.Mean, float64(in.TPOT)},
		{"E2E", res.E2E.Mean, float64(in.E2E)},
	} {
		if c.want == 0 && c.got == 0 {
			continue
		}
		t.Logf("%s: serve %v, %s %v (%+.4f%%)", c.name, model.Seconds(c.got), what, model.Seconds(c.want), 100*(c.got/c.want-1))
		if relErr(c.got, c.want) > 0.005 {
			t.Errorf("%s = %v, %s %v (%+.3f%%)", c.name, model.Seconds(c.got), what, model.Seconds(c.want), 100*(c.got/c.want-1))
		}
	}
}

// TestMD1: one request at a time (MaxSeqs 1), Poisson arrivals and fixed
// lengths make an M/D/1 queue; the mean wait (arrival to start of
// service) is ρ·S/(2(1−ρ)) (Pollaczek–Khinchine with a deterministic
// service time S). Averaged over 10 seeds of 200,000 requests, within
// 3%; the spread over seeds is reported and must itself leave the
// theory inside 3 standard errors.
func TestMD1(t *testing.T) {
	if testing.Short() {
		t.Skip("long: 2 million simulated requests")
	}
	sys, w := setup(t, "h100", "llama3-8b", 1)
	p := pricer(t, sys, w, sim.Default())
	e, _ := serve.Preset("vllm", sys.Device.Memory.Limit())
	e.MaxSeqs = 1
	const in, out = 256, 1
	// The service time: one run of a single request.
	one := mustServe(t, p, e, serve.Workload{N: 1, Arrival: serve.AllAtOnce, Input: serve.Fixed(in), Output: serve.Fixed(out)})
	S := one.E2E.Mean
	for _, rho := range []float64{0.5, 0.8} {
		want := rho * S / (2 * (1 - rho))
		var means []float64
		for seed := range uint64(10) {
			res := mustServe(t, p, e, serve.Workload{N: 200_000, Arrival: serve.Poisson, Rate: rho / S, Seed: seed,
				Input: serve.Fixed(in), Output: serve.Fixed(out)})
			means = append(means, res.Queue.Mean)
			if res.E2E.Max-res.Queue.Max > S*(1+1e-9) {
				t.Fatalf("service time varies: %g s > %g s", res.E2E.Max-res.Queue.Max, S)
			}
		}
		var m, v float64
		for _, x := range means {
			m += x
		}
		m /= float64(len(means))
		for _, x := range means {
			v += (x - m) * (x - m)
		}
		se := math.Sqrt(v/float64(len(means)-1)) / math.Sqrt(float64(len(means)))
		t.Logf("ρ=%.1f: mean wait %.4g s, M/D/1 %.4g s (%+.2f%%, standard error %.2f%%)", rho, m, want, 100*(m/want-1), 100*se/want)
		if relErr(m, want) > 0.03 {
			t.Errorf("ρ=%.1f: mean wait %g s, M/D/1 says %g s (%.2f%% off)", rho, m, want, 100*(m/want-1))
		}
		if math.Abs(m-want) > 3*se+0.01*want {
			t.Errorf("ρ=%.1f: mean wait %g s is %.1f standard errors from M/D/1's %g s", rho, m, math.Abs(m-want)/se, want)
		}
	}
}

// TestInvariants runs a loaded mixed workload on every preset and checks
// the loop's bookkeeping: time never goes back within a request, every
// request ends exactly once, Little's law holds exactly (the integrated
// requests in the system equal throughput × mean time in system).
func TestInvariants(t *testing.T) {
	sys, w := setup(t, "h100", "llama3-8b", 1)
	p := pricer(t, sys, w, sim.Default())
	for _, name := range serve.Engines() {
		for _, arr := range []serve.Arrival{serve.Poisson, serve.Gamma, serve.Constant, serve.AllAtOnce} {
			t.Run(name+"-"+arr.String(), func(t *testing.T) {
				e, err := serve.Preset(name, sys.Device.Memory.Limit())
				if err != nil {
					t.Fatal(err)
				}
				e.KVTokens = 20000 // small enough to preempt
				res := mustServe(t, p, e, serve.Workload{N: 400, Arrival: arr, Rate: 30, CV: 2, Seed: 7,
					Input: serve.LogNormal{Mu: 600, Sigma: 500, Min: 4, Max: 4000}, Output: serve.Uniform{Min: 1, Max: 600}})
				for _, m := range res.Requests {
					if !(m.Arrival <= m.Start && m.Start <= m.FirstToken && m.FirstToken <= m.Finish) {
						t.Fatalf("request %d: arrival %v, start %v, first token %v, finish %v", m.ID, m.Arrival, m.Start, m.FirstToken, m.Finish)
					}
				}
				little := res.RequestsPerSecond * res.E2E.Mean
				if relErr(res.MeanInSystem, little) > 1e-9 {
					t.Errorf("Little's law: L = %.12g, λW = %.12g", res.MeanInSystem, little)
				}
				if res.Iterations == 0 || res.Utilization <= 0 || res.Utilization > 1+1e-12 {
					t.Errorf("%d iterations, utilization %g", res.Iterations, res.Utilization)
				}
			})
		}
	}
}

// TestLowRate: one request at a time at a low rate sees one prefill as
// its TTFT and a batch-1 decode step as its TPOT (with AsyncOutput the
// first token comes a decode step later, the last at once). vLLM's
// decode step launches its LM head outside the graph, and V1's its
// attention too (piecewise graphs): simulate's fully graphed step plus
// what launching those adds, which the pricer gives as the difference of
// the launches of one decode token (the same at every context: launch
// overheads only).
func TestLowRate(t *testing.T) {
	sys, w := setup(t, "h100", "llama3-8b", 1)
	sc := sim.Default()
	sc.Batch, sc.Input, sc.Output = 1, 1024, 64
	rep, err := sim.Run(sys, w, sc)
	if err != nil {
		t.Fatal(err)
	}
	p := pricer(t, sys, w, sc)
	one := sim.Iteration{Decode: []int{1024}, Sampled: 1}
	graphed := p.Price(&one).Time
	one.Head = sim.HeadEager // vLLM's logits, outside its graphs
	v0 := p.Price(&one).Time
	one.Piecewise = true
	v1 := p.Price(&one).Time
	if !(v1 > v0 && v0 > graphed) {
		t.Errorf("a decode token in piecewise graphs %v, in one graph but the head %v, all in one graph %v; want decreasing", v1, v0, graphed)
	}
	for _, name := range serve.Engines() {
		e, _ := serve.Preset(name, sys.Device.Memory.Limit())
		e.MaxTokens = 4096 // one prefill iteration
		res := mustServe(t, pricer(t, sys, w, sc), e, serve.Workload{N: 50, Arrival: serve.Poisson, Rate: 0.05, Seed: 1,
			Input: serve.Fixed(1024), Output: serve.Fixed(64)})
		// Host time per iteration of one request.
		host := float64(e.StepOverhead + e.SeqOverhead)
		ttft, tpot := float64(rep.Inference.TTFT)+host, float64(rep.Inference.TPOT)+host
		switch e.Capture {
		case serve.CaptureVLLMV1:
			tpot += float64(v1 - graphed) // the prefill, 1024 tokens, is above its 512
		case serve.CaptureVLLM06:
			tpot += float64(v0 - graphed)
		}
		if e.AsyncOutput {
			// The first token reaches the client with the end of the
			// first decode step; the last at once (no step follows).
			ttft, tpot = ttft+tpot, tpot*(64-2)/(64-1)
		}
		if relErr(res.TTFT.P50, ttft) > 0.01 || relErr(res.TPOT.P50, tpot) > 0.01 {
			t.Errorf("%s: TTFT p50 %v, TPOT p50 %v; want %v and %v (one prefill %v, batch-1 decode %v)", name,
				model.Seconds(res.TTFT.P50), model.Seconds(res.TPOT.P50), model.Seconds(ttft), model.Seconds(tpot), rep.Inference.TTFT, rep.Inference.TPOT)
		}
		if res.Overloaded {
			t.Errorf("%s: %s", name, res.Verdict)
		}
	}
}

// TestOverloaded: far past capacity the run says so; well below it, it
// does not.
func TestOverloaded(t *testing.T) {
	sys, w := setup(t, "h100", "llama3-8b", 1)
	p := pricer(t, sys, w, sim.Default())
	e, _ := serve.Preset("vllm", sys.Device.Memory.Limit())
	wl := serve.Workload{N: 3000, Arrival: serve.Poisson, Seed: 3, Input: serve.Fixed(1000), Output: serve.Fixed(200)}
	wl.Rate = 200
	if res := mustServe(t, p, e, wl); !res.Overloaded {
		t.Errorf("200 req/s served at %.3g req/s without the overloaded verdict", res.RequestsPerSecond)
	} else {
		t.Log(res.Verdict)
	}
	wl.Rate = 5
	if res := mustServe(t, p, e, wl); res.Overloaded {
		t.Errorf("5 req/s: %s", res.Verdict)
	}
}

// TestDeterministic: the same seed gives the same requests and metrics.
func TestDeterministic(t *testing.T) {
	sys, w := setup(t, "h100", "llama3-8b", 1)
	p := pricer(t, sys, w, sim.Default())
	e, _ := serve.Preset("sglang", sys.Device.Memory.Limit())
	wl := serve.Workload{N: 300, Arrival: serve.Gamma, Rate: 20, CV: 3, Seed: 11,
		Input: serve.Normal{Mu: 500, Sigma: 200, Min: 1, Max: 2000}, Output: serve.LogNormal{Mu: 200, Sigma: 150, Min: 1, Max: 1000}}
	a, b := mustServe(t, p, e, wl), mustServe(t, p, e, wl)
	for i := range a.Requests {
		if a.Requests[i] != b.Requests[i] {
			t.Fatalf("request %d: %+v then %+v", i, a.Requests[i], b.Requests[i])
		}
	}
}

// TestReplicas: dp replicas behind a round-robin router serve dp times
// the load at the latencies of one replica under its share (exactly,
// for constant arrivals, whose round-robin shares are again constant),
// and Little's law holds over the system.
func TestReplicas(t *testing.T) {
	sys, w := setup(t, "h100", "llama3-8b", 1)
	p := pricer(t, sys, w, sim.Default())
	e, _ := serve.Preset("vllm", sys.Device.Memory.Limit())
	one := mustServe(t, p, e, serve.Workload{N: 500, Arrival: serve.Constant, Rate: 10, Input: serve.Fixed(700), Output: serve.Fixed(150)})
	reqs, _ := (&serve.Workload{N: 2000, Arrival: serve.Constant, Rate: 40, Input: serve.Fixed(700), Output: serve.Fixed(150)}).Requests()
	four, err := serve.RunReplicas(p, e, reqs, 4, serve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if relErr(four.TTFT.P99, one.TTFT.P99) > 1e-9 || relErr(four.TPOT.Mean, one.TPOT.Mean) > 1e-9 {
		t.Errorf("4 replicas at 40 req/s: TTFT p99 %g, TPOT %g; one at 10 req/s: %g, %g", four.TTFT.P99, four.TPOT.Mean, one.TTFT.P99, one.TPOT.Mean)
	}
	if relErr(four.RequestsPerSecond, 4*one.RequestsPerSecond) > 0.01 {
		t.Errorf("throughput %g req/s, want 4 × %g", four.RequestsPerSecond, one.RequestsPerSecond)
	}
	if relErr(four.MeanInSystem, four.RequestsPerSecond*four.E2E.Mean) > 1e-9 {
		t.Errorf("Little's law: L = %g, λW = %g", four.MeanInSystem, four.RequestsPerSecond*four.E2E.Mean)
	}
	if g := four.Goodput(0, 0); relErr(g, four.RequestsPerSecond) > 1e-12 {
		t.Errorf("goodput without SLOs %g, throughput %g", g, four.RequestsPerSecond)
	}
	if g := four.Goodput(model.Seconds(four.TTFT.P50), 0); g >= four.RequestsPerSecond {
		t.Errorf("goodput under a median TTFT SLO %g ≥ throughput %g", g, four.RequestsPerSecond)
	}
}

// TestPipeline: two pipeline stages with micro-batches in flight serve
// more than one stage-less replica of the same GPUs would if pipelining
// only added latency, and about twice a single pass at a time: at a load
// beyond one micro-batch's capacity, PP 2 sustains more than 1.6× the
// throughput of the same replica without overlap.
func TestPipeline(t *testing.T) {
	sys, w := setup(t, "h100", "llama3-8b", 2)
	sc := sim.Default()
	sc.PP = 2
	p := pricer(t, sys, w, sc)
	e, _ := serve.Preset("vllm", sys.Device.Memory.Limit())
	reqs, _ := (&serve.Workload{N: 600, Arrival: serve.AllAtOnce, Input: serve.Fixed(512), Output: serve.Fixed(128)}).Requests()
	e.MaxSeqs = 64
	pipe, err := serve.RunReplicas(p, e, reqs, 1, serve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	kv, _, _ := e.KVCapacity(p)
	e.KVTokens = kv
	flat, err := serve.Run(p, e, reqs, serve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := pipe.OutputTokensPerSecond / flat.OutputTokensPerSecond; r < 1.6 || r > 2.05 {
		t.Errorf("PP 2 with micro-batches: %.0f tok/s, one at a time %.0f tok/s (×%.2f, want 1.6–2)", pipe.OutputTokensPerSecond, flat.OutputTokensPerSecond, r)
	}
}

// TestMultiStep: with K scheduler steps a decode batch is fixed for K
// steps; a request whose last token comes early keeps its slot (its
// extra tokens computed and discarded) and completes with the batch's
// last step (vLLM v0.6 multi-step). With AsyncOutput a token reaches the
// client when the next iteration ends, or at once when none follows.
func TestMultiStep(t *testing.T) {
	sys, w := setup(t, "h100", "llama3-8b", 1)
	p := pricer(t, sys, w, sim.Default())
	const in, k = 100, 4
	prefill := float64(p.Price(&sim.Iteration{Prefill: []sim.Chunk{{Tokens: in}}, Sampled: 1}).Time)
	// A decode step as vLLM v0.6.0 runs it: one graph, the LM head outside.
	step := func(j int) float64 {
		return float64(p.Price(&sim.Iteration{Decode: []int{in + j}, Sampled: 1, Head: sim.HeadEager}).Time)
	}
	block := step(0) + step(1) + step(2) + step(3)
	for _, c := range []struct {
		name             string
		out              int
		async            bool
		wantFirst, wantE float64
	}{
		{"last token mid-block", 3, false, prefill, prefill + block},
		{"last token at the block's end", 5, false, prefill, prefill + block},
		{"async output", 3, true, prefill + step(0), prefill + block},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, _ := serve.Preset("vllm-0.6", sys.Device.Memory.Limit())
			e.SchedulerSteps, e.AsyncOutput, e.SeqOverhead = k, c.async, 0
			res := mustServe(t, p, e, serve.Workload{N: 1, Arrival: serve.AllAtOnce, Input: serve.Fixed(in), Output: serve.Fixed(c.out)})
			m := res.Requests[0]
			if relErr(float64(m.FirstToken), c.wantFirst) > 1e-12 || relErr(float64(m.Finish), c.wantE) > 1e-12 {
				t.Errorf("first token %v, finish %v; want %v and %v", m.FirstToken, m.Finish, model.Seconds(c.wantFirst), model.Seconds(c.wantE))
			}
			if res.Iterations != 1+k {
				t.Errorf("%d iterations, want a prefill and %d decode steps", res.Iterations, k)
			}
		})
	}
	// Under load: the bookkeeping holds (Little's law, time order).
	e, _ := serve.Preset("vllm-0.6", sys.Device.Memory.Limit())
	e.SchedulerSteps, e.KVTokens = 10, 20000
	res := mustServe(t, p, e, serve.Workload{N: 400, Arrival: serve.Poisson, Rate: 30, Seed: 7,
		Input: serve.LogNormal{Mu: 600, Sigma: 500, Min: 4, Max: 4000}, Output: serve.Uniform{Min: 1, Max: 600}})
	for _, m := range res.Requests {
		if !(m.Arrival <= m.Start && m.Start <= m.FirstToken && m.FirstToken <= m.Finish) {
			t.Fatalf("request %d: arrival %v, start %v, first token %v, finish %v", m.ID, m.Arrival, m.Start, m.FirstToken, m.Finish)
		}
	}
	if little := res.RequestsPerSecond * res.E2E.Mean; relErr(res.MeanInSystem, little) > 1e-9 {
		t.Errorf("Little's law: L = %.12g, λW = %.12g", res.MeanInSystem, little)
	}
}
