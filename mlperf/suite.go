package mlperf

import (
	"fmt"
	"slices"
	"strings"

	"github.com/perfsim/perfsim/model"
)

// Scenario is an MLPerf datacenter scenario.
type Scenario uint8

// The scenarios.
const (
	Offline Scenario = iota // every sample available at once: throughput
	Server                  // Poisson queries under a latency bound
)

func (s Scenario) String() string { return [...]string{"Offline", "Server"}[s] }

// ParseScenario parses "offline" or "server".
func ParseScenario(s string) (Scenario, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "offline":
		return Offline, nil
	case "server":
		return Server, nil
	}
	return 0, fmt.Errorf("unknown scenario %q (want offline or server)", s)
}

// Kind says how a benchmark's samples are run.
type Kind uint8

// The kinds.
const (
	Fixed Kind = iota // one forward pass per sample (images, a 384-token sequence)
	LLM               // prompt in, tokens out: continuous batching
)

// A Benchmark is one MLPerf Inference datacenter benchmark.
type Benchmark struct {
	Name    string // as MLPerf names it: resnet50, bert-99, llama2-70b-99, ...
	Round   string // the round its definition is taken from: v5.0, or v4.1 where v5.0 dropped it
	Task    string
	Dataset string
	// Model is the catalog model that runs it; empty when Lacks says
	// what perfsim cannot express.
	Model string
	Kind  Kind
	// Seq is the tokens of a Fixed benchmark's sequence (BERT: 384).
	Seq int
	// Input and Output are the mean tokens of an LLM benchmark's
	// prompts and answers, LengthSource saying where each comes
	// from; 0 where no count in the model's tokens was found.
	Input, Output float64
	LengthSource  string
	// Lengths names the file of lengths/ that holds each sample's
	// prompt and output tokens (llm_samples.go), from which a run draws
	// its requests; empty where they are not published.
	Lengths string
	// MaxSeqLen is the longest request, input and output tokens, of an
	// LLM benchmark: the max_seq_len its engines are built for, by
	// which TensorRT-LLM sizes its runtime buffers (serve.TRTLLMBuffers);
	// SeqLenSource says where it comes from. 0: the mean input + output.
	MaxSeqLen    int
	SeqLenSource string
	// Samples and OfflineMinQueries are an LLM benchmark's LoadGen
	// settings: performance_sample_count (the samples loaded, to whose
	// whole copies the Offline query is padded) and the Offline
	// min_query_count (the least samples of its one query; see
	// offlineSamples). 0: not an LLM benchmark. SamplesSource says
	// where they come from.
	Samples, OfflineMinQueries int
	SamplesSource              string
	// Precision is what submissions run: int8 for vision and BERT, fp8
	// for the LLMs where the hardware has it.
	Precision model.DType
	// Latency is the Server scenario's 99th-percentile bound on a
	// query's latency; TTFT and TPOT are the LLM benchmarks' bounds
	// (99th percentile) instead. OfflineOnly benchmarks have none.
	Latency, TTFT, TPOT model.Seconds
	OfflineOnly         bool
	// Lacks names the capability perfsim needs to run the benchmark;
	// empty when it runs.
	Lacks string
	// Unit replaces "samples/s" where perfsim's sample is not MLPerf's;
	// Note qualifies every result of the benchmark.
	Unit, Note string
	// PerSample is the model inputs one sample holds where a sample is
	// several (DLRM: its user-item pairs; 0: one).
	PerSample int
	// MaxBatch bounds the Offline batch search per device, in samples
	// (0: maxSearchBatch, 2048).
	MaxBatch int
	// Parts, where given, are the models one sample runs in turn (a
	// diffusion pipeline); Model is then the main one. PartsSource says
	// where the pipeline comes from.
	Parts       []Part
	PartsSource string
	// Sharded says the model's feature store (a graph network's node
	// features; see FeatureStore) is split over the devices of a node,
	// each reading the rows it lacks from its peers over the scale-up
	// link; otherwise every device holds it whole.
	Sharded bool
}

// A Part is one model of a pipeline: Calls passes per sample, each over
// PerSample sequences or images per sample (2 under classifier-free
// guidance), of Seq tokens for a transformer.
type Part struct {
	Model                 string
	Calls, PerSample, Seq int
}

// parts returns the models a sample runs: Parts, or the benchmark's
// model once.
func (b *Benchmark) parts() []Part {
	if len(b.Parts) > 0 {
		return b.Parts
	}
	return []Part{{Model: b.Model, Calls: 1, PerSample: max(b.PerSample, 1), Seq: b.Seq}}
}

// Source of the suite: the benchmark list of the v5.0 round and the
// server latency bounds of LoadGen's mlperf.conf.
const (
	SourceSuite   = "MLCommons inference README, 'MLPerf Inference v5.0 (submission deadline February 28, 2025)' and v4.1 tables, https://github.com/mlcommons/inference"
	SourceLatency = "MLCommons LoadGen mlperf.conf (*.Server.target_latency, ttft_latency, tpot_latency; 99th percentile), https://github.com/mlcommons/inference/blob/master/loadgen/mlperf.conf"
)

const ms = model.Seconds(1e-3)

// bertMeanTokens is SQuAD v1.1's mean tokens a sample at max_seq_len
// 384, 0.46·384 = 176.64 rounded (see Suite).
const bertMeanTokens = 177

// The LLM datasets' token counts, in each model's own tokenizer, as the
// reference's preprocessed datasets hold them (the prompt with its chat
// template, the reference answer). MLCommons publishes the mean output
// (the accuracy target tokens_per_sample) with each reference but not
// the mean input; the sums below are counted from MLCommons' own
// dataset files, column by column, by two public projects:
//
//   - openshift-psap/performance-dashboard, mlperf-data/summaries/
//     {llama2-70b-99,llama3-1-405b,mixtral-8x7b}.csv (commits 7cd1065,
//     739352b, 67033ba): input_length and output_length a sample, from
//     tok_input_length/tok_output_length (OpenOrca,
//     open_orca_gpt4_tokenized_llama.sampled_24576.pkl.gz) and
//     tok_input_len/tok_ref_output_len (mlperf_llama3.1_405b_dataset_8313_
//     processed_fp16_eval.pkl, 09292024_mixtral_15k_mintoken2_v1.pkl);
//   - FlashLab-MBZUAI/HBFSim, validation/calibration/h100-llama2-70b-
//     calibration-protocol.json (commit 96cf1b3): the OpenOrca file's
//     input_tokens "sum": 5463976 over "rows": 24576, digest-bound to
//     the MLCommons download (md5 c247a315b9328365f66d2c2585b35cd4).
//
// The two agree on OpenOrca to the token, and the counted reference
// outputs of Llama 3.1 405B and Mixtral reproduce MLCommons' published
// tokens_per_sample (684.68, 144.84) to the hundredth, so the columns
// are the models' tokens. GPT-J's CNN/DailyMail prompts are tokenized
// at run time and no count of them in GPT-J's tokenizer was found (the
// Llama 3.1 8B file of the same articles counts Llama 3's tokens); its
// mean output is LoadGen's (gptjOutputTokens).
const (
	openOrcaSamples     = 24576   // llama2-70b: OpenOrca, 24,576 samples
	openOrcaInputTokens = 5463976 // their tok_input_length, summed: mean 222.33

	llama405Samples     = 8313     // llama3.1-405b: 8,313 samples
	llama405InputTokens = 78380323 // their tok_input_len, summed: mean 9,428.64
	llama405RefTokens   = 5691783  // their tok_ref_output_len, summed: 684.685 (README: 684.68)

	mixtralSamples     = 15000   // mixtral-8x7b: 15,000 samples
	mixtralInputTokens = 6410905 // their tok_input_len, summed: mean 427.39
	mixtralRefTokens   = 2172643 // their tok_ref_output_len, summed: 144.843 (README: 144.84)
)

// gptjOutputTokens is GPT-J's mean output a sample as MLCommons takes
// it: LoadGen's "gptj.*.token_latency_scaling_factor = 69" (loadgen/
// mlperf.conf, from mlcommons/inference #1699, 2024-05-21), the tokens a
// sample by which LoadGen infers GPT-J's tokens/s and TPOT from its
// samples (NVIDIA's v4.1 DGX H100 Offline log: 286.084 samples/s,
// result_inferred_tokens_per_second 19,739.8 = 69 × 286.084).
const gptjOutputTokens = 69

// sourceLoadGenCounts cites the LLM benchmarks' sample counts, LoadGen's
// "<name>.*.performance_sample_count_override" and
// "<name>.Offline.min_query_count" (the two equal for every LLM
// benchmark: the whole dataset) and "sample_concatenate_permutation = 1"
// (the Offline query padded to whole copies of the loaded samples).
const sourceLoadGenCounts = "loadgen/mlperf.conf at mlcommons/inference tag v5.0"

// sourceCounted cites where the LLM datasets' input sums were counted.
const sourceCounted = "counted from the MLCommons dataset file by openshift-psap/performance-dashboard mlperf-data/summaries"

// DLRM-DCNv2's sample and batch. A LoadGen sample aggregates a user's
// user-item pairs: "each sample is mapped to 100-700 user-item pairs
// following the distribution specified by tools/dist_quantile.txt"
// (mlcommons/inference recommendation/dlrm_v2/pytorch/README.md), whose
// 20 equally likely sizes (100, 100, 200 twelve times, 300, 300, 400,
// 500, 600, 700; drawn by multihot_criteo.py with np.random.randint over
// them) have the mean 270. The trace NVIDIA's harness loads (Zenodo
// record 3941795, dlrm_trace_of_aggregated_samples.txt) splits the
// 89,137,319 rows of day 23's first half (the README's validation set)
// into 330,067 samples (qsl_reported_total_count, mlcommons/
// inference_results_v4.1 closed/NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/
// dlrm-v2-99/Offline/performance/run_1/mlperf_log_detail.txt): 270.06
// pairs a sample. NVIDIA's Offline engine batch is 600,000 pairs a GPU on
// H100 SXM and H200 SXM (gpu_batch_size {'dlrm-v2': 600_000},
// inference_results_v4.1 closed/NVIDIA/configs/dlrm-v2/Offline/__init__.py,
// classes H100_SXM_80GBx1 and H200_SXM_141GBx1; its harness batches pairs,
// code/harness/harness_dlrm_v2/batch_maker.cpp).
const (
	dlrmPairsPerSample   = 270
	nvidiaDLRMBatchPairs = 600000
)

// nvidiaRGATBatch is the seeds a batch of NVIDIA's R-GAT harness takes on
// a GPU: batch_size 6144 (inference_results_v5.1 closed/NVIDIA/code/rgat/
// pytorch/config.py; gpu_batch_size {'rgat': 6144} with
// offline_expected_qps 440,000 in the H200-SXM-141GBx8 Offline config,
// configs/H200-SXM-141GBx8/Offline/rgat.py of NVIDIA's code as copied in
// github sheldon-xiong/xxd-mlpinf @a7e9579; B200's is 11,000, ykamiset/
// inference_results_v5.1 configs/B200-SXM-180GBx8/Offline/rgat.py).
const nvidiaRGATBatch = 6144

// Suite returns the datacenter inference benchmarks of v5.0 (and BERT
// from v4.1), in MLPerf's order.
func Suite() []Benchmark {
	return []Benchmark{
		{Name: "resnet50", Round: "v5.0", Task: "image classification", Dataset: "ImageNet 2012 (224x224)",
			Model: "resnet50", Kind: Fixed, Precision: model.INT8, Latency: 15 * ms},
		{Name: "retinanet", Round: "v5.0", Task: "object detection", Dataset: "OpenImages MLPerf subset (800x800, 264 classes)",
			Model: "retinanet", Kind: Fixed, Precision: model.INT8, Latency: 100 * ms,
			Note: "detection post-processing (top-k, NMS) not priced"},
		{Name: "3d-unet-99", Round: "v5.0", Task: "medical image segmentation", Dataset: "KiTS19 (42 cases)",
			Model: "unet3d", Kind: Fixed, Precision: model.INT8, OfflineOnly: true, Unit: "windows/s",
			Note: "per 128³ window: a sample is a whole KiTS19 case, slid over with overlap 0.5, whose mean window count is not published"},
		{Name: "bert-99", Round: "v4.1", Task: "question answering", Dataset: "SQuAD v1.1 (max_seq_len 384)",
			// A sample is priced at SQuAD v1.1's mean real length under
			// max_seq_len 384: padding is 54% of the tokens (Zhang et
			// al., "Reducing BERT Computation by Padding Removal and
			// Curriculum Learning", ISPASS 2021), so 0.46·384 = 176.6
			// tokens; NVIDIA's harness drops the padding and
			// concatenates the sequences of a batch
			// (mlcommons/inference_results_v4.0 closed/NVIDIA/code/bert/
			// tensorrt/README.md, "Variable Sequence Lengths").
			Model: "bert-large", Kind: Fixed, Seq: bertMeanTokens, Precision: model.INT8, Latency: 130 * ms,
			Note: "priced at SQuAD v1.1's mean of 177 real tokens a sample (54% of 384 is padding), as the TensorRT harness runs without padding"},
		{Name: "gptj-99", Round: "v5.0", Task: "summarization", Dataset: "CNN/DailyMail (13,368 samples)",
			Model: "gpt-j-6b", Kind: LLM, Precision: model.FP8, Latency: 20000 * ms,
			Output:       gptjOutputTokens,
			LengthSource: "output: 69 tokens a sample, LoadGen's gptj.*.token_latency_scaling_factor, loadgen/mlperf.conf (mlcommons/inference #1699), with which LoadGen turns GPT-J's samples/s into tokens/s (outputs capped at 128 tokens, max_new_tokens, language/gpt-j/backend_PyTorch.py); input: no count in GPT-J's tokens published (prompts truncated at 1,919 tokens, language/gpt-j/dataset.py)",
			MaxSeqLen:    nvidiaGPTJSeqLen, SeqLenSource: "1,919 input tokens at most (language/gpt-j/dataset.py) + 128 output (max_new_tokens, backend_PyTorch.py): NVIDIA's engine max_input_len 1919, max_seq_len 2047 (" + sourceNVIDIAConfigs + ", gptj.py)",
			Samples: 13368, OfflineMinQueries: 13368, SamplesSource: "gptj.*.performance_sample_count_override = 13368, gptj.Offline.min_query_count = 13368, gptj.*.sample_concatenate_permutation = 1 (" + sourceLoadGenCounts + ")"},
		{Name: "llama2-70b-99", Round: "v5.0", Task: "question answering", Dataset: "OpenOrca (24,576 samples)",
			Model: "llama2-70b", Kind: LLM, Precision: model.FP8, TTFT: 2000 * ms, TPOT: 200 * ms,
			Input: float64(openOrcaInputTokens) / openOrcaSamples, Output: 294.45, Lengths: "llama2-70b-99.csv",
			LengthSource: "input: 5,463,976 tokens over 24,576 samples, " + sourceCounted + "/llama2-70b-99.csv and FlashLab-MBZUAI/HBFSim validation/calibration/h100-llama2-70b-calibration-protocol.json; output: 'Tokens per sample: 294.45', language/llama2-70b/README.md",
			MaxSeqLen:    nvidiaLlama2SeqLen, SeqLenSource: "inputs and outputs under 1,024 tokens each (processorca.py --seqlen_limit=1024, language/llama2-70b/README.md), generation capped at max_new_tokens 1024 (language/llama2-70b/SUT.py): NVIDIA's engine max_input_len 1024, max_seq_len 2048 (" + sourceNVIDIAConfigs + ", llama2-70b.py)",
			Samples: 24576, OfflineMinQueries: 24576, SamplesSource: "llama2-70b.*.performance_sample_count_override = 24576, llama2-70b.Offline.min_query_count = 24576, llama2-70b.*.sample_concatenate_permutation = 1 (" + sourceLoadGenCounts + ")"},
		{Name: "llama3.1-405b", Round: "v5.0", Task: "long-context question answering and summarization", Dataset: "LongBench, LongDataCollections, Ruler, GovReport",
			Model: "llama3.1-405b", Kind: LLM, Precision: model.FP8, TTFT: 6000 * ms, TPOT: 175 * ms,
			Input: float64(llama405InputTokens) / llama405Samples, Output: 684.68, Lengths: "llama3.1-405b.csv",
			LengthSource: "input: 78,380,323 tokens over 8,313 samples, " + sourceCounted + "/llama3-1-405b.csv; output: tokens_per_sample 684.68, language/llama3.1-405b/README.md",
			MaxSeqLen:    nvidiaLlama405SeqLen, SeqLenSource: "generation capped at max_tokens 2000 (language/llama3.1-405b/SUT_VLLM.py): NVIDIA's engine max_input_len 20000, max_seq_len 22000 (" + sourceNVIDIAConfigs + ", llama3_1-405b.py)",
			Samples: 8313, OfflineMinQueries: 8313, SamplesSource: "llama3_1-405b.*.performance_sample_count_override = 8313, llama3_1-405b.Offline.min_query_count = 8313, llama3_1-405b.*.sample_concatenate_permutation = 1 (" + sourceLoadGenCounts + ")"},
		{Name: "mixtral-8x7b", Round: "v5.0", Task: "question answering, math and code", Dataset: "OpenOrca, GSM8K, MBXP (15,000 samples)",
			Model: "mixtral-8x7b", Kind: LLM, Precision: model.FP8, TTFT: 2000 * ms, TPOT: 200 * ms,
			Input: float64(mixtralInputTokens) / mixtralSamples, Output: 144.84, Lengths: "mixtral-8x7b.csv",
			LengthSource: "input: 6,410,905 tokens over 15,000 samples, " + sourceCounted + "/mixtral-8x7b.csv; output: tokens_per_sample 144.84, language/mixtral-8x7b/README.md",
			MaxSeqLen:    nvidiaMixtralSeqLen, SeqLenSource: "generation capped at max_new_tokens 1024 (language/mixtral-8x7b/SUT.py): NVIDIA's engine max_input_len 2048, max_seq_len 3072 (" + sourceNVIDIAConfigs + ", mixtral-8x7b.py)",
			Samples: 15000, OfflineMinQueries: 15000, SamplesSource: "mixtral-8x7b.*.performance_sample_count_override = 15000, mixtral-8x7b.Offline.min_query_count = 15000, mixtral-8x7b.*.sample_concatenate_permutation = 1 (" + sourceLoadGenCounts + ")"},
		{Name: "stable-diffusion-xl", Round: "v5.0", Task: "text to image", Dataset: "COCO 2014 (5,000 captions), 1024x1024",
			Model: "sdxl-unet", Kind: Fixed, Precision: model.FP8, Latency: 20000 * ms,
			// A sample: both text encoders on the prompt and the negative
			// prompt (77 tokens each), 20 Euler steps of the UNet on the
			// conditional and unconditional latents (classifier-free
			// guidance, scale 8), one VAE decode.
			Parts: []Part{{Model: "clip-vit-l-text", Calls: 1, PerSample: 2, Seq: 77}, {Model: "openclip-vit-bigg-text", Calls: 1, PerSample: 2, Seq: 77},
				{Model: "sdxl-unet", Calls: 20, PerSample: 2}, {Model: "sdxl-vae-decoder", Calls: 1, PerSample: 1}},
			PartsSource: "mlcommons/inference text_to_image/backend_pytorch.py (StableDiffusionXLPipeline, EulerDiscreteScheduler, steps=20, guidance=8, a 77-token negative prompt)",
			Note:        "the scheduler's and guidance's elementwise work and the causal masks of the text encoders not priced"},
		{Name: "dlrm-v2-99", Round: "v5.0", Task: "recommendation", Dataset: "Criteo 1TB click logs, synthetic multi-hot",
			Model: "dlrm-dcnv2", Kind: Fixed, Precision: model.INT8, Latency: 60 * ms,
			// A LoadGen sample is a user's 100 to 700 user-item pairs
			// (Criteo rows), 270 on average (see dlrmPairsPerSample); the
			// batch search stops below NVIDIA's engine batch of 600,000
			// pairs a GPU (2,222 samples: 2,048, 552,960 pairs).
			PerSample: dlrmPairsPerSample, MaxBatch: nvidiaDLRMBatchPairs / dlrmPairsPerSample,
			Note: "a sample is a user's 100 to 700 Criteo rows (user-item pairs), priced at their mean of 270"},
		{Name: "rgat", Round: "v5.0", Task: "node classification", Dataset: "IGBH-full (788,379 validation seeds)",
			// A sample is one seed paper (LoadGen's rgat
			// performance_sample_count, loadgen/mlperf.conf; no Server
			// bound there). The model runs in fp16 and the node features
			// are stored in fp8 and split over the node's GPUs (WholeGraph
			// embeddings in GPU memory): NVIDIA's harness,
			// mlcommons inference_results_v5.1 closed/NVIDIA/code/rgat/
			// pytorch (config.py: fp8_embedding, wg_sharding_location
			// "cuda", partition "node"; rgat.py: model.half()).
			Model: "rgat", Kind: Fixed, Precision: model.FP16, OfflineOnly: true, Sharded: true, MaxBatch: nvidiaRGATBatch,
			// A seed's work is its expected sampled subgraph bounded from
			// above (workloads/rgat_test.go): min(mean in-degree, fanout)
			// neighbours a relation from IGBH-full's published edges per
			// relation (IGB-Datasets igb_hetero_schema.png; arXiv
			// 2302.13522), the fanout for journals and conferences (not
			// published), no node repeated.
			Note: "a seed's expected subgraph bounded from above (13,546 nodes: min(mean degree, fanout) a relation from IGBH's published edge counts, the fanout for journals and conferences, none repeated), so a lower bound; neighbour sampling not priced"},
	}
}

// Find returns the benchmark named name (case-insensitive; "llama2-70b"
// finds "llama2-70b-99"), or an error that lists the known ones.
func Find(name string) (Benchmark, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	s := Suite()
	for _, b := range s {
		if b.Name == n || strings.TrimSuffix(b.Name, "-99") == n {
			return b, nil
		}
	}
	names := make([]string, len(s))
	for i, b := range s {
		names[i] = b.Name
	}
	slices.Sort(names)
	return Benchmark{}, fmt.Errorf("unknown benchmark %q (want one of %s)", name, strings.Join(names, ", "))
}
