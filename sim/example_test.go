package sim

import (
	"fmt"

	"github.com/perfsim/perfsim/model"
)

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

// ExampleChunkLayers spreads Llama 3.1 405B's 126 layers over 8 stages
// of 8 chunks with the embedding and the loss as a layer slot each, as
// NVIDIA's MLPerf Training v5.0 layout does.
func ExampleChunkLayers() {
	chunks, err := ChunkLayers(126, 8, 8, true, true)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("first stage", chunks[0])
	fmt.Println("a middle one", chunks[3])
	fmt.Println("last stage", chunks[7])
	_, err = ChunkLayers(126, 8, 8, false, false)
	fmt.Println(err)
	// Output:
	// first stage [1 2 2 2 2 2 2 2]
	// a middle one [2 2 2 2 2 2 2 2]
	// last stage [2 2 2 2 2 2 2 1]
	// pipeline 8 × virtual stages 8 does not divide the 126 layers (126 + 2 = 128 would: count the embedding and the loss as layer slots, --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split)
}

// ExamplePipelineChunks: three stages of two chunks, the middle one the
// slowest, over four micro-batches: it is busy 4 × 8 and waits on the
// first stage's first chunk (3) and the last stage's last (5).
func ExamplePipelineChunks() {
	total, bubble := PipelineChunks([][]model.Seconds{{3, 2}, {4, 4}, {1, 5}}, 4, Interleaved)
	fmt.Println(float64(total), float64(bubble))
	// Output:
	// 40 8
}

// ExampleLabel reads a report's op rows: their name, stage and kind are
// Labels, which print as their strings and compare by String (or with
// LabelOf).
func ExampleLabel() {
	rep, err := Run(testSystem(1), tinyLlama(), Default())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range rep.Inference.Decode.Ops[:3] {
		fmt.Printf("%-10s %s\n", o.Name, o.Kind)
	}
	fmt.Println(rep.Inference.Decode.Ops[1].Kind == LabelOf("elementwise"), rep.Inference.Decode.Ops[2].Name.String() == "attn.qkv")
	// Output:
	// embed      gather
	// attn.norm  elementwise
	// attn.qkv   gemm
	// true true
}
