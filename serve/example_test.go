package serve_test

import (
	"fmt"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/internal/simload"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
	"github.com/perfsim/perfsim/workloads"
)

// ExampleRun serves 200 requests of Llama 3 8B (1,024 tokens in, 128
// out, Poisson arrivals at 4 per second) on one H100 under vLLM's
// scheduling, as `perfsim serve --hw h100 --model llama3-8b --input 1024
// --output 128 --requests 200 --rate 4` does.
func ExampleRun() {
	d, err := hardware.Resolve("h100")
	if err != nil {
		fmt.Println(err)
		return
	}
	sys, err := hardware.NewSystem(d, 1, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := workloads.Resolve("llama3-8b")
	if err != nil {
		fmt.Println(err)
		return
	}
	w := simload.Workload{M: m}
	e, err := serve.Preset("vllm", d.Memory.Limit())
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := sim.NewPricer(sys, w, e.Scenario(sim.Default()))
	if err != nil {
		fmt.Println(err)
		return
	}
	wl := serve.Workload{N: 200, Arrival: serve.Poisson, Rate: 4, Seed: 1, Input: serve.Fixed(1024), Output: serve.Fixed(128)}
	reqs, err := wl.Requests()
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := serve.Run(p, e, reqs, serve.Options{MaxContext: w.Shape().MaxContext})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("KV cache %d tokens\n", res.KVTokens)
	fmt.Printf("TTFT p50 %v, p99 %v\n", model.Seconds(res.TTFT.P50), model.Seconds(res.TTFT.P99))
	fmt.Printf("TPOT p50 %v, p99 %v\n", model.Seconds(res.TPOT.P50), model.Seconds(res.TPOT.P99))
	fmt.Printf("%.3g req/s, %.4g output tokens/s, overloaded %v\n", res.RequestsPerSecond, res.OutputTokensPerSecond, res.Overloaded)
	// Output:
	// KV cache 454032 tokens
	// TTFT p50 28.74 ms, p99 53.49 ms
	// TPOT p50 7.014 ms, p99 8.014 ms
	// 3.59 req/s, 459.2 output tokens/s, overloaded false
}

// ExampleRunWorkload serves 20,000 requests of Llama 3 8B (200 tokens
// in, 100 out, all at t = 0) on one H100, each drawn from the workload's
// generator as the engine reaches it: the run holds none of them, only
// each finished request's 36-byte record, and the result is Run's on
// wl.Requests() exactly.
func ExampleRunWorkload() {
	d, err := hardware.Resolve("h100")
	if err != nil {
		fmt.Println(err)
		return
	}
	sys, err := hardware.NewSystem(d, 1, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := workloads.Resolve("llama3-8b")
	if err != nil {
		fmt.Println(err)
		return
	}
	w := simload.Workload{M: m}
	e, err := serve.Preset("vllm", d.Memory.Limit())
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := sim.NewPricer(sys, w, e.Scenario(sim.Default()))
	if err != nil {
		fmt.Println(err)
		return
	}
	wl := serve.Workload{N: 20000, Arrival: serve.AllAtOnce, Seed: 1, Input: serve.Fixed(200), Output: serve.Fixed(100)}
	res, err := serve.RunWorkload(p, e, &wl, 1, serve.Options{MaxContext: w.Shape().MaxContext})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d requests, %d output tokens, records kept: %v\n", res.Count, res.OutputTokens, res.Requests != nil)
	fmt.Printf("E2E p50 %v, p99 %v\n", model.Seconds(res.E2E.P50), model.Seconds(res.E2E.P99))
	// Output:
	// 20000 requests, 2000000 output tokens, records kept: false
	// E2E p50 83.96 s, p99 157.3 s
}
