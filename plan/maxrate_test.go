package plan_test

import (
	"testing"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/plan"
	"github.com/perfsim/perfsim/serve"
)

// TestMaxRate_loose: with objectives loose enough that the overload
// verdict, not a latency, ends the load, the rate found still meets them
// and 10% more does not (judged as MaxRate judges a rate, RateVerdict: a
// run that has not settled is run again over more requests; one run had
// read "not settled" at 10% more in three of the four cases, and at 1.1
// × 0.85 of the answer in two, which meet over more): the search is not
// capped by the replicas' throughput at maximum load, which a few
// hundred requests at once understate (their drain).
func TestMaxRate_loose(t *testing.T) {
	p, e, err := deployer(t, "llama3-8b")(plan.Layout{TP: 1, PP: 1, DType: model.BF16})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		w    serve.Workload
		slo  plan.SLO
	}{
		{"sharegpt 400", serve.Workload{N: 400, Joint: serve.ShareGPT{}}, plan.SLO{TTFTP99: 2, TPOTP99: 0.2}},
		{"sharegpt 1000", serve.Workload{N: 1000, Joint: serve.ShareGPT{}}, plan.SLO{TTFTP99: 2, TPOTP99: 0.2}},
		{"fixed 300", serve.Workload{N: 300, Input: serve.Fixed(1000), Output: serve.Fixed(200)}, plan.SLO{TTFTP99: 5}},
		{"fixed 800", serve.Workload{N: 800, Input: serve.Fixed(1000), Output: serve.Fixed(200)}, plan.SLO{TTFTP99: 0.5, TPOTP99: 0.03}},
	} {
		w := c.w
		w.Arrival, w.Seed = serve.Poisson, 2
		r, res, err := plan.MaxRate(p, e, 1, w, c.slo, 0.01)
		if err != nil {
			t.Fatal(err)
		}
		if r <= 0 || res == nil || !c.slo.Meets(res) {
			t.Fatalf("%s: MaxRate = %g", c.name, r)
		}
		over, n, err := plan.RateVerdict(p, e, 1, w, 1.1*r)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: max rate %.3g req/s; at 1.1× over %d requests: TTFT p99 %.3g s, TPOT p99 %.3g s, %s", c.name, r, n, over.TTFT.P99, over.TPOT.P99, over.Verdict)
		if c.slo.Meets(over) {
			t.Errorf("%s: 1.1 × the max rate (%.3g req/s) still meets the SLO over %d requests", c.name, 1.1*r, n)
		}
	}
}
