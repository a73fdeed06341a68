package plan_test

import (
	"testing"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/plan"
	"github.com/perfsim/perfsim/serve"
)

// judged runs a deployment as the plan documents it judges one: over
// w's requests drawn as a plan draws them (plan.Requests), and again
// over twice as many while the run has not settled, up to
// plan.SettleFactor times w.N.
func judged(t *testing.T, w serve.Workload, run func([]serve.Request) (*serve.Result, error)) *serve.Result {
	t.Helper()
	n := w.N
	for {
		reqs, err := plan.Requests(w)
		if err != nil {
			t.Fatal(err)
		}
		res, err := run(reqs)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Unsettled || 2*w.N > plan.SettleFactor*n {
			return res
		}
		w.N *= 2
	}
}

// TestServe_bruteForce: on a small grid the plan's fewest replicas of
// each layout equal a brute-force search over every replica count (its
// pruning never skips the true optimum).
func TestServe_bruteForce(t *testing.T) {
	dep := deployer(t, "llama3-8b")
	layouts := []plan.Layout{{TP: 1, PP: 1, DType: model.BF16}, {TP: 2, PP: 1, DType: model.BF16}, {TP: 1, PP: 1, DType: model.BF16, MaxSeqs: 16}}
	const maxGPUs = 8
	for _, rate := range []float64{5, 20, 40, 70} {
		w := serve.Workload{N: 400, Arrival: serve.Poisson, Rate: rate, Seed: 3, Joint: serve.ShareGPT{}}
		slo := plan.SLO{TTFTP99: 0.3, TPOTP99: 0.02}
		p, err := plan.Serve(plan.ServeQuery{Layouts: layouts, MaxGPUs: maxGPUs, Deploy: dep, Workload: w, SLO: slo})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range layouts {
			pr, e, err := dep(l)
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			for dp := 1; dp*l.TP*l.PP <= maxGPUs; dp++ {
				res := judged(t, w, func(reqs []serve.Request) (*serve.Result, error) {
					return serve.RunDeployment(serve.Deployment{Serve: serve.Pool{Pricer: pr, Engine: e, Instances: dp}}, reqs, serve.Options{})
				})
				if slo.Meets(res) {
					want = dp
					break
				}
			}
			got := 0
			for _, c := range p.All {
				if c.Layout == l && c.Meets && (got == 0 || c.DP < got) {
					got = c.DP
				}
			}
			t.Logf("rate %g, %v: plan dp %d, brute force dp %d", rate, l, got, want)
			if got != want {
				t.Errorf("rate %g, %v: the plan's fewest replicas %d, brute force %d", rate, l, got, want)
			}
		}
	}
}

// TestServe_bruteForceDisagg: for one pair of layouts, the fewest GPUs
// of the disaggregated candidates the plan finds equal those of a
// brute-force search over every prefill and decode instance count.
func TestServe_bruteForceDisagg(t *testing.T) {
	dep := deployer(t, "llama3-8b")
	nic := model.Link{Bandwidth: 50e9, Latency: 5e-6, Efficiency: 1}
	link := func(int) (*serve.KVLink, error) { return &serve.KVLink{Intra: nic, Inter: nic, PerNode: 8}, nil }
	l := plan.Layout{TP: 1, PP: 1, DType: model.BF16}
	const maxGPUs = 8
	for _, c := range []struct {
		rate float64
		w    serve.Workload
	}{
		{10, serve.Workload{Joint: serve.ShareGPT{}}},
		{40, serve.Workload{Joint: serve.ShareGPT{}}},
		{90, serve.Workload{Joint: serve.ShareGPT{}}},
		{8, serve.Workload{Input: serve.Fixed(2000), Output: serve.Fixed(200)}},
		{15, serve.Workload{Input: serve.Fixed(2000), Output: serve.Fixed(200)}},
		{25, serve.Workload{Input: serve.Fixed(2000), Output: serve.Fixed(200)}},
	} {
		w := c.w
		w.N, w.Arrival, w.Rate, w.Seed = 400, serve.Poisson, c.rate, 3
		slo := plan.SLO{TTFTP99: 0.3, TPOTP99: 0.02}
		p, err := plan.Serve(plan.ServeQuery{Pairs: []plan.Pair{{Prefill: l, Decode: l}}, Link: link, MaxGPUs: maxGPUs, Deploy: dep, Workload: w, SLO: slo})
		if err != nil {
			t.Fatal(err)
		}
		pr, e, err := dep(l)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for x := 1; x < maxGPUs; x++ {
			for y := 1; x+y <= maxGPUs; y++ {
				if want > 0 && x+y >= want {
					break
				}
				k, _ := link(x + y)
				res := judged(t, w, func(reqs []serve.Request) (*serve.Result, error) {
					return serve.RunDeployment(serve.Deployment{Serve: serve.Pool{Pricer: pr, Engine: e, Instances: x},
						Decode: serve.Pool{Pricer: pr, Engine: e, Instances: y}, Link: k}, reqs, serve.Options{})
				})
				if slo.Meets(res) {
					want = x + y
				}
			}
		}
		got := 0
		if p.Best != nil {
			got = p.Best.GPUs
		}
		t.Logf("rate %g: plan %d GPUs (%v), brute force %d", c.rate, got, p.Best, want)
		if got != want {
			t.Errorf("rate %g: the plan's fewest GPUs %d, brute force %d", c.rate, got, want)
		}
	}
}
