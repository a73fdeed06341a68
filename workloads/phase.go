package workloads

import (
	"fmt"
	"strings"

	"github.com/perfsim/perfsim/model"
)

// PhaseKind is what a phase computes.
type PhaseKind uint8

// The phases. The zero PhaseKind is invalid, so that a Phase left unset
// is an error rather than a silent prefill.
const (
	Prefill       PhaseKind = iota + 1 // inference over Seq new tokens (an encoder, ViT or CNN: one forward pass)
	Decode                             // one decode step: one new token per sequence at context Context
	TrainForward                       // the forward pass of a training step
	TrainBackward                      // the backward pass of a training step
)

var phaseNames = [...]string{Prefill: "prefill", Decode: "decode", TrainForward: "train-fwd", TrainBackward: "train-bwd"}

func (k PhaseKind) String() string {
	if k > 0 && int(k) < len(phaseNames) {
		return phaseNames[k]
	}
	return fmt.Sprintf("PhaseKind(%d)", k)
}

// ParsePhaseKind parses "prefill", "decode", "train-fwd" or "train-bwd"
// (also "forward", "backward", "train-forward", "train-backward").
func ParsePhaseKind(s string) (PhaseKind, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "prefill":
		return Prefill, nil
	case "decode":
		return Decode, nil
	case "train-fwd", "train-forward", "forward", "fwd":
		return TrainForward, nil
	case "train-bwd", "train-backward", "backward", "bwd":
		return TrainBackward, nil
	}
	return 0, fmt.Errorf("unknown phase %q (want prefill, decode, train-fwd or train-bwd)", s)
}

// Embedding says how the token embedding is decomposed.
type Embedding uint8

const (
	// EmbedGather is what runs: a row lookup (model.Gather).
	EmbedGather Embedding = iota
	// EmbedOneHot is the seed's view: one-hot tokens × the embedding
	// matrix, a (tokens × vocab) · (vocab × d_model) GEMM.
	EmbedOneHot
)

func (e Embedding) String() string {
	if e == EmbedOneHot {
		return "one-hot-gemm"
	}
	return "gather"
}

// A Phase is a piece of work at a shape: what to decompose.
type Phase struct {
	Kind PhaseKind
	// Batch is the number of sequences (images for a ViT or CNN).
	Batch int
	// Seq is the new tokens per sequence (prefill, training). Ignored for
	// decode (one token) and for ViTs and CNNs (the image fixes it).
	Seq int
	// Context is the tokens already in the KV cache: a decode step
	// attends to Context+1 keys; a prefill of Seq tokens after Context
	// cached ones (chunked prefill, a shared prefix) to Context+Seq.
	Context int
	// Weights, Act and KV are the data types of the weights, the
	// activations and the KV cache. Zero values default to bf16, Weights'
	// compute type and Act.
	Weights, Act, KV model.DType
	// Comm is the type the tensor- and expert-parallel collectives move
	// (the all-reduces of the residual stream, the MoE all-to-alls). Zero
	// means CommType(Act): engines that compute GEMMs in an 8-bit or 4-bit
	// type keep the residual stream, and so its collectives, in bf16.
	Comm model.DType
	// TP is the tensor-parallel degree (0 or 1: none). Heads and FFN
	// columns are split across TP ranks, ops are per device, and each
	// layer adds two all-reduces of the activations (Megatron-LM).
	TP int
	// EP is the expert-parallel degree (0 or 1: none): each rank holds
	// experts/EP of every MoE layer's experts. EP ≤ TP places the experts
	// inside the tensor-parallel group (each expert's width split over
	// TP/EP ranks, the layer's output all-reduced as before); EP > TP, a
	// multiple of TP, spans EP/TP data-parallel attention replicas
	// (DeepSeek's layout): tokens go to their experts' ranks by an
	// all-to-all dispatch and come back by an all-to-all combine.
	EP int
	// Group is the tokens the expert-parallel group routes when EP > TP
	// (0: Batch·Seq·EP/TP, every data-parallel attention replica holding
	// this phase's tokens). A serving engine's replicas run their MoE
	// layers in lockstep with batches of their own (sim.Pricer.PriceGroup):
	// the phase is then the busiest replica's tokens, whose all-to-all is
	// the longest, and Group the tokens of them all, which the experts
	// see. Ignored when EP ≤ TP.
	Group int
	// Imbalance is the routed load of the busiest expert-parallel rank
	// over the mean (max/mean, at least 1; 0 means 1, uniform routing).
	Imbalance float64

	// The options below choose a view; their zero values are what runs.

	// Embedding: a gather (default) or the seed's one-hot GEMM.
	Embedding Embedding
	// PerHead lists the Q, K and V projections as one GEMM per head (the
	// seed's table) instead of one fused QKV GEMM.
	PerHead bool
	// AllLogits computes the logits of every prefill position (the seed's
	// table) instead of only the last one, which is what serving needs.
	// Training always computes every position.
	AllLogits bool
	// Unfused runs attention as separate kernels that write the scores
	// (model.Attention.Fused = false).
	Unfused bool

	// The options below say how an engine runs a CNN (see cnnOps).

	// FuseCNN runs a CNN as an inference engine that fuses its graph
	// (TensorRT): each batch norm folded into its convolution's weights,
	// the activation after a convolution, and a residual add with its
	// ReLU, in the convolution's epilogue.
	FuseCNN bool
	// Autocast runs the convolutions and fc layers of a CNN as PyTorch's
	// autocast does: the weights stay in Weights (fp32) and one cast
	// kernel per layer and pass copies them into Act, in which the GEMM
	// computes.
	Autocast bool
}

// maxTokens bounds Batch·(Seq+Context), the tokens routed to experts
// (tokens·top_k) and a CNN's batch·H_out·W_out, so that no GEMM dimension
// overflows an int. maxElems bounds one image's feature maps likewise.
const (
	maxTokens = 1 << 40
	maxElems  = 1 << 40
)

// norm checks ph against m and fills the defaults.
func (ph Phase) norm(m *Model) (Phase, error) {
	var errs []string
	if ph.Kind < Prefill || ph.Kind > TrainBackward {
		errs = append(errs, fmt.Sprintf("phase kind %d is not set or unknown", ph.Kind))
	}
	if ph.Batch <= 0 {
		errs = append(errs, fmt.Sprintf("batch %d must be positive", ph.Batch))
	}
	if ph.TP == 0 {
		ph.TP = 1
	}
	if ph.TP < 0 {
		errs = append(errs, fmt.Sprintf("tp %d must be positive", ph.TP))
	}
	if ph.Context < 0 {
		errs = append(errs, fmt.Sprintf("context %d must not be negative", ph.Context))
	}
	if ph.Weights == model.Invalid {
		ph.Weights = model.BF16
	}
	if ph.Act == model.Invalid {
		ph.Act = model.BF16
	}
	if ph.KV == model.Invalid {
		ph.KV = ph.Act
	}
	if ph.Comm == model.Invalid {
		ph.Comm = model.CommType(ph.Act)
	}
	for _, d := range []model.DType{ph.Weights, ph.Act, ph.KV, ph.Comm} {
		if !d.Valid() {
			errs = append(errs, fmt.Sprintf("invalid data type %d", d))
		}
	}
	if ph.Kind == TrainForward || ph.Kind == TrainBackward {
		ph.Context = 0 // training attends within the sequence
	}
	c := &m.cfg
	switch c.Kind {
	case Decoder:
		switch ph.Kind {
		case Decode:
			ph.Seq = 1
		case Prefill, TrainForward, TrainBackward:
			if ph.Seq <= 0 {
				errs = append(errs, fmt.Sprintf("seq %d must be positive", ph.Seq))
			}
		}
	case Encoder:
		if ph.Kind == Decode {
			errs = append(errs, fmt.Sprintf("%s is an encoder: it has no decode phase", c.Name))
		}
		if ph.Seq <= 0 {
			errs = append(errs, fmt.Sprintf("seq %d must be positive", ph.Seq))
		}
		ph.Context = 0
	case ViT, CNN:
		if ph.Kind == Decode {
			errs = append(errs, fmt.Sprintf("%s is a %s: it has no decode phase", c.Name, c.Kind))
		}
		ph.Seq, ph.Context = vitTokens(c), 0
	}
	if float64(ph.Batch)*(float64(ph.Seq)+float64(ph.Context)) > maxTokens {
		errs = append(errs, fmt.Sprintf("batch %d × (seq %d + context %d) tokens is over the limit of %d", ph.Batch, ph.Seq, ph.Context, maxTokens))
	}
	if c.Experts > 0 && float64(ph.Batch)*float64(ph.Seq)*float64(c.TopK) > maxTokens {
		errs = append(errs, fmt.Sprintf("batch %d × seq %d × top_k %d routed tokens is over the limit of %d", ph.Batch, ph.Seq, c.TopK, int64(maxTokens)))
	}
	if c.Kind == CNN && m.cnn != nil && float64(ph.Batch)*m.cnn.maxRows > maxTokens {
		errs = append(errs, fmt.Sprintf("batch %d × %.0f output positions (the largest GEMM M of one image) is over the limit of %d", ph.Batch, m.cnn.maxRows, int64(maxTokens)))
	}
	if ph.EP == 0 {
		ph.EP = 1
	}
	if ph.Imbalance == 0 {
		ph.Imbalance = 1
	}
	if !(ph.Imbalance >= 1) || !finite(ph.Imbalance) {
		errs = append(errs, fmt.Sprintf("imbalance %v must be at least 1 (max/mean routed tokens)", ph.Imbalance))
	}
	if ph.Group < 0 {
		errs = append(errs, fmt.Sprintf("group %d tokens must not be negative", ph.Group))
	}
	if ph.EP < 0 {
		errs = append(errs, fmt.Sprintf("ep %d must be positive", ph.EP))
	}
	var splits []error
	if ph.TP > 1 || ph.EP > 1 {
		if c.Kind == CNN {
			errs = append(errs, "tensor parallelism of a cnn is not modelled")
		} else {
			splits = m.splitErrors(ph.TP, max(ph.EP, 1))
		}
	}
	if len(errs) > 0 || len(splits) > 0 {
		return ph, newPhaseError(c.Name, ph.Kind, errs, splits)
	}
	return ph, nil
}
