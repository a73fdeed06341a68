package plan_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/plan"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
	"github.com/perfsim/perfsim/workloads"
)

// wideExperts is a test model whose experts TP 8 cannot split, and
// which needs eight H100s in one stage (testdata/moe-wide-experts.toml).
const wideExperts = "testdata/moe-wide-experts.toml"

func shapeOf(t testing.TB, mdl string) sim.Shape {
	t.Helper()
	m, err := workloads.Resolve(mdl)
	if err != nil {
		t.Fatal(err)
	}
	return adapter{M: m}.Shape()
}

// TestEPDegrees: the EP degrees a search tries with a TP degree are 1
// and, for an MoE model, those dividing TP and the experts that leave
// each expert's width divisible by TP/EP; a dense model gets 1 alone.
func TestEPDegrees(t *testing.T) {
	for _, tt := range []struct {
		model string
		tp    int
		want  []int
	}{
		{"llama3-8b", 8, []int{1}},
		{"mixtral-8x7b", 1, []int{1}},
		{"mixtral-8x7b", 2, []int{1, 2}},
		{"mixtral-8x7b", 4, []int{1, 2, 4}},
		{"mixtral-8x7b", 8, []int{1, 2, 4, 8}},
		// 14,336 = 2^11 × 7: TP 6 over EP 2 would split an expert 3 ways.
		{"mixtral-8x7b", 6, []int{1}},
		{"qwen3-30b-a3b", 8, []int{1, 2, 4, 8}},
		{"deepseek-v3", 8, []int{1, 2, 4, 8}},
		{"gpt-oss-120b", 4, []int{1, 2, 4}},
		// 1 stays (the pricer says why TP 8 alone cannot split 16,388).
		{wideExperts, 8, []int{1, 2, 4, 8}},
	} {
		if got := plan.EPDegrees(shapeOf(t, tt.model), tt.tp); !slices.Equal(got, tt.want) {
			t.Errorf("%s at tp %d: EP degrees %v, want %v", tt.model, tt.tp, got, tt.want)
		}
	}
}

// TestCheckEP: a pinned EP is refused naming the flag and why: the
// expert count it does not divide, a dense model, no TP degree it
// divides.
func TestCheckEP(t *testing.T) {
	for _, tt := range []struct {
		model string
		ep    int
		tps   []int
		want  string // "" for no error
	}{
		{"mixtral-8x7b", 2, []int{1, 2, 4, 8}, ""},
		{"mixtral-8x7b", 1, []int{1}, ""},
		{"llama3-8b", 1, []int{1, 2}, ""},
		{"mixtral-8x7b", 3, []int{1, 2, 4, 8}, "--ep: expert parallelism 3 does not divide mixtral-8x7b's 8 experts"},
		{"mixtral-8x7b", 16, []int{1, 2, 4, 8}, "--ep: expert parallelism 16 does not divide mixtral-8x7b's 8 experts"},
		{"llama3-8b", 2, []int{2}, "--ep: expert parallelism 2 for llama3-8b, which has no experts"},
		{"mixtral-8x7b", 8, []int{1, 2, 4}, "--ep: expert parallelism 8 divides none of the TP degrees searched (1,2,4)"},
		{"mixtral-8x7b", 0, []int{1}, "--ep: 0 is below 1"},
	} {
		err := plan.CheckEP("ep", tt.model, shapeOf(t, tt.model), tt.ep, tt.tps)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s --ep %d: %v", tt.model, tt.ep, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s --ep %d --tp %v: error %v, want %q", tt.model, tt.ep, tt.tps, err, tt.want)
		}
	}
}

// epLayouts are the layouts of tps × EPDegrees, one stage, one type.
func epLayouts(t testing.TB, mdl string, d model.DType, tps ...int) []plan.Layout {
	var ls []plan.Layout
	for _, tp := range tps {
		for _, ep := range plan.EPDegrees(shapeOf(t, mdl), tp) {
			ls = append(ls, plan.Layout{TP: tp, PP: 1, EP: ep, DType: d})
		}
	}
	return ls
}

// TestServe_ep: an MoE plan searches EP layouts beside TP alone, and each
// EP candidate is its own full simulation: Mixtral 8x7B at tp 2 and 4
// (five layouts: ep 1 and 2, ep 1, 2 and 4), each candidate's GPUs its
// replicas' TP × PP (EP lies within TP), and an EP candidate's figures
// those of serve run again on its layout, and not ep 1's.
func TestServe_ep(t *testing.T) {
	deploy := deployer(t, "mixtral-8x7b")
	w := serve.Workload{N: 300, Arrival: serve.Poisson, Rate: 20, Seed: 1, Input: serve.Fixed(1024), Output: serve.Fixed(256)}
	q := plan.ServeQuery{Layouts: epLayouts(t, "mixtral-8x7b", model.FP8, 2, 4), MaxGPUs: 8, Deploy: deploy, Workers: 2,
		Workload: w, SLO: plan.SLO{TTFTP99: 1, TPOTP99: 0.05}}
	p, err := plan.Serve(q)
	if err != nil {
		t.Fatal(err)
	}
	if p.Seen != 5 || len(p.Problems) > 0 {
		t.Fatalf("%d layouts seen (want 5), problems %v", p.Seen, p.Problems)
	}
	t.Logf("best: %v = %d GPUs, TTFT p99 %.4g s, TPOT p99 %.4g s", p.Best, p.Best.GPUs, p.Best.TTFTP99, p.Best.TPOTP99)
	byEP := map[int]plan.Candidate{}
	for _, c := range p.All {
		if c.GPUs != c.TP*c.PP*c.DP {
			t.Errorf("%v: %d GPUs, want tp × pp × dp = %d", c, c.GPUs, c.TP*c.PP*c.DP)
		}
		if c.TP == 4 && c.Requests == w.N {
			if _, ok := byEP[c.EP]; !ok {
				byEP[c.EP] = c
			}
		}
	}
	if len(byEP) != 3 {
		t.Fatalf("tp 4 candidates by EP: %v, want ep 1, 2 and 4", byEP)
	}
	reqs, err := plan.Requests(w)
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range []int{2, 4} {
		c := byEP[ep]
		if !strings.Contains(c.String(), fmt.Sprintf("tp4 ep%d pp1", ep)) {
			t.Errorf("candidate %q does not name its EP", c)
		}
		pr, e, err := deploy(c.Layout)
		if err != nil {
			t.Fatal(err)
		}
		res, err := serve.RunDeployment(serve.Deployment{Serve: serve.Pool{Pricer: pr, Engine: e, Instances: c.DP}}, reqs, serve.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.TTFT.P99 != c.TTFTP99 || res.TPOT.P99 != c.TPOTP99 {
			t.Errorf("%v: plan TTFT p99 %.6g s, TPOT p99 %.6g s; serve %.6g s, %.6g s", c, c.TTFTP99, c.TPOTP99, res.TTFT.P99, res.TPOT.P99)
		}
		if one := byEP[1]; c.DP == one.DP && c.TPOTP99 == one.TPOTP99 {
			t.Errorf("%v: TPOT p99 %.6g s, ep 1's: EP was not priced", c, c.TPOTP99)
		}
	}
}

// TestServe_epWins: a model whose one-stage replica needs eight H100s
// (its bf16 weights leave no KV cache on four) and whose experts TP 8
// alone cannot split: with EP searched the plan finds a deployment, tp 8
// with EP; with TP alone none runs.
func TestServe_epWins(t *testing.T) {
	deploy := deployer(t, wideExperts)
	q := plan.ServeQuery{MaxGPUs: 16, Deploy: deploy, Workers: 2,
		Workload: serve.Workload{N: 200, Arrival: serve.Poisson, Rate: 2, Seed: 1, Input: serve.Fixed(1024), Output: serve.Fixed(256)},
		SLO:      plan.SLO{TTFTP99: 2, TPOTP99: 0.1}}
	for _, tt := range []struct {
		name    string
		layouts []plan.Layout
		wantEP  bool // an answer, with EP; else none at all
	}{
		{"ep searched", epLayouts(t, wideExperts, model.BF16, 4, 8), true},
		{"tp alone", []plan.Layout{{TP: 4, PP: 1, EP: 1, DType: model.BF16}, {TP: 8, PP: 1, EP: 1, DType: model.BF16}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q.Layouts = tt.layouts
			p, err := plan.Serve(q)
			if err != nil {
				t.Fatal(err)
			}
			var why []string
			for _, e := range p.Problems {
				why = append(why, e.Error())
			}
			t.Logf("%d layouts, %d candidates; best %v; could not run: %s", p.Seen, len(p.All), p.Best, strings.Join(why, "; "))
			if !strings.Contains(strings.Join(why, "\n"), "splits each expert 8 ways") {
				t.Errorf("tp 8 alone is not refused for its experts' width: %v", why)
			}
			if !tt.wantEP {
				if p.Best != nil || len(p.All) > 0 {
					t.Errorf("TP alone ran %d candidates, best %v: want none", len(p.All), p.Best)
				}
				return
			}
			if p.Best == nil || p.Best.TP != 8 || p.Best.EP < 2 || !p.Best.Meets {
				t.Errorf("best %v, want tp 8 with EP meeting the objectives", p.Best)
			}
		})
	}
}
