package serve

import "fmt"

// trtllm014Config is one entry of trtllm-bench's benchmark_config.yml:
// the engine's max_batch_size and max_num_tokens for a model at TP × PP,
// in general or for one maximum sequence length (isl + osl of the
// dataset's longest request).
type trtllm014Config struct {
	tp, pp, seqLen     int // seqLen 0: the "general" entry
	maxBatch, maxToken int
}

// trtllm014Configs is benchmark_config.yml as TensorRT-LLM's trtllm-bench
// build read it in the v0.14 era (NVIDIA/TensorRT-LLM
// tensorrt_llm/bench/build/benchmark_config.yml @8fcf9fc2, the stored
// version with entries for every TP the v0.14 perf-overview ran for
// Llama 3 70B; v0.14.0's build.py @b0880169
// get_benchmark_engine_settings takes the entry for the dataset's
// max_seq_len, else "general", and refuses a model or TP × PP it does not
// list).
var trtllm014Configs = map[string][]trtllm014Config{
	"meta-llama/Llama-2-7b-hf": {{1, 1, 0, 4096, 8192}},
	"meta-llama/Llama-2-70b-hf": {{2, 1, 0, 2048, 2048}, {4, 1, 0, 4096, 8192}, {4, 1, 4224, 256, 8192},
		{8, 1, 0, 8192, 16384}, {8, 1, 2176, 1024, 16384}},
	"tiiuae/falcon-180B":         {{4, 1, 0, 4096, 8192}, {8, 1, 0, 2048, 8192}},
	"EleutherAI/gpt-j-6b":        {{1, 1, 0, 128, 2048}, {1, 1, 256, 2048, 2048}},
	"meta-llama/Meta-Llama-3-8B": {{1, 1, 0, 2048, 8192}},
	"meta-llama/Meta-Llama-3-70B": {{1, 1, 0, 2048, 2048}, {2, 1, 0, 256, 1024}, {2, 1, 4096, 2048, 1024},
		{4, 1, 0, 2048, 1024}, {8, 1, 0, 8192, 16384}},
	"mistralai/Mixtral-8x7B-v0.1": {{2, 1, 0, 2048, 3072}, {4, 1, 0, 8192, 8192}},
	"mistralai/Mistral-7B-v0.1":   {{1, 1, 0, 4098, 8192}},
}

// TRTLLMBench014 returns max_batch_size and max_num_tokens as
// TensorRT-LLM v0.14's `trtllm-bench build --dataset` chose them for the
// HuggingFace model hf at TP × PP and a dataset whose longest request is
// maxSeqLen tokens (isl + osl): the entry of benchmark_config.yml for
// that length, else its general entry. A model or layout the file does
// not list is an error, as it was for trtllm-bench. (Its successor,
// TRTLLMBench, derives them from memory instead.)
func TRTLLMBench014(hf string, tp, pp, maxSeqLen int) (maxBatch, maxTokens int, err error) {
	cs, ok := trtllm014Configs[hf]
	if !ok {
		return 0, 0, fmt.Errorf("trtllm-bench v0.14: %q is not a model configured for benchmarking (benchmark_config.yml)", hf)
	}
	found := false
	for _, c := range cs {
		if c.tp != tp || c.pp != pp {
			continue
		}
		switch {
		case c.seqLen == maxSeqLen:
			return c.maxBatch, c.maxToken, nil
		case c.seqLen == 0:
			maxBatch, maxTokens, found = c.maxBatch, c.maxToken, true
		}
	}
	if !found {
		return 0, 0, fmt.Errorf("trtllm-bench v0.14: TP %d × PP %d is not a configuration benchmark_config.yml lists for %q", tp, pp, hf)
	}
	return maxBatch, maxTokens, nil
}
