package serve

import (
	"math"

	"github.com/perfsim/perfsim/model"
)

// How vLLM sizes its KV cache, in both versions the presets name: v0.6.0
// (V0, the vllm-0.6 preset) and v0.10 (V1, the vllm preset). Read at
// vllm-project/vllm v0.6.0 (vllm/worker/worker.py, model_runner.py,
// distributed/device_communicators/custom_all_reduce.py) and, for V1, in
// vllm/v1/worker/gpu_worker.py with vllm/utils memory_profiling as
// vllm-project/vllm#19312 (June 2025, before v0.10.0) made them and as
// they stood until #25359 (22 September 2025, after v0.10.2) moved the
// first reading after NCCL's start. The two differ in how they measure,
// not in what they leave out:
//
//   - v0.6.0: Worker.init_device sets the device, empties the cache and
//     reads init_gpu_memory = cudaMemGetInfo's free memory, and only then
//     brings up the distributed environment (NCCL, pynccl, the custom
//     all-reduce); determine_num_available_blocks runs the profile and
//     takes peak = init_gpu_memory − free memory after it, so the peak
//     holds the weights, the activations the caching allocator kept, and
//     every allocation outside torch since the first reading; num_gpu_blocks
//     = ⌊(total × gpu_memory_utilization − peak) / block bytes⌋, total
//     cudaMemGetInfo's total.
//   - v0.10: init_device takes a MemorySnapshot (free, total, torch
//     reserved) before init_worker_distributed_environment; after the
//     profile run, memory_profiling counts weights (torch allocated while
//     loading) + the torch allocated peak's rise in the profile + the rise
//     of non-torch memory (cudaMemGetInfo's used less torch's reserved)
//     since that snapshot; the KV cache gets total × gpu_memory_utilization
//     less that, in whole blocks of every layer (kv_cache_utils.py:
//     num_blocks = bytes // page size // layers).
//
// So in both the CUDA context (created before the first reading) is not
// counted, and lives with the CUDA graphs (captured after the KV cache is
// allocated: v0.6.0 Worker._warm_up_model, v0.10
// compile_or_warm_up_model) and allocator slack in the 1 −
// gpu_memory_utilization left over; NCCL's buffers and the custom
// all-reduce's, allocated after it, are counted inside the fraction.

// VLLMNonTorchBase is the memory outside torch that vLLM counts at TP 1
// (cuBLAS handles, kernels loaded on first use, attention backends'
// buffers): 0.16 GiB, "non_torch_memory takes 0.16GiB" in the log of
// vllm-project/vllm#12126 (January 2025, V0's memory_profiling, which
// counts from a reading taken after the CUDA context as both presets' code
// does; one H100 80GB, TP 1, a Llama 3.2 11B model). One measured figure,
// taken for every device.
const VLLMNonTorchBase = model.Bytes(0.16 * gib)

// VLLMCommBuffers is the memory NCCL's communicators and vLLM's custom
// all-reduce take on each device at TP × PP > 1, counted inside
// gpu_memory_utilization by both presets. ASSUMED: no per-device figure
// was found; 4.52 GiB is the one public reading, vllm-project/vllm#25359
// (September 2025, vLLM V1 at about v0.10 on 80 GB GPUs, the TP size not
// stated, Ray's backend): free memory 78.59 GiB before NCCL's start and
// 74.07 GiB after ("NCCL buffers (~4.5 GiB for tensor parallelism)"). It
// covers pynccl's communicator and torch's, NVLink SHARP's buffers where
// the GPUs have it, and the custom all-reduce's IPC buffers (about 24 MiB:
// custom_all_reduce.py allocates meta_size + 8 MiB of meta, an 8 MiB
// buffer and 8 MiB of rank data, max_size 8 MiB, at v0.6.0 and v0.10).
// GPUs without NVLink SHARP (A100) likely take less; v0.6.0 ran NCCL
// 2.20, v0.10 2.26.
const VLLMCommBuffers = model.Bytes(4.52 * gib)

// VLLMNonTorch returns the memory outside torch that vLLM counts against
// gpu_memory_utilization on each device of a replica of ranks devices:
// VLLMNonTorchBase, and VLLMCommBuffers when there is more than one rank.
func VLLMNonTorch(ranks int) model.Bytes {
	if ranks > 1 {
		return VLLMNonTorchBase + VLLMCommBuffers
	}
	return VLLMNonTorchBase
}

// VLLMProfileRows is the sequences vLLM's profile run spreads its tokens
// over, each giving one row of logits to the sampler: max_num_seqs, at
// most one per token (v0.6.0 model_runner.py profile_run: max_num_seqs
// dummy sequences of max_num_batched_tokens // max_num_seqs tokens, the
// remainder one each to the first; v0.10 gpu_model_runner.py _dummy_run:
// num_reqs = min(num_tokens, max_num_seqs), then _dummy_sampler_run on
// their last tokens).
func VLLMProfileRows(maxSeqs, maxTokens int) int { return max(min(maxSeqs, maxTokens), 1) }

// VLLMProfilePeak returns the activation peak of vLLM's profile run: the
// larger of the forward pass's working set at max_num_batched_tokens
// (forward, sim's) and the sampler's float32 logits of rows sequences over
// the whole vocabulary (both versions' samplers cast the logits to
// float32, gathered whole on the first rank, the one whose memory binds:
// the executor takes the least over the workers). The logits are a lower
// bound on the sampler's peak (its top-k/top-p sort and probabilities
// make further copies, not counted).
func VLLMProfilePeak(forward model.Bytes, rows, vocab int) model.Bytes {
	return max(forward, model.Bytes(4*float64(rows)*float64(vocab)))
}

// VLLMKVTokens returns the tokens of KV cache vLLM gives one device:
// whole blocks of block tokens of unit bytes each (a token's KV over every
// layer on the device) in total × util − counted, where total is
// cudaMemGetInfo's total (the usable memory) and counted the weights, the
// profile's activation peak, the memory outside torch and any runtime
// buffers. A result under one block is vLLM's "No available memory for the
// cache blocks".
func VLLMKVTokens(total, counted model.Bytes, util, unit float64, block int) float64 {
	b := max(block, 1)
	blocks := math.Floor((float64(total)*util - float64(counted)) / (unit * float64(b)))
	return blocks * float64(b)
}
