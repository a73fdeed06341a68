package plan_test

import (
	"testing"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/plan"
	"github.com/perfsim/perfsim/serve"
)

// TestServe_costObjective: with a price, every candidate carries its cost
// per hour and per million tokens, and the cost objective's answer is the
// cheapest candidate that meets the SLO, where the GPU objective's is the
// one with the fewest GPUs. The price here makes fp8 GPU-hours dear (as a
// licence for a precision might), so the two answers differ: both precisions
// meet the SLO on one GPU, fp8 the faster per user (both carry the load:
// the same tokens per second per GPU).
func TestServe_costObjective(t *testing.T) {
	var layouts []plan.Layout
	for _, tp := range []int{1, 2} {
		for _, d := range []model.DType{model.BF16, model.FP8} {
			layouts = append(layouts, plan.Layout{TP: tp, PP: 1, DType: d})
		}
	}
	price := func(c plan.Candidate, res *serve.Result) (float64, error) {
		per := 2.0
		if c.DType == model.FP8 {
			per = 10
		}
		return per * float64(c.GPUs) * (1 + res.Utilization), nil
	}
	q := plan.ServeQuery{Layouts: layouts, MaxGPUs: 8, Deploy: deployer(t, "llama3-8b"), Workers: 2,
		Workload: serve.Workload{N: 400, Arrival: serve.Poisson, Rate: 20, Seed: 1, Input: serve.Fixed(1000), Output: serve.Fixed(200)},
		SLO:      plan.SLO{TTFTP99: 0.5, TPOTP99: 0.03}, Cost: price}
	byGPUs, err := plan.Serve(q)
	if err != nil {
		t.Fatal(err)
	}
	q.Objective = plan.LowestCost
	byCost, err := plan.Serve(q)
	if err != nil {
		t.Fatal(err)
	}
	if byGPUs.Best == nil || byCost.Best == nil {
		t.Fatal("no plan")
	}
	for _, c := range byCost.All {
		if !(c.CostPerHour > 0) || !(c.CostPerMillionTokens > 0) {
			t.Errorf("%v × dp %d: cost %v per hour, %v per million tokens", c.Layout, c.DP, c.CostPerHour, c.CostPerMillionTokens)
		}
		if want := c.CostPerHour / (3600 * c.TokensPerSecond) * 1e6; c.CostPerMillionTokens != want {
			t.Errorf("%v: %v per million tokens, want %v", c.Layout, c.CostPerMillionTokens, want)
		}
		if c.Meets && c.CostPerHour < byCost.Best.CostPerHour {
			t.Errorf("%v × dp %d meets the SLO at %.3g per hour, cheaper than the answer's %.3g", c.Layout, c.DP, c.CostPerHour, byCost.Best.CostPerHour)
		}
		if c.Meets && c.GPUs < byGPUs.Best.GPUs {
			t.Errorf("%v × dp %d meets the SLO with %d GPUs, fewer than the GPU objective's %d", c.Layout, c.DP, c.GPUs, byGPUs.Best.GPUs)
		}
	}
	t.Logf("fewest GPUs: %v × dp %d (%d GPUs, %.3g per hour); cheapest: %v × dp %d (%d GPUs, %.3g per hour)",
		byGPUs.Best.Layout, byGPUs.Best.DP, byGPUs.Best.GPUs, byGPUs.Best.CostPerHour, byCost.Best.Layout, byCost.Best.DP, byCost.Best.GPUs, byCost.Best.CostPerHour)
	if byCost.Best.DType != model.BF16 || byGPUs.Best.DType != model.FP8 || !(byCost.Best.CostPerHour < byGPUs.Best.CostPerHour) {
		t.Errorf("the cost objective chose %v, the GPU objective %v: want bf16 (cheaper) and fp8 (faster per user)", byCost.Best.Layout, byGPUs.Best.Layout)
	}
	q.Cost = nil
	if _, err := plan.Serve(q); err == nil {
		t.Error("the cost objective without a price: no error")
	}
}

func TestParseObjective(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want plan.Objective
		ok   bool
	}{{"gpus", plan.FewestGPUs, true}, {"Cost", plan.LowestCost, true}, {"money", 0, false}, {"", 0, false}} {
		got, err := plan.ParseObjective(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseObjective(%q) = %v, %v", tt.in, got, err)
		}
	}
}
