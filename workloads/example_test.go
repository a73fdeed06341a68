package workloads_test

import (
	"fmt"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/workloads"
)

// One decode step of Llama 3 8B at batch 8 and context 1023: every GEMM
// has M = 8, and attention reads 1024 keys.
func ExampleModel_Ops() {
	m, err := workloads.Resolve("llama3-8b")
	if err != nil {
		fmt.Println(err)
		return
	}
	ops, err := m.Ops(workloads.Phase{Kind: workloads.Decode, Batch: 8, Context: 1023})
	if err != nil {
		fmt.Println(err)
		return
	}
	var macs float64
	for _, op := range ops {
		macs += op.MACs()
	}
	fmt.Printf("%s: %.0f parameters, %d ops, %.4g GEMM MACs per step\n", m.Name(), m.Params(), len(ops), macs)
	// Output:
	// llama3-8b: 8030261248 parameters, 14 ops, 6.004e+10 GEMM MACs per step
}

// R-GAT's node features are a store outside its weights: IGBH-full's
// 547 M nodes of 1024 features in fp8 (560.5 GB), of which a seed's
// expected sampled subgraph, bounded from above with IGBH's published
// mean degrees, gathers 13,546 rows.
func ExampleModel_FeatureBytes() {
	m, err := workloads.Resolve("rgat")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %.0f parameters, a %.1f GB feature store, %.1f MB gathered a seed\n", m.Name(), m.Params(),
		float64(m.FeatureBytes(model.FP16))/1e9, float64(m.GatheredBytes(1, model.FP16))/1e6)
	// Output:
	// rgat: 13115303 parameters, a 560.5 GB feature store, 13.9 MB gathered a seed
}

// The passes around one PixArt-Σ step at 1024² for one prompt: the
// guidance combine and a second-order DPM-Solver++ update over the
// 4×128×128 latents, each its own eager kernel: 110 bytes an element of
// the latents (65,536 of them) in all.
func ExampleGuidedDPMSolverStep() {
	ops, err := workloads.GuidedDPMSolverStep(1, 4*128*128, 8*128*128, 2, model.BF16)
	if err != nil {
		fmt.Println(err)
		return
	}
	var kernels int
	var moved model.Bytes
	for _, op := range ops {
		kernels += op.Count
		moved += model.Bytes(op.Count) * op.Kernel.Bytes()
	}
	fmt.Printf("%d kernels moving %.2f MB\n", kernels, float64(moved)/1e6)
	// Output:
	// 16 kernels moving 7.21 MB
}

// ExampleResolve reads a --model argument, a catalog name here (a .toml
// file, a HuggingFace config.json or a folder holding one are read too),
// and a misspelt one, which gets the closest name.
func ExampleResolve() {
	m, err := workloads.Resolve("mixtral-8x7b")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %.4g parameters, %.4g active a token\n", m.Name(), m.Params(), m.ActiveParams())
	fmt.Println("weights in bf16:", m.WeightBytes(model.BF16).BinaryString(), "KV cache a token:", m.KVBytesPerToken(model.BF16).BinaryString())
	_, err = workloads.Resolve("mixtral-8x7")
	fmt.Println(err)
	// Output:
	// mixtral-8x7b: 4.67e+10 parameters, 1.288e+10 active a token
	// weights in bf16: 86.99 GiB KV cache a token: 128 KiB
	// workloads: unknown model "mixtral-8x7": did you mean "mixtral-8x7b"?
}
