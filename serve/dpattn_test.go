package serve_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// dsScenario is deepseek-v3 in fp8 on dp × tp H200s, the experts over
// ep of them.
func dsScenario(dp, tp, ep int) sim.Scenario {
	sc := sim.Default()
	sc.TP, sc.DP, sc.EP = tp, dp, ep
	sc.Weights, sc.Act, sc.KV = model.FP8, model.BF16, model.BF16
	return sc
}

func deploy(t *testing.T, p *sim.Pricer, e serve.Engine, dp int, w serve.Workload, dpAttn bool) *serve.Result {
	t.Helper()
	reqs, err := w.Requests()
	if err != nil {
		t.Fatal(err)
	}
	res, err := serve.RunDeployment(serve.Deployment{Serve: serve.Pool{Pricer: p, Engine: e, Instances: dp}, DPAttention: dpAttn}, reqs, serve.Options{Records: true, ITL: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// same reports the first difference between two results' figures
// (compared exactly: the runs must agree byte for byte).
func same(a, b *serve.Result) string {
	for _, c := range []struct {
		name string
		x, y float64
	}{
		{"TTFT mean", a.TTFT.Mean, b.TTFT.Mean}, {"TTFT p99", a.TTFT.P99, b.TTFT.P99},
		{"TPOT mean", a.TPOT.Mean, b.TPOT.Mean}, {"TPOT p99", a.TPOT.P99, b.TPOT.P99},
		{"E2E mean", a.E2E.Mean, b.E2E.Mean}, {"duration", float64(a.Duration), float64(b.Duration)},
		{"busy", float64(a.BusyTime), float64(b.BusyTime)}, {"in system", a.MeanInSystem, b.MeanInSystem},
		{"iterations", float64(a.Iterations), float64(b.Iterations)}, {"preemptions", float64(a.Preemptions), float64(b.Preemptions)},
		{"KV tokens", float64(a.KVTokens), float64(b.KVTokens)},
	} {
		if c.x != c.y {
			return c.name
		}
	}
	for i := range a.Requests {
		if a.Requests[i] != b.Requests[i] {
			return "request records"
		}
	}
	return ""
}

// TestDPAttention_oneReplica: a data-parallel attention group of one
// replica is today's serve, byte for byte, where the layouts coincide:
// a dense model, and deepseek-v3 with its experts within the TP group
// (tp 8, ep 8).
func TestDPAttention_oneReplica(t *testing.T) {
	for _, tt := range []struct {
		name, hw, mdl string
		sc            sim.Scenario
		rate          float64
	}{
		{"llama3-8b", "h100", "llama3-8b", sim.Default(), 20},
		{"deepseek-v3-tp8-ep8", "h200", "deepseek-v3", dsScenario(1, 8, 8), 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sys, w := setup(t, tt.hw, tt.mdl, max(tt.sc.TP, 1))
			e, _ := serve.Preset("sglang", sys.Device.Memory.Limit())
			p := pricer(t, sys, w, e.Scenario(tt.sc))
			wl := serve.Workload{N: 300, Arrival: serve.Poisson, Rate: tt.rate, Seed: 3, Input: serve.Uniform{Min: 64, Max: 1024}, Output: serve.Uniform{Min: 16, Max: 256}}
			a, b := deploy(t, p, e, 1, wl, false), deploy(t, p, e, 1, wl, true)
			if d := same(a, b); d != "" {
				t.Errorf("one replica with data-parallel attention differs from serve in %s", d)
			}
		})
	}
}

// TestDPAttention_static: a static batch of one request per replica, dp
// 8 × tp 1 with the experts over all 8 GPUs, is simulate's --dp 8 --ep 8
// batch 1 (every replica alike): TTFT, TPOT and E2E within 0.5%.
func TestDPAttention_static(t *testing.T) {
	const dp, in, out = 8, 512, 64
	sys, w := setup(t, "h200", "deepseek-v3", dp)
	sc := dsScenario(dp, 1, dp)
	sc.Batch, sc.Input, sc.Output, sc.MaxNumTokens = 1, in, out, in
	rep, err := sim.Run(sys, w, sc)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := serve.Preset("trtllm", sys.Device.Memory.Limit())
	e.Static, e.MaxSeqs = true, 1
	p := pricer(t, sys, w, sc)
	res := deploy(t, p, e, dp, serve.Workload{N: dp, Arrival: serve.AllAtOnce, Input: serve.Fixed(in), Output: serve.Fixed(out)}, true)
	equalsSimulate(t, res, rep.Inference, fmt.Sprintf("simulate --dp %d --ep %d", dp, dp))
}

// TestDPAttention_idleReplica: one request on a group of 8 replicas: the
// other 7 idle, yet its iterations pay the MoE layers' all-to-alls and
// experts (PriceGroup of its prefill beside 7 idle batches), and cost
// less than 8 such requests at once (the experts see 8× the tokens) but
// more than nothing.
func TestDPAttention_idleReplica(t *testing.T) {
	const dp, in = 8, 512
	sys, w := setup(t, "h200", "deepseek-v3", dp)
	sc := dsScenario(dp, 1, dp)
	e, _ := serve.Preset("trtllm", sys.Device.Memory.Limit())
	e.Static, e.MaxSeqs = true, 1
	p := pricer(t, sys, w, sc)
	one := deploy(t, p, e, dp, serve.Workload{N: 1, Arrival: serve.AllAtOnce, Input: serve.Fixed(in), Output: serve.Fixed(2)}, true)
	all := deploy(t, p, e, dp, serve.Workload{N: dp, Arrival: serve.AllAtOnce, Input: serve.Fixed(in), Output: serve.Fixed(2)}, true)
	its := make([]sim.Iteration, dp)
	its[0] = sim.Iteration{Prefill: []sim.Chunk{{Tokens: in}}, Sampled: 1}
	want := p.PriceGroup(its).Time
	alone := its[0]
	if got := one.TTFT.Mean; relErr(got, float64(want)) > 1e-9 {
		t.Errorf("one request's TTFT %v, want its prefill beside 7 idle replicas %v", model.Seconds(got), want)
	}
	if !(one.TTFT.Mean < all.TTFT.Mean) || !(one.TTFT.Mean > 0) {
		t.Errorf("TTFT of one request alone %v, of 8 at once %v: want 0 < alone < 8", model.Seconds(one.TTFT.Mean), model.Seconds(all.TTFT.Mean))
	}
	if got := p.Price(&alone).Time; !(want < got) {
		t.Errorf("prefill beside 7 idle replicas %v, not below all 8 alike %v", want, got)
	}
}

// TestDPAttention_load: under load on dp 4 × tp 2 (ep 8): Little's law
// holds, every request is served, the same inputs give the same results,
// and it differs from 4 independent replicas (the MoE couples them).
func TestDPAttention_load(t *testing.T) {
	const dp = 4
	sys, w := setup(t, "h200", "deepseek-v3", 8)
	e, _ := serve.Preset("sglang", sys.Device.Memory.Limit())
	p := pricer(t, sys, w, e.Scenario(dsScenario(dp, 2, 8)))
	wl := serve.Workload{N: 400, Arrival: serve.Poisson, Rate: 8, Seed: 7, Input: serve.Uniform{Min: 64, Max: 2048}, Output: serve.Uniform{Min: 16, Max: 512}}
	a, b := deploy(t, p, e, dp, wl, true), deploy(t, p, e, dp, wl, true)
	if d := same(a, b); d != "" {
		t.Errorf("two runs differ in %s", d)
	}
	if l := a.RequestsPerSecond * a.E2E.Mean; relErr(a.MeanInSystem, l) > 1e-9 {
		t.Errorf("Little's law: L = %.12g, λW = %.12g", a.MeanInSystem, l)
	}
	if len(a.Requests) != wl.N {
		t.Errorf("%d requests served, want %d", len(a.Requests), wl.N)
	}
	for _, m := range a.Requests {
		if !(m.TTFT() > 0) || m.Finish < m.FirstToken {
			t.Fatalf("request %d: TTFT %v, finish %v before first token %v", m.ID, m.TTFT(), m.Finish, m.FirstToken)
		}
	}
}

// TestDPAttention_groups: G groups of a data-parallel attention layout
// behind the round-robin router (Instances = G × the pricer's
// Replicas()) serve each request exactly as its group alone serves the
// requests it is sent (request i to group i mod G): qwen3-30b-a3b on
// H100s, groups of 2 replicas of tp 1 (ep 2), 1, 2 and 3 groups; and
// instances not a multiple of the group are refused.
func TestDPAttention_groups(t *testing.T) {
	const d = 2
	sys, w := setup(t, "h100", "qwen3-30b-a3b", d)
	e, err := serve.DPAttentionPreset("sglang", sys.Device.Memory.Limit(), d, 1)
	if err != nil {
		t.Fatal(err)
	}
	sc := sim.Default()
	sc.DP, sc.EP = d, d
	p := pricer(t, sys, w, e.Scenario(sc))
	wl := serve.Workload{N: 90, Arrival: serve.Poisson, Rate: 12, Seed: 5, Input: serve.Uniform{Min: 64, Max: 1024}, Output: serve.Uniform{Min: 16, Max: 128}}
	reqs, err := wl.Requests()
	if err != nil {
		t.Fatal(err)
	}
	run := func(rs []serve.Request, instances int) (*serve.Result, error) {
		return serve.RunDeployment(serve.Deployment{Serve: serve.Pool{Pricer: p, Engine: e, Instances: instances}, DPAttention: true}, rs, serve.Options{Records: true})
	}
	for _, g := range []int{1, 2, 3} {
		all, err := run(reqs, g*d)
		if err != nil {
			t.Fatal(err)
		}
		if all.Replicas != g*d || len(all.Requests) != len(reqs) {
			t.Fatalf("%d groups: %d replicas, %d requests", g, all.Replicas, len(all.Requests))
		}
		byID := map[int]serve.Metrics{}
		for _, m := range all.Requests {
			byID[m.ID] = m
		}
		for k := range g {
			var share []serve.Request
			for i := k; i < len(reqs); i += g {
				share = append(share, reqs[i])
			}
			alone, err := run(share, d)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range alone.Requests {
				if byID[m.ID] != m {
					t.Fatalf("%d groups, group %d: request %d %+v, alone %+v", g, k, m.ID, byID[m.ID], m)
				}
			}
		}
	}
	if _, err := run(reqs, 3); err == nil || !strings.Contains(err.Error(), "--ep") {
		t.Errorf("3 instances of groups of 2: %v, want a refusal naming --ep", err)
	}
}

// TestDPAttentionPreset: SGLang's preset under data-parallel attention
// is made at the world's TP size with SGLangDPAttention's changes; the
// other engines' is PresetFor at the replica's TP. Every preset can run
// the layout (CheckDPAttentionEngine); multi-step decode cannot.
func TestDPAttentionPreset(t *testing.T) {
	const capacity = 140 << 30
	for _, name := range serve.Engines() {
		got, err := serve.DPAttentionPreset(name, capacity, 4, 2)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := serve.PresetFor(name, capacity, 2)
		if name == "sglang" {
			want, _ = serve.PresetFor(name, capacity, 8)
			serve.SGLangDPAttention(&want)
		}
		if got.Name != want.Name || got.MaxTokens != want.MaxTokens || got.MemFraction != want.MemFraction || got.GraphMaxBatch != want.GraphMaxBatch || got.AsyncOutput != want.AsyncOutput {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
		if err := serve.CheckDPAttentionEngine(got); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := serve.DPAttentionPreset("nope", capacity, 2, 1); err == nil {
		t.Error("an unknown engine was accepted")
	}
	e, _ := serve.Preset("vllm-0.6", capacity)
	e.SchedulerSteps = 8
	if err := serve.CheckDPAttentionEngine(e); err == nil || !strings.Contains(err.Error(), "multi-step") {
		t.Errorf("8 scheduler steps: %v", err)
	}
}
