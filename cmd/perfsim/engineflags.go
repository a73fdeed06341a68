package main

import (
	"math"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/serve"
)

// hostFlags are the engine's host-side settings that serve and plan
// serve share: the host time per request in each iteration
// (serve.Engine.SeqOverhead) and whether outputs are processed during
// the next iteration (serve.Engine.AsyncOutput), and, beside them, the
// engine's own all-reduce kernel (serve.Engine.AllReduce), SGLang's
// decode reserve (serve.Engine.Headroom), the cap on the batches
// replayed as CUDA graphs (serve.Engine.GraphMaxBatch) and the waiting
// queue's order (serve.Engine.LPM). Unset, each keeps the preset's value.
type hostFlags struct {
	seqOverhead      model.Seconds
	asyncOutput      bool
	allReduce        string
	decodeReserve    bool
	conservativeness float64
	graphMaxBatch    int
	schedulePolicy   string
	gemmAllReduce    bool
}

func (h *hostFlags) AddFlags(fs *pflag.FlagSet) {
	fs.Var(&h.seqOverhead, "seq-overhead", "host time per running request in each iteration that the GPU waits for (a Python engine's per-sequence scheduling, sampling and output work), e.g. 42us (default: the engine's; vllm-0.6 36.5 µs, the others 0)")
	fs.StringVar(&h.allReduce, "all-reduce", "", "the engine's own all-reduce kernel within a node, priced on the devices it was measured on: "+strings.Join(hardware.AllReduceKernels(), ", ")+" (vLLM's custom all-reduce), or device for the device's fitted kernels (default: the engine's; vllm, vllm-0.6 and sglang: vllm, trtllm: device)")
	fs.BoolVar(&h.decodeReserve, "decode-reserve", false, "before admitting a prompt, leave KV free for its own output and the running requests' remaining output at SGLang's new_token_ratio (0.7 decaying to 0.098 over 600 decode steps), with SGLang's retraction; prefill-first engines only (default: the engine's; sglang on, the others off)")
	fs.Float64Var(&h.conservativeness, "schedule-conservativeness", serve.SGLangConservativeness, "SGLang's --schedule-conservativeness: the decode reserve's ratio starts at min(0.7 × this, 1) and falls to 0.14 of that (implies --decode-reserve)")
	fs.IntVar(&h.graphMaxBatch, "cuda-graph-max-bs", 0, "the cap on the batches the engine captures CUDA graphs for (SGLang's cuda_graph_max_bs, vLLM V1's --cuda-graph-sizes N; in tokens for vllm, whose piecewise graphs take prefills too); a larger batch is launched kernel by kernel, a smaller one padded to the next captured size (1, 2, 4, multiples of 8); 0: every decode step graphed, unpadded (default: the engine's; sglang 160, or 8 on a GPU under 25,000 MiB; vllm min(2 × --max-seqs, 512); vllm-0.6 --max-seqs padded up, decode steps whose longest sequence is at most 8192 tokens; trtllm no graphs)")
	fs.StringVar(&h.schedulePolicy, "schedule-policy", "", "the waiting queue's order: fcfs, or lpm (longest cached prefix first while at most 128 wait, SGLang's) (default: the engine's; sglang lpm, the others fcfs)")
	fs.BoolVar(&h.gemmAllReduce, "gemm-allreduce", false, "fuse each row-parallel GEMM with the TP all-reduce of its output, reduced tile by tile as the GEMM writes them (TensorRT-LLM's gemm_allreduce_plugin, which NVIDIA's MLPerf Llama 3.1 405B engines set; off in every preset; with the device's all-reduce)")
	fs.BoolVar(&h.asyncOutput, "async-output", false, "process an iteration's outputs during the next one, so first tokens and completions reach the client an iteration later (vLLM 0.6's asynchronous output processor, SGLang's overlap scheduler) (default: the engine's)")
}

// check returns the usage errors of the flags, each naming its flag.
func (h *hostFlags) check(fs *pflag.FlagSet) []error {
	var errs []error
	if fs.Changed("seq-overhead") && (!(h.seqOverhead >= 0) || math.IsInf(float64(h.seqOverhead), 0)) {
		errs = append(errs, usagef("--seq-overhead: must be a non-negative time with a unit (e.g. 42us), got %v", h.seqOverhead))
	}
	if fs.Changed("all-reduce") && h.allReduce != "device" && !slices.Contains(hardware.AllReduceKernels(), h.allReduce) {
		errs = append(errs, usagef("--all-reduce: want %s or device, got %q", strings.Join(hardware.AllReduceKernels(), ", "), h.allReduce))
	}
	if fs.Changed("cuda-graph-max-bs") && h.graphMaxBatch < 0 {
		errs = append(errs, usagef("--cuda-graph-max-bs: must be 0 (no limit) or more, got %d", h.graphMaxBatch))
	}
	if fs.Changed("schedule-policy") && h.schedulePolicy != "fcfs" && h.schedulePolicy != "lpm" {
		errs = append(errs, usagef("--schedule-policy: want fcfs or lpm, got %q", h.schedulePolicy))
	}
	if fs.Changed("schedule-conservativeness") {
		if !(h.conservativeness >= 0) || math.IsInf(h.conservativeness, 0) {
			errs = append(errs, usagef("--schedule-conservativeness: must be a non-negative number, got %g", h.conservativeness))
		}
		if fs.Changed("decode-reserve") && !h.decodeReserve {
			errs = append(errs, usagef("--schedule-conservativeness: scales the decode reserve, which --decode-reserve=false turns off"))
		}
	}
	return errs
}

// ignored returns an error for each flag the user gave that e, as set,
// would ignore.
func (h *hostFlags) ignored(fs *pflag.FlagSet, e *serve.Engine) []error {
	var errs []error
	if fs.Changed("cuda-graph-max-bs") && !e.Graphs {
		errs = append(errs, usagef("--cuda-graph-max-bs: %s runs no CUDA graphs, so it would ignore the cap (give --cuda-graphs to turn them on, where the command has it)", e.Name))
	}
	if e.GEMMAllReduce && e.AllReduce != "" {
		errs = append(errs, usagef("--gemm-allreduce: the fused kernel reduces in itself, not with %s's all-reduce (give --all-reduce device with it)", e.AllReduce))
	}
	return errs
}

// apply sets the flags the user gave on e.
func (h *hostFlags) apply(fs *pflag.FlagSet, e *serve.Engine) {
	if fs.Changed("seq-overhead") {
		e.SeqOverhead = h.seqOverhead
	}
	if fs.Changed("async-output") {
		e.AsyncOutput = h.asyncOutput
	}
	if fs.Changed("cuda-graph-max-bs") {
		e.GraphMaxBatch = h.graphMaxBatch
		if h.graphMaxBatch == 0 {
			e.Capture = serve.CaptureAny // no limit, no padding
		}
	}
	if fs.Changed("schedule-policy") {
		e.LPM = h.schedulePolicy == "lpm"
	}
	if fs.Changed("gemm-allreduce") {
		e.GEMMAllReduce = h.gemmAllReduce
	}
	if fs.Changed("all-reduce") {
		e.AllReduce = h.allReduce
		if h.allReduce == "device" {
			e.AllReduce = ""
		}
	}
	switch {
	case fs.Changed("schedule-conservativeness"):
		e.Headroom = serve.SGLangHeadroom(h.conservativeness)
	case fs.Changed("decode-reserve") && !h.decodeReserve:
		e.Headroom = serve.Headroom{}
	case fs.Changed("decode-reserve") && !e.Headroom.Enabled:
		e.Headroom = serve.SGLangHeadroom(serve.SGLangConservativeness)
	}
}
