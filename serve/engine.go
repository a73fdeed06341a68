package serve

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// Policy is the order in which an engine fills an iteration.
type Policy uint8

// The policies.
const (
	// DecodeFirst: running requests first (a decode token each, or their
	// next prefill chunk), then new prompts in the token budget that is
	// left; prefill and decode share iterations (vLLM V1, TensorRT-LLM
	// in-flight batching).
	DecodeFirst Policy = iota
	// PrefillFirst: whenever a waiting prompt can be admitted, the
	// iteration is a prefill of new prompts only; otherwise it decodes
	// every running request (vLLM V0 without chunked prefill, SGLang's
	// default without mixed chunks).
	PrefillFirst
)

func (p Policy) String() string { return [...]string{"decode-first", "prefill-first"}[p] }

// Admission is when a request may enter the running batch and what
// happens when the KV cache is full.
type Admission uint8

// The admission policies.
const (
	// OnDemand admits a request when blocks for its next chunk are free
	// and allocates blocks as tokens arrive; when the cache is full it
	// preempts the most recently admitted request by recompute (its
	// blocks freed, its prompt and output so far prefilled again later).
	OnDemand Admission = iota
	// Reserve admits a request only when blocks for its prompt and its
	// whole output can be reserved, and never preempts (TensorRT-LLM's
	// GUARANTEED_NO_EVICT).
	Reserve
)

func (a Admission) String() string { return [...]string{"on-demand", "reserve"}[a] }

// MemoryBase is what an engine's memory fraction is a fraction of.
type MemoryBase uint8

// The bases.
const (
	// OfTotal: the fraction of the device's memory the engine may use
	// for everything (vLLM's gpu_memory_utilization): the KV cache gets
	// what the weights, the peak activations of a profile run and the
	// memory outside torch (NCCL and the custom all-reduce at TP > 1)
	// leave of it, in whole blocks; the CUDA context, read before, and
	// the CUDA graphs, captured after, live in the rest (VLLMKVTokens).
	OfTotal MemoryBase = iota
	// OfTotalStatic: the fraction, for the weights and the KV pool, of
	// the memory free once the CUDA context and the communicators are up
	// (SGLang's mem_fraction_static; SGLangKVTokens); activations live in
	// the rest.
	OfTotalStatic
	// OfFree: the fraction of the memory free after the engine has
	// loaded its weights and activation buffers (TensorRT-LLM's
	// kv_cache_free_gpu_mem_fraction).
	OfFree
)

// An Engine is a serving engine's scheduler and memory settings.
type Engine struct {
	Name string
	// MaxSeqs caps the running requests (max_num_seqs, max_batch_size,
	// max_running_requests).
	MaxSeqs int
	// MaxTokens is the token budget of one iteration
	// (max_num_batched_tokens, max_num_tokens, chunked_prefill_size).
	MaxTokens int
	// Chunked splits a prompt over iterations to fit the budget;
	// without it a prompt longer than the budget is prefilled alone.
	Chunked bool
	// BlockSize is the tokens per KV-cache block.
	BlockSize int
	// MemFraction and MemBase size the KV cache; KVTokens, when > 0,
	// sets its capacity per replica directly.
	MemFraction float64
	MemBase     MemoryBase
	KVTokens    int
	Policy      Policy
	Admission   Admission
	// StepOverhead is host time per iteration the GPU waits for
	// (scheduling, input preparation, sampling), RequestOverhead the
	// time per request outside the engine (API, tokenisation), added to
	// its TTFT and E2E.
	StepOverhead, RequestOverhead model.Seconds
	// SeqOverhead is host time per request in an iteration that the GPU
	// waits for: the per-sequence work of a Python engine's scheduler,
	// sampler and output processing that its overlap does not hide.
	SeqOverhead model.Seconds
	// SchedulerSteps is the decode steps run per scheduling decision
	// (vLLM's --num-scheduler-steps); tokens stream to the client in
	// chunks of that many. The batch is fixed for those steps: a request
	// whose last token comes before the last step keeps its slot (its
	// extra tokens computed and discarded) and completes with the batch
	// (vLLM v0.6.0: vllm/worker/multi_step_model_runner.py advances the
	// same batch each step; vllm/engine/output_processor/multi_step.py
	// truncates the tokens past a request's stop). 0 or 1: every
	// iteration is scheduled.
	SchedulerSteps int
	// AsyncOutput processes an iteration's outputs (detokenisation, the
	// response to the client) during the next iteration's forward pass,
	// so first tokens and completions reach the client when the next
	// iteration ends (vLLM's asynchronous output processor, v0.6.0:
	// vllm-project/vllm#7049, with multi-step #7921).
	AsyncOutput bool
	// Graphs replays iterations as CUDA graphs (launch overheads capped
	// at sim.GraphLaunch) as Capture says: decode-only ones, or under
	// vLLM V1's rule any small enough, in piecewise graphs; otherwise
	// every kernel is launched. See Scenario.
	Graphs bool
	// AllReduce names the engine's own all-reduce kernel within a node
	// (sim.Scenario.AllReduce; "vllm": vLLM's custom all-reduce, which
	// the vllm, vllm-0.6 and sglang presets run), priced where it has
	// been measured (hardware.EngineAllReduceOn); "" for the device's
	// fitted collectives.
	AllReduce string
	// GEMMAllReduce fuses each row-parallel GEMM with the TP all-reduce
	// of its output (sim.Scenario.GEMMAllReduce): TensorRT-LLM's
	// gemm_allreduce_plugin, a build option off by default
	// (tensorrt_llm/plugin/plugin.py PluginConfig: None) and in every
	// preset; NVIDIA's MLPerf Llama 3.1 405B engines set it.
	GEMMAllReduce bool
	// Static runs static batches: up to MaxSeqs requests prefilled
	// together and decoded together to the last one's end, the next
	// batch only after (what Run in package sim prices, and
	// TensorRT-LLM's old gptSessionBenchmark).
	Static bool
	// Buffers says how the engine's own runtime buffers, sized by its
	// build limits, are counted before the KV cache (NoBuffers: left to
	// the device's reserve); MaxSeqLen is the build's max_seq_len those
	// buffers are sized by (0: the model's context).
	Buffers   BufferModel
	MaxSeqLen int
	// ReserveFirst, for a disaggregated decode pool's engine: the decode
	// instance sets aside a request's blocks when the request arrives,
	// and the prefill instance prefills it only once they are (SGLang's
	// bootstrap: its prefill scheduler's bootstrap queue holds requests
	// whose "handshake and preallocation" has not finished,
	// sgl-project/sglang@000c2b942308ea5502978be73542016c230dba02:
	// python/sglang/srt/disaggregation/prefill.py). Otherwise the blocks
	// are set aside when the prefill ends, as vLLM's NIXL connector does
	// (transfer.go).
	ReserveFirst bool
	// Headroom is the KV a prefill leaves for the running requests'
	// decode tokens (SGLang's new_token_ratio; see Headroom); the zero
	// value reserves none.
	Headroom Headroom
	// Capture is the rule by which the engine captures and replays CUDA
	// graphs, under Graphs (graphs.go; GraphLimit gives the largest
	// batch replayed): which iterations, up to what size, padded to
	// which. GraphMaxBatch, when > 0, is the cap the rule is given
	// (SGLang's cuda_graph_max_bs, vLLM V1's cuda_graph_sizes); a larger
	// batch is launched kernel by kernel. 0: the rule's own default, and
	// under CaptureAny every decode-only iteration, unpadded.
	Capture       GraphCapture
	GraphMaxBatch int
	// ReqPool also caps the running requests at SGLang's request pool,
	// sized from the KV cache and the model's context (SGLangReqSlots).
	ReqPool bool
	// LPM orders the waiting queue by the longest cached prefix first
	// (stably) whenever it holds at most LPMQueueLimit requests, before a
	// prefill is formed (SGLang's default schedule_policy "lpm");
	// otherwise the queue is first come, first served.
	LPM bool
	// RequeueBack puts a retracted or preempted request at the back of
	// the waiting queue (SGLang: waiting_queue.extend); otherwise at the
	// front (vLLM).
	RequeueBack bool
	// NonTorch says which vLLM version's count of the memory outside
	// torch (NCCL's buffers) the OfTotal sizing takes: V1's (the zero
	// value) or v0.6.0's.
	NonTorch NonTorchModel
	// Windows says how the engine holds the KV cache of a model's
	// sliding-window layers (kvstate.go): every token in every layer
	// (WindowFull, the zero value), capped at the window's blocks when
	// every layer has it (WindowCyclic), or in KV-cache groups per layer
	// kind whose windowed blocks are freed once behind the window
	// (WindowGroups). A model without windows is held alike by all.
	Windows WindowKV
	// Source says where the preset's settings come from.
	Source string
}

// Scenario returns sc with the engine's launch mode (CUDA graphs or
// not): build the Pricer of a run from it.
func (e *Engine) Scenario(sc sim.Scenario) sim.Scenario {
	sc.NoGraphs = !e.Graphs
	sc.AllReduce = e.AllReduce
	sc.GEMMAllReduce = e.GEMMAllReduce
	return sc
}

// Validate reports every bad setting at once, naming its flag.
func (e *Engine) Validate() error {
	var errs []error
	bad := func(flag, format string, a ...any) {
		errs = append(errs, fmt.Errorf("--"+flag+": "+format, a...))
	}
	if e.MaxSeqs < 1 {
		bad("max-seqs", "must be at least 1, got %d", e.MaxSeqs)
	}
	if e.MaxTokens < 1 {
		bad("max-tokens", "must be at least 1, got %d", e.MaxTokens)
	}
	if e.BlockSize < 1 {
		bad("block-size", "must be at least 1, got %d", e.BlockSize)
	}
	if e.KVTokens <= 0 && !(e.MemFraction > 0 && e.MemFraction <= 1) {
		bad("mem-fraction", "must be in (0, 1], got %g", e.MemFraction)
	}
	if e.KVTokens < 0 {
		bad("kv-tokens", "must not be negative, got %d", e.KVTokens)
	} else if e.KVTokens > 0 && e.BlockSize >= 1 && e.KVTokens < e.BlockSize {
		bad("kv-tokens", "%d tokens is less than one KV block of %d (--block-size)", e.KVTokens, e.BlockSize)
	}
	// The per-iteration overheads add up over every iteration: a second
	// each is far beyond any engine's (milliseconds) and keeps the clock
	// within MaxTime; the per-request one is paid once per request.
	for _, o := range []struct {
		flag string
		v    model.Seconds
		most float64
	}{{"step-overhead", e.StepOverhead, 1}, {"request-overhead", e.RequestOverhead, MaxTime}, {"seq-overhead", e.SeqOverhead, 1}} {
		if !(o.v >= 0 && float64(o.v) <= o.most) {
			bad(o.flag, "must be a time from 0 to %g s, got %v", o.most, o.v)
		}
	}
	if e.SchedulerSteps < 0 {
		bad("scheduler-steps", "must not be negative, got %d", e.SchedulerSteps)
	} else if e.SchedulerSteps > 1 && e.Policy == DecodeFirst {
		// schedule.go runs several decode steps per decision only in a
		// prefill-first engine's decode iterations.
		bad("scheduler-steps", "only a prefill-first engine (vllm-0.6, sglang) runs several decode steps per scheduling decision; %s is decode-first and would ignore it", e.Name)
	}
	if e.MaxSeqLen < 0 {
		bad("max-seq-len", "must not be negative, got %d", e.MaxSeqLen)
	} else if e.MaxSeqLen > 0 && e.Buffers != TRTLLM014Buffers {
		// Nothing else reads it: it would be ignored.
		bad("max-seq-len", "sizes only TensorRT-LLM's runtime buffers (the trtllm preset); %s counts none, and would ignore it", e.Name)
	}
	if e.GraphMaxBatch < 0 {
		bad("cuda-graph-max-bs", "must not be negative, got %d", e.GraphMaxBatch)
	}
	errs = append(errs, e.Headroom.validate(e)...)
	return errors.Join(errs...)
}

// Engines lists the preset names.
func Engines() []string { return []string{"vllm", "vllm-0.6", "sglang", "trtllm"} }

// VLLM06SeqOverhead is vLLM v0.6.0's host time per sequence per step
// that the GPU waits for, the one setting fitted to measurements: to the
// offline row of Llama 3.1 8B on one A100 in
// ../shared/validation/e2e/vllm_0.6_sharegpt.csv (TestFit_vllm06
// re-derives it), the other five rows held out (docs/serving.md gives
// their errors; the held-out offline row, 70B on four H100s, is 6.8%
// fast). It is the per-sequence Python work of V0's scheduler, block
// tables, sampling metadata and output processing that multi-step
// scheduling and the asynchronous output processor leave exposed; the
// same order as Vidur's profile of vLLM V0 (microsoft/vidur
// data/profiling/a100/cpu_overheads.csv: PROCESS_MODEL_OUTPUTS 4.1 ms and
// SAMPLER_E2E 1.4 ms a step at batch 64, Llama-2-7B on an A100).
const VLLM06SeqOverhead = model.Seconds(36.5e-6)

// gib is 2^30 bytes.
const gib = 1 << 30

// Preset returns an engine's defaults on a device whose programs can
// allocate capacity bytes (hardware.Memory.Limit).
//
//   - vllm: vLLM V1 (v0.10): decode-first with chunked prefill
//     (vllm/v1/core/sched/scheduler.py: running requests are scheduled
//     before waiting ones, prompts chunked to the token budget);
//     gpu_memory_utilization 0.9 of total memory; block 16 tokens;
//     preemption by recompute. The OpenAI server's defaults on a device
//     of at least 70 GiB are max_num_batched_tokens 8192 and
//     max_num_seqs 1024, else 2048 and 256 (vllm/engine/arg_utils.py,
//     EngineArgs._set_default_args_v1). The all-reduces within a node by
//     vLLM's custom kernel (AllReduce "vllm"), with v0.6.0's dispatch:
//     v0.10's CudaCommunicator.all_reduce tries it first (after ROCm's
//     quick reduce) and hands NCCL what it declines; CustomAllreduce keeps
//     max_size 8 MiB at every world size, and csrc/custom_all_reduce.cuh
//     its one-stage/two-stage thresholds. The per-architecture limits
//     (CUSTOM_ALL_REDUCE_MAX_SIZES in all_reduce_utils.py: 256 KiB at 8
//     GPUs on Hopper, the rest to torch symmetric memory) apply only with
//     VLLM_ALLREDUCE_USE_SYMM_MEM=1, off by default through v0.10.x
//     (vllm-project/vllm#20759 added it opt-in; #24111 turned it on and
//     #24696 off again before v0.10.2); FlashInfer's fused all-reduce is
//     a compilation pass off by default (enable_fi_allreduce_fusion). The
//     pieces of V1's piecewise CUDA graphs capture it. The KV cache as
//     v0.10's gpu_worker.py determine_available_memory sizes it
//     (VLLMKVTokens): 0.9 of the total less the weights, the torch peak's
//     rise in a profile run of max_num_batched_tokens over
//     min(max_num_seqs, tokens) requests and the rise of memory outside
//     torch since a reading taken before NCCL starts (VLLMNonTorch), in
//     whole blocks; the CUDA context and the CUDA graphs are in the 0.1
//     left over.
//   - vllm-0.6: vLLM V0 (v0.6.0) without chunked prefill: prefill-first
//     (vllm/core/scheduler.py _schedule_default: new prompts first, a
//     batch never mixes prefill and decode), max_num_seqs 256,
//     max_num_batched_tokens max(max_model_len, 2048), the rest as vllm;
//     the asynchronous output processor on (AsyncOutput: on by default
//     since v0.6.0, vllm-project/vllm#7049); SeqOverhead 36.5 µs, the one
//     fitted setting (VLLM06SeqOverhead); the all-reduces within a node
//     by vLLM's custom kernel (AllReduce "vllm": one-stage below 512 KiB
//     at up to 4 GPUs, two-stage to 8 MiB, NCCL above; CUDA graphs
//     capture it), priced from its measurements where the device has
//     them (hardware.EngineAllReduceOn). The KV cache as v0.6.0's
//     worker.py determine_num_available_blocks sizes it (VLLMKVTokens):
//     0.9 of the total less what the profile run at max_num_batched_tokens
//     over max_num_seqs sequences left allocated since a reading taken
//     after the CUDA context and before NCCL (weights, activations,
//     VLLM06NonTorch: NCCL 2.20.5's buffers of its two TP communicators,
//     NVLink SHARP's by TP on NVSwitch boards), in whole blocks.
//   - sglang: SGLang (v0.4): prefill-first; page size 1; retraction (by
//     recompute) when the pool runs out. The defaults that depend on the
//     layout and the device are derived as ServerArgs.__post_init__ does
//     (python/sglang/srt/server_args.py at sgl-project/sglang@f8b03269,
//     v0.4.0): mem_fraction_static, of the memory free once the CUDA
//     context and NCCL are up (the usable memory less SGLangKeptBack:
//     0.30 GiB at TP 1, 1.94 GiB above, from SGLang's logs), for
//     weights and KV pool (SGLangKVTokens), by TP size
//     (SGLangMemFraction: 0.88 at TP 1, 0.87 at 2, 0.85 at 4, 0.81 at
//     8, 0.79 from 16), chunked_prefill_size 8192, or 2048
//     on a device under 25,000 MiB (SGLangChunkedPrefill), and
//     cuda_graph_max_bs 160, or 8 there (SGLangGraphMaxBatch: larger
//     decode batches run without CUDA graphs). max_running_requests is
//     what the KV cache and the request pool allow (ReqPool,
//     SGLangReqSlots: 2049 to 4097). max_prefill_tokens 16384 does not
//     bind beside either chunk size. The waiting queue in SGLang's
//     default order, schedule_policy "lpm" (LPM: longest cached prefix
//     first while at most 128 wait), a retracted request going to its
//     back (RequeueBack; scheduler.py update_running_batch:
//     waiting_queue.extend). The overlap scheduler on
//     (AsyncOutput: v0.4's "zero-overhead batch scheduler" processes a
//     batch's results while the next runs, lmsys.org/blog/2024-12-04-
//     sglang-v0-4; server_args.py disable_overlap_schedule false; the
//     cost is one extra step before a token is seen, as TensorRT-LLM's
//     docs on its own overlap scheduler, which cites it, say). The
//     all-reduces within a node by vLLM's custom kernel (AllReduce
//     "vllm"): v0.4.0 runs vLLM's distributed package itself
//     (vllm.distributed of vLLM 0.6.x, custom all-reduce unless
//     --disable-custom-all-reduce; sgl-project/sglang#2511, 2024-12-18:
//     "currently still use vllm distributed"); its own copy kept vLLM's
//     kernel the default (USE_VLLM_CUSTOM_ALLREDUCE, #2981) until about
//     March 2025 (#4436), and from April 2025 sgl-kernel carries a port
//     of the same kernel (#5079, #5080); only the releases between ran
//     TensorRT-LLM's one-shot kernel from sgl-kernel by default, the
//     kernel the devices' fits follow. A prefill leaves KV free for the
//     running requests' remaining output at SGLang's new_token_ratio, 0.7
//     decaying to 0.098 over 600 decode steps, with its retraction
//     (Headroom, SGLangHeadroom; read at v0.4.0).
//   - trtllm: TensorRT-LLM (v0.14) in-flight batching: decode-first with
//     chunked context; kv_cache_free_gpu_mem_fraction 0.9 of the memory
//     free after loading; tokens_per_block 64; the scheduler policy
//     GUARANTEED_NO_EVICT (Reserve); max_batch_size 256 and
//     max_num_tokens 8192 (the build defaults,
//     tensorrt_llm/builder.py BuildConfig) unless TRTLLMBench sets them;
//     no CUDA graphs (ExtendedRuntimePerfKnobConfig cuda_graph_mode
//     false by default), so every kernel of a decode step is launched.
//
// vLLM (enforce_eager false) and SGLang replay iterations as CUDA graphs,
// each by its own rule (Capture, graphs.go): vllm-0.6 decode steps up to
// max_num_seqs padded up, while no sequence is over 8192 tokens; vllm any
// iteration of up to min(2 × max_num_seqs, 512) tokens in piecewise graphs
// (attention launched between the pieces); sglang decode steps up to
// cuda_graph_max_bs; each padded to the next captured size.
//
// Host overheads are 0 in every other preset: the cost model prices the
// GPU's work only (docs/serving.md).
//
// Preset gives the defaults of a replica on one device; PresetFor those
// of a replica of tp devices (sglang's depend on it).
func Preset(name string, capacity model.Bytes) (Engine, error) { return PresetFor(name, capacity, 1) }

// PresetFor returns an engine's defaults (see Preset) for a replica of tp
// tensor-parallel devices, each of which programs can allocate capacity
// bytes of (hardware.Memory.Limit).
func PresetFor(name string, capacity model.Bytes, tp int) (Engine, error) {
	big := float64(capacity) >= 70*gib
	switch strings.ToLower(name) {
	case "vllm":
		e := Engine{Name: "vllm", MaxSeqs: 256, MaxTokens: 2048, Chunked: true, BlockSize: 16,
			MemFraction: 0.9, MemBase: OfTotal, Policy: DecodeFirst, Admission: OnDemand, Graphs: true, Capture: CaptureVLLMV1, AllReduce: "vllm", Windows: WindowGroups,
			Source: "vLLM V1 v0.10: vllm/v1/core/sched/scheduler.py; vllm/engine/arg_utils.py _set_default_args_v1 (server defaults); vllm/config.py VllmConfig._set_cudagraph_sizes, SchedulerConfig.cuda_graph_sizes, CompilationConfig.set_splitting_ops_for_v1 and vllm/v1/worker/gpu_model_runner.py execute_model (piecewise CUDA graphs to min(2 max_num_seqs, 512) tokens, padded; vllm-project/vllm@6d8d0a24); vllm/distributed/device_communicators/cuda_communicator.py and custom_all_reduce.py (its own all-reduce within a node; symmetric memory opt-in, VLLM_ALLREDUCE_USE_SYMM_MEM); vllm/v1/worker/gpu_worker.py init_device and determine_available_memory with vllm/utils memory_profiling (vllm-project/vllm#19312, before #25359 moved the first reading after NCCL) and vllm/v1/core/kv_cache_utils.py (KV cache: 0.9 of total less weights, the profile's torch peak and non-torch memory, whole blocks; serve.VLLMKVTokens, VLLMNonTorch: 0.16 GiB measured in #12126, 4.52 GiB of NCCL at TP > 1 assumed from #25359)"}
		if big {
			e.MaxSeqs, e.MaxTokens = 1024, 8192
		}
		return e, nil
	case "vllm-0.6", "vllm0.6":
		return Engine{Name: "vllm-0.6", MaxSeqs: 256, MaxTokens: 2048, Chunked: false, BlockSize: 16,
			MemFraction: 0.9, MemBase: OfTotal, Policy: PrefillFirst, Admission: OnDemand, SchedulerSteps: 1, Graphs: true, Capture: CaptureVLLM06, AsyncOutput: true,
			SeqOverhead: VLLM06SeqOverhead, AllReduce: "vllm", NonTorch: NonTorchV06, Windows: WindowCyclic,
			Source: "vLLM v0.6.0: vllm/core/scheduler.py _schedule_default; vllm/config.py SchedulerConfig (max_num_batched_tokens = max(max_model_len, 2048) without chunked prefill); vllm/worker/model_runner.py (_BATCH_SIZES_TO_CAPTURE, _get_max_graph_batch_size, _use_captured_graph: decode-only batches to max_num_seqs padded, max_seq_len_to_capture 8192; vllm-project/vllm@32e7db25); vllm/distributed/device_communicators/custom_all_reduce.py (its own all-reduce within a node); vllm/worker/worker.py init_device and determine_num_available_blocks, model_runner.py profile_run (KV cache: 0.9 of total less the memory the profile run left taken since a reading after the CUDA context and before NCCL, whole blocks; serve.VLLMKVTokens, VLLM06NonTorch: 0.16 GiB measured in vllm-project/vllm#12126, 1.79 GiB of NCCL at TP × PP > 1 measured by V0's own profile in #10511, and NCCL 2.20.5's NVLink SHARP buffers of its two TP communicators, 576 MiB × TP at TP > 2 in one node where the scale-up switch reduces in the network (the hardware file's in_network_reduction nvlink-sharp: the third-generation NVSwitch and later): src/transport/nvls.cc, 24 channels on H100/H200 in #9699's log)"}, nil
	case "sglang":
		return Engine{Name: "sglang", MaxSeqs: SGLangMaxRunning, MaxTokens: SGLangChunkedPrefill(capacity), Chunked: true, BlockSize: 1,
			MemFraction: SGLangMemFraction(tp), MemBase: OfTotalStatic, Policy: PrefillFirst, Admission: OnDemand,
			Graphs: true, Capture: CaptureSGLang, GraphMaxBatch: SGLangGraphMaxBatch(capacity), ReqPool: true, LPM: true, RequeueBack: true,
			AsyncOutput: true, AllReduce: "vllm", Headroom: SGLangHeadroom(SGLangConservativeness), ReserveFirst: true,
			Source: "SGLang v0.4.0 (sgl-project/sglang@f8b03269): python/sglang/srt/server_args.py ServerArgs.__post_init__ (mem_fraction_static by TP size, chunked_prefill_size and cuda_graph_max_bs by GPU memory, schedule_policy lpm, disable_overlap_schedule false, schedule_conservativeness 1), model_executor/model_runner.py init_torch_distributed and profile_max_num_token with utils.py get_available_gpu_memory (the KV pool: mem_fraction_static of the memory free after the CUDA context and NCCL, less the weights; serve.SGLangKeptBack: 0.30 GiB at TP 1 and 1.94 GiB at TP > 1, the H100's 79.11 GiB less the first reading in SGLang's logs, docs.sglang.ai send_request 2025-01-23 and sgl-project/sglang#2174), managers/tp_worker.py and model_executor/model_runner.py (max_running_requests from the request pool), managers/scheduler.py (prefill batches first, retracted requests to the back of the queue), managers/schedule_policy.py (LPM order, PrefillAdder) and global_config.py (the decode reserve: new_token_ratio 0.7 decaying to 0.098 over 600 steps, retract_decode_steps 20), model_executor/cuda_graph_runner.py (capture_bs 1, 2, 4, 8 to 160 by 8, padding with the logits in the graph); lmsys.org/blog/2024-12-04-sglang-v0-4 (zero-overhead batch scheduler); vLLM's custom all-reduce within a node (vllm.distributed at v0.4.0; sgl-kernel's port from April 2025, sgl-project/sglang#5079); disaggregated, the decode instance pre-allocates a request's KV before its prefill (python/sglang/srt/disaggregation/prefill.py bootstrap queue and decode.py PreallocQueue, sgl-project/sglang@000c2b94 and @278e503a)"}, nil
	case "trtllm", "tensorrt-llm":
		return Engine{Name: "trtllm", MaxSeqs: 256, MaxTokens: 8192, Chunked: true, BlockSize: 64,
			MemFraction: 0.9, MemBase: OfFree, Policy: DecodeFirst, Admission: Reserve, Buffers: TRTLLM014Buffers,
			Source: "TensorRT-LLM v0.14: docs/source/advanced/gpt-attention.md (in-flight batching, chunked context), KvCacheConfig free_gpu_memory_fraction 0.9, CapacitySchedulerPolicy GUARANTEED_NO_EVICT, BuildConfig max_batch_size 256 max_num_tokens 8192 tokens_per_block 64; runtime and decoder buffers before the KV cache (serve.TRTLLMBuffers)"}, nil
	}
	return Engine{}, fmt.Errorf("unknown engine %q (want %s)", name, strings.Join(Engines(), ", "))
}

// TRTLLMBench returns max_batch_size and max_num_tokens as trtllm-bench
// derives them at build time from memory and the dataset's mean lengths
// (capacity is what torch reports as the device's total memory, the
// usable memory; NVIDIA/TensorRT-LLM tensorrt_llm/bench/build/tuning.py,
// calc_engine_setting and finetune_setting): the KV cache of 0.95 of
// (all devices' memory − the weights at 2 bytes per parameter, 1 for
// fp8) holds raw = bytes/(KV bytes per token × (isl + osl)) requests;
// the batch is raw/pp (capped at 4096) rounded up to 32 (at least 64)
// below 256, to 128 below 1024, to 256 beyond; the tokens are batch ×
// (1 + isl/osl) (capped at 32768) rounded up to 256 (at least 2048)
// below 4096, to 512 below 8192, to 1024 beyond. That tuning.py came after
// v0.14: v0.14.0's trtllm-bench build (b0880169, bench/build/build.py) read
// fixed values per model, TP × PP and sequence length from
// benchmark_config.yml, whose values for the Llama 3.1 models are not
// published (docs/serving.md).
func TRTLLMBench(capacity model.Bytes, devices, pp int, params float64, weightBytes float64, kvPerToken model.Bytes, isl, osl int) (maxBatch, maxTokens int) {
	avail := float64(capacity)*float64(devices) - params*weightBytes
	reqs := 0.95 * avail / (float64(kvPerToken) * float64(isl+osl))
	raw := math.Min(reqs, 4096) / float64(max(pp, 1))
	tok := math.Min(raw*(1+float64(isl)/float64(max(osl, 1))), 32768)
	up := func(x, step float64) int { return int(step * math.Ceil(x/step)) }
	switch {
	case raw < 256:
		maxBatch = max(64, up(raw, 32))
	case raw < 1024:
		maxBatch = up(raw, 128)
	default:
		maxBatch = up(raw, 256)
	}
	switch {
	case tok < 4096:
		maxTokens = max(2048, up(tok, 256))
	case tok < 8192:
		maxTokens = up(tok, 512)
	default:
		maxTokens = up(tok, 1024)
	}
	return maxBatch, maxTokens
}

// KVCapacity returns the KV cache of one replica in tokens of its pages
// (of the attention layers' KV, kvUnit: a model with state-space or
// DeltaNet layers also charges each sequence its fixed state,
// StateBlocks; one with sliding-window layers is held as e.Windows
// says, kvstate.go), from the
// memory of one device as p sizes it (weights, the activations of an
// iteration of MaxTokens tokens, the framework reserve, and the
// engine's runtime buffers under its buffer model, m.Buffers) and the
// engine's fraction of it, or e.KVTokens when set. Err: nothing left for
// the KV cache.
func (e *Engine) KVCapacity(p *sim.Pricer) (int, sim.Memory, error) {
	m, err := p.Footprint(e.MaxTokens)
	if err != nil {
		return 0, m, err
	}
	m.Buffers = e.RuntimeBuffers(p)
	c := float64(m.Usable) // what programs can allocate (hardware.Memory.Limit)
	if c <= 0 {
		c = float64(m.Capacity)
	}
	if e.MemBase == OfTotal {
		// vLLM's own accounting (vllm.go): the CUDA context is not
		// counted, the memory outside torch (NCCL and the custom
		// all-reduce at TP > 1) is, and so is the activation peak of its
		// profile run at max_num_batched_tokens over min(max_num_seqs,
		// tokens) sequences. A reserve set in the scenario
		// (sim.Scenario.Reserve) stands for the memory outside torch.
		sc := p.Scenario()
		m.Activations = VLLMProfilePeak(m.Activations, VLLMProfileRows(e.MaxSeqs, e.MaxTokens), p.Shape().Vocab)
		m.Reserve = e.nonTorch(p)
		if sc.Reserve != nil {
			m.Reserve = *sc.Reserve
		}
	}
	if e.MemBase == OfTotalStatic {
		// SGLang's: what the CUDA context and the communicators hold
		// before its first reading (SGLangKeptBack), in place of the
		// device's flat reserve; a reserve set in the scenario stands
		// for it. Its ranks are the whole world, every replica's GPUs
		// under data-parallel attention (sc.DP, 1 otherwise), whose MoE
		// layers hold communicators over all of them.
		if sc := p.Scenario(); sc.Reserve == nil {
			m.Reserve = SGLangKeptBack(max(sc.TP, 1) * max(sc.PP, 1) * max(sc.DP, 1))
		}
	}
	// Buffers allocated before the KV cache come off what it is sized
	// from in full (TRTLLMBufferSet: TensorRT-LLM allocates them first).
	held := float64(m.Weights + m.Activations + m.Reserve + m.Buffers)
	if e.KVTokens > 0 {
		// A cache the device cannot hold even with every byte the
		// model leaves (100M tokens of Llama 3 8B is 13 TB on an
		// 80 GB H100) had been taken as given.
		// In tokens of every group (kvGroups: 1 but for vLLM V1's
		// groups of full and sliding layers), the pool in pages.
		g := e.kvGroups(m)
		pool := e.KVTokens * g
		if unit := e.kvUnit(m); unit > 0 {
			if most := math.Floor((c - held) / unit); float64(pool) > most {
				return 0, m, fmt.Errorf("--kv-tokens %d: more than the device's memory holds: %s per device less %s of weights, activations, buffers and reserve leaves %s, at most %.0f tokens of %s",
					e.KVTokens, model.Bytes(c), model.Bytes(held), model.Bytes(max(c-held, 0)), math.Floor(max(most, 0)/float64(g)), model.Bytes(unit*float64(g)))
			}
		}
		return pool, m, nil
	}
	if !(m.KVPerToken > 0) {
		return 0, m, errors.New("serve: the model has no KV cache")
	}
	unit := e.kvUnit(m)
	var tokens float64
	switch e.MemBase {
	case OfTotal:
		// vLLM's, in whole blocks of what it counts (held, above).
		if tokens = VLLMKVTokens(model.Bytes(c), model.Bytes(held), e.MemFraction, unit, e.BlockSize); tokens < 1 {
			// Under one block: in tokens, so that a block larger than
			// the whole cache is told from no memory at all (below).
			tokens = VLLMKVTokens(model.Bytes(c), model.Bytes(held), e.MemFraction, unit, 1)
		}
	case OfTotalStatic:
		// SGLang's total is what the CUDA context and NCCL leave (the
		// reserve, SGLangKeptBack); the weights and any buffers of the engine's own,
		// loaded after that reading, come off the fraction of it.
		sc := p.Scenario()
		tokens = SGLangKVTokens(model.Bytes(c)-m.Reserve, m.Weights+m.Buffers, e.MemFraction, unit, max(sc.TP, 1)*max(sc.PP, 1))
	case OfFree:
		tokens = math.Floor(e.MemFraction * (c - held) / unit)
	}
	if tokens >= 1 && tokens < float64(e.BlockSize) {
		return 0, m, fmt.Errorf("--block-size: a block of %d tokens is more than the whole KV cache, %.0f tokens (engine %s, fraction %.2f)", e.BlockSize, tokens, e.Name, e.MemFraction)
	}
	if tokens < float64(e.BlockSize) {
		sc := p.Scenario()
		return 0, m, fmt.Errorf("serve: no memory left for the KV cache at tp %d × pp %d: %s per device holds %s of weights, %s of activations, %s of runtime buffers and %s reserved (engine %s, fraction %.2f)",
			max(sc.TP, 1), max(sc.PP, 1), model.Bytes(c), m.Weights, m.Activations, m.Buffers, m.Reserve, e.Name, e.MemFraction)
	}
	return int(math.Min(tokens, 1<<40)), m, nil
}
