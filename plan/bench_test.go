package plan_test

import (
	"testing"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/plan"
	"github.com/perfsim/perfsim/serve"
)

// BenchmarkPlanServe: a plan over 224 candidate layouts (TP 1–8 × PP
// 1–8 × bf16/fp8 × seven caps on running requests) of Llama 3 70B on H100s
// at 20 req/s, 600 requests per simulation.
func BenchmarkPlanServe(b *testing.B) {
	var layouts []plan.Layout
	for _, tp := range []int{1, 2, 4, 8} {
		for _, pp := range []int{1, 2, 4, 8} {
			for _, d := range []model.DType{model.BF16, model.FP8} {
				for _, ms := range []int{0, 32, 64, 128, 256, 512, 1024} {
					layouts = append(layouts, plan.Layout{TP: tp, PP: pp, DType: d, MaxSeqs: ms})
				}
			}
		}
	}
	q := plan.ServeQuery{Layouts: layouts, MaxGPUs: 64, Deploy: deployer(b, "llama3-70b"), Workers: 2,
		Workload: serve.Workload{N: 600, Arrival: serve.Poisson, Rate: 20, Seed: 1, Input: serve.Fixed(1024), Output: serve.Fixed(256)},
		SLO:      plan.SLO{TTFTP99: 1, TPOTP99: 0.05}}
	benchServe(b, q)
}

// BenchmarkPlanServeMoE: BenchmarkPlanServe's space for Mixtral 8x7B,
// with EP searched within TP (plan.EPDegrees: ep 1 at tp 1; 1, 2 at
// tp 2; 1, 2, 4 at tp 4; 1, 2, 4, 8 at tp 8), 280 layouts, and the
// data-parallel attention groups perfsim plan serve searches beside them
// (plan.DPAttentionDegrees: 2, 4 or 8 replicas of tp 1, 2 or 4 of tp 2,
// 2 of tp 4; one stage), 84 more: 364 layouts at 20 req/s, 600 requests
// per simulation.
func BenchmarkPlanServeMoE(b *testing.B) {
	var layouts []plan.Layout
	dts := []model.DType{model.BF16, model.FP8}
	caps := []int{0, 32, 64, 128, 256, 512, 1024}
	s := shapeOf(b, "mixtral-8x7b")
	for _, tp := range []int{1, 2, 4, 8} {
		for _, ep := range plan.EPDegrees(s, tp) {
			for _, pp := range []int{1, 2} {
				for _, d := range dts {
					for _, ms := range caps {
						layouts = append(layouts, plan.Layout{TP: tp, PP: pp, EP: ep, DType: d, MaxSeqs: ms})
					}
				}
			}
		}
	}
	for _, tp := range []int{1, 2, 4, 8} {
		for _, g := range plan.DPAttentionDegrees(s, tp, 64) {
			for _, d := range dts {
				for _, ms := range caps {
					layouts = append(layouts, plan.Layout{TP: tp, PP: 1, EP: g * tp, DType: d, MaxSeqs: ms, DPAttention: g})
				}
			}
		}
	}
	q := plan.ServeQuery{Layouts: layouts, MaxGPUs: 64, Deploy: deployer(b, "mixtral-8x7b"), Workers: 2,
		Workload: serve.Workload{N: 600, Arrival: serve.Poisson, Rate: 20, Seed: 1, Input: serve.Fixed(1024), Output: serve.Fixed(256)},
		SLO:      plan.SLO{TTFTP99: 1, TPOTP99: 0.05}}
	benchServe(b, q)
}

// BenchmarkPlanServeDisagg: BenchmarkPlanServe's 224 aggregated layouts
// and 128 disaggregated pairs (prefill and decode instances each TP 1–8
// × PP 1–2, bf16 or fp8) of Llama 3 70B on H100s at 20 req/s: 352
// layouts, every candidate simulated with 600 requests.
func BenchmarkPlanServeDisagg(b *testing.B) {
	var layouts []plan.Layout
	var pairs []plan.Pair
	for _, tp := range []int{1, 2, 4, 8} {
		for _, pp := range []int{1, 2, 4, 8} {
			for _, d := range []model.DType{model.BF16, model.FP8} {
				for _, ms := range []int{0, 32, 64, 128, 256, 512, 1024} {
					layouts = append(layouts, plan.Layout{TP: tp, PP: pp, DType: d, MaxSeqs: ms})
				}
			}
		}
	}
	var shapes [][2]int
	for _, tp := range []int{1, 2, 4, 8} {
		for _, pp := range []int{1, 2} {
			shapes = append(shapes, [2]int{tp, pp})
		}
	}
	for _, d := range []model.DType{model.BF16, model.FP8} {
		for _, p := range shapes {
			for _, q := range shapes {
				pairs = append(pairs, plan.Pair{Prefill: plan.Layout{TP: p[0], PP: p[1], DType: d}, Decode: plan.Layout{TP: q[0], PP: q[1], DType: d}})
			}
		}
	}
	nvlink := model.Link{Bandwidth: 450e9, Latency: 3e-6, Efficiency: 0.8}
	nic := model.Link{Bandwidth: 50e9, Latency: 10e-6, Efficiency: 0.8}
	q := plan.ServeQuery{Layouts: layouts, Pairs: pairs, MaxGPUs: 64, Deploy: deployer(b, "llama3-70b"), Workers: 2,
		Link:     func(int) (*serve.KVLink, error) { return &serve.KVLink{Intra: nvlink, Inter: nic, PerNode: 8}, nil },
		Workload: serve.Workload{N: 600, Arrival: serve.Poisson, Rate: 20, Seed: 1, Input: serve.Fixed(1024), Output: serve.Fixed(256)},
		SLO:      plan.SLO{TTFTP99: 1, TPOTP99: 0.05}}
	benchServe(b, q)
}

// benchServe runs plan.Serve(q) as the benchmark's loop and reports the
// layouts it saw and the simulations it ran.
func benchServe(b *testing.B, q plan.ServeQuery) {
	b.ReportAllocs()
	var p *plan.ServePlan
	for b.Loop() {
		var err error
		if p, err = plan.Serve(q); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(p.Seen), "layouts")
	b.ReportMetric(float64(p.Simulated), "simulations")
}
