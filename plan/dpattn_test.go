package plan_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/plan"
	"github.com/perfsim/perfsim/serve"
)

// TestDPAttentionDegrees: the group sizes a search tries with a TP
// degree are the d ≥ 2 within the GPUs whose EP, d × tp, the simulator
// accepts for the model (dividing its experts); a dense model gets none.
func TestDPAttentionDegrees(t *testing.T) {
	for _, tt := range []struct {
		model       string
		tp, maxGPUs int
		want        []int
	}{
		{"llama3-8b", 1, 64, nil},
		{"mixtral-8x7b", 1, 64, []int{2, 4, 8}}, // 8 experts
		{"mixtral-8x7b", 2, 64, []int{2, 4}},
		{"mixtral-8x7b", 4, 64, []int{2}},
		{"mixtral-8x7b", 8, 64, nil},
		{"mixtral-8x7b", 1, 4, []int{2, 4}}, // within the GPUs
		{"qwen3-30b-a3b", 1, 64, []int{2, 4, 8, 16, 32, 64}},
		{"qwen3-30b-a3b", 4, 64, []int{2, 4, 8, 16}},
		{"deepseek-v3", 8, 64, []int{2, 4, 8}},
		{"deepseek-v3", 8, 15, nil},
		// TP 3 divides none of Mixtral's heads' counts: refused whatever d.
		{"mixtral-8x7b", 3, 64, nil},
		{"mixtral-8x7b", 0, 64, nil},
	} {
		if got := plan.DPAttentionDegrees(shapeOf(t, tt.model), tt.tp, tt.maxGPUs); !slices.Equal(got, tt.want) {
			t.Errorf("%s at tp %d within %d GPUs: groups of %v, want %v", tt.model, tt.tp, tt.maxGPUs, got, tt.want)
		}
	}
}

// TestServe_dpAttention: a plan over data-parallel attention layouts of
// qwen3-30b-a3b on H100s (groups of 2 and 4 replicas of tp 1, of 2 of tp
// 2) at 40 req/s: each candidate's GPUs are its groups × replicas × tp
// and its EP replicas × tp, it is named as such, and every candidate's
// figures are those of serve run again on its deployment (its groups
// behind the round-robin router, each in lockstep), among them one of
// several groups.
func TestServe_dpAttention(t *testing.T) {
	deploy := deployer(t, "qwen3-30b-a3b")
	w := serve.Workload{N: 300, Arrival: serve.Poisson, Rate: 40, Seed: 1, Input: serve.Fixed(1024), Output: serve.Fixed(256)}
	var layouts []plan.Layout
	for _, g := range [][2]int{{1, 2}, {1, 4}, {2, 2}} {
		layouts = append(layouts, plan.Layout{TP: g[0], PP: 1, EP: g[0] * g[1], DType: model.BF16, DPAttention: g[1]})
	}
	q := plan.ServeQuery{Layouts: layouts, MaxGPUs: 16, Deploy: deploy, Workers: 2, Workload: w, SLO: plan.SLO{TTFTP99: 1, TPOTP99: 0.05}}
	p, err := plan.Serve(q)
	if err != nil {
		t.Fatal(err)
	}
	if p.Seen != 3 || len(p.Problems) > 0 || p.Best == nil {
		t.Fatalf("%d layouts seen (want 3), problems %v, best %v", p.Seen, p.Problems, p.Best)
	}
	t.Logf("best: %v = %d GPUs, TTFT p99 %.4g s, TPOT p99 %.4g s", p.Best, p.Best.GPUs, p.Best.TTFTP99, p.Best.TPOTP99)
	groups := 0
	for _, c := range p.All {
		d := c.DPAttention
		if c.GPUs != c.DP*d*c.TP || c.EP != d*c.TP || !strings.HasPrefix(c.String(), "dp-attn ") {
			t.Errorf("%v: %d GPUs, ep %d; want dp × dp-attention × tp = %d, ep %d, named dp-attn", c, c.GPUs, c.EP, c.DP*d*c.TP, d*c.TP)
		}
		groups = max(groups, c.DP)
		pr, e, err := deploy(c.Layout)
		if err != nil {
			t.Fatal(err)
		}
		w := w
		w.N = c.Requests
		reqs, err := plan.Requests(w)
		if err != nil {
			t.Fatal(err)
		}
		res, err := serve.RunDeployment(serve.Deployment{Serve: serve.Pool{Pricer: pr, Engine: e, Instances: c.DP * d}, DPAttention: true}, reqs, serve.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.TTFT.P99 != c.TTFTP99 || res.TPOT.P99 != c.TPOTP99 || 1/res.TPOT.Mean != c.TokensPerSecondPerUser || res.Overloaded != c.Overloaded {
			t.Errorf("%v: plan TTFT p99 %.6g s, TPOT p99 %.6g s; serve %.6g s, %.6g s", c, c.TTFTP99, c.TPOTP99, res.TTFT.P99, res.TPOT.P99)
		}
	}
	if groups < 2 {
		t.Errorf("no candidate of several groups (at most %d)", groups)
	}
}

// TestMaxRate_dpAttention: for a data-parallel attention pricer
// (qwen3-30b-a3b, groups of 2 replicas of tp 1, ep 2) MaxRate runs dp
// groups in lockstep (ServeReplicas: serve.RunDeployment's DPAttention
// over dp × 2 instances, where an ordinary pricer's replicas are
// serve.RunReplicas'); the rate found for two groups meets the SLO and
// 10% more does not, judged as MaxRate judges a rate (RateVerdict).
func TestMaxRate_dpAttention(t *testing.T) {
	deploy := deployer(t, "qwen3-30b-a3b")
	l := plan.Layout{TP: 1, PP: 1, EP: 2, DType: model.FP8, DPAttention: 2}
	p, e, err := deploy(l)
	if err != nil {
		t.Fatal(err)
	}
	w := serve.Workload{N: 300, Arrival: serve.Poisson, Rate: 1, Seed: 2, Input: serve.Fixed(1000), Output: serve.Fixed(200)}
	reqs, err := plan.Requests(w)
	if err != nil {
		t.Fatal(err)
	}
	got, err := plan.ServeReplicas(p, e, reqs, 2)
	if err != nil {
		t.Fatal(err)
	}
	want, err := serve.RunDeployment(serve.Deployment{Serve: serve.Pool{Pricer: p, Engine: e, Instances: 4}, DPAttention: true}, reqs, serve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Replicas != 4 || got.TTFT != want.TTFT || got.TPOT != want.TPOT {
		t.Errorf("ServeReplicas over 2 groups: %d replicas, TTFT %+v, TPOT %+v; want 4, %+v, %+v", got.Replicas, got.TTFT, got.TPOT, want.TTFT, want.TPOT)
	}
	slo := plan.SLO{TTFTP99: 0.5, TPOTP99: 0.03}
	r, res, err := plan.MaxRate(p, e, 2, w, slo, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	if r <= 0 || res == nil || !slo.Meets(res) || res.Replicas != 4 {
		t.Fatalf("MaxRate = %g (result %+v)", r, res)
	}
	over, n, err := plan.RateVerdict(p, e, 2, w, 1.1*r)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("max rate %.4g req/s (TTFT p99 %.3g s, TPOT p99 %.3g s); at 1.1× over %d requests: TTFT p99 %.3g s, TPOT p99 %.3g s, %s", r, res.TTFT.P99, res.TPOT.P99, n, over.TTFT.P99, over.TPOT.P99, over.Verdict)
	if over.Replicas != 4 || slo.Meets(over) {
		t.Errorf("1.1 × the max rate (%g req/s) over %d requests on %d replicas still meets the SLO", 1.1*r, n, over.Replicas)
	}
}
