package sim

import "github.com/perfsim/perfsim/model"

// A Workload is what the simulator needs of a model: its kernels for a
// phase at a shape, its parameter counts and storage, its KV cache per
// token, and the dimensions the training-activation formulas use. It is
// declared here, where it is used, so that sim never imports the concrete
// architectures; cmd/perfsim adapts workloads.Model to it.
type Workload interface {
	Name() string
	// Params is the total parameter count (all experts).
	Params() float64
	// ActiveParams is the parameters one token uses (fewer for a MoE).
	ActiveParams() float64
	// Ops decomposes the phase into kernels, per device when ph.TP > 1
	// (with the tensor-parallel collectives among the ops).
	Ops(ph Phase) ([]model.Op, error)
	// KVBytesPerToken is the KV cache of one token in all layers; 0 for
	// models without one.
	KVBytesPerToken(kv model.DType) model.Bytes
	// WeightBytes is the storage of all parameters in w, with the block
	// scales of 4-bit formats.
	WeightBytes(w model.DType) model.Bytes
	// ActivationBytes is, for a CNN, every layer's output at a batch (what
	// training keeps for the backward pass); 0 for transformers.
	ActivationBytes(batch int, d model.DType) model.Bytes
	// Shape returns the dimensions.
	Shape() Shape
}

// Arch is a workload's architecture, as far as the simulator cares.
type Arch uint8

// The architectures.
const (
	Decoder Arch = iota // causal language model: prefill, decode, KV cache
	Encoder             // bidirectional encoder (BERT): one forward pass
	Vision              // vision transformer: one forward pass over patches
	CNN                 // convolutional network: images
)

func (a Arch) String() string {
	return [...]string{"decoder", "encoder", "vision", "cnn"}[a]
}

// Shape holds the dimensions of a workload that the memory formulas use.
type Shape struct {
	Arch       Arch
	Layers     int
	DModel     int
	Heads      int
	KVHeads    int
	HeadDim    int
	FFN        int
	Vocab      int
	Experts    int
	TopK       int
	MaxContext int
	Tokens     int // sequence length of one image for a vision transformer
	ImageSize  int // input image side for a CNN or ViT
	// The other dimensions tensor parallelism splits, 0 where the model
	// has no layer that uses them: Mamba-2 heads and groups (groups are
	// replicated beyond TP), Gated DeltaNet value and key heads, a routed
	// expert's MLP width (split over TP/EP when EP ≤ TP) and the shared
	// experts' width.
	SSMHeads, SSMGroups              int
	LinearValueHeads, LinearKeyHeads int
	ExpertFFN, SharedFFN             int
}

// PhaseKind names a phase of a workload.
type PhaseKind uint8

// The phases.
const (
	Prefill PhaseKind = iota // S new tokens (or images) through the model
	Decode                   // one new token per sequence at a context
	TrainForward
	TrainBackward
)

func (k PhaseKind) String() string {
	return [...]string{"prefill", "decode", "train_forward", "train_backward"}[k]
}

// A Phase is one pass of a workload at a shape. Seq is the new tokens per
// sequence (1 when decoding; ignored by vision models and CNNs, whose
// image fixes it); Context is the tokens already in the KV cache, so that
// a decode step attends to Context+1 keys.
type Phase struct {
	Kind             PhaseKind
	Batch            int
	Seq              int
	Context          int
	Weights, Act, KV model.DType
	Comm             model.DType // type of the residual-stream collectives (Scenario.CommType)
	TP               int
	EP               int     // expert-parallel degree; 0 or 1 for none
	Imbalance        float64 // busiest expert rank's routed tokens over the mean; 0 or 1 for none
	// Group is the tokens an expert-parallel group of data-parallel
	// attention replicas routes when EP > TP, Batch being the busiest
	// replica's (Pricer.PriceGroup); 0: Batch·Seq·EP/TP, replicas alike.
	Group int
	// FuseCNN and Autocast say how a CNN's graph runs (Scenario.Exec is
	// ExecFused; Scenario.Autocast).
	FuseCNN, Autocast bool
	// GEMMAllReduce fuses each row-parallel GEMM with the TP all-reduce
	// of its output (Scenario.GEMMAllReduce); the workload ignores it and
	// package sim pairs the ops (gemm_allreduce.go).
	GEMMAllReduce bool
}

// A Sharder is a Workload that sizes its memory per device itself:
// weights under tensor and expert parallelism (experts split by EP,
// replicated KV heads kept whole) and the KV cache (and state-space
// state) of one sequence of a given length, with sliding windows capped
// and latent caches whole on every rank. Without it, weights and the KV
// cache are divided evenly by TP and the cache grows with every token.
type Sharder interface {
	WeightBytesPerDevice(w model.DType, tp, ep int) model.Bytes
	KVBytes(tokens, tp int, kv model.DType) model.Bytes
}

// A Windowed workload says how many of its attention layers hold every
// token (full) and how many at most the last window tokens (windowed,
// sliding-window attention): Mistral 7B v0.1's 32 of 4,096, Gemma 3's
// five local layers to each global one, gpt-oss's alternating 128-token
// windows. Footprint splits a sequence's KV cache by it (Memory.KVWindow).
type Windowed interface {
	KVLayers() (full, windowed, window int)
}
