package plan_test

import (
	"math"
	"testing"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/plan"
	"github.com/perfsim/perfsim/serve"
)

// TestServe_disagg searches aggregated against disaggregated layouts:
// every disaggregated candidate it reports is reproduced by a full
// simulation of its pools (serve.RunDeployment), the best is the
// feasible candidate with the fewest GPUs, and a pair whose instances
// need more than MaxGPUs is pruned with its reason.
func TestServe_disagg(t *testing.T) {
	deploy := deployer(t, "llama3-8b")
	nic := model.Link{Bandwidth: 50e9, Latency: 5e-6, Efficiency: 1}
	var pairs []plan.Pair
	for _, p := range []int{1, 2} {
		for _, d := range []int{1, 2} {
			pairs = append(pairs, plan.Pair{Prefill: plan.Layout{TP: p, PP: 1, DType: model.BF16}, Decode: plan.Layout{TP: d, PP: 1, DType: model.BF16}})
		}
	}
	pairs = append(pairs, plan.Pair{Prefill: plan.Layout{TP: 8, PP: 1, DType: model.BF16}, Decode: plan.Layout{TP: 8, PP: 1, DType: model.BF16}})
	wl := serve.Workload{N: 600, Arrival: serve.Poisson, Rate: 30, Seed: 1, Input: serve.Fixed(2000), Output: serve.Fixed(200)}
	q := plan.ServeQuery{Layouts: []plan.Layout{{TP: 1, PP: 1, DType: model.BF16}}, Pairs: pairs, MaxGPUs: 8, Deploy: deploy, Workers: 2,
		Link:     func(int) (*serve.KVLink, error) { return &serve.KVLink{Intra: nic, Inter: nic, PerNode: 8}, nil },
		Workload: wl, SLO: plan.SLO{TTFTP99: 0.5, TPOTP99: 0.03}}
	p, err := plan.Serve(q)
	if err != nil {
		t.Fatal(err)
	}
	if p.Seen != 6 || len(p.Problems) != 1 {
		t.Errorf("%d seen, problems %v; want 6 and the tp8 + tp8 pair pruned", p.Seen, p.Problems)
	}
	reqs, _ := plan.Requests(wl)
	n := 0
	for _, c := range p.All {
		if c.Meets && p.Best != nil && c.GPUs < p.Best.GPUs {
			t.Errorf("%v meets the SLO with %d GPUs, fewer than the best %v", c, c.GPUs, p.Best)
		}
		d := c.Disagg
		if d.Prefill == 0 {
			continue
		}
		n++
		pp, pe, _ := deploy(plan.Layout{TP: d.PrefillTP, PP: d.PrefillPP, DType: c.DType})
		dp, de, _ := deploy(plan.Layout{TP: d.DecodeTP, PP: d.DecodePP, DType: c.DType})
		link, _ := q.Link(c.GPUs)
		res, err := serve.RunDeployment(serve.Deployment{Serve: serve.Pool{Pricer: pp, Engine: pe, Instances: d.Prefill},
			Decode: serve.Pool{Pricer: dp, Engine: de, Instances: d.Decode}, Link: link}, reqs, serve.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.TTFT.P99 != c.TTFTP99 || res.TPOT.P99 != c.TPOTP99 || c.GPUs != d.Prefill*d.PrefillTP*d.PrefillPP+d.Decode*d.DecodeTP*d.DecodePP ||
			math.Abs(c.TokensPerSecondPerGPU*float64(c.GPUs)/plan.SteadyTokens(wl.Rate, res)-1) > 1e-12 || c.Meets != q.SLO.Meets(res) {
			t.Errorf("%v: reported TTFT p99 %g, TPOT p99 %g, %d GPUs; simulated %g, %g", c, c.TTFTP99, c.TPOTP99, c.GPUs, res.TTFT.P99, res.TPOT.P99)
		}
	}
	if n == 0 {
		t.Fatalf("no disaggregated candidate; all: %+v", p.All)
	}
	t.Logf("best %v = %d GPUs; %d candidates (%d disaggregated), %d simulations", p.Best, p.Best.GPUs, len(p.All), n, p.Simulated)
}
