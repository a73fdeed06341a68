package mlperf_test

import (
	"fmt"

	"github.com/perfsim/perfsim/mlperf"
)

// The suite's benchmarks, with the catalog models that run them (a
// pipeline for Stable Diffusion XL) or what perfsim lacks.
func ExampleSuite() {
	for _, b := range mlperf.Suite() {
		switch {
		case len(b.Parts) > 0:
			fmt.Printf("%s: %d models a sample\n", b.Name, len(b.Parts))
		case b.Lacks != "":
			fmt.Printf("%s: lacks %s\n", b.Name, b.Lacks)
		default:
			fmt.Printf("%s: %s\n", b.Name, b.Model)
		}
	}
	// Output:
	// resnet50: resnet50
	// retinanet: retinanet
	// 3d-unet-99: unet3d
	// bert-99: bert-large
	// gptj-99: gpt-j-6b
	// llama2-70b-99: llama2-70b
	// llama3.1-405b: llama3.1-405b
	// mixtral-8x7b: mixtral-8x7b
	// stable-diffusion-xl: 4 models a sample
	// dlrm-v2-99: dlrm-dcnv2
	// rgat: rgat
}

// Find takes MLPerf's names, with or without the accuracy suffix.
func ExampleFind() {
	b, _ := mlperf.Find("dlrm-v2")
	fmt.Println(b.Name, b.Latency)
	_, err := mlperf.Find("ssd")
	fmt.Println(err)
	// Output:
	// dlrm-v2-99 60 ms
	// unknown benchmark "ssd" (want one of 3d-unet-99, bert-99, dlrm-v2-99, gptj-99, llama2-70b-99, llama3.1-405b, mixtral-8x7b, resnet50, retinanet, rgat, stable-diffusion-xl)
}

// The training suite: how each benchmark runs, or what perfsim lacks.
func ExampleTrainingSuite() {
	for _, b := range mlperf.TrainingSuite() {
		switch {
		case b.Lacks != "":
			fmt.Printf("%s: lacks %s\n", b.Name, b.Lacks)
		case b.LoRA != nil:
			fmt.Printf("%s: %s, LoRA rank %d, tp %d\n", b.Name, b.Model, b.LoRA.Rank, b.TP)
		case b.PP > 0:
			fmt.Printf("%s: %s, tp %d × pp %d, from %d GPUs\n", b.Name, b.Model, b.TP, b.PP, b.SubmissionGPUs)
		case b.TableParams > 0:
			fmt.Printf("%s: %s, tables sharded\n", b.Name, b.Model)
		default:
			fmt.Printf("%s: %s, data parallel\n", b.Name, b.Model)
		}
	}
	// Output:
	// resnet: resnet50, data parallel
	// bert: bert-large, data parallel
	// gpt3: gpt3-175b, tp 4 × pp 8, from 512 GPUs
	// llama31_405b: llama3.1-405b, tp 8 × pp 8, from 512 GPUs
	// llama2_70b_lora: llama2-70b, LoRA rank 16, tp 4
	// retinanet: retinanet, data parallel
	// unet3d: unet3d, data parallel
	// stable_diffusion: sd2-unet, data parallel
	// dlrm_dcnv2: dlrm-dcnv2, tables sharded
	// rgat: lacks a graph neural network (neighbour sampling over IGBH-Full: the sampled subgraph per seed node is not published)
}
