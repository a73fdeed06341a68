package workloads

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// today reads the config.json of today's families into c: Gemma 2 and 3,
// Phi-3/Phi-4, Qwen3 and Qwen3-MoE, Falcon, DeepSeek-V2/V3, gpt-oss,
// Mamba-2, Nemotron-H and Qwen3-Next. Jamba and Mamba (1) are refused: their Mamba-1
// mixers are not modelled. The keys each reads are those of the
// transformers configuration classes of the same names.
func (h *hfReader) today(c *Config, arch string) {
	switch arch {
	case "JambaForCausalLM", "MambaForCausalLM":
		h.bad("architectures", fmt.Errorf("%w %q: its Mamba-1 mixers (selective scan without the SSD chunking) are not modelled; Mamba-2 (Mamba2ForCausalLM) and Mamba-2 hybrids (NemotronHForCausalLM) are", ErrUnsupportedArchitecture, arch))
		return
	case "Gemma3ForConditionalGeneration":
		// The language model is text_config; the vision tower is not
		// modelled (said in a warning).
		if tc, ok := h.raw["text_config"].(map[string]any); ok {
			h.asked["text_config"] = true
			for k, v := range tc {
				h.raw[k] = v
			}
			if _, ok := h.raw["vision_config"]; ok {
				h.asked["vision_config"] = true
				h.warn(errors.New("vision_config: the vision tower is not modelled; the text model is"))
			}
		}
	}
	c.Kind, c.Norm, c.Position = Decoder, "rmsnorm", "rope"
	c.DModel = h.int("hidden_size", 0)
	c.Layers = h.int("num_hidden_layers", 0)
	c.Vocab = h.int("vocab_size", 0)
	c.MaxContext = h.int("max_position_embeddings", 0)
	attention := func() {
		c.Heads = h.int("num_attention_heads", 0)
		c.KVHeads = h.int("num_key_value_heads", c.Heads)
		c.HeadDim = h.int("head_dim", 0)
	}
	for _, k := range []string{"attention_bias", "mlp_bias"} {
		if arch != "GptOssForCausalLM" && arch != "Qwen3ForCausalLM" && arch != "Qwen3MoeForCausalLM" && arch != "Qwen3NextForCausalLM" && h.bool(k, false) {
			h.bad(k, errors.New("biases here are not modelled (want false)"))
		}
	}
	h.bool("use_conv_bias", true)
	switch arch {
	case "Gemma2ForCausalLM", "Gemma3ForCausalLM", "Gemma3ForConditionalGeneration":
		attention()
		c.FFN = h.int("intermediate_size", 0)
		c.TiedEmbeddings = h.bool("tie_word_embeddings", true)
		c.Activation = h.act("hidden_activation", h.string("hidden_act", "gelu_pytorch_tanh"), true)
		c.SandwichNorm = true
		c.QKNorm = arch != "Gemma2ForCausalLM"
		if c.QKNorm { // Gemma3TextConfig's defaults, which text_config leaves out
			if c.Vocab == 0 {
				c.Vocab = h.int("vocab_size", 262208)
			}
			if c.MaxContext == 0 {
				c.MaxContext = 131072
			}
		}
		h.bool("attention_bias", false)
		h.float("query_pre_attn_scalar", 0)   // a scale: no cost
		h.float("attn_logit_softcapping", 0)  // a tanh per score, inside the fused kernel
		h.float("final_logit_softcapping", 0) // a tanh per logit
		h.string("cache_implementation", "")  // the engine's choice
		h.float("rope_local_base_freq", 0)    // RoPE base: no cost
		w := h.int("sliding_window", 0)
		if h.has("layer_types") {
			h.layerTypes(c)
		} else if w > 0 {
			// Gemma 2: even layers local; Gemma 3: every
			// sliding_window_pattern-th layer global (default 6).
			period := 2
			if arch != "Gemma2ForCausalLM" {
				period = h.int("sliding_window_pattern", 6)
			}
			c.LayerTypes = periodic(c.Layers, func(i int) string {
				if arch == "Gemma2ForCausalLM" && i%2 == 0 || arch != "Gemma2ForCausalLM" && period > 0 && (i+1)%period != 0 {
					return MixerSliding
				}
				return MixerFull
			})
		}
		if w > 0 && c.LayerTypes != nil {
			c.Window = w
		}
	case "Phi3ForCausalLM":
		attention()
		c.FFN = h.int("intermediate_size", 0)
		c.TiedEmbeddings = h.bool("tie_word_embeddings", false)
		c.Activation = h.act("hidden_act", "silu", true)
		if h.float("partial_rotary_factor", 1) != 1 {
			// Partial rotary (Phi-4-mini) rotates fewer elements: less
			// work in a pass that is memory-bound anyway.
			h.warn(errors.New("partial_rotary_factor: the rotary pass is priced over whole heads"))
		}
		h.window(c, false)
	case "Qwen3ForCausalLM", "Qwen3MoeForCausalLM", "Qwen3NextForCausalLM":
		attention()
		c.QKNorm = true
		c.TiedEmbeddings = h.bool("tie_word_embeddings", false)
		c.Activation = h.act("hidden_act", "silu", true)
		c.Bias = bptr(h.bool("attention_bias", false))
		c.FFN = h.int("intermediate_size", 0)
		if arch == "Qwen3NextForCausalLM" {
			h.qwen3Next(c)
		}
		if arch != "Qwen3ForCausalLM" {
			c.Experts = h.int("num_experts", 0)
			c.TopK = h.int("num_experts_per_tok", 0)
			c.ExpertFFN = h.int("moe_intermediate_size", 0)
			h.bool("norm_topk_prob", true)
			step := h.int("decoder_sparse_step", 1)
			only := h.intList("mlp_only_layers")
			for _, j := range only {
				if j < 0 || j >= c.Layers {
					h.bad("mlp_only_layers", fmt.Errorf("layer %d of %d: want indices from 0 to %d", j, c.Layers, c.Layers-1))
				}
			}
			if step > 1 || len(only) > 0 {
				c.MLPTypes = periodic(c.Layers, func(i int) string {
					for _, j := range only {
						if j == i {
							return MLPDense
						}
					}
					if step > 0 && (i+1)%step == 0 {
						return MLPMoE
					}
					return MLPDense
				})
			} else {
				c.FFN = 0 // intermediate_size is unused when every layer is MoE
			}
		}
		if arch == "Qwen3NextForCausalLM" {
			h.qwen3NextLayers(c)
		} else {
			h.window(c, true)
		}
	case "FalconForCausalLM":
		c.Heads = h.int("num_attention_heads", 0)
		c.Norm, c.Activation = "layernorm", "gelu"
		c.TiedEmbeddings = h.bool("tie_word_embeddings", true)
		c.Bias = bptr(h.bool("bias", false))
		c.FFN = h.int("ffn_hidden_size", 4*c.DModel)
		newArch := h.bool("new_decoder_architecture", false)
		switch {
		case newArch:
			c.KVHeads = h.int("num_kv_heads", c.Heads)
		case h.bool("multi_query", true):
			c.KVHeads = 1
		default:
			c.KVHeads = c.Heads
		}
		// Falcon-7B: one LayerNorm before the parallel attention and
		// MLP; the new architecture (40B, 180B) has two (ln_attn, ln_mlp).
		c.ParallelAttn = h.bool("parallel_attn", true) && !newArch
		if h.bool("alibi", false) {
			c.Position = "alibi"
		}
		h.int("num_ln_in_parallel_attn", 2)
	case "DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM":
		attention()
		c.QLoraRank = h.int("q_lora_rank", 0)
		c.KVLoraRank = h.int("kv_lora_rank", 0)
		c.QKNopeDim = h.int("qk_nope_head_dim", 0)
		c.QKRopeDim = h.int("qk_rope_head_dim", 0)
		c.VHeadDim = h.int("v_head_dim", 0)
		c.HeadDim = c.QKNopeDim + c.QKRopeDim
		c.KVHeads = c.Heads
		c.FFN = h.int("intermediate_size", 0)
		c.Experts = h.int("n_routed_experts", 0)
		c.TopK = h.int("num_experts_per_tok", 0)
		c.SharedExperts = h.int("n_shared_experts", 0)
		c.ExpertFFN = h.int("moe_intermediate_size", 0)
		c.FirstDenseLayers = h.int("first_k_dense_replace", 0)
		if f := h.int("moe_layer_freq", 1); f != 1 {
			h.bad("moe_layer_freq", fmt.Errorf("%d: MoE layers only every %d layers are not read (want 1)", f, f))
		}
		c.RouterBias = h.string("topk_method", "") == "noaux_tc"
		c.TiedEmbeddings = h.bool("tie_word_embeddings", false)
		c.Activation = h.act("hidden_act", "silu", true)
		for _, k := range []string{"n_group", "topk_group", "routed_scaling_factor", "scoring_func", "norm_topk_prob", "aux_loss_alpha", "seq_aux", "ep_size"} {
			h.asked[k] = true // routing details: no cost beyond the router priced
		}
		if n := h.int("num_nextn_predict_layers", 0); n > 0 {
			h.warn(fmt.Errorf("num_nextn_predict_layers: the %d multi-token-prediction layer(s) are not modelled (speculative decoding)", n))
		}
		if h.quant() == "fp8" {
			// Every linear layer ships in fp8 (DeepSeek-V3 report, §3.3:
			// "FP8 for GEMMs in Linear operators"; the embedding, output
			// head and gating stay wider); expert_weights takes the
			// experts, the rest follow --weights.
			h.applied()
			c.ExpertWeights = "fp8"
			h.warn(errors.New("quantization_config: fp8 applied to the routed experts (expert_weights); the other linear layers, fp8 in the checkpoint too, are priced in --weights (give --weights fp8 to price them as shipped)"))
		}
	case "GptOssForCausalLM":
		attention()
		c.Experts = h.int("num_local_experts", 0)
		c.TopK = h.int("num_experts_per_tok", h.int("experts_per_token", 0))
		c.ExpertFFN = h.int("intermediate_size", 0)
		c.ExpertBias, c.RouterBias, c.AttentionSinks = true, true, true
		b := h.bool("attention_bias", true)
		c.QKVBias, c.OutBias = bptr(b), bptr(b)
		c.TiedEmbeddings = h.bool("tie_word_embeddings", false)
		c.Activation = "swiglu"
		h.float("swiglu_limit", 0) // a clamp inside the activation
		h.int("initial_context_length", 0)
		h.window(c, false)
		if h.quant() == "mxfp4" {
			// modules_to_not_convert: attention, router, embeddings and
			// LM head stay bf16; the experts alone are MXFP4.
			h.applied()
			c.ExpertWeights = "mxfp4"
		}
	case "Mamba2ForCausalLM":
		c.Position = "none"
		c.SSMState = h.int("state_size", 128)
		c.SSMHeads = h.int("num_heads", 0)
		c.SSMHeadDim = h.int("head_dim", 64)
		c.SSMGroups = h.int("n_groups", 1)
		c.SSMConv = h.int("conv_kernel", 4)
		c.SSMChunk = h.int("chunk_size", 256)
		c.TiedEmbeddings = h.bool("tie_word_embeddings", true)
		if e := h.float("expand", 2); c.SSMHeads > 0 && float64(c.SSMHeads*c.SSMHeadDim) != e*float64(c.DModel) {
			h.bad("num_heads", fmt.Errorf("num_heads %d × head_dim %d is not expand %v × hidden_size %d", c.SSMHeads, c.SSMHeadDim, e, c.DModel))
		}
		if h.bool("use_bias", false) {
			h.bad("use_bias", errors.New("biases in the Mamba projections are not modelled (want false)"))
		}
		h.bool("use_conv_bias", true)
		h.bool("norm_before_gate", false)
	case "NemotronHForCausalLM":
		attention()
		c.HeadDim = h.int("attention_head_dim", c.HeadDim)
		c.FFN = h.int("intermediate_size", 0)
		c.SSMState = h.int("ssm_state_size", 128)
		c.SSMHeads = h.int("mamba_num_heads", 0)
		c.SSMHeadDim = h.int("mamba_head_dim", 64)
		c.SSMGroups = h.int("n_groups", 1)
		c.SSMConv = h.int("conv_kernel", 4)
		c.SSMChunk = h.int("chunk_size", 256)
		h.float("expand", 2)
		c.TiedEmbeddings = h.bool("tie_word_embeddings", false)
		act := strings.ToLower(h.string("mlp_hidden_act", "relu2"))
		if act == "relu2" {
			c.Activation = "relu2"
		} else {
			c.Activation = h.act("mlp_hidden_act", act, false)
		}
		for _, k := range []string{"mamba_proj_bias", "mlp_bias", "attention_bias", "use_bias"} {
			if h.bool(k, false) {
				h.bad(k, errors.New("biases are not modelled in Nemotron-H (want false)"))
			}
		}
		pat := h.string("hybrid_override_pattern", "")
		if len(pat) != c.Layers {
			h.bad("hybrid_override_pattern", fmt.Errorf("%d characters for %d layers", len(pat), c.Layers))
			break
		}
		c.LayerTypes, c.MLPTypes = make([]string, len(pat)), make([]string, len(pat))
		for i, ch := range pat {
			switch ch {
			case 'M':
				c.LayerTypes[i], c.MLPTypes[i] = MixerMamba, MLPNone
			case '*':
				c.LayerTypes[i], c.MLPTypes[i] = MixerFull, MLPNone
			case '-':
				c.LayerTypes[i], c.MLPTypes[i] = MixerNone, MLPDense
			default:
				// Every bad character is reported; the layer is left
				// empty, so that the lists stay whole and nothing is
				// reported again without a line.
				h.bad("hybrid_override_pattern", fmt.Errorf("character %d is %q (want M, * or -; MoE layers E are not read)", i, ch))
				c.LayerTypes[i], c.MLPTypes[i] = MixerNone, MLPNone
			}
		}
	}
}

// qwen3Next reads Qwen3-Next's keys beyond Qwen3-MoE's
// (transformers' Qwen3NextConfig): the Gated DeltaNet mixers, the gated
// attention (its q_proj always carries the output gate) and the shared
// expert with its sigmoid gate (Qwen2MoeSparseMoeBlock).
func (h *hfReader) qwen3Next(c *Config) {
	c.LinearKeyHeads = h.int("linear_num_key_heads", 16)
	c.LinearValueHeads = h.int("linear_num_value_heads", 32)
	c.LinearKeyDim = h.int("linear_key_head_dim", 128)
	c.LinearValueDim = h.int("linear_value_head_dim", 128)
	c.LinearConv = h.int("linear_conv_kernel_dim", 4)
	c.AttnOutputGate = true
	if c.HeadDim == 0 {
		c.HeadDim = 256 // Qwen3NextConfig's head_dim
	}
	if shared := h.int("shared_expert_intermediate_size", 0); shared > 0 {
		ffn := h.int("moe_intermediate_size", 0)
		if ffn <= 0 || shared%ffn != 0 {
			h.bad("shared_expert_intermediate_size", fmt.Errorf("%d is not a multiple of moe_intermediate_size %d (shared experts are counted in experts' widths)", shared, ffn))
		} else {
			c.SharedExperts, c.SharedExpertGate = shared/ffn, true
		}
	}
	if f := h.float("partial_rotary_factor", 0.25); f != 1 {
		h.warn(fmt.Errorf("partial_rotary_factor %v: the rotary pass is priced over whole heads", f))
	}
}

// qwen3NextLayers sets Qwen3-Next's mixers: layer_types
// ("linear_attention" or "full_attention") when given, else every
// full_attention_interval-th layer full (default 4), as Qwen3NextConfig
// derives them.
func (h *hfReader) qwen3NextLayers(c *Config) {
	h.bool("use_sliding_window", false)
	h.int("sliding_window", 0)
	h.asked["layer_types"] = true
	if v, ok := h.raw["layer_types"]; ok && v != nil {
		list, ok := v.([]any)
		if !ok {
			h.bad("layer_types", fmt.Errorf("want a list of strings, got %v", v))
			return
		}
		c.LayerTypes = make([]string, 0, min(len(list), maxDim))
		for i, x := range list {
			switch x {
			case "linear_attention":
				c.LayerTypes = append(c.LayerTypes, MixerDelta)
			case "full_attention":
				c.LayerTypes = append(c.LayerTypes, MixerFull)
			default:
				h.bad("layer_types", fmt.Errorf("entry %d: unknown layer type %v (want linear_attention or full_attention)", i, x))
				c.LayerTypes = nil
				return
			}
		}
		h.int("full_attention_interval", 4)
		return
	}
	every := h.int("full_attention_interval", 4)
	if every <= 0 {
		h.bad("full_attention_interval", fmt.Errorf("%d: want a positive layer count", every))
		return
	}
	c.LayerTypes = periodic(c.Layers, func(i int) string {
		if (i+1)%every == 0 {
			return MixerFull
		}
		return MixerDelta
	})
}

// periodic returns n layer kinds from f, or nil for an unusable n.
func periodic(n int, f func(i int) string) []string {
	if n <= 0 || n > maxDim {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// has reports whether key is present (and not null).
func (h *hfReader) has(key string) bool {
	v, ok := h.raw[key]
	return ok && v != nil
}

// intList reads a list of integers (empty when absent).
func (h *hfReader) intList(key string) []int {
	h.asked[key] = true
	v, ok := h.raw[key].([]any)
	if !ok {
		return nil
	}
	out := make([]int, 0, min(len(v), maxDim))
	for i, x := range v {
		n, ok := x.(json.Number)
		j, err := n.Int64()
		if !ok || err != nil || j < math.MinInt32 || j > math.MaxInt32 {
			h.bad(key, fmt.Errorf("entry %d is %v: want an integer", i, x))
			return nil
		}
		out = append(out, int(j))
	}
	return out
}

// quant returns quantization_config's quant_method, "" when absent. The
// key stays unread until the caller applies the method (applied): one it
// does not apply is reported by LoadHF as not applied.
func (h *hfReader) quant() string {
	q, ok := h.raw["quantization_config"].(map[string]any)
	if !ok {
		return ""
	}
	m, _ := q["quant_method"].(string)
	return strings.ToLower(m)
}

// applied marks quantization_config as read and applied.
func (h *hfReader) applied() { h.asked["quantization_config"] = true }

// warn records a warning: something read but not modelled, or a key
// not read.
func (h *hfReader) warn(err error) {
	h.warnings = append(h.warnings, fmt.Errorf("%s: %w", h.file, err))
}

// harmless are config.json keys that change no cost: training settings,
// token ids, numerics, bookkeeping.
var harmless = map[string]bool{
	"_name_or_path": true, "model_type": true, "torch_dtype": true, "dtype": true, "transformers_version": true,
	"bos_token_id": true, "eos_token_id": true, "pad_token_id": true, "initializer_range": true,
	"rms_norm_eps": true, "layer_norm_eps": true, "layer_norm_epsilon": true, "norm_epsilon": true,
	"use_cache": true, "attention_dropout": true, "hidden_dropout": true, "resid_pdrop": true,
	"embd_pdrop": true, "attn_pdrop": true, "dropout": true, "rope_theta": true, "rope_scaling": true,
	"rope_parameters": true, "auto_map": true, "tie_word_embeddings": true, "output_router_logits": true,
	"router_aux_loss_coef": true, "router_jitter_noise": true, "pretraining_tp": true, "num_logits_to_keep": true,
	"residual_in_fp32": true, "rescale_prenorm_residual": true, "time_step_min": true, "time_step_max": true,
	"time_step_floor": true, "time_step_limit": true, "time_step_rank": true, "mamba_hidden_act": true,
	"hidden_act": true, "use_mamba_kernels": true, "architectures": true, "original_max_position_embeddings": true,
	"sliding_window": true, "use_sliding_window": true, "max_window_layers": true, "layer_types": true,
	"attention_chunk_size": true, "head_dim": true, "partial_rotary_factor": true, "rope_interleave": true,
	"qk_layernorm": true, "use_qk_norm": true, "final_logit_softcapping": true, "attn_logit_softcapping": true,
	"mlp_only_layers": true, "decoder_sparse_step": true, "eos_token": true, "pad_vocab_size_multiple": true,
	"rms_norm": true, "apply_residual_connection_post_layernorm": true, "boi_token_index": true,
	"eoi_token_index": true, "image_token_index": true, "mm_tokens_per_image": true,
}

// unknownKeys returns, sorted, the top-level keys neither read nor
// harmless.
func (h *hfReader) unknownKeys() []string {
	var out []string
	for k := range h.raw {
		if !h.asked[k] && !harmless[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// quantType returns the --weights type a quantization_config's weights
// ship in, "" when it cannot tell: fp8 for "fp8", the bits of AWQ and
// GPTQ as int4 or int8, "mxfp4", and ModelOpt's quant_algo (FP8, NVFP4).
func quantType(method string, q map[string]any) string {
	m := strings.ToLower(method)
	bits := 0
	if n, ok := q["bits"].(json.Number); ok {
		if b, err := n.Int64(); err == nil {
			bits = int(b)
		}
	}
	switch {
	case m == "fp8" || m == "fbgemm_fp8":
		return "fp8"
	case m == "mxfp4":
		return "mxfp4"
	case m == "nvfp4":
		return "fp4"
	case strings.HasPrefix(m, "awq") || strings.HasPrefix(m, "gptq"):
		switch bits {
		case 0, 4:
			return "int4"
		case 8:
			return "int8"
		}
	case m == "modelopt":
		switch a, _ := q["quant_algo"].(string); strings.ToUpper(a) {
		case "FP8":
			return "fp8"
		case "NVFP4":
			return "fp4"
		}
	}
	return ""
}
