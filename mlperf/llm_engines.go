package mlperf

import (
	"fmt"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// NVIDIA's MLPerf Inference submissions state each LLM engine's limits
// per benchmark, system and scenario in their harness configs: the
// build's max_batch_size (gpu_batch_size), max_num_tokens and
// max_seq_len (trtllm_build_flags), and the runtime's max_num_tokens and
// max_batch_size where they are set lower (trtllm_runtime_flags; the
// runtime schedules by these). perfsim's replica takes the runtime's
// limits where NVIDIA states them for the device and the benchmark's
// longest request for max_seq_len, and trtllm-bench's heuristic
// (serve.TRTLLMBench) otherwise.
//
// The values are those of the Custom harness, MaxP, 99% accuracy, on
// 8 × H100-SXM-80GB (DGX H100) and 8 × H200-SXM-141GB, from NVIDIA's v5.1
// configs (configs/<system>/<Scenario>/<benchmark>.py, read in the copy
// sheldon-xiong/xxd-mlpinf @c70c0fa of NVIDIA's closed-division code).
// v5.0's configs (configs/<benchmark>/<Scenario>/__init__.py), which
// the results perfsim is checked against were run with, give the same
// values where they were read: llama2-70b Offline (classes
// H100_SXM_80GB_PP2x4 and H200_SXM_141GBx8, mlcommons/
// inference_results_v5.0 closed/NVIDIA), mixtral-8x7b and llama3.1-405b
// Offline and mixtral-8x7b Server (found by text in the code index, the
// repository not named there).
const sourceNVIDIAConfigs = "NVIDIA's MLPerf Inference v5.1 configs, closed/NVIDIA/configs/{DGX-H100_H100-SXM-80GBx8,H200-SXM-141GBx8}/{Offline,Server}/ (copy sheldon-xiong/xxd-mlpinf @c70c0fa); v5.0's configs/<benchmark>/<Scenario>/__init__.py agree where read"

// The engines' max_seq_len (the build's max_input_len + the longest
// output), from NVIDIA's configs: the same on H100 and H200 and in both
// scenarios.
const (
	nvidiaLlama2SeqLen   = 2048  // max_input_len 1024
	nvidiaMixtralSeqLen  = 3072  // max_input_len 2048
	nvidiaLlama405SeqLen = 22000 // max_input_len 20000
	nvidiaGPTJSeqLen     = 2047  // max_input_len 1919
)

// nvidiaEngine is one engine's scheduling limits in NVIDIA's submission.
type nvidiaEngine struct {
	// Batch and Tokens are the runtime's max_batch_size and
	// max_num_tokens (the build's where the runtime sets none).
	Batch, Tokens int
	// TP and PP are NVIDIA's layout of the engine, which perfsim does
	// not take: it picks its own tensor parallelism (runLLM).
	TP, PP int
	// GEMMAllReduce is the build's gemm_allreduce_plugin: each
	// row-parallel GEMM fused with the all-reduce of its output
	// (sim.Scenario.GEMMAllReduce).
	GEMMAllReduce bool
}

// nvidiaEngines holds NVIDIA's engine limits by benchmark and device
// name, Offline then Server. A pair missing means NVIDIA states none for
// that device (no DGX H100 Llama 3.1 405B submission).
var nvidiaEngines = map[string]map[string][2]nvidiaEngine{
	"llama2-70b-99": {
		// gpu_batch_size 1024, max_num_tokens 1024 (build and runtime),
		// TP 1 × PP 2, in both scenarios.
		"H100 SXM": {{Batch: 1024, Tokens: 1024, TP: 1, PP: 2}, {Batch: 1024, Tokens: 1024, TP: 1, PP: 2}},
		// gpu_batch_size 2048, max_num_tokens 1536, TP 1.
		"H200 SXM": {{Batch: 2048, Tokens: 1536, TP: 1, PP: 1}, {Batch: 2048, Tokens: 1536, TP: 1, PP: 1}},
	},
	"mixtral-8x7b": {
		// gpu_batch_size 896; Offline max_num_tokens 8192, Server 16384.
		"H100 SXM": {{Batch: 896, Tokens: 8192, TP: 1, PP: 1}, {Batch: 896, Tokens: 16384, TP: 1, PP: 1}},
		// gpu_batch_size 3072, build max_num_tokens 16384; the runtime's
		// 9216 Offline, 8192 Server.
		"H200 SXM": {{Batch: 3072, Tokens: 9216, TP: 1, PP: 1}, {Batch: 3072, Tokens: 8192, TP: 1, PP: 1}},
	},
	"llama3.1-405b": {
		// Offline: gpu_batch_size 512, build max_num_tokens 2560, the
		// runtime's 1536, TP 4 × PP 2. Server: build 512 and 8192, the
		// runtime's max_batch_size 64 and max_num_tokens 2560, TP 8.
		// Both builds set 'gemm_allreduce_plugin': 'float16' (v5.1's
		// H200-SXM-141GBx8 files; v5.0's classes H200_SXM_141GBx8_TP4PP2
		// and H200_SXM_141GBx8_TP8PP1, as submitters' v5.0 configs that
		// derive from them copy them: closed/Dell/configs/llama3_1-405b
		// and closed/HPE/configs/llama3_1-405b/Server/custom.py in
		// ntuhpc/mlperf_inference_results_v5.0).
		"H200 SXM": {{Batch: 512, Tokens: 1536, TP: 4, PP: 2, GEMMAllReduce: true}, {Batch: 64, Tokens: 2560, TP: 8, PP: 1, GEMMAllReduce: true}},
	},
	"gptj-99": {
		// gpu_batch_size 192 Offline, 256 Server, max_num_tokens 4096;
		// beam width 4 (perfsim decodes one beam).
		"H100 SXM": {{Batch: 192, Tokens: 4096, TP: 1, PP: 1}, {Batch: 256, Tokens: 4096, TP: 1, PP: 1}},
		"H200 SXM": {{Batch: 396, Tokens: 4096, TP: 1, PP: 1}, {Batch: 396, Tokens: 4096, TP: 1, PP: 1}},
	},
}

// llmLimits are a replica's engine limits and where they come from.
type llmLimits struct {
	MaxSeqs, MaxTokens, MaxSeqLen int
	// NVIDIA says the batch and token limits are NVIDIA's (else
	// trtllm-bench's heuristic).
	NVIDIA bool
	// GEMMAllReduce says NVIDIA's engine fuses the row-parallel GEMMs
	// with their all-reduces (gemm_allreduce_plugin).
	GEMMAllReduce bool
}

func (l llmLimits) String() string {
	from := "trtllm-bench's heuristic (NVIDIA states none for this device)"
	if l.NVIDIA {
		from = "NVIDIA's submission"
	}
	s := fmt.Sprintf("max_batch_size %d, max_num_tokens %d from %s, max_seq_len %d", l.MaxSeqs, l.MaxTokens, from, l.MaxSeqLen)
	if l.GEMMAllReduce {
		s += ", gemm_allreduce_plugin"
	}
	return s
}

// engineLimits returns the limits of a replica of tp devices dev serving
// w for benchmark b in scenario sc at the mean lengths in and out:
// NVIDIA's where it states them for the device (its name), else
// trtllm-bench's heuristic from memory and the mean lengths; max_seq_len
// is the benchmark's longest request, or in + out where it has none.
func engineLimits(dev *hardware.Device, w sim.Workload, b Benchmark, sc Scenario, kv model.DType, tp, in, out int) llmLimits {
	l := llmLimits{MaxSeqLen: b.MaxSeqLen}
	if l.MaxSeqLen <= 0 {
		l.MaxSeqLen = in + out
	}
	if e, ok := nvidiaEngines[b.Name][dev.Name]; ok {
		l.MaxSeqs, l.MaxTokens, l.NVIDIA, l.GEMMAllReduce = e[sc].Batch, e[sc].Tokens, true, e[sc].GEMMAllReduce
		return l
	}
	l.MaxSeqs, l.MaxTokens = serve.TRTLLMBench(dev.Memory.Capacity, tp, 1, w.Params(), b.Precision.Size(), w.KVBytesPerToken(kv), in, out)
	return l
}
