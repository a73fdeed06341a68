package workloads

import (
	"fmt"
	"strings"

	"github.com/perfsim/perfsim/model"
)

// The mixers and MLPs a layer of a transformer may have (layer_types and
// mlp_types).
const (
	MixerFull    = "full"     // attention over the whole context
	MixerSliding = "sliding"  // attention over the last window tokens
	MixerMamba   = "mamba"    // a Mamba-2 state-space mixer
	MixerDelta   = "deltanet" // a Gated DeltaNet linear-attention mixer
	MixerNone    = "none"     // no mixer (an MLP-only layer of Nemotron-H)
	MLPDense     = "dense"
	MLPMoE       = "moe"
	MLPNone      = "none"
)

var (
	mixerKinds = []string{MixerFull, MixerSliding, MixerMamba, MixerDelta, MixerNone}
	mlpKinds   = []string{MLPDense, MLPMoE, MLPNone}
)

// layerCounts counts a transformer's layers by mixer and by MLP. The op
// list has one op per kind of kernel with Count the layers that run it,
// so it is as short for a hybrid of any pattern as for a plain model.
type layerCounts struct {
	full, sliding, mamba, delta int // mixers
	dense, moe                  int // MLPs
}

func (n layerCounts) attn() int   { return n.full + n.sliding }
func (n layerCounts) mixers() int { return n.full + n.sliding + n.mamba + n.delta }
func (n layerCounts) mlps() int   { return n.dense + n.moe }

// mixerOf returns layer i's mixer: layer_types, else sliding when a
// window is set, mamba for a model with a state space and no attention
// heads, deltanet for one with linear_value_heads and no attention
// heads, full otherwise.
func (c *Config) mixerOf(i int) string {
	switch {
	case i < len(c.LayerTypes):
		return c.LayerTypes[i]
	case c.Window > 0:
		return MixerSliding
	case c.SSMState > 0 && c.Heads == 0:
		return MixerMamba
	case c.LinearValueHeads > 0 && c.Heads == 0:
		return MixerDelta
	}
	return MixerFull
}

// mlpOf returns layer i's MLP: mlp_types, else for a mixture of experts
// dense for the first first_dense_layers and moe after, else dense when
// ffn is set and none without.
func (c *Config) mlpOf(i int) string {
	switch {
	case i < len(c.MLPTypes):
		return c.MLPTypes[i]
	case c.Experts > 0 && i < c.FirstDenseLayers:
		return MLPDense
	case c.Experts > 0:
		return MLPMoE
	case c.FFN > 0 || c.SSMState == 0 && c.LinearValueHeads == 0:
		return MLPDense
	}
	return MLPNone
}

// counts returns the layers of each kind (unknown kinds are not counted;
// validate reports them).
func (c *Config) counts() layerCounts {
	var n layerCounts
	for i := 0; i < c.Layers && i < maxDim; i++ {
		switch c.mixerOf(i) {
		case MixerFull:
			n.full++
		case MixerSliding:
			n.sliding++
		case MixerMamba:
			n.mamba++
		case MixerDelta:
			n.delta++
		}
		switch c.mlpOf(i) {
		case MLPDense:
			n.dense++
		case MLPMoE:
			n.moe++
		}
	}
	return n
}

// mla reports whether attention is multi-head latent attention.
func (c *Config) mla() bool { return c.KVLoraRank > 0 }

// ssmInner returns a Mamba-2 mixer's inner width H·P.
func (c *Config) ssmInner() int { return c.SSMHeads * c.SSMHeadDim }

// archDefaults fills the defaults of the keys of this file.
func archDefaults(c *Config) {
	if c.mla() && c.HeadDim == 0 {
		c.HeadDim = c.QKNopeDim + c.QKRopeDim
	}
	if c.SSMState > 0 {
		if c.SSMHeadDim == 0 {
			c.SSMHeadDim = 64
		}
		if c.SSMGroups == 0 {
			c.SSMGroups = 1
		}
		if c.SSMConv == 0 {
			c.SSMConv = 4
		}
		if c.SSMChunk == 0 {
			c.SSMChunk = 256
		}
	}
	deltaDefaults(c)
}

// validateArch checks the keys of this file, with the layer counts n.
func validateArch(c *Config, n layerCounts, bad func(key, format string, args ...any), size func(key string, v int, required bool)) {
	for _, l := range []struct {
		key   string
		list  []string
		kinds []string
	}{{"layer_types", c.LayerTypes, mixerKinds}, {"mlp_types", c.MLPTypes, mlpKinds}} {
		if l.list == nil {
			continue
		}
		if len(l.list) != c.Layers {
			bad(l.key, "%d entries for %d layers (want one per layer)", len(l.list), c.Layers)
		}
		for i, k := range l.list {
			if !oneOf(k, l.kinds) {
				bad(l.key, "entry %d: unknown kind %q (want one of %s)", i, k, strings.Join(l.kinds, ", "))
				break
			}
		}
	}
	size("window", c.Window, n.sliding > 0)
	if c.Window > 0 && c.MaxContext > 0 && c.Window > c.MaxContext {
		bad("window", "%d is larger than the context of %d tokens", c.Window, c.MaxContext)
	}
	if c.Window > 0 && n.sliding == 0 {
		bad("window", "set, but no layer is \"sliding\" in layer_types")
	}
	size("first_dense_layers", c.FirstDenseLayers, false)
	if c.FirstDenseLayers > 0 {
		if c.Experts == 0 {
			bad("first_dense_layers", "set without experts")
		} else if c.FirstDenseLayers > c.Layers {
			bad("first_dense_layers", "%d is more than the %d layers", c.FirstDenseLayers, c.Layers)
		}
		if c.MLPTypes != nil {
			bad("first_dense_layers", "set with mlp_types, which already says each layer's MLP")
		}
	}
	if n.moe > 0 && c.Experts == 0 {
		bad("experts", "missing: %d layers are moe in mlp_types", n.moe)
	}
	if c.Experts > 0 && n.moe == 0 {
		bad("experts", "set, but no layer's MLP is moe")
	}
	if c.ExpertWeights != "" {
		if d, err := model.ParseDType(c.ExpertWeights); err != nil || !d.Valid() {
			bad("expert_weights", "unknown data type %q", c.ExpertWeights)
		} else if c.Experts == 0 {
			bad("expert_weights", "set without experts")
		}
	}
	// Multi-head latent attention.
	for _, k := range []struct {
		key string
		v   int
	}{{"q_lora_rank", c.QLoraRank}, {"kv_lora_rank", c.KVLoraRank}, {"qk_nope_head_dim", c.QKNopeDim}, {"qk_rope_head_dim", c.QKRopeDim}, {"v_head_dim", c.VHeadDim}} {
		// A kv_lora_rank given, even a bad one, asks for latent attention:
		// its other sizes are checked too, so every problem shows at once.
		size(k.key, k.v, c.KVLoraRank != 0 && k.key != "q_lora_rank")
	}
	if c.KVLoraRank == 0 && (c.QLoraRank != 0 || c.QKNopeDim != 0 || c.QKRopeDim != 0 || c.VHeadDim != 0) {
		bad("kv_lora_rank", "missing: want a positive rank; q_lora_rank, qk_nope_head_dim, qk_rope_head_dim and v_head_dim describe multi-head latent attention, which kv_lora_rank turns on")
	}
	if c.mla() {
		if c.HeadDim != c.QKNopeDim+c.QKRopeDim {
			bad("head_dim", "%d is not qk_nope_head_dim %d + qk_rope_head_dim %d (multi-head latent attention)", c.HeadDim, c.QKNopeDim, c.QKRopeDim)
		}
		if c.KVHeads != c.Heads {
			bad("kv_heads", "%d differs from heads %d: multi-head latent attention up-projects a key and a value per head", c.KVHeads, c.Heads)
		}
		if c.Window > 0 {
			bad("window", "sliding windows with multi-head latent attention are not modelled")
		}
	}
	// Mamba-2.
	size("ssm_state", c.SSMState, n.mamba > 0)
	size("ssm_heads", c.SSMHeads, n.mamba > 0)
	size("ssm_head_dim", c.SSMHeadDim, false)
	size("ssm_groups", c.SSMGroups, false)
	size("ssm_conv", c.SSMConv, false)
	size("ssm_chunk", c.SSMChunk, false)
	if c.SSMGroups > 0 && c.SSMHeads > 0 && c.SSMHeads%c.SSMGroups != 0 {
		bad("ssm_groups", "%d does not divide ssm_heads %d", c.SSMGroups, c.SSMHeads)
	}
	if n.mamba == 0 && c.SSMState > 0 {
		bad("ssm_state", "set, but no layer is \"mamba\" in layer_types")
	}
	validateDelta(c, n, bad, size)
}

// attnParams counts one attention mixer's parameters (no norm before it).
func attnParams(c *Config, qkvBias, outBias bool) float64 {
	d, hd, h := float64(c.DModel), float64(c.HeadDim), float64(c.Heads)
	var p float64
	if c.mla() {
		// DeepSeek-V3 modeling: q_a_proj, q_a_layernorm and q_b_proj (or
		// q_proj without a q rank), kv_a_proj_with_mqa to the latent and
		// the shared rope key, kv_a_layernorm, kv_b_proj to each head's
		// key (nope part) and value, o_proj.
		if r := float64(c.QLoraRank); r > 0 {
			p += d*r + r + r*h*hd
		} else {
			p += d * h * hd
		}
		kv := float64(c.KVLoraRank)
		p += d*(kv+float64(c.QKRopeDim)) + kv + kv*h*float64(c.QKNopeDim+c.VHeadDim) + h*float64(c.VHeadDim)*d
		return p
	}
	qkv := float64(c.Heads+2*c.KVHeads) * hd
	p = d*qkv + h*hd*d
	if qkvBias {
		p += qkv
	}
	if outBias {
		p += d
	}
	if c.QKNorm {
		p += 2 * hd
	}
	if c.AttnOutputGate {
		p += d * h * hd // q_proj's second half: the gate
	}
	if c.AttentionSinks {
		p += h
	}
	return p
}

// mambaParams counts one Mamba-2 mixer's parameters (Mamba2 of
// state-spaces/mamba and transformers' Mamba2Mixer, without biases in the
// projections): in_proj to z, x, B, C and the step sizes, the
// convolution's weights and biases over x, B and C, the per-head step
// bias, A and D, the gated RMSNorm, out_proj.
func mambaParams(c *Config) float64 {
	d, di := float64(c.DModel), float64(c.ssmInner())
	gn := float64(c.SSMGroups) * float64(c.SSMState)
	h := float64(c.SSMHeads)
	conv := di + 2*gn
	return d*(2*di+2*gn+h) + conv*float64(c.SSMConv) + conv + 3*h + di + di*d
}

// moeParams counts one MoE MLP: the routed experts, the router and the
// shared experts; and one routed expert alone.
func moeParams(c *Config, act string, bias bool) (layer, expert float64) {
	d := float64(c.DModel)
	expert = ffnParams(d, float64(c.ExpertFFN), act, c.ExpertBias || bias)
	layer = float64(c.Experts)*expert + d*float64(c.Experts)
	if c.RouterBias {
		layer += float64(c.Experts)
	}
	if c.SharedExperts > 0 {
		layer += ffnParams(d, float64(c.SharedExperts)*float64(c.ExpertFFN), act, bias)
	}
	if c.SharedExpertGate {
		layer += d
	}
	return layer, expert
}

// layerParams fills b.layers, b.expert and the layers' norms in b.norms
// for a validated transformer with counts n and a norm of normP
// parameters.
func layerParams(c *Config, n layerCounts, b *breakdown, normP, qkvAttn float64, bias bool) {
	L := float64(c.Layers)
	b.layers = float64(n.attn())*qkvAttn + float64(n.mamba)*mambaParams(c) + float64(n.delta)*deltaParams(c)
	if n.dense > 0 {
		b.layers += float64(n.dense) * ffnParams(float64(c.DModel), float64(c.FFN), c.Activation, bias)
	}
	if n.moe > 0 {
		layer, expert := moeParams(c, c.Activation, bias)
		b.layers += float64(n.moe) * layer
		b.expert = expert
	}
	norms := float64(n.mixers() + n.mlps())
	if c.ParallelAttn {
		norms = L
	}
	if c.SandwichNorm {
		norms *= 2
	}
	b.layers += norms * normP
	b.norms += norms * normP
}

// expertDType returns the type expert weights are stored and read in: the
// model's expert_weights when narrower than w, else w.
func (m *Model) expertDType(w model.DType) model.DType {
	if d, ok := m.expertW, m.expertSet; !ok || d.Size() >= w.Size() {
		return w
	}
	return m.expertW
}

// expertWeights returns the type c's expert_weights names, and whether it
// names a valid one (parsed once, by New: pricing asks at every pass).
func (c *Config) expertWeights() (model.DType, bool) {
	if c.ExpertWeights == "" {
		return 0, false
	}
	d, err := model.ParseDType(c.ExpertWeights)
	return d, err == nil && d.Valid()
}

// String lists the counts, for messages.
func (n layerCounts) String() string {
	return fmt.Sprintf("%d full, %d sliding, %d mamba, %d deltanet; %d dense, %d moe", n.full, n.sliding, n.mamba, n.delta, n.dense, n.moe)
}

// splitErrors checks that tensor parallelism tp and expert parallelism ep
// split m's layers evenly: a *SplitError for each dimension tp does not
// split, a plain error for an ep that does not fit.
func (m *Model) splitErrors(tp, ep int) []error {
	c, n := &m.cfg, m.n
	var errs []error
	div := func(field, label string, v, by int) {
		if by > 0 && v%by != 0 {
			errs = append(errs, splitErr(field, label, v, by))
		}
	}
	// replicate checks that tp divides v, or is a multiple of it (every
	// rank keeps one copy).
	replicate := func(field string, v int, why string) {
		if v%tp != 0 && tp%v != 0 {
			errs = append(errs, &SplitError{Field: field, Size: v, TP: tp,
				msg: fmt.Sprintf("tp %d neither divides the %d %s nor is a multiple of them%s", tp, v, field, why)})
		}
	}
	if n.attn() > 0 || c.Kind != Decoder {
		div("heads", "heads (tp)", c.Heads, tp)
		// vLLM replicates KV heads when TP exceeds them: each rank keeps
		// one, so TP must be a multiple of the KV heads.
		if c.KVHeads > 0 {
			replicate("kv_heads", c.KVHeads, " (to replicate them)")
		}
	}
	if n.dense > 0 {
		div("ffn", "ffn (tp)", c.FFN, tp)
	}
	if n.mamba > 0 {
		div("ssm_heads", "ssm_heads (tp)", c.SSMHeads, tp)
		replicate("ssm_groups", c.SSMGroups, "")
	}
	if n.delta > 0 {
		div("linear_value_heads", "linear_value_heads (tp)", c.LinearValueHeads, tp)
		div("linear_key_heads", "linear_key_heads (tp)", c.LinearKeyHeads, tp)
	}
	if ep > 1 && c.Experts == 0 {
		errs = append(errs, fmt.Errorf("ep %d: the model has no experts", ep))
	}
	if n.moe > 0 {
		if ep > 0 && c.Experts%ep != 0 {
			errs = append(errs, fmt.Errorf("%d does not divide experts (ep) %d", ep, c.Experts))
		}
		switch {
		case ep <= tp && tp%ep != 0:
			errs = append(errs, fmt.Errorf("ep %d does not divide tp %d (experts inside the tensor-parallel group)", ep, tp))
		case ep <= tp:
			div("expert_ffn", "expert_ffn (tp/ep)", c.ExpertFFN, tp/ep)
		case ep%tp != 0:
			errs = append(errs, fmt.Errorf("ep %d is not a multiple of tp %d (experts across data-parallel attention replicas)", ep, tp))
		}
		if c.SharedExperts > 0 {
			div("shared_experts", "shared experts' width (tp)", c.SharedExperts*c.ExpertFFN, tp)
		}
	}
	return errs
}

// kvLocal returns the KV heads one of tp ranks holds: kv_heads/tp, or one
// replicated head when tp exceeds them (vLLM).
func (c *Config) kvLocal(tp int) int { return max(1, c.KVHeads/max(tp, 1)) }

// KVBytes returns the KV cache (and state-space state) one sequence of
// tokens holds on one of tp tensor-parallel ranks, in kv: a full
// attention layer holds every token, a sliding one at most window; a
// latent (MLA) cache is whole on every rank, as every rank's heads read
// the one latent; replicated KV heads are held by every rank that uses
// them; a Mamba or Gated DeltaNet layer holds its constant state.
func (m *Model) KVBytes(tokens, tp int, kv model.DType) model.Bytes {
	c, n := &m.cfg, m.n
	if c.Kind != Decoder || tokens < 0 {
		return 0
	}
	tp = max(tp, 1)
	per := m.kvPerLayerToken(tp)
	t := float64(tokens)
	e := float64(n.full)*t*per + float64(n.sliding)*min(t, float64(c.Window))*per
	if n.mamba > 0 {
		e += float64(n.mamba) * m.ssmStateElems(tp)
	}
	if n.delta > 0 {
		e += float64(n.delta) * m.deltaStateElems(tp)
	}
	return kv.Bytes(e)
}

// KVLayers returns a decoder's attention layers that hold every token
// (full) and those that hold at most the last window tokens (sliding),
// and the window: the split of its KV cache that KVBytes caps (sim's
// Windowed). A model without sliding layers returns a window of 0.
func (m *Model) KVLayers() (full, windowed, window int) {
	if m.cfg.Kind != Decoder {
		return 0, 0, 0
	}
	if m.n.sliding == 0 {
		return m.n.full, 0, 0
	}
	return m.n.full, m.n.sliding, m.cfg.Window
}

// kvPerLayerToken returns the cached elements of one token in one
// attention layer on one of tp ranks.
func (m *Model) kvPerLayerToken(tp int) float64 {
	c := &m.cfg
	if c.mla() {
		return float64(c.KVLoraRank + c.QKRopeDim)
	}
	return 2 * float64(c.kvLocal(tp)) * float64(c.HeadDim)
}

// ssmStateElems returns one Mamba layer's state of one sequence on one of
// tp ranks: the SSM state and the convolution's last inputs.
func (m *Model) ssmStateElems(tp int) float64 {
	s := m.scan(1, 1, tp, model.BF16, model.BF16)
	return float64(s.StateBytes(model.BF16)) / model.BF16.Size()
}

// scan returns the Mamba-2 scan kernel of one layer on one of tp ranks.
func (m *Model) scan(b, s, tp int, act, st model.DType) model.Scan {
	c := &m.cfg
	return model.Scan{Batch: b, Tokens: s, Heads: c.SSMHeads / tp, HeadDim: c.SSMHeadDim, State: c.SSMState,
		Groups: max(1, c.SSMGroups/tp), Conv: c.SSMConv, Chunk: c.SSMChunk, DType: act, StateDType: st}
}
