package serve

import (
	"math"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// BufferModel names how an engine's own runtime buffers (those it sizes
// by its build limits, outside the weights, the activations and the KV
// cache) are counted in the memory the KV cache is sized from.
type BufferModel uint8

// The buffer models.
const (
	// NoBuffers leaves them to the device's flat reserve.
	NoBuffers BufferModel = iota
	// TRTLLM014Buffers counts the buffers TensorRT-LLM v0.14's C++
	// runtime allocates before it sizes the KV cache (TRTLLMBuffers).
	TRTLLM014Buffers
)

// TRTLLMBufferSet is the GPU memory, on one device, that TensorRT-LLM
// v0.14's in-flight batching runtime allocates by its build limits
// before it sizes the KV cache, buffer by buffer.
//
// Order. TrtGptModelInflightBatching's constructor creates the custom
// all-reduce workspace (TP > 1), the runtime buffers, then the decoder,
// and only then the KV cache manager, whose pool is
// free_gpu_memory_fraction (0.9) of the memory free at that moment: every
// buffer here therefore reduces the KV cache by its full size, as the
// engine's activation memory (TllmRuntime, allocated at engine load)
// does. The batch manager was closed source in v0.14, so the order and
// its buffers are read from later open versions of
// NVIDIA/TensorRT-LLM cpp/tensorrt_llm/batch_manager/:
// trtGptModelInflightBatching.cpp @00825c4e (the constructor's order,
// logging "[MemUsageChange] Allocated … GPU memory for runtime buffers"
// and "… for decoder" before the KV cache, as v0.14-era logs do),
// runtimeBuffers.cpp @092a5a15 (logits preallocated at the maximum),
// transformerBuffers.cpp @0165bd7a (cacheIndirection) and
// decoderBuffers.cpp @000a01de (SlotDecoderBuffers); DecoderBuffers'
// cacheIndirectionInput/Output and the resolution of the Auto decoding
// mode come from earlier versions of those files that the code index
// found by text without naming their repository (2024 headers; the
// tensors later moved to runtime::decoder::DecoderState). The decoder is
// read at v0.14.0 itself (b0880169: runtime/gptDecoderBatched.cpp,
// runtime/gptDecoder.cpp). trtllm-bench v0.14 sets no decoding mode, so
// the runtime resolves Auto to TopKTopP at one beam, which carries
// kUsePenalties (executor/types.h DecodingMode); CUDA graphs are off
// (no graph pool).
//
// Symbols: B is max_batch_size (one beam, no draft tokens), S the
// engine's max_seq_len (also its max attention window), V the vocabulary,
// Vp it padded to a multiple of TP × PP (ModelConfig::getVocabSizePadded),
// L the bytes of a logit: 4, the logits are float32
// (tensorrt_llm/models/modeling_utils.py PretrainedConfig logits_dtype
// default 'float32'; the decoder and the logits buffers take the engine's
// "logits" tensor type). Tensors of B entries or fewer (sequence
// lengths, finished flags, curand states of 48 bytes a slot) are left
// out: under 2 MB at B = 8192.
type TRTLLMBufferSet struct {
	// RuntimeLogits is RuntimeBuffers' logits, [B, Vp] of L bytes,
	// preallocated at the maximum (setMaxBufferSizes: numLogits = B);
	// one RuntimeBuffers with context and generation fused.
	RuntimeLogits model.Bytes
	// CacheIndirection is [B, 1, S] int32 three times: TransformerBuffers'
	// cacheIndirection and DecoderBuffers' cacheIndirectionInput and
	// cacheIndirectionOutput.
	CacheIndirection model.Bytes
	// SlotOutputs is SlotDecoderBuffers, one per sequence slot:
	// outputIds [1, S] int32 and logProbs [1, S] float32 on the GPU.
	SlotOutputs model.Bytes
	// DecoderOutputs is GptDecoderBatched::setup's ids and parentIds
	// ([B, 1, S] int32), logProbs ([B, 1, S] float32) and logProbsTiled
	// ([S, B, 1] float32).
	DecoderOutputs model.Bytes
	// EmbeddingBias is GptDecoderBatched's embeddingBias, [B, Vp] of L
	// bytes.
	EmbeddingBias model.Bytes
	// SamplingLogits is DecodingLayerWorkspace's runtime logits,
	// [B, 1, 1, Vp] of L bytes (runtime/decodingLayerWorkspace.cpp).
	SamplingLogits model.Bytes
	// SamplingWorkspace is DecodingLayerWorkspace's scratch, the largest
	// workspace of the decoding layers (DynamicDecodeLayer::
	// getWorkspaceSize): top-k sampling's, L·B·Vp for the temporary log
	// probabilities and B·8·1024·(4 + L) for the per-block candidates
	// (kernels/samplingTopKKernels.h getTopKWorkspaceSizes with maxTopK
	// TOP_K_MAX 1024, 8 blocks per beam; layers/topKSamplingLayer.cpp),
	// each aligned to 256 bytes. AIR top-p's (the default top-p,
	// kernels/samplingAirTopPKernels.cu getAirTopPWorkspaceSizes) is
	// smaller: B·(Vp/2 + 24 KiB) and a counter a slot.
	SamplingWorkspace model.Bytes
	// Penalty is PenaltyLayer's occurrence-penalty workspace, [B, 1, 1, V]
	// int32 (layers/penaltyLayer.cpp allocateWorkspace).
	Penalty model.Bytes
	// AllReduce is the custom all-reduce's IPC workspace at TP > 1
	// (runtime/ipcUtils.cpp AllReduceBuffers): two buffers of
	// TP·min(B·S·hidden·4, 16 MB at TP ≤ 2, else 8 MB)
	// (common/customAllReduceUtils.h getMaxRequiredWorkspaceSize) and two
	// flag buffers of IpcMemory::FLAGS_SIZE·TP·2 bytes, each rounded up
	// to 2 MiB (IpcMemory's alignment); the flags are taken as one 2 MiB
	// unit each (FLAGS_SIZE itself was not read).
	AllReduce model.Bytes
}

// Total is the sum of the buffers.
func (b TRTLLMBufferSet) Total() model.Bytes {
	return b.RuntimeLogits + b.CacheIndirection + b.SlotOutputs + b.DecoderOutputs + b.EmbeddingBias +
		b.SamplingLogits + b.SamplingWorkspace + b.Penalty + b.AllReduce
}

// trtllmLogitBytes is the size of one logit: float32, TensorRT-LLM's
// default logits_dtype (tensorrt_llm/models/modeling_utils.py).
const trtllmLogitBytes = 4

// TRTLLMBuffers returns the buffers TensorRT-LLM v0.14 allocates on one
// device before the KV cache (TRTLLMBufferSet says which and from
// where) for an engine of maxBatch sequences and maxSeqLen tokens a
// sequence, a model of vocab tokens and hidden width hidden, at tp × pp.
// The last pipeline stage holds them all (the decoder and the logits
// live there); every stage is charged them, the stage with the least
// free memory bounding the KV cache.
func TRTLLMBuffers(maxBatch, maxSeqLen, vocab, hidden, tp, pp int) TRTLLMBufferSet {
	b, s, v := float64(max(maxBatch, 0)), float64(max(maxSeqLen, 0)), float64(max(vocab, 0))
	world := max(tp, 1) * max(pp, 1)
	vp := float64((max(vocab, 0) + world - 1) / world * world)
	const l = trtllmLogitBytes
	align := func(x, a float64) float64 { return a * math.Ceil(x/a) }
	var set TRTLLMBufferSet
	set.RuntimeLogits = model.Bytes(l * b * vp)
	set.CacheIndirection = model.Bytes(3 * 4 * b * s)
	set.SlotOutputs = model.Bytes(b * (4 + 4) * s)
	set.DecoderOutputs = model.Bytes((4 + 4 + 4 + 4) * b * s)
	set.EmbeddingBias = model.Bytes(l * b * vp)
	set.SamplingLogits = model.Bytes(l * b * vp)
	const topKMax, blocksPerBeam = 1024, 8
	set.SamplingWorkspace = model.Bytes(align(l*b*vp, 256) + align(4*b*topKMax*blocksPerBeam, 256) + align(l*b*topKMax*blocksPerBeam, 256))
	set.Penalty = model.Bytes(4 * b * v)
	if tp > 1 {
		ws := 8e6
		if tp <= 2 {
			ws = 16e6
		}
		const ipcAlign = 1 << 21
		buf := align(float64(tp)*math.Min(b*s*float64(max(hidden, 0))*4, ws), ipcAlign)
		set.AllReduce = model.Bytes(2*buf + 2*ipcAlign)
	}
	return set
}

// RuntimeBuffers returns the engine's own runtime buffers on one device
// of p's replica under its buffer model: 0 under NoBuffers. The build's
// max_seq_len is e.MaxSeqLen, or the model's context when 0
// (trtllm-build's default, max_position_embeddings).
func (e *Engine) RuntimeBuffers(p *sim.Pricer) model.Bytes {
	if e.Buffers != TRTLLM014Buffers || p == nil {
		return 0
	}
	shape, sc := p.Shape(), p.Scenario()
	seq := e.MaxSeqLen
	if seq <= 0 {
		seq = shape.MaxContext
	}
	return TRTLLMBuffers(e.MaxSeqs, seq, shape.Vocab, shape.DModel, sc.TP, sc.PP).Total()
}
