package workloads

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/perfsim/perfsim/model"
)

// MaxParams is the largest model perfsim accepts: 100 trillion
// parameters. Larger descriptions are refused rather than computed wrong.
const MaxParams = 100e12

// maxDim bounds every single size (d_model, vocabulary, channels, ...),
// so that products of a few sizes stay exact in float64 and in int.
const maxDim = 1 << 24

// A Model is a validated model description. It is immutable; its methods
// decompose it into kernels and size its memory.
type Model struct {
	cfg    Config
	params breakdown
	n      layerCounts // transformers: layers by mixer and MLP
	// warnings are what a loader read but does not model, or did not
	// read (a config.json's unknown keys).
	warnings []error
	cnn      *cnnPlan // for CNNs: the layers with their inferred shapes
	// expertW is the type cfg.ExpertWeights names, when expertSet.
	expertW   model.DType
	expertSet bool
}

// breakdown is a parameter count by part.
type breakdown struct {
	embedding float64 // token, position and type embeddings, patch embedding, class token
	layers    float64 // all transformer blocks, all experts
	expert    float64 // one routed expert of one layer
	norms     float64 // norm parameters in all layers and the final norm (included above)
	head      float64 // LM head (untied), pooler, classifier, final norm
	total     float64
}

// A ConfigError is one problem with a model description: the file, the
// line where known, the key and the rule broken.
type ConfigError struct {
	File string // "" when the Config was built in code
	Line int    // 0 when unknown
	Key  string // "heads", "layer[3].stride"
	Err  error
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("workloads: ")
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *ConfigError) Unwrap() error { return e.Err }

// ErrTooLarge is wrapped by errors for sizes that would overflow or models
// beyond MaxParams.
var ErrTooLarge = errors.New("too large")

// New validates cfg, fills its defaults and returns the model. Every
// problem is reported at once (errors.Join of *ConfigError).
func New(cfg Config) (*Model, error) {
	errs := validate(&cfg)
	if len(errs) > 0 {
		return nil, joinConfigErrors(errs)
	}
	m := &Model{cfg: cfg}
	m.expertW, m.expertSet = m.cfg.expertWeights()
	if cfg.Kind == CNN {
		plan, errs := planCNN(&m.cfg)
		if len(errs) > 0 {
			return nil, joinConfigErrors(errs)
		}
		m.cnn = plan
		m.params = breakdown{total: plan.params, norms: plan.normParams}
	} else {
		m.n = m.cfg.counts()
		m.params = transformerParams(&m.cfg, m.n)
	}
	if !(m.params.total <= MaxParams) {
		return nil, &ConfigError{Key: "", Err: fmt.Errorf("%.4g parameters is over the limit of %.0e: %w", m.params.total, MaxParams, ErrTooLarge)}
	}
	return m, nil
}

// maxErrors bounds the problems reported for one description.
const maxErrors = 50

func joinConfigErrors(errs []*ConfigError) error {
	n := min(len(errs), maxErrors)
	es := make([]error, n, n+1)
	for i, e := range errs[:n] {
		es[i] = e
	}
	if len(errs) > n {
		es = append(es, fmt.Errorf("workloads: and %d more problems", len(errs)-n))
	}
	return errors.Join(es...)
}

// Warnings returns what the loader read but does not model, and the
// config.json keys it did not read, each naming the file; nil for most.
func (m *Model) Warnings() []error { return m.warnings }

// Name returns the model's name.
func (m *Model) Name() string { return m.cfg.Name }

// Source returns where the model's numbers come from.
func (m *Model) Source() string { return m.cfg.Source }

// Kind returns the model's family.
func (m *Model) Kind() Kind { return m.cfg.Kind }

// Config returns a copy of the validated description with its defaults
// filled in.
func (m *Model) Config() Config {
	c := m.cfg
	c.Layer = append([]Layer(nil), m.cfg.Layer...)
	return c
}

// Params returns the total parameter count (all experts).
func (m *Model) Params() float64 { return m.params.total }

// NormParams returns the parameters of the normalisation layers (gains
// and biases of LayerNorm, RMSNorm, BatchNorm), which are in Params. Some
// published counts leave them out: seed 003's 1.7461E+11 for GPT-3 175B
// is Params less NormParams.
func (m *Model) NormParams() float64 { return m.params.norms }

// ActiveParams returns the parameters one token uses: for a mixture of
// experts, the total less the experts it is not routed to. The
// embeddings are included (Qwen's convention for Qwen3-30B-A3B's 3.3 B);
// subtract EmbeddingParams for the convention that leaves the input
// embedding out (DeepSeek-V3's 37 B, gpt-oss's 5.1 B).
func (m *Model) ActiveParams() float64 {
	c := &m.cfg
	if c.Experts == 0 {
		return m.params.total
	}
	return m.params.total - float64(m.n.moe)*float64(c.Experts-c.TopK)*m.params.expert
}

// EmbeddingParams returns the parameters of the input embeddings (token,
// position and type tables, or a ViT's patch embedding), which a token
// reads one row of.
func (m *Model) EmbeddingParams() float64 { return m.params.embedding }

// Shape is what the simulator needs to size training activations with
// the formulas of Korthikanti et al. (2022): the transformer's
// dimensions, or for a CNN its kind alone (use ActivationBytes).
type Shape struct {
	Kind       Kind
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
	// Tokens is the sequence length of one image for a ViT (patches plus
	// the class token); 0 otherwise.
	Tokens int
	// The other dimensions tensor parallelism splits, each 0 when the
	// model has no layer that uses it: the Mamba-2 heads and groups, the
	// Gated DeltaNet value and key heads, a routed expert's MLP width
	// (split over TP/EP) and the shared experts' width.
	SSMHeads, SSMGroups              int
	LinearValueHeads, LinearKeyHeads int
	ExpertFFN, SharedFFN             int
}

// Shape returns the model's dimensions.
func (m *Model) Shape() Shape {
	c := &m.cfg
	s := Shape{Kind: c.Kind, Layers: c.Layers, DModel: c.DModel, Heads: c.Heads, KVHeads: c.KVHeads,
		HeadDim: c.HeadDim, FFN: c.FFN, Vocab: c.Vocab, Experts: c.Experts, TopK: c.TopK, MaxContext: c.MaxContext}
	if c.Kind == ViT {
		s.Tokens = vitTokens(c)
	}
	if n := m.n; c.Kind == Decoder {
		if n.mamba > 0 {
			s.SSMHeads, s.SSMGroups = c.SSMHeads, c.SSMGroups
		}
		if n.delta > 0 {
			s.LinearValueHeads, s.LinearKeyHeads = c.LinearValueHeads, c.LinearKeyHeads
		}
		if n.moe > 0 {
			s.ExpertFFN, s.SharedFFN = c.ExpertFFN, c.SharedExperts*c.ExpertFFN
		}
	}
	if c.Kind == CNN {
		s.Layers = len(c.Layer)
	}
	return s
}

// KVBytesPerToken returns the KV cache one more token adds in all
// attention layers while the context is shorter than any window:
// 2·kv_heads·head_dim elements of kv per layer, or kv_lora_rank +
// qk_rope_head_dim for multi-head latent attention (DeepSeek-V3 in bf16:
// (512 + 64)·61·2 = 70,272 bytes). It is 0 for models without a KV cache
// (encoders, ViTs, CNNs). KVBytes sizes a sequence exactly: sliding
// windows, tensor parallelism and state-space layers.
func (m *Model) KVBytesPerToken(kv model.DType) model.Bytes {
	if m.cfg.Kind != Decoder {
		return 0
	}
	return kv.Bytes(float64(m.n.attn()) * m.kvPerLayerToken(1))
}

// WeightBytes returns the storage of all parameters in w, with the block
// scales of 4-bit formats (model.DType.ScaleOverhead).
// Experts stored narrower (expert_weights) count in their own type.
func (m *Model) WeightBytes(w model.DType) model.Bytes {
	return m.WeightBytesPerDevice(w, 1, 1)
}

// WeightBytesPerDevice returns the weights one device of a tp × ep layout
// holds: the routed experts split over max(tp, ep) ranks (EP ranks each
// holding experts/EP, each expert's width split over TP/EP of them), in
// their own type when expert_weights is narrower than w (their biases
// stay in w, as gpt-oss's MXFP4 checkpoint keeps them in bf16);
// everything else split over tp, except what every rank needs whole: the
// KV projections of replicated KV heads, MLA's down-projections (to the
// latent and to the query rank) and the MoE routers (in 16 bits, as
// model.VocabType keeps the vocabulary).
func (m *Model) WeightBytesPerDevice(w model.DType, tp, ep int) model.Bytes {
	c := &m.cfg
	tp, ep = max(tp, 1), max(ep, 1)
	bytes := func(d model.DType, p float64) float64 { return float64(d.Bytes(p)) * (1 + d.ScaleOverhead()) }
	experts := float64(m.n.moe) * float64(c.Experts) * m.params.expert
	expertBias := 0.0 // the routed experts' biases, not quantised with them
	if experts > 0 && m.expertDType(w) != w {
		expertBias = float64(m.n.moe) * float64(c.Experts) * (m.params.expert - ffnParams(float64(c.DModel), float64(c.ExpertFFN), c.Activation, false))
	}
	rest := m.params.total - experts
	// The routers are whole on every rank and stay in 16 bits under
	// narrower weights (vLLM: a ReplicatedLinear without quantisation;
	// gpt-oss: a bf16 Linear), as the ops price them.
	router := 0.0
	if m.n.moe > 0 {
		router = float64(m.n.moe) * float64(c.Experts) * float64(c.DModel)
		if c.RouterBias {
			router += float64(m.n.moe) * float64(c.Experts)
		}
		rest -= router
	}
	// A decoder's token embedding and LM head stay in 16 bits under
	// narrower weights (model.VocabType), split over TP like the rest
	// (vocabulary-parallel).
	vocab := 0.0
	if c.Kind == Decoder && model.VocabType(w) != w {
		vocab = m.VocabParams()
		rest -= vocab
	}
	perRank := rest / float64(tp)
	if tp > 1 && m.n.attn() > 0 {
		d, A := float64(c.DModel), float64(m.n.attn())
		switch {
		case c.mla():
			// Both down-projections are whole on every rank: kv_a to
			// the latent and q_a to the query rank (vLLM's
			// ReplicatedLinear, or its fused_qkv_a_proj with TP off).
			down := d * float64(c.KVLoraRank+c.QKRopeDim+c.QLoraRank)
			perRank += A * down * (1 - 1/float64(tp))
		case tp > c.KVHeads:
			kv := 2 * d * float64(c.HeadDim)
			perRank += A * kv * (float64(c.kvLocal(tp)) - float64(c.KVHeads)/float64(tp))
		}
	}
	r := float64(max(tp, ep))
	return model.Bytes(bytes(w, perRank) + bytes(model.VocabType(w), vocab/float64(tp)+router) + bytes(m.expertDType(w), (experts-expertBias)/r) + bytes(w, expertBias/r))
}

// VocabParams returns the parameters of a decoder's token embedding and
// LM head (vocabulary × d_model each; once when they are tied), 0 for
// other models.
func (m *Model) VocabParams() float64 {
	c := &m.cfg
	if c.Kind != Decoder {
		return 0
	}
	p := float64(c.Vocab) * float64(c.DModel)
	if !c.TiedEmbeddings {
		p *= 2
	}
	return p
}

// ActivationBytes returns, for a CNN, the sum of every layer's output at
// a batch in d: what training keeps for the backward pass. For a
// transformer it returns 0: use Shape with the formulas of Korthikanti et
// al. instead.
func (m *Model) ActivationBytes(batch int, d model.DType) model.Bytes {
	if m.cnn == nil || batch <= 0 {
		return 0
	}
	return d.Bytes(m.cnn.activations * float64(batch))
}

// ImageSize returns the input image side of a ViT or CNN, 0 otherwise.
func (m *Model) ImageSize() int { return m.cfg.ImageSize }

// transformerParams counts the parameters of a validated transformer with
// layer counts n.
func transformerParams(c *Config, n layerCounts) breakdown {
	d := float64(c.DModel)
	bias := boolOr(c.Bias, false)
	qkvBias := boolOr(c.QKVBias, bias)
	norm := 2 * d // LayerNorm: gain and bias
	if c.Norm == "rmsnorm" {
		norm = d
	}
	var b breakdown

	// Embeddings.
	switch c.Kind {
	case ViT:
		p := float64(c.PatchSize)
		b.embedding = float64(c.Channels)*p*p*d + d // patch embedding as a conv with bias
		if boolOr(c.ClassToken, true) {
			b.embedding += d
		}
		b.embedding += float64(vitTokens(c)) * d // learned positions
	default:
		b.embedding = float64(c.Vocab) * d
		if c.Position == "learned" {
			b.embedding += float64(c.MaxContext) * d
		}
		b.embedding += float64(c.RelativeBuckets) * float64(c.Heads) // T5's relative bias, one table for the layers
		b.embedding += float64(c.TypeVocab) * d
	}
	if c.EmbeddingNorm {
		b.embedding += norm
		b.norms += norm
	}

	// The blocks.
	layerParams(c, n, &b, norm, attnParams(c, qkvBias, boolOr(c.OutBias, bias)), bias)

	// Head.
	if boolOr(c.FinalNorm, true) {
		b.head += norm
		b.norms += norm
	}
	switch c.Kind {
	case Decoder:
		if !c.TiedEmbeddings {
			b.head += float64(c.Vocab) * d
		}
		if c.LMHeadBias {
			b.head += float64(c.Vocab)
		}
	case Encoder, ViT:
		if c.Pooler {
			b.head += d*d + d
		}
		if c.MLMHead {
			b.head += d*d + d + 2*d + float64(c.Vocab) // transform, its LayerNorm, the decoder's bias
			b.norms += 2 * d
		}
		if c.Classes > 0 {
			b.head += d*float64(c.Classes) + float64(c.Classes)
		}
	}
	b.total = b.embedding + b.layers + b.head
	return b
}

// ffnParams counts one MLP of width f: two matrices, or three when gated.
func ffnParams(d, f float64, act string, bias bool) float64 {
	p := 2 * d * f
	if gated(act) {
		p += d * f
	}
	if bias {
		p += d + f
		if gated(act) {
			p += f
		}
	}
	return p
}

// vitTokens returns the tokens of one image: the patches and the class token.
func vitTokens(c *Config) int {
	if c.PatchSize <= 0 {
		return 0
	}
	n := (c.ImageSize / c.PatchSize) * (c.ImageSize / c.PatchSize)
	if boolOr(c.ClassToken, true) {
		n++
	}
	return n
}

// finite reports whether x is a usable number.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
