package plan_test

import (
	"fmt"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/internal/simload"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/plan"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
	"github.com/perfsim/perfsim/workloads"
)

// ExampleMaxRate finds the highest Poisson rate one H100 serving Llama 3
// 8B in bf16 under vLLM's scheduling sustains with p99 TTFT under 500 ms
// and p99 TPOT under 30 ms (1,024 tokens in, 256 out), as `perfsim plan
// serve --hw h100 --model llama3-8b --max-rate --tp 1 --dtypes bf16
// --ttft-p99 500ms --tpot-p99 30ms --requests 600` does.
func ExampleMaxRate() {
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
	e, err := serve.Preset("vllm", d.Memory.Limit())
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := sim.NewPricer(sys, simload.Workload{M: m}, e.Scenario(sim.Default()))
	if err != nil {
		fmt.Println(err)
		return
	}
	w := serve.Workload{N: 600, Arrival: serve.Poisson, Seed: 1, Input: serve.Fixed(1024), Output: serve.Fixed(256)}
	slo := plan.SLO{TTFTP99: 0.5, TPOTP99: 0.03}
	r, res, err := plan.MaxRate(p, e, 1, w, slo, 0.01)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("max rate %.4g req/s: TTFT p99 %v, TPOT p99 %v, %.4g output tokens/s\n",
		r, model.Seconds(res.TTFT.P99), model.Seconds(res.TPOT.P99), plan.SteadyTokens(r, res))
	// Output:
	// max rate 21.51 req/s: TTFT p99 146 ms, TPOT p99 30 ms, 5506 output tokens/s
}

// ExampleTrain ranks the layouts of Llama 3 8B on 64 H100s of DGX H100
// nodes at a global batch of 512 sequences of 4,096 tokens, as `perfsim
// plan train --model llama3-8b --system dgx-h100 --gpus 64 --global-batch
// 512 --seq 4096 --tokens 1e12 --top 3` does.
func ExampleTrain() {
	sys, err := hardware.LookupSystem("dgx-h100", 64)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := workloads.Resolve("llama3-8b")
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := plan.Train(sys, simload.Workload{M: m}, plan.TrainRequest{GPUs: 64, GlobalBatch: 512, Seq: 4096, Tokens: 1e12, Top: 3, Base: sim.Default()})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, c := range p.Best {
		l := c.Layout()
		fmt.Printf("%d: tp %d pp %d dp %d cp %d, micro-batch %d, ZeRO %d: step %v, MFU %.1f%%, %.0f GPU-hours\n",
			i+1, l.TP, l.PP, l.DP, l.CP, c.Scenario.Batch, c.Scenario.ZeRO, c.Step, 100*c.MFU, c.GPUHours())
	}
	// Output:
	// 1: tp 1 pp 1 dp 64 cp 1, micro-batch 2, ZeRO 2: step 2.669 s, MFU 59.9%, 22623 GPU-hours
	// 2: tp 2 pp 1 dp 32 cp 1, micro-batch 4, ZeRO 1: step 2.698 s, MFU 59.3%, 22867 GPU-hours
	// 3: tp 1 pp 1 dp 32 cp 2, micro-batch 4, ZeRO 2: step 2.816 s, MFU 56.8%, 23868 GPU-hours
}

// ExampleEPDegrees lists the expert-parallel degrees a serving plan
// searches with each TP degree: for Mixtral 8x7B (8 experts) every one
// dividing TP, for a dense model 1 alone.
func ExampleEPDegrees() {
	for _, name := range []string{"mixtral-8x7b", "llama3-8b"} {
		m, err := workloads.Resolve(name)
		if err != nil {
			fmt.Println(err)
			return
		}
		s := simload.Workload{M: m}.Shape()
		for _, tp := range []int{2, 8} {
			fmt.Printf("%s tp %d: ep %v\n", name, tp, plan.EPDegrees(s, tp))
		}
	}
	// Output:
	// mixtral-8x7b tp 2: ep [1 2]
	// mixtral-8x7b tp 8: ep [1 2 4 8]
	// llama3-8b tp 2: ep [1]
	// llama3-8b tp 8: ep [1]
}

// ExampleDPAttentionDegrees lists the data-parallel attention groups a
// serving plan searches with each TP degree within 64 GPUs: d replicas
// of tp GPUs, the experts over all d × tp of them, for each d the
// simulator accepts (d × tp dividing Mixtral's 8 experts, DeepSeek-V3's
// 256); a dense model gets none.
func ExampleDPAttentionDegrees() {
	for _, name := range []string{"mixtral-8x7b", "deepseek-v3", "llama3-8b"} {
		m, err := workloads.Resolve(name)
		if err != nil {
			fmt.Println(err)
			return
		}
		s := simload.Workload{M: m}.Shape()
		for _, tp := range []int{1, 8} {
			fmt.Printf("%s tp %d: groups of %v\n", name, tp, plan.DPAttentionDegrees(s, tp, 64))
		}
	}
	// Output:
	// mixtral-8x7b tp 1: groups of [2 4 8]
	// mixtral-8x7b tp 8: groups of []
	// deepseek-v3 tp 1: groups of [2 4 8 16 32 64]
	// deepseek-v3 tp 8: groups of [2 4 8]
	// llama3-8b tp 1: groups of []
	// llama3-8b tp 8: groups of []
}
