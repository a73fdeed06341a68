package serve

import (
	"math"
	"slices"

	"github.com/perfsim/perfsim/model"
)

// SGLang v0.4.0's defaults that depend on the layout, the device or the
// KV cache, and its waiting queue's order. Read at
// sgl-project/sglang@f8b03269 (v0.4.0; the VPTQ/sglang fork's copy of
// that commit).

// SGLangSmallGPU is the device memory below which SGLang v0.4.0 takes its
// small-GPU defaults: ServerArgs.__post_init__
// (python/sglang/srt/server_args.py) compares get_nvgpu_memory_capacity()
// (python/sglang/srt/utils.py: nvidia-smi's memory.total, in MiB, the
// least over the node's GPUs) with 25,000. perfsim compares the memory
// programs can allocate (hardware.Memory.Limit), a few hundred MiB under
// nvidia-smi's figure; no device in the catalog lies between them (the
// 24 GiB cards are under 24,600 MiB, the next is 32 GiB).
const SGLangSmallGPU = model.Bytes(25000 << 20)

// What SGLang v0.4.0 keeps back. Its code keeps nothing back by name:
// ModelRunner.init_torch_distributed (model_executor/model_runner.py)
// sets the device, brings up torch.distributed and vLLM's model-parallel
// groups (pynccl's communicator and the custom all-reduce at TP > 1) and
// only then reads "total", the free memory (SGLangKVTokens). What the
// CUDA context and the communicators hold by then is therefore outside
// total, and is what the preset takes off the usable memory in place of
// the device's flat reserve. No source sizes it from the code; SGLang's
// own logs give the reading ("Load weight begin. avail mem=…", the
// same get_available_gpu_memory taken right after, in GiB), and the
// figures below are the usable memory of perfsim's H100 SXM, 79.11 GiB
// (hardware/devices/h100-sxm.toml, the CUDA total PyTorch reports), less
// that reading. Both are from 80 GB GPUs; they are taken for every
// device (the catalog has no measured context per GPU generation; the
// A100 80GB's usable memory, 79.15 GiB, is within 0.04 GiB of the H100's).

// SGLangContext is the memory gone before SGLang's first reading at
// TP 1: the CUDA context (torch.distributed at world size 1 creates no
// communicator): 79.11 − 78.81 GiB. 78.81 GiB is SGLang's log at TP 1 on
// an 80 GB GPU, Llama 3.1 8B, mem_fraction_static 0.88
// (docs.sglang.ai/start/send_request.html, built 2025-01-23, SGLang
// v0.4.1-era server_args; the same 78.81 in SGLang's CI log of
// 2025-01-15). PyTorch measured a CUDA context of 287,047,680 B (0.27
// GiB) with lazy module loading, 666,632,192 B without
// (pytorch/pytorch#86509), which agrees.
const SGLangContext = model.Bytes(0.30 * gib)

// SGLangDistributed is the memory gone before SGLang's first reading at
// TP > 1: the CUDA context, pynccl's NCCL communicator (brought up with a
// warm-up all-reduce) and the custom all-reduce's buffers: 79.11 − 77.17
// GiB, 77.17 GiB being the lower of the two ranks' readings in a TP 2
// log of 2024-11-25, a week before v0.4.0 (sgl-project/sglang#2174, test
// output in its description; an 80 GB GPU, not named: the readings
// exceed a 40 GB card's and fall short of a 94 GB one's). ONE READING
// at TP 2, taken for every TP > 1: NCCL's ring and tree buffers grow
// with its channels, not its ranks, and SGLang turns NVLink SHARP, whose
// buffers grow with the ranks, off (NCCL_NVLS_ENABLE=0 in its
// environment since sgl-project/sglang#631, July 2024; later behind
// --enable-nccl-nvls, off by default); no v0.4.0-era
// reading at TP 4 or 8 was found. The logged reading comes after
// get_available_gpu_memory's MIN all-reduce, which creates
// torch.distributed's own communicator after SGLang has read total; that
// communicator therefore comes off "available" rather than total, which
// would leave (1 − mem_fraction_static) of it, at most about 0.25 GiB,
// more in the pool than here (not modelled: no reading splits it off).
const SGLangDistributed = model.Bytes(1.94 * gib)

// SGLangKeptBack returns the memory SGLang v0.4.0 finds gone before it
// reads "total" on each device of a replica of ranks devices:
// SGLangContext at one rank, SGLangDistributed at more.
func SGLangKeptBack(ranks int) model.Bytes {
	if ranks > 1 {
		return SGLangDistributed
	}
	return SGLangContext
}

// SGLangMemFraction returns mem_fraction_static as SGLang v0.4.0 defaults
// it for a TP size (server_args.py ServerArgs.__post_init__: 0.79 from TP
// 16, 0.81 from 8, 0.85 from 4, 0.87 from 2, else 0.88). It has no
// pipeline parallelism; its data-parallel replicas each take the TP
// size's fraction.
func SGLangMemFraction(tp int) float64 {
	switch {
	case tp >= 16:
		return 0.79
	case tp >= 8:
		return 0.81
	case tp >= 4:
		return 0.85
	case tp >= 2:
		return 0.87
	}
	return 0.88
}

// SGLangKVTokens returns the tokens of KV cache SGLang v0.4.0 gives a
// replica (max_total_num_tokens, before a --max-total-tokens cap) with a
// mem_fraction_static of frac, as ModelRunner sizes it
// (python/sglang/srt/model_executor/model_runner.py at
// sgl-project/sglang@f8b03269; read in two stored copies of the file
// from either side of v0.4.0, identical in these lines):
//
//   - init_torch_distributed sets the device, brings up NCCL and the
//     custom all-reduce (init_distributed_environment,
//     initialize_model_parallel) and only then reads "total":
//     get_available_gpu_memory (python/sglang/srt/utils.py), the free
//     memory cudaMemGetInfo reports after torch.cuda.empty_cache, in GiB
//     (bytes / 2^30). total is therefore what the CUDA context and the
//     communicators leave: total = usable − SGLangKeptBack.
//   - the weights load; profile_max_num_token reads "available" the same
//     way (total less the weights and whatever else was allocated since,
//     loaded) and keeps rest = available − total × (1 − frac) for the
//     pool: the weights and the pool share frac of total, and the
//     activations, cuBLAS's workspace and the CUDA graphs (all allocated
//     after the pool) live in the 1 − frac left, which SGLang does not
//     check.
//   - with more than one rank (distributed = tp_size > 1) each reading
//     is the least over the ranks, all-reduced (MIN) as a float32 tensor:
//     the bytes are rounded to float32 first. perfsim's ranks are alike,
//     so the least is any one's.
//   - the pool holds ⌊rest × 2^30 // cell_size⌋ tokens, cell_size the KV
//     of one token on one rank: KV heads on the rank (at least one) ×
//     head_dim × layers × 2 (K and V) × the KV type's bytes, or for MLA
//     (kv_lora_rank + qk_rope_head_dim) × layers × bytes, whole on every
//     rank; no per-layer or per-token extras (MHATokenToKVPool's one
//     padding slot, slot 0, is allocated beyond the count). cell is that
//     in bytes (sim.Memory's KV growth per token).
//
// A result under 1 is SGLang's "Not enough memory" (init_memory_pool
// refuses max_total_num_tokens <= 0).
func SGLangKVTokens(total, loaded model.Bytes, frac, cell float64, ranks int) float64 {
	free := float64(total) - float64(loaded)
	tot := float64(total)
	if ranks > 1 {
		free, tot = float64(float32(free)), float64(float32(tot))
	}
	const gib = 1 << 30
	rest := free/gib - tot/gib*(1-frac)
	return math.Floor(rest * gib / cell)
}

// SGLangChunkedPrefill returns chunked_prefill_size as SGLang v0.4.0
// defaults it on a device whose programs can allocate capacity bytes:
// 2048 under SGLangSmallGPU, else 8192 (server_args.py).
func SGLangChunkedPrefill(capacity model.Bytes) int {
	if capacity < SGLangSmallGPU {
		return 2048
	}
	return 8192
}

// SGLangGraphMaxBatch returns cuda_graph_max_bs as SGLang v0.4.0 defaults
// it: 8 under SGLangSmallGPU, else 160 (server_args.py). Its
// CudaGraphRunner (python/sglang/srt/model_executor/cuda_graph_runner.py)
// captures batches of 1, 2, 4 and 8 to 160 by 8 up to it, pads a decode
// batch to the next captured size and runs a larger batch without
// graphs (can_run: batch_size <= max_bs); the padding is priced
// (CaptureSGLang, graphs.go).
func SGLangGraphMaxBatch(capacity model.Bytes) int {
	if capacity < SGLangSmallGPU {
		return 8
	}
	return 160
}

// SGLangMaxRunning is the preset's max_running_requests before the
// request pool caps it: the pool's largest size (SGLangReqSlots).
const SGLangMaxRunning = 4097

// SGLangReqSlots returns the running requests SGLang v0.4.0 allows with a
// KV cache of kvTokens tokens for a model of context tokens when
// max_running_requests is not set: min(kvTokens / 2, the request pool's
// size), the pool holding min(max(⌊kvTokens / context × 512⌋, 2048),
// 4096) + 1 requests (python/sglang/srt/managers/tp_worker.py
// TpModelWorker.__init__; model_executor/model_runner.py
// init_memory_pool, ReqToTokenPool(size=max_num_reqs + 1)). A value the
// user sets is capped by the pool alone; kvTokens / 2 never binds in
// perfsim, each running request holding at least two tokens of KV.
func SGLangReqSlots(kvTokens, context int) int {
	pool := 4096
	if context > 0 {
		pool = min(max(int(float64(kvTokens)/float64(context)*512), 2048), 4096)
	}
	return max(min(kvTokens/2, pool+1), 1)
}

// LPMQueueLimit is the longest waiting queue SGLang v0.4.0 orders by
// longest prefix match; a longer one is served first come, first served
// (schedule_policy.py SchedulePolicy.calc_priority: "Turn off the
// expensive prefix matching and sorting when the #queue is large").
const LPMQueueLimit = 128

// orderQueue orders the waiting queue before new requests are admitted
// (under every policy: --schedule-policy lpm may be given to any), as
// SGLang's calc_priority does under "lpm": at most LPMQueueLimit waiting,
// a stable sort by the prefix the cache holds for each, longest first,
// which stays when the queue grows (Python's list.sort works in place).
// A request's match is its cached prompt tokens (Request.Cached; a
// retracted request's own prompt is not credited: see docs/serving.md).
func (l *loop) orderQueue() {
	if !l.e.LPM || l.nwait() < 2 || l.nwait() > LPMQueueLimit {
		return
	}
	l.take(l.unbuilt())
	longer := func(a, b *live) int { return b.cached - a.cached }
	if !slices.IsSortedFunc(l.waiting, longer) {
		slices.SortStableFunc(l.waiting, longer)
	}
}

// requeue puts preempted or retracted requests back in the waiting
// queue, in the order given: at the back under RequeueBack (SGLang's
// waiting_queue.extend), else at the front.
func (l *loop) requeue(rs ...*live) {
	if l.e.RequeueBack {
		l.take(l.unbuilt()) // the arrivals are ahead of them
		l.waiting = append(l.waiting, rs...)
		return
	}
	l.waiting = slices.Insert(l.waiting, 0, rs...)
}

// maxSeqs returns e's cap on running requests with blocks KV blocks for
// a model of context tokens: MaxSeqs, and under ReqPool no more than
// SGLangReqSlots allows.
func (e *Engine) maxSeqs(blocks, context int) int {
	if !e.ReqPool {
		return e.MaxSeqs
	}
	return min(e.MaxSeqs, SGLangReqSlots(blocks*e.BlockSize, context))
}

// SGLangDPAttention applies to e, SGLang's preset made with PresetFor at
// the world's TP size (every replica's GPUs: SGLang's --tp under
// --enable-dp-attention is the world, its attention TP 1, and
// mem_fraction_static follows it), what SGLang's ServerArgs.__post_init__
// changes under --enable-dp-attention (python/sglang/srt/server_args.py
// of the v0.4 series, the file with mem_fraction_static 0.81 at tp ≥ 8
// and cuda_graph_max_bs 160 that the preset follows): "the chunked
// prefill size is adjusted ... to avoid MoE kernel issues" (halved),
// cuda_graph_max_bs capped at 96, schedule_conservativeness scaled by
// 0.3 (the decode reserve), and the overlap scheduler disabled (no
// asynchronous output).
func SGLangDPAttention(e *Engine) {
	e.MaxTokens /= 2
	e.GraphMaxBatch = min(e.GraphMaxBatch, 96)
	e.Headroom = SGLangHeadroom(0.3 * SGLangConservativeness)
	e.AsyncOutput = false
}
