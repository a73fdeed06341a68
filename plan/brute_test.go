package plan_test

import (
	"testing"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/plan"
	"github.com/perfsim/perfsim/serve"
)

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
		reqs, err := w.Requests()
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
				res, err := serve.RunDeployment(serve.Deployment{Serve: serve.Pool{Pricer: pr, Engine: e, Instances: dp}}, reqs, serve.Options{})
				if err != nil {
					t.Fatal(err)
				}
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
