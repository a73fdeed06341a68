package serve

import "github.com/perfsim/perfsim/sim"

// GraphCapture is the rule by which an engine picks the batch sizes it
// captures CUDA graphs for, what it replays as one, and how it pads a
// batch to a captured size (Engine.Capture; under Engine.Graphs only).
type GraphCapture uint8

// The capture rules. Each engine's list of sizes is 1, 2, 4 and multiples
// of 8 up to its largest, and it pads a batch to the smallest captured
// size at least as large (capturedSize).
const (
	// CaptureAny replays every decode-only iteration of up to
	// GraphMaxBatch requests (0: any) as a graph of its own size, without
	// padding.
	CaptureAny GraphCapture = iota
	// CaptureSGLang is SGLang v0.4.0's CudaGraphRunner
	// (python/sglang/srt/model_executor/cuda_graph_runner.py at
	// sgl-project/sglang@f8b03269): capture_bs is [1, 2, 4] + [8i for i
	// in 1..20] (to 160) less the sizes above cuda_graph_max_bs
	// (GraphMaxBatch; 0: none left out); can_run: a decode batch of at
	// most max(capture_bs) requests; replay pads it to
	// capture_bs[bisect_left(capture_bs, raw_bs)] with one-token
	// sequences (seq_lens filled with 1) and the captured forward
	// includes the logits (run_once returns next_token_logits, sliced to
	// raw_bs after the replay), so the LM head runs on the padding rows
	// too. Prefill and mixed batches are not captured.
	CaptureSGLang
	// CaptureVLLM06 is vLLM v0.6.0's V0 model runner
	// (vllm/worker/model_runner.py at vllm-project/vllm@32e7db25, "Bump
	// version to v0.6.0"): _BATCH_SIZES_TO_CAPTURE is [1, 2, 4] + [8i for
	// i in 1..1024] (to 8192), captured up to max_batchsize_to_capture =
	// _get_max_graph_batch_size(max_num_seqs), max_num_seqs padded up to
	// the next size (256 → 256); _use_captured_graph: decode-only
	// batches of at most that many requests whose longest sequence is at
	// most max_seq_len_to_capture (VLLM06MaxSeqLenToCapture); build pads
	// the batch to _get_graph_batch_size(batch_size) with one-token
	// sequences. The logits are computed outside the graph on the
	// sampled rows (compute_logits prunes the hidden states). "vLLM only
	// captures decoding requests. Mixed batch (chunked prefill +
	// decoding) or prefill requests are not captured" (capture_model's
	// docstring). GraphMaxBatch > 0 replaces the padded max_num_seqs (a
	// what-if: v0.6.0 has no flag for it).
	CaptureVLLM06
	// CaptureVLLMV1 is vLLM V1's piecewise CUDA graphs (v0.10.0,
	// vllm-project/vllm@6d8d0a24): VllmConfig._set_cudagraph_sizes
	// captures [1, 2, 4] + range(8, cuda_graph_sizes[0] + 1, 8), less the
	// sizes above max_num_batched_tokens; SchedulerConfig defaults
	// cuda_graph_sizes to [min(max_num_seqs × 2, 512)] (GraphMaxBatch > 0
	// sets it, vLLM's --cuda-graph-sizes). The compilation level is
	// PIECEWISE with vllm.unified_attention as the splitting op
	// (CompilationConfig.set_splitting_ops_for_v1; full_cuda_graph off),
	// so attention runs between the captured pieces, launched by the
	// host. GPUModelRunner.execute_model (vllm/v1/worker/gpu_model_runner.py)
	// runs any iteration of at most the largest captured size in tokens
	// (prefill, decode or both) in the piecewise graphs, its tokens padded
	// to pad_for_cudagraph (the next captured size), and a larger one
	// eagerly ("Eager mode."), unpadded. The logits are computed outside
	// the graph on the sampled rows (logits_indices).
	CaptureVLLMV1
)

// VLLM06MaxSeqLenToCapture is vLLM v0.6.0's default
// max_seq_len_to_capture (vllm/engine/arg_utils.py EngineArgs, 8192;
// ModelConfig caps it at max_model_len): a decode batch holding a
// sequence longer than this runs without CUDA graphs.
const VLLM06MaxSeqLenToCapture = 8192

// graphSizesTop is the largest size in each rule's list before its caps.
const (
	sglangGraphTop = 160  // [1, 2, 4] + [8i for i in 1..20]
	vllm06GraphTop = 8192 // [1, 2, 4] + [8i for i in 1..1024]
	vllmV1GraphTop = 512  // min(max_num_seqs × 2, 512)
)

// capturedSize returns the smallest size of a list of 1, 2, 4 and
// multiples of 8 that holds n (n ≥ 1): the batch a graph runs at.
func capturedSize(n int) int {
	switch {
	case n <= 2:
		return max(n, 1)
	case n <= 4:
		return 4
	}
	return (n + 7) / 8 * 8
}

// largestCaptured returns the largest size at most most in the list 1,
// 2, 4, 8, 16, … top: 0 when most < 1.
func largestCaptured(top, most int) int {
	most = min(most, max(top, 4))
	switch {
	case most < 1:
		return 0
	case most < 8:
		return [...]int{1, 2, 2, 4, 4, 4, 4}[most-1]
	}
	return min(most, top) / 8 * 8
}

// GraphLimit returns the largest batch e replays as a CUDA graph: a
// decode step's requests, or under CaptureVLLMV1 an iteration's tokens;
// 0 for no limit (CaptureAny without GraphMaxBatch). Without Graphs it
// is 0 too, and nothing is replayed.
func (e *Engine) GraphLimit() int {
	if !e.Graphs {
		return 0
	}
	switch e.Capture {
	case CaptureSGLang:
		most := e.GraphMaxBatch
		if most <= 0 {
			most = sglangGraphTop
		}
		return largestCaptured(sglangGraphTop, most)
	case CaptureVLLM06:
		most := e.GraphMaxBatch
		if most <= 0 {
			most = min(capturedSize(max(e.MaxSeqs, 1)), vllm06GraphTop)
		}
		return largestCaptured(vllm06GraphTop, most)
	case CaptureVLLMV1:
		top := e.GraphMaxBatch
		if top <= 0 {
			top = min(2*e.MaxSeqs, vllmV1GraphTop)
		}
		// [1, 2, 4] whatever top is, then 8 to top by 8; none above the
		// token budget.
		return largestCaptured(top, e.MaxTokens)
	}
	return e.GraphMaxBatch
}

// launch sets how it is launched under e's CUDA graphs (most:
// e.GraphLimit()): eagerly, as a graph padded to a captured size, or in
// piecewise graphs. Decode holds each decode token's context, so the
// longest sequence of a decode step is its largest context plus one.
func (e *Engine) launch(it *sim.Iteration, most int) {
	it.Eager, it.Piecewise, it.Pad, it.Head = false, false, 0, sim.HeadInGraph
	if !e.Graphs {
		return
	}
	// vLLM computes the logits outside its graphs.
	if e.Capture == CaptureVLLM06 || e.Capture == CaptureVLLMV1 {
		it.Head = sim.HeadEager
	}
	if e.Capture == CaptureVLLMV1 {
		n := it.Tokens()
		if n > most {
			it.Eager = true
			return
		}
		it.Piecewise, it.Pad = true, capturedSize(n)-n
		return
	}
	if len(it.Prefill) > 0 {
		return // launched eagerly: no engine but V1 captures a prefill
	}
	n := len(it.Decode)
	if most > 0 && n > most {
		it.Eager = true
		return
	}
	switch e.Capture {
	case CaptureVLLM06:
		for _, c := range it.Decode {
			if c+1 > VLLM06MaxSeqLenToCapture {
				it.Eager = true
				return
			}
		}
		it.Pad = capturedSize(n) - n
	case CaptureSGLang:
		it.Pad, it.Head = capturedSize(n)-n, sim.HeadPadded
	}
}
