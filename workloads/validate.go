package workloads

import (
	"fmt"
	"strings"
)

var (
	norms       = []string{"layernorm", "rmsnorm"}
	activations = []string{"gelu", "relu", "relu2", "silu", "swiglu", "geglu"}
	positions   = []string{"learned", "rope", "sinusoidal", "alibi", "none", "relative"}
)

func oneOf(s string, set []string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}

// validate fills the defaults of c and returns every problem with it.
func validate(c *Config) []*ConfigError {
	var errs []*ConfigError
	bad := func(key, format string, args ...any) {
		errs = append(errs, &ConfigError{Key: key, Err: fmt.Errorf(format, args...)})
	}
	// size checks a required (or optional, when zero) size.
	size := func(key string, v int, required bool) {
		switch {
		case v == 0 && required:
			bad(key, "missing: want a positive size")
		case v < 0:
			bad(key, "must be positive, got %d", v)
		case v > maxDim:
			bad(key, "%d is over the limit of %d: %w", v, maxDim, ErrTooLarge)
		}
	}
	if strings.TrimSpace(c.Name) == "" {
		bad("name", "missing: a model needs a name")
	}
	switch c.Kind {
	case Decoder, Encoder, ViT, CNN:
	case "":
		bad("kind", "missing: want one of decoder, encoder, vit, cnn")
		return errs
	default:
		bad("kind", "unknown kind %q (want one of decoder, encoder, vit, cnn)", c.Kind)
		return errs
	}
	if c.Kind == CNN {
		size("image_size", c.ImageSize, true)
		size("channels", c.Channels, true)
		size("image_depth", c.ImageDepth, false)
		if len(c.Layer) == 0 {
			bad("layer", "missing: a cnn needs at least one [[layer]]")
		}
		for _, k := range []struct {
			key string
			set bool
		}{{"layers", c.Layers != 0}, {"d_model", c.DModel != 0}, {"heads", c.Heads != 0}, {"vocab", c.Vocab != 0}} {
			if k.set {
				bad(k.key, "not a cnn key (a cnn is a list of [[layer]] tables)")
			}
		}
		return errs
	}
	if len(c.Layer) > 0 {
		bad("layer", "[[layer]] tables describe a cnn; this is a %s", c.Kind)
	}

	// Defaults.
	if c.Norm == "" {
		c.Norm = "layernorm"
	}
	if c.Activation == "" {
		c.Activation = "gelu"
	}
	if c.Position == "" {
		c.Position = "learned"
		if c.Kind == Decoder && c.Norm == "rmsnorm" {
			c.Position = "rope"
		}
	}
	if c.KVHeads == 0 {
		c.KVHeads = c.Heads
	}
	archDefaults(c)
	if c.HeadDim == 0 && c.Heads > 0 && c.DModel > 0 && c.DModel%c.Heads == 0 {
		c.HeadDim = c.DModel / c.Heads
	}
	expertFromFFN := false // expert_ffn taken from ffn, whose own check reports it
	if c.Experts > 0 && c.ExpertFFN == 0 && c.FirstDenseLayers == 0 {
		c.ExpertFFN, expertFromFFN = c.FFN, c.FFN != 0
	}
	if c.Kind == ViT {
		if c.Channels == 0 {
			c.Channels = 3
		}
		if c.MaxContext == 0 && c.PatchSize > 0 && c.ImageSize >= c.PatchSize {
			c.MaxContext = vitTokens(c)
		}
	}

	n := c.counts()
	size("layers", c.Layers, true)
	size("d_model", c.DModel, true)
	size("heads", c.Heads, n.attn() > 0 || c.Kind != Decoder || c.SSMState == 0)
	size("kv_heads", c.KVHeads, false)
	size("head_dim", c.HeadDim, false)
	size("ffn", c.FFN, n.dense > 0 || (c.Experts == 0 && c.SSMState == 0))
	if !expertFromFFN {
		size("expert_ffn", c.ExpertFFN, c.Experts > 0)
	}
	validateArch(c, n, bad, size)
	size("max_context", c.MaxContext, c.Position == "learned")
	size("relative_buckets", c.RelativeBuckets, c.Position == "relative")
	if c.RelativeBuckets > 0 && c.Position != "relative" {
		bad("relative_buckets", "only a relative position bias (position \"relative\") has buckets")
	}
	if c.Position == "relative" && (c.Kind != Encoder || c.mla()) {
		bad("position", "a relative position bias is modelled for an encoder's multi-head attention (T5's) only")
	}
	if c.Position == "relative" && c.KVHeads != c.Heads {
		// relativeAttnOps projects a key and a value per query head, as
		// T5Attention does.
		bad("kv_heads", "%d differs from heads %d: T5's relative-position attention projects a key and a value per head", c.KVHeads, c.Heads)
	}
	size("type_vocab", c.TypeVocab, false)
	size("experts", c.Experts, false)
	size("top_k", c.TopK, false)
	size("shared_experts", c.SharedExperts, false)
	size("classes", c.Classes, false)
	switch c.Kind {
	case ViT:
		size("image_size", c.ImageSize, true)
		size("patch_size", c.PatchSize, true)
		size("channels", c.Channels, true)
		size("image_depth", c.ImageDepth, false)
		if c.Vocab != 0 {
			bad("vocab", "a vit has no vocabulary (its input is image patches)")
		}
		if c.PatchSize > 0 && c.ImageSize > 0 {
			if c.PatchSize > c.ImageSize {
				bad("patch_size", "%d is larger than image_size %d", c.PatchSize, c.ImageSize)
			} else if c.ImageSize%c.PatchSize != 0 {
				bad("patch_size", "%d does not divide image_size %d", c.PatchSize, c.ImageSize)
			}
		}
	default:
		size("vocab", c.Vocab, true)
		if c.ImageSize != 0 || c.PatchSize != 0 {
			bad("image_size", "image_size and patch_size are vit and cnn keys; this is a %s", c.Kind)
		}
	}
	if c.Heads > 0 && c.DModel > 0 && c.HeadDim == 0 {
		bad("d_model", "%d is not divisible by heads %d (give head_dim when heads·head_dim ≠ d_model)", c.DModel, c.Heads)
	}
	if c.Heads > 0 && c.KVHeads > 0 && c.Heads%c.KVHeads != 0 {
		bad("kv_heads", "heads %d is not divisible by kv_heads %d", c.Heads, c.KVHeads)
	}
	if c.KVHeads > c.Heads && c.Heads > 0 {
		bad("kv_heads", "%d is more than heads %d", c.KVHeads, c.Heads)
	}
	if !oneOf(c.Norm, norms) {
		bad("norm", "unknown norm %q (want one of %s)", c.Norm, strings.Join(norms, ", "))
	}
	if !oneOf(c.Activation, activations) {
		bad("activation", "unknown activation %q (want one of %s)", c.Activation, strings.Join(activations, ", "))
	}
	if !oneOf(c.Position, positions) {
		bad("position", "unknown position encoding %q (want one of %s)", c.Position, strings.Join(positions, ", "))
	}
	if c.Experts > 0 {
		if c.TopK == 0 {
			bad("top_k", "missing: a mixture of experts needs top_k")
		} else if c.TopK > c.Experts {
			bad("top_k", "%d is more than experts %d", c.TopK, c.Experts)
		}
	} else {
		if c.TopK != 0 {
			bad("top_k", "set without experts")
		}
		if c.SharedExperts != 0 {
			bad("shared_experts", "set without experts")
		}
	}
	if c.Kind != Decoder {
		if c.TiedEmbeddings || c.LMHeadBias {
			bad("tied_embeddings", "an %s has no LM head", c.Kind)
		}
	}
	if c.Kind == Decoder && (c.Pooler || c.Classes != 0 || c.MLMHead) {
		bad("pooler", "pooler, mlm_head and classes are encoder and vit keys")
	}
	if c.Kind == ViT && c.MLMHead {
		bad("mlm_head", "a vit has no vocabulary")
	}
	return errs
}
