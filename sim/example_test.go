package sim

import "fmt"

// ExampleRun simulates the default scenario (batch 1, 2048 tokens in,
// 128 out, bf16) of a small hand-built decoder on a test GPU.
func ExampleRun() {
	rep, err := Run(testSystem(1), tinyLlama(), Default())
	if err != nil {
		fmt.Println(err)
		return
	}
	in := rep.Inference
	fmt.Printf("TTFT %v, prefill %v-bound\n", in.TTFT, in.Prefill.Bound)
	fmt.Printf("TPOT %v, decode %v-bound\n", in.TPOT, in.Decode.Bound)
	fmt.Printf("E2E %v, %.1f output tokens/s\n", in.E2E, in.OutputTokensPerSecond)
	fmt.Printf("memory %v of %v, fits %v\n", rep.Memory.Total, rep.Memory.Capacity, rep.Memory.Fits)
	// Output:
	// TTFT 18.95 ms, prefill compute-bound
	// TPOT 1.34 ms, decode memory-bound
	// E2E 189.1 ms, 676.8 output tokens/s
	// memory 4.355 GB of 80 GB, fits true
}
