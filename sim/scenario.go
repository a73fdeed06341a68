package sim

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// Mode says what a scenario simulates.
type Mode uint8

// The modes.
const (
	Inference Mode = iota // prefill and decode of a batch of requests
	Training              // one optimizer step
)

func (m Mode) String() string { return [...]string{"inference", "training"}[m] }

// ParseMode parses "inference" or "training" ("train" too).
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(s) {
	case "inference", "infer":
		return Inference, nil
	case "training", "train":
		return Training, nil
	}
	return 0, fmt.Errorf("unknown mode %q (want inference or training)", s)
}

// Recompute is the activation recomputation of a training step
// (Korthikanti et al., "Reducing Activation Recomputation in Large
// Transformer Models", 2022).
type Recompute uint8

// The recomputation policies.
const (
	RecomputeNone      Recompute = iota // keep every activation
	RecomputeSelective                  // recompute the attention core (scores, softmax, dropout)
	RecomputeFull                       // keep only each layer's input, recompute the layer
)

func (r Recompute) String() string { return [...]string{"none", "selective", "full"}[r] }

// ParseRecompute parses none, selective or full.
func ParseRecompute(s string) (Recompute, error) {
	for i, n := range [...]string{"none", "selective", "full"} {
		if strings.EqualFold(s, n) {
			return Recompute(i), nil
		}
	}
	return 0, fmt.Errorf("unknown recomputation %q (want none, selective or full)", s)
}

// Optimizer is the optimizer of a training step.
type Optimizer uint8

// The optimizers. All are mixed precision: fp32 master weights beside the
// 16-bit weights and gradients.
const (
	Adam  Optimizer = iota // fp32 master weights, first and second moments
	AdamW                  // as Adam; the decoupled weight decay costs no memory
	SGD                    // fp32 master weights and a momentum
)

func (o Optimizer) String() string { return [...]string{"adam", "adamw", "sgd"}[o] }

// ParseOptimizer parses adam, adamw or sgd.
func ParseOptimizer(s string) (Optimizer, error) {
	for i, n := range [...]string{"adam", "adamw", "sgd"} {
		if strings.EqualFold(s, n) {
			return Optimizer(i), nil
		}
	}
	return 0, fmt.Errorf("unknown optimizer %q (want adam, adamw or sgd)", s)
}

// stateBytes returns the optimizer's fp32 state per parameter: the master
// weights and the moments. Mixed-precision Adam keeps a 4-byte master
// copy and two 4-byte moments, 12 bytes, which with 2-byte weights and
// 2-byte gradients makes the 16 bytes per parameter of Rajbhandari et
// al., "ZeRO" (2020), §3.1. SGD with momentum keeps a master copy and one
// momentum: 8 bytes.
func (o Optimizer) stateBytes() float64 {
	if o == SGD {
		return 8
	}
	return 12
}

// CommType is the type the residual stream's collectives move: Comm when
// given, else model.CommType(Act).
func (sc Scenario) CommType() model.DType {
	if sc.Comm != model.Invalid {
		return sc.Comm
	}
	return model.CommType(sc.Act)
}

// stepTraffic returns the bytes an optimizer step moves per parameter and
// the arithmetic it does: Adam reads the gradient, the master weight and
// two moments, writes them back and writes the 16-bit weight; SGD has
// one moment fewer. The FLOPs are our count of the update's arithmetic
// (Loshchilov & Hutter, "Decoupled Weight Decay Regularization", 2019,
// Algorithm 2: about 12 operations per parameter for AdamW, 4 for SGD
// with momentum).
func (o Optimizer) stepTraffic(grad model.DType) (bytes, flops float64) {
	g := grad.Size()
	if o == SGD {
		return g + 8 + 8 + g, 4
	}
	return g + 12 + 12 + g, 12
}

// A Scenario is one question put to the simulator.
type Scenario struct {
	Mode Mode

	// Batch is the sequences (or images) processed together: the
	// requests in a decode batch, or the micro-batch per data-parallel
	// replica in training.
	Batch int
	// Input and Output are the prompt tokens and the generated tokens per
	// request (inference).
	Input, Output int

	// Seq is the training sequence length. A vision transformer trains
	// on its image's tokens (Shape.Tokens), which replace it (Run,
	// Footprint); a CNN does not read it.
	Seq int
	// GlobalBatch is the sequences per optimizer step; 0 means Batch·DP.
	// Steps accumulate gradients over GlobalBatch/(Batch·DP) micro-batches.
	GlobalBatch int
	Recompute   Recompute
	Optimizer   Optimizer
	// ZeRO is what the data-parallel replicas shard (Rajbhandari et al.
	// 2020): 1 the optimizer state, 2 also the gradients, 3 also the
	// weights. 0 shards nothing.
	ZeRO int
	// Tokens is a training token budget (0: none) for the time to train.
	Tokens float64

	// TP, PP and DP are the tensor-, pipeline- and data-parallel degrees;
	// 0 means 1.
	TP, PP, DP int

	// Training at scale (see train_parallel.go). CP is the
	// context-parallel degree (ring attention over sequence shards) and
	// EP the expert-parallel degree (experts split over EP of the
	// data-parallel ranks); 0 means 1. In inference EP splits each MoE
	// layer's experts inside the TP group (EP ≤ TP, dividing it) or
	// across EP/TP data-parallel attention replicas (EP a multiple of TP,
	// at most TP·DP) with an all-to-all dispatch and combine, and
	// ExpertImbalance scales the busiest rank's routed tokens. SP adds sequence parallelism to
	// TP. Schedule is the pipeline schedule and VirtualStages its model
	// chunks per device (interleaved; 0 means 1). NoOverlap exposes all
	// data-parallel, pipeline and context-parallel communication;
	// TPOverlap hides TP collectives behind the GEMMs (Transformer
	// Engine's userbuffers). ExpertImbalance is the busiest expert rank's
	// load over the mean (0 means 1, a perfectly balanced router).
	CP, EP          int
	SP              bool
	Schedule        Schedule
	VirtualStages   int
	NoOverlap       bool
	TPOverlap       bool
	ExpertImbalance float64

	// EmbeddingSlot and LossSlot count the input embedding and the
	// output layer with its loss as one transformer layer's slot each
	// when the layers are spread over the pipeline's chunks (Megatron-
	// LM's --account-for-embedding-in-pipeline-split and
	// --account-for-loss-in-pipeline-split; ChunkLayers): the first
	// chunk then holds one layer fewer, the last one fewer, and the
	// layers plus the slots must divide over PP × VirtualStages.
	EmbeddingSlot, LossSlot bool

	// Weights, Act and KV are the storage types of the weights, the
	// activations (and the compute) and the KV cache.
	Weights, Act, KV model.DType
	// GradType is the type training accumulates and data-parallel
	// reduces gradients in (the grad-dtype flag); Invalid (the zero value)
	// means the weights' type, or bf16 for weights narrower than 16 bits
	// (the ZeRO paper's mixed precision). Megatron-LM keeps and reduces
	// bf16 models' gradients in fp32 unless told otherwise
	// (megatron/training/arguments.py: "bfloat16 requires gradient
	// accumulation and all-reduce to be done in fp32").
	GradType model.DType
	// Comm is the type the residual stream's collectives move: the
	// tensor-parallel all-reduces, the pipeline sends and the MoE
	// all-to-alls. Invalid (zero) means model.CommType(Act): bf16 when
	// Act is an 8-bit or 4-bit type, as the engines run it.
	Comm model.DType

	// Reserve overrides the hardware's framework reserve when non-nil.
	Reserve *model.Bytes

	// Strict turns data-type fallbacks into errors.
	Strict bool

	// NoGraphs launches decode kernels one by one instead of replaying
	// each decode step as a CUDA graph (see GraphLaunch).
	NoGraphs bool

	// AllReduce names the serving engine's own all-reduce kernel
	// (hardware.AllReduceKernels: "vllm"), which then prices the
	// all-reduces within a node on a device it has been measured on
	// (hardware.EngineAllReduceOn), NCCL's ring those it hands on; ""
	// prices them with the device's fitted kernels (the cheaper of the
	// one-shot kernel and the ring).
	AllReduce string

	// GEMMAllReduce runs each row-parallel GEMM (the attention output
	// and FFN down projections) and the TP all-reduce of its output as
	// one kernel, as TensorRT-LLM's gemm_allreduce_plugin does
	// (gemm_allreduce.go): the all-reduce then costs what the fused
	// kernel takes beyond its GEMM. Inference only, with the device's
	// all-reduce (AllReduce "").
	GEMMAllReduce bool

	// PowerCap is a device power limit below the hardware's cap (0: the
	// cap): kernels that would draw more run at lower clocks (energy.go).
	PowerCap model.Watts
	// Sustained runs an inference's kernels at the device's sustained
	// clocks (hardware [power] sustained: the share of the tables' compute
	// rate kept when the matrix units run for seconds on end), as a run
	// whose kernels follow one another for minutes (an MLPerf run, at
	// least 600 s) does; false prices them at the clocks the kernel
	// tables were timed at, in bursts. A training step always runs at the
	// sustained clocks (train_kernels.go), and does not read it.
	Sustained bool

	// Exec is how the framework runs the prefill (a CNN's forward pass)
	// and the training passes: see Exec. Decode steps follow NoGraphs.
	Exec Exec
	// HostOverhead is the host's time per kernel under ExecEager; 0
	// means DefaultHostOverhead.
	HostOverhead model.Seconds
	// Attention is the fused attention kernel a prefill runs: the
	// device's calibrated one (AttentionEngine, the zero value) or
	// FlashAttention-2 as eager PyTorch calls it (AttentionFA2; see
	// flash2.go).
	Attention AttentionKernel
	// LoaderRate, when > 0, is the samples per second the input pipeline
	// (decoding and augmenting images on the host, DALI on the GPU)
	// sustains for the whole system: a training step takes at least
	// GlobalBatch/LoaderRate, and an inference throughput is at most it.
	LoaderRate float64
	// UnfusedAttention runs a transformer training step's attention core
	// as Megatron-LM ran it before FlashAttention (CoreAttention: the
	// scores and probabilities written to memory; train_unfused.go)
	// instead of one fused kernel.
	UnfusedAttention bool
	// Dropout is the dropout probability of a transformer's training
	// step, on the hidden states before each residual add and, with
	// UnfusedAttention, on the attention probabilities (Megatron-LM's
	// --hidden-dropout and --attention-dropout, default 0.1 there); 0
	// prices none. Its cost does not depend on the probability.
	Dropout float64
	// Autocast keeps the weights in Weights and computes a CNN's
	// convolutions in Act, casting the weights every pass (PyTorch's
	// automatic mixed precision); see workloads' Phase.Autocast.
	Autocast bool
	// MaxNumTokens is the token budget of one engine iteration
	// (vLLM max_num_batched_tokens, TensorRT-LLM max_num_tokens, SGLang
	// chunked_prefill_size): a decoder's prefill runs in chunks of at
	// most this many tokens, which bounds its activations (see
	// PrefillChunks). 0 means DefaultMaxNumTokens.
	MaxNumTokens int
}

// Default returns the default inference scenario: batch 1, 2048 tokens
// in, 128 out, bf16 throughout, one device.
func Default() Scenario {
	return Scenario{
		Mode: Inference, Batch: 1, Input: 2048, Output: 128, Seq: 2048,
		TP: 1, PP: 1, DP: 1,
		Weights: model.BF16, Act: model.BF16, KV: model.BF16,
		Optimizer: Adam, Recompute: RecomputeNone,
	}
}

// MaxTokens bounds the tokens of one pass (batch × tokens per sequence,
// times the experts each token visits in a MoE), as package workloads
// bounds a decomposition (2^40, where float64 token counts are still
// exact and products of dimensions cannot overflow); a scenario beyond
// it is a usage error on --batch rather than a failed run.
const MaxTokens = 1 << 40

// MaxPrefillIterations bounds the distinct iterations of one chunked
// prefill (a prompt longer than the token budget runs in chunks of it at
// growing contexts, each decomposed and priced on its own, about 250 µs
// and 8 KB apiece): 2^15 of them take seconds, and cover a prompt of
// 10 M tokens (Llama 4 Scout's context) in chunks of 512.
const MaxPrefillIterations = 1 << 15

// MaxTrainTokens bounds a training token budget (Scenario.Tokens):
// 10^18 is over 60,000 times the 15 T tokens Llama 3 was trained on, and
// keeps the time to train and its energy and cost finite.
const MaxTrainTokens = 1e18

// MinLoaderRate bounds a positive input-pipeline rate (samples per
// second) from below: one sample in 1000 s, so that a step stays finite.
const MinLoaderRate = 1e-3

// MaxDevices bounds the devices of one scenario (the product of its
// parallel degrees), so that the product cannot overflow: 2^24 is over a
// hundred times today's largest training clusters (about 100,000 GPUs).
const MaxDevices = 1 << 24

// A ScenarioError is a scenario field with an invalid value. Field is the
// field's name as the CLI flag spells it ("batch", "tp", "kv").
type ScenarioError struct {
	Field string
	Err   error
}

func (e *ScenarioError) Error() string { return "--" + e.Field + ": " + e.Err.Error() }
func (e *ScenarioError) Unwrap() error { return e.Err }

func deg(n int) int {
	if n <= 0 {
		return 1
	}
	return n
}

// forShape returns sc as the workload of shape s runs it: a vision
// transformer's training sequence is its image's tokens (patches and the
// class token), whatever Seq says (its default, 2048, is a language
// model's: ViT-L/16's activations had been sized at 2048 tokens, 102.5
// GiB at micro-batch 64 where its 197 tokens keep 9.9 GiB).
func (sc Scenario) forShape(s Shape) Scenario {
	if sc.Mode == Training && s.Arch == Vision && s.Tokens > 0 {
		sc.Seq = s.Tokens
	}
	return sc
}

// normalized returns sc with the parallel degrees defaulted.
func (sc Scenario) normalized() Scenario {
	sc.TP, sc.PP, sc.DP = deg(sc.TP), deg(sc.PP), deg(sc.DP)
	sc.CP, sc.EP, sc.VirtualStages = deg(sc.CP), deg(sc.EP), deg(sc.VirtualStages)
	if !(sc.ExpertImbalance >= 1) {
		sc.ExpertImbalance = 1
	}
	if sc.GlobalBatch == 0 {
		sc.GlobalBatch = sc.Batch * sc.DP
	}
	if sc.MaxNumTokens == 0 {
		sc.MaxNumTokens = DefaultMaxNumTokens
	}
	return sc
}

// TrainingWeights reports whether training can keep its weights in d:
// any float type, fp8 and fp4 beside the optimizer's fp32 master copy
// (Transformer Engine's fp8 training; NVIDIA's MLPerf Training runs,
// docs/mlperf.md), but no integer type, which has no backward pass or
// optimizer update.
func TrainingWeights(d model.DType) error {
	if !d.IsFloat() {
		return fmt.Errorf("training keeps floating-point weights (fp32, bf16, fp16, or fp8 or fp4 beside the optimizer's fp32 master copy), not %s", d)
	}
	return nil
}

// Validate checks sc against the workload's shape and reports every
// problem at once, each a *ScenarioError.
func (sc Scenario) Validate(s Shape) error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &ScenarioError{field, fmt.Errorf(format, args...)})
	}
	if sc.Batch <= 0 {
		bad("batch", "batch must be at least 1, got %d", sc.Batch)
	}
	if r := sc.Reserve; r != nil && !(*r >= 0 && !math.IsInf(float64(*r), 0)) {
		bad("reserve", "a framework reserve must be a non-negative finite size, got %v", *r)
	}
	if sc.AllReduce != "" {
		if _, _, err := hardware.EngineAllReduceOn(sc.AllReduce, nil); err != nil {
			bad("all-reduce", "%v", strings.TrimPrefix(err.Error(), "hardware: "))
		}
	}
	if sc.GEMMAllReduce {
		if sc.Mode != Inference {
			bad("gemm-allreduce", "the fused GEMM and all-reduce is an inference engine's kernel (TensorRT-LLM's gemm_allreduce_plugin); training prices its overlap with --tp-overlap")
		}
		if sc.AllReduce != "" {
			bad("gemm-allreduce", "the fused GEMM and all-reduce reduces in its own kernel, not %s's all-reduce: give one or the other", sc.AllReduce)
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"tp", sc.TP}, {"pp", sc.PP}, {"dp", sc.DP}, {"cp", sc.CP}, {"ep", sc.EP}, {"virtual-stages", sc.VirtualStages}, {"global-batch", sc.GlobalBatch}, {"max-num-tokens", sc.MaxNumTokens}} {
		switch {
		case f.v < 0:
			bad(f.name, "must not be negative, got %d", f.v)
		case f.v > MaxTokens:
			bad(f.name, "%d is over the limit of %d", f.v, int64(MaxTokens))
		}
	}
	if d := float64(max(sc.TP, 1)) * float64(max(sc.PP, 1)) * float64(max(sc.DP, 1)) * float64(max(sc.CP, 1)); d > MaxDevices {
		field, most := "tp", sc.TP // blame the largest degree
		for _, f := range []struct {
			name string
			v    int
		}{{"pp", sc.PP}, {"dp", sc.DP}, {"cp", sc.CP}} {
			if f.v > most {
				field, most = f.name, f.v
			}
		}
		bad(field, "tp %d × pp %d × dp %d × cp %d is %.4g devices, over the limit of %d", deg(sc.TP), deg(sc.PP), deg(sc.DP), deg(sc.CP), d, MaxDevices)
	}
	// Each length alone is bounded first, so that no sum or product of
	// them overflows and each flag is blamed for its own value.
	lengthsOK := true
	for _, f := range []struct {
		name string
		v    int
	}{{"batch", sc.Batch}, {"input", sc.Input}, {"output", sc.Output}, {"seq", sc.Seq}} {
		if f.v > MaxTokens {
			bad(f.name, "%d is over the limit of %d tokens", f.v, int64(MaxTokens))
			lengthsOK = false
		}
	}
	for _, d := range []struct {
		name string
		v    model.DType
	}{{"weights", sc.Weights}, {"act", sc.Act}, {"kv", sc.KV}} {
		if !d.v.Valid() {
			bad(d.name, "no data type given")
		}
	}
	if sc.Mode == Training && sc.Weights.Valid() {
		if err := TrainingWeights(sc.Weights); err != nil {
			errs = append(errs, &ScenarioError{"weights", err})
		}
	}
	if sc.Comm != model.Invalid && !sc.Comm.Valid() {
		bad("comm", "invalid data type %d", sc.Comm)
	}
	if sc.ZeRO < 0 || sc.ZeRO > 3 {
		bad("zero", "ZeRO stage must be 0, 1, 2 or 3, got %d", sc.ZeRO)
	}
	if g := sc.GradType; g != model.Invalid && (!g.Valid() || !g.IsFloat() || g.Size() < 2 || g.Size() > 4) {
		bad("grad-dtype", "gradients are kept in a float type of 16 or 32 bits, not %s", g)
	}
	if !(sc.Tokens >= 0 && sc.Tokens <= MaxTrainTokens) {
		bad("tokens", "want a token budget from 0 to %g, got %v", MaxTrainTokens, sc.Tokens)
	}
	if d := sc.Dropout; !(d >= 0 && d < 1) {
		bad("dropout", "want a probability from 0 to below 1, got %v", d)
	}
	if sc.Mode != Training || s.Arch == CNN {
		if sc.UnfusedAttention {
			bad("unfused-attention", "prices a transformer's training step; this is %s", trainingKind(sc, s))
		}
		if sc.Dropout > 0 {
			bad("dropout", "prices a transformer's training step; this is %s", trainingKind(sc, s))
		}
	}
	if sc.UnfusedAttention && sc.CP > 1 {
		bad("unfused-attention", "context parallelism %d needs a fused attention kernel (ring attention exchanges the blocks of FlashAttention's running softmax)", sc.CP)
	}
	if r := sc.LoaderRate; !(r == 0 || r >= MinLoaderRate && !math.IsInf(r, 0)) {
		bad("loader-rate", "want 0 (no bound) or at least %g samples per second, got %v", MinLoaderRate, r)
	}
	n := sc.normalized()
	if sc.Batch > 0 && lengthsOK {
		per := max(sc.Input, 0) + max(sc.Output, 0)
		perFlag := "input"
		if sc.Output > sc.Input {
			perFlag = "output"
		}
		switch {
		case s.Arch == CNN:
			per = 1 // workloads bounds a CNN by its output positions
		case s.Arch == Vision:
			per = max(s.Tokens, 1)
		case sc.Mode == Training:
			per, perFlag = max(sc.Seq, 0), "seq"
		}
		visits := max(s.TopK, 1) // a MoE routes each token to TopK experts
		if float64(sc.Batch)*float64(per)*float64(visits) > MaxTokens {
			moe := ""
			if visits > 1 {
				moe = fmt.Sprintf(" × %d experts per token", visits)
			}
			// Blame the batch when there is one; a single sequence too
			// long is its length's fault.
			field := "batch"
			if sc.Batch == 1 && s.Arch != CNN && s.Arch != Vision {
				field = perFlag
			}
			bad(field, "batch %d × %d tokens per sequence%s is over the limit of %d tokens in one pass", sc.Batch, per, moe, int64(MaxTokens))
		}
	}
	if s.Arch == Decoder && sc.Mode == Inference && lengthsOK && sc.Input > 0 && n.MaxNumTokens > 0 && n.MaxNumTokens <= MaxTokens {
		if it := (sc.Input + n.MaxNumTokens - 1) / n.MaxNumTokens; it > MaxPrefillIterations {
			// Blame the budget when the default one would do.
			field := "input"
			if (sc.Input+DefaultMaxNumTokens-1)/DefaultMaxNumTokens <= MaxPrefillIterations {
				field = "max-num-tokens"
			}
			bad(field, "%d prompt tokens in chunks of %d (--max-num-tokens) are %d prefill iterations, over the limit of %d", sc.Input, n.MaxNumTokens, it, MaxPrefillIterations)
		}
	}
	if sc.ExpertImbalance > 1 && s.Experts == 0 {
		bad("expert-imbalance", "%g for a model without experts (the factor is a MoE's busiest expert rank over the mean)", sc.ExpertImbalance)
	}
	if s.Arch != CNN {
		// Megatron-LM splits heads, KV heads and FFN columns evenly.
		switch {
		case s.Heads > 0 && s.Heads%n.TP != 0:
			bad("tp", "tensor parallelism %d does not divide the %d attention heads", n.TP, s.Heads)
		case s.KVHeads > 0 && s.KVHeads%n.TP != 0 && n.TP%s.KVHeads != 0:
			// Beyond the KV heads, each rank keeps a replica of one (vLLM).
			bad("tp", "tensor parallelism %d neither divides the %d KV heads nor is a multiple of them", n.TP, s.KVHeads)
		case s.FFN > 0 && s.FFN%n.TP != 0:
			bad("tp", "tensor parallelism %d does not divide the FFN width %d", n.TP, s.FFN)
		case s.SSMHeads > 0 && s.SSMHeads%n.TP != 0:
			bad("tp", "tensor parallelism %d does not divide the %d Mamba-2 heads", n.TP, s.SSMHeads)
		case s.SSMGroups > 0 && s.SSMGroups%n.TP != 0 && n.TP%s.SSMGroups != 0:
			bad("tp", "tensor parallelism %d neither divides the %d Mamba-2 groups nor is a multiple of them", n.TP, s.SSMGroups)
		case s.LinearValueHeads > 0 && s.LinearValueHeads%n.TP != 0:
			bad("tp", "tensor parallelism %d does not divide the %d Gated DeltaNet value heads", n.TP, s.LinearValueHeads)
		case s.LinearKeyHeads > 0 && s.LinearKeyHeads%n.TP != 0:
			bad("tp", "tensor parallelism %d does not divide the %d Gated DeltaNet key heads", n.TP, s.LinearKeyHeads)
		case s.SharedFFN > 0 && s.SharedFFN%n.TP != 0:
			bad("tp", "tensor parallelism %d does not divide the shared experts' width %d", n.TP, s.SharedFFN)
		case sc.Mode == Inference && s.ExpertFFN > 0 && n.EP >= 1 && n.EP <= n.TP && n.TP%n.EP == 0 && s.ExpertFFN%(n.TP/n.EP) != 0:
			bad("tp", "tensor parallelism %d over expert parallelism %d splits each expert %d ways, which does not divide its width %d", n.TP, n.EP, n.TP/n.EP, s.ExpertFFN)
		}
		if n.EP > 1 && sc.Mode == Inference {
			switch {
			case s.Experts == 0:
				bad("ep", "expert parallelism %d for a model without experts", n.EP)
			case s.Experts%n.EP != 0:
				bad("ep", "expert parallelism %d does not divide the %d experts", n.EP, s.Experts)
			case n.EP > n.TP*n.DP:
				bad("ep", "expert parallelism %d is more than tp %d × dp %d devices", n.EP, n.TP, n.DP)
			case n.EP <= n.TP && n.TP%n.EP != 0, n.EP > n.TP && n.EP%n.TP != 0:
				bad("ep", "expert parallelism %d must divide tp %d or be a multiple of it", n.EP, n.TP)
			}
		}
		// Every pipeline stage holds at least one slot. In inference a
		// slot is a layer. Training's split is validateLayout's (newSplit):
		// the layers plus the embedding and loss slots divide over the
		// chunks, so a stage may hold the embedding or the loss alone and
		// the pipeline be deeper than the layers (2 layers + 2 slots over
		// pp 4: embedding | 1 | 1 | loss).
		if sc.Mode == Inference && s.Layers > 0 && n.PP > s.Layers {
			bad("pp", "%d pipeline stages for %d layers: every stage needs at least one layer (the layer slots that let a training stage hold only the embedding or the loss do not apply to inference)", n.PP, s.Layers)
		}
	} else if n.TP > 1 {
		bad("tp", "tensor parallelism is not modelled for CNNs")
	}
	switch sc.Mode {
	case Inference:
		if sc.Input < 0 {
			bad("input", "input length must not be negative, got %d", sc.Input)
		} else if sc.Input == 0 && s.Arch != CNN && s.Arch != Vision {
			bad("input", "input length must be at least 1")
		}
		if sc.Output < 0 {
			bad("output", "output length must not be negative, got %d", sc.Output)
		}
		if s.Arch == Decoder && sc.Output == 0 {
			bad("output", "a decoder generates at least 1 token")
		}
	case Training:
		if sc.Seq <= 0 && s.Arch != CNN && s.Arch != Vision {
			bad("seq", "sequence length must be at least 1, got %d", sc.Seq)
		}
		if sc.Batch > 0 && float64(sc.Batch)*float64(n.DP) <= MaxTokens && n.GlobalBatch%(sc.Batch*n.DP) != 0 {
			bad("global-batch", "global batch %d is not a multiple of micro-batch %d × data parallelism %d", n.GlobalBatch, sc.Batch, n.DP)
		}
		errs = append(errs, n.validateLayout(s)...)
	default:
		bad("mode", "unknown mode %d", sc.Mode)
	}
	return errors.Join(errs...)
}

// trainingKind names what a run that is not a transformer's training
// step is, for the training-only settings' errors.
func trainingKind(sc Scenario, s Shape) string {
	if sc.Mode != Training {
		return "an inference run"
	}
	return "a CNN's training step"
}
