package workloads

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/perfsim/perfsim/internal/errlist"
	"github.com/perfsim/perfsim/internal/jsonkeys"
)

// HFArchitectures lists the HuggingFace architectures LoadHF reads.
var HFArchitectures = []string{
	"LlamaForCausalLM", "MistralForCausalLM", "MixtralForCausalLM", "Qwen2ForCausalLM",
	"GPT2LMHeadModel", "GPTNeoXForCausalLM", "GemmaForCausalLM",
	"BertModel", "BertForMaskedLM", "ViTModel",
	"Gemma2ForCausalLM", "Gemma3ForCausalLM", "Gemma3ForConditionalGeneration", "Phi3ForCausalLM",
	"Qwen3ForCausalLM", "Qwen3MoeForCausalLM", "FalconForCausalLM", "DeepseekV2ForCausalLM",
	"DeepseekV3ForCausalLM", "GptOssForCausalLM", "Mamba2ForCausalLM", "NemotronHForCausalLM",
	"Qwen3NextForCausalLM",
}

// ErrUnsupportedArchitecture is wrapped by LoadHF for an architecture it
// does not know.
var ErrUnsupportedArchitecture = errors.New("unsupported architecture")

// LoadHF reads a HuggingFace config.json from r; file names it in errors
// and, without a "_name_or_path", names the model (its directory).
func LoadHF(r io.Reader, file string) (*Model, error) {
	src, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("workloads: %s: %w", file, err)
	}
	if len(src) > maxFileSize {
		return nil, &ConfigError{File: file, Err: fmt.Errorf("over %d bytes: %w", maxFileSize, ErrTooLarge)}
	}
	src = bytes.TrimPrefix(src, []byte("\uFEFF")) // a byte-order mark some editors write
	// Python's json writes Infinity and NaN (Mamba-2's time_step_limit),
	// which JSON has not: read them as null. A key whose value is one is
	// remembered: read as null it had taken the key's default without a
	// word ("hidden_size": NaN read as missing, "num_key_value_heads":
	// NaN as as many KV heads as heads).
	nonFiniteKeys := map[string]string{}
	for _, m := range nonFiniteKey.FindAllSubmatch(src, -1) {
		nonFiniteKeys[string(m[1])] = string(m[2])
	}
	src = nonFinite.ReplaceAll(src, []byte("${1}null"))
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, &ConfigError{File: file, Line: 1 + bytes.Count(src[:min(int(se.Offset), len(src))], []byte("\n")), Err: err}
		}
		// Say what the file holds, not Go's "cannot unmarshal array into
		// Go value of type map[string]interface {}" or a bare "EOF".
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			err = fmt.Errorf("it holds a JSON %s", te.Value)
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			err = errors.New("the file is empty or cut short")
		}
		return nil, &ConfigError{File: file, Err: fmt.Errorf("not a JSON object: %w", err)}
	}
	h := hfReader{raw: raw, file: file, src: src, asked: map[string]bool{}, nonFinite: nonFiniteKeys}
	for _, d := range jsonkeys.Duplicates(src) {
		h.errs = append(h.errs, &ConfigError{File: file, Line: d.Line, Key: d.Key, Err: errors.New("given twice (JSON keeps the last; say which one you mean)")})
	}
	c := h.config()
	if c.Kind == "" { // no architecture, or an unsupported one
		return nil, errors.Join(h.errs...)
	}
	h.checkSizes()
	m, err := New(c)
	if err != nil || len(h.errs) > 0 {
		// Every problem at once: those of the JSON values, then those of
		// the model, less the keys already reported.
		seen := map[string]bool{}
		for _, e := range h.errs {
			var ce *ConfigError
			if errors.As(e, &ce) {
				seen[ce.Key] = true
			}
		}
		errs := h.errs
		if err != nil {
			for _, e := range h.locate(err).(interface{ Unwrap() []error }).Unwrap() {
				var ce *ConfigError
				if errors.As(e, &ce) && (seen[ce.Key] || slices.ContainsFunc(hfKeys[ce.Key], func(k string) bool { return seen[k] })) {
					// Reported at its config.json key already: a
					// hidden_size of 4096.5 had also read "d_model:
					// missing".
					continue
				}
				errs = append(errs, e)
			}
		}
		return nil, errors.Join(errs...)
	}
	if q, ok := h.raw["quantization_config"].(map[string]any); ok && !h.asked["quantization_config"] {
		// Quantized weights change the cost: say that these are not
		// applied, and how to price them.
		h.asked["quantization_config"] = true
		method, _ := q["quant_method"].(string)
		hint := "give --weights the type they ship in"
		if t := quantType(method, q); t != "" {
			hint = "--weights " + t + " prices them as shipped"
		}
		h.warn(fmt.Errorf("quantization_config: quant_method %q is not applied; the weights are priced in --weights (%s)", method, hint))
	}
	if unk := h.unknownKeys(); len(unk) > 0 {
		h.warn(fmt.Errorf("keys not read (none is known to change the cost): %s", strings.Join(unk, ", ")))
	}
	m.warnings = h.warnings
	return m, nil
}

var nonFinite = regexp.MustCompile(`([\[,:]\s*)-?(?:Infinity|NaN)\b`)

// nonFiniteKey finds a key whose value is a bare Infinity or NaN.
var nonFiniteKey = regexp.MustCompile(`"([^"\\]+)"\s*:\s*(-?(?:Infinity|NaN))\b`)

// hfReader pulls typed values out of a decoded config.json, collecting
// every problem.
type hfReader struct {
	raw      map[string]any
	file     string
	src      []byte
	errs     []error
	warnings []error
	asked    map[string]bool // every config.json key read, present or not
	// nonFinite holds the keys whose value the file writes as NaN or
	// Infinity (read as null), with that value.
	nonFinite map[string]string
}

func (h *hfReader) line(key string) int {
	i := bytes.Index(h.src, []byte(`"`+key+`"`))
	if i < 0 {
		return 0
	}
	return 1 + bytes.Count(h.src[:i], []byte("\n"))
}

func (h *hfReader) bad(key string, err error) {
	h.errs = append(h.errs, &ConfigError{File: h.file, Line: h.line(key), Key: key, Err: err})
}

// number returns the number at key, marking the key read; false when it
// is absent or null, or (reported) not a number.
func (h *hfReader) number(key, want string) (json.Number, bool) {
	h.asked[key] = true
	v, ok := h.raw[key]
	if ok && v == nil && h.nonFinite[key] != "" {
		h.bad(key, fmt.Errorf("want %s, got %s", want, h.nonFinite[key]))
		return "", false
	}
	if !ok || v == nil {
		return "", false
	}
	n, ok := v.(json.Number)
	if !ok {
		h.bad(key, fmt.Errorf("want %s, got %s", want, jsonValue(v)))
	}
	return n, ok
}

// jsonValue says what a decoded JSON value is, quoting a string: "want an
// integer, got the string "32"", not "got 32".
func jsonValue(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", v)
	case []any:
		return fmt.Sprintf("a list of %d", len(v))
	case map[string]any:
		return "an object"
	}
	return fmt.Sprint(v)
}

// int returns the integer at key, def when absent or null.
func (h *hfReader) int(key string, def int) int {
	n, ok := h.number(key, "an integer")
	if !ok {
		return def
	}
	f, err := n.Float64()
	switch {
	case err != nil || f != math.Trunc(f):
		h.bad(key, fmt.Errorf("want a whole number, got %s", n))
		return def
	case math.Abs(f) > maxDim*64:
		h.bad(key, fmt.Errorf("%s is over the limit of %d: %w", n, int64(maxDim*64), ErrTooLarge))
		return def
	}
	return int(f)
}

func (h *hfReader) float(key string, def float64) float64 {
	n, ok := h.number(key, "a number")
	if !ok {
		return def
	}
	f, err := n.Float64()
	if err != nil || !finite(f) {
		h.bad(key, fmt.Errorf("want a number, got %s", n))
		return def
	}
	return f
}

func (h *hfReader) bool(key string, def bool) bool {
	h.asked[key] = true
	v, ok := h.raw[key]
	if !ok || v == nil {
		return def
	}
	b, ok := v.(bool)
	if !ok {
		h.bad(key, fmt.Errorf("want true or false, got %s", jsonValue(v)))
		return def
	}
	return b
}

func (h *hfReader) string(key, def string) string {
	h.asked[key] = true
	v, ok := h.raw[key]
	if !ok || v == nil {
		return def
	}
	s, ok := v.(string)
	if !ok {
		h.bad(key, fmt.Errorf("want a string, got %s", jsonValue(v)))
		return def
	}
	return s
}

// act maps an HF hidden_act to an activation; gated says the MLP has a
// gate projection.
func (h *hfReader) act(key, def string, isGated bool) string {
	a := strings.ToLower(h.string(key, def))
	switch {
	case strings.HasPrefix(a, "gelu"):
		if isGated {
			return "geglu"
		}
		return "gelu"
	case a == "silu" || a == "swish":
		if isGated {
			return "swiglu"
		}
		return "silu"
	case a == "relu":
		return "relu"
	}
	h.bad(key, fmt.Errorf("unknown activation %q (want gelu, silu or relu)", a))
	return "gelu"
}

func bptr(b bool) *bool { return &b }

func (h *hfReader) config() Config {
	var arch string
	switch a := h.raw["architectures"].(type) {
	case []any:
		if len(a) > 0 {
			arch, _ = a[0].(string)
		}
		for _, x := range a[min(1, len(a)):] {
			if other, _ := x.(string); other != arch {
				h.warn(fmt.Errorf("architectures: %d listed; read as the first, %s", len(a), arch))
				break
			}
		}
	case nil:
	default:
		h.bad("architectures", fmt.Errorf("want a list of names such as [%q], got %v", HFArchitectures[0], a))
		return Config{}
	}
	if arch == "" {
		h.bad("architectures", fmt.Errorf("missing: want one of %s", strings.Join(HFArchitectures, ", ")))
		return Config{}
	}
	name := h.string("_name_or_path", "")
	if name == "" {
		// A config.json is named by its directory (a HuggingFace model
		// directory); any other file by its own name.
		name = strings.TrimSuffix(filepath.Base(h.file), filepath.Ext(h.file))
		if dir := filepath.Base(filepath.Dir(h.file)); strings.EqualFold(filepath.Base(h.file), "config.json") && dir != "." && dir != "/" && dir != "" {
			name = dir
		}
	}
	c := Config{Name: name, Source: "HuggingFace config.json: " + h.file}
	switch arch {
	case "LlamaForCausalLM", "MistralForCausalLM", "MixtralForCausalLM", "Qwen2ForCausalLM", "GemmaForCausalLM":
		c.Kind = Decoder
		c.DModel = h.int("hidden_size", 0)
		c.Layers = h.int("num_hidden_layers", 0)
		c.Heads = h.int("num_attention_heads", 0)
		c.KVHeads = h.int("num_key_value_heads", c.Heads)
		c.HeadDim = h.int("head_dim", 0)
		c.FFN = h.int("intermediate_size", 0)
		c.Vocab = h.int("vocab_size", 0)
		c.MaxContext = h.int("max_position_embeddings", 0)
		c.Norm, c.Position = "rmsnorm", "rope"
		c.TiedEmbeddings = h.bool("tie_word_embeddings", arch == "GemmaForCausalLM")
		c.Bias = bptr(h.bool("attention_bias", false) && arch == "LlamaForCausalLM")
		if h.bool("mlp_bias", false) {
			h.bad("mlp_bias", errors.New("biases in the MLP are not modelled (want false)"))
		}
		c.QKVBias = bptr(arch == "Qwen2ForCausalLM" || *c.Bias)
		if arch == "GemmaForCausalLM" {
			c.Activation = h.act("hidden_activation", h.string("hidden_act", "gelu_pytorch_tanh"), true)
		} else {
			c.Activation = h.act("hidden_act", "silu", true)
		}
		h.window(&c, arch == "Qwen2ForCausalLM")
		if arch == "MixtralForCausalLM" {
			c.Experts = h.int("num_local_experts", 0)
			c.TopK = h.int("num_experts_per_tok", 0)
			c.ExpertFFN, c.FFN = c.FFN, 0
		}
	case "GPT2LMHeadModel":
		c.Kind = Decoder
		c.DModel = h.int("n_embd", 0)
		c.Layers = h.int("n_layer", 0)
		c.Heads = h.int("n_head", 0)
		c.FFN = h.int("n_inner", 4*c.DModel)
		c.Vocab = h.int("vocab_size", 0)
		c.MaxContext = h.int("n_positions", 0)
		c.Norm, c.Position, c.Bias = "layernorm", "learned", bptr(true)
		c.Activation = h.act("activation_function", "gelu_new", false)
		c.TiedEmbeddings = h.bool("tie_word_embeddings", true)
	case "GPTNeoXForCausalLM":
		c.Kind = Decoder
		c.DModel = h.int("hidden_size", 0)
		c.Layers = h.int("num_hidden_layers", 0)
		c.Heads = h.int("num_attention_heads", 0)
		c.FFN = h.int("intermediate_size", 0)
		c.Vocab = h.int("vocab_size", 0)
		c.MaxContext = h.int("max_position_embeddings", 0)
		c.Norm, c.Position, c.Bias = "layernorm", "rope", bptr(h.bool("attention_bias", true))
		c.Activation = h.act("hidden_act", "gelu", false)
		c.TiedEmbeddings = h.bool("tie_word_embeddings", false)
		h.float("rotary_pct", 1) // partial rotary changes no parameter count
	case "BertModel", "BertForMaskedLM":
		c.Kind = Encoder
		c.DModel = h.int("hidden_size", 0)
		c.Layers = h.int("num_hidden_layers", 0)
		c.Heads = h.int("num_attention_heads", 0)
		c.FFN = h.int("intermediate_size", 0)
		c.Vocab = h.int("vocab_size", 0)
		c.MaxContext = h.int("max_position_embeddings", 0)
		c.TypeVocab = h.int("type_vocab_size", 2)
		c.Norm, c.Position, c.Bias = "layernorm", "learned", bptr(true)
		c.Activation = h.act("hidden_act", "gelu", false)
		c.FinalNorm, c.EmbeddingNorm = bptr(false), true
		c.Pooler = arch == "BertModel"
		c.MLMHead = arch == "BertForMaskedLM"
	case "ViTModel":
		c.Kind = ViT
		c.DModel = h.int("hidden_size", 0)
		c.Layers = h.int("num_hidden_layers", 0)
		c.Heads = h.int("num_attention_heads", 0)
		c.FFN = h.int("intermediate_size", 0)
		c.ImageSize = h.int("image_size", 224)
		c.PatchSize = h.int("patch_size", 16)
		c.Channels = h.int("num_channels", 3)
		c.Norm, c.Position, c.Bias = "layernorm", "learned", bptr(true)
		c.QKVBias = bptr(h.bool("qkv_bias", true))
		c.Activation = h.act("hidden_act", "gelu", false)
		c.Pooler = true // ViTModel's add_pooling_layer defaults to true
	case "Gemma2ForCausalLM", "Gemma3ForCausalLM", "Gemma3ForConditionalGeneration", "Phi3ForCausalLM",
		"Qwen3ForCausalLM", "Qwen3MoeForCausalLM", "FalconForCausalLM", "DeepseekV2ForCausalLM",
		"DeepseekV3ForCausalLM", "GptOssForCausalLM", "Mamba2ForCausalLM", "NemotronHForCausalLM",
		"Qwen3NextForCausalLM", "JambaForCausalLM", "MambaForCausalLM":
		h.today(&c, arch)
	default:
		known := append([]string(nil), HFArchitectures...)
		sort.Strings(known)
		h.bad("architectures", fmt.Errorf("%w %q (supported: %s)", ErrUnsupportedArchitecture, arch, strings.Join(known, ", ")))
	}
	return c
}

// hfSizes are the config.json sizes the readers take a default for, or
// pass over, when they are 0 or less: a file that gives one so had got
// the default (num_key_value_heads 0 read as multi-head attention,
// head_dim 0 as hidden_size / heads, chunk_size 0 as 256) or had its
// value ignored without a word. sliding_window may be 0 (no window).
var hfSizes = []string{
	"num_key_value_heads", "head_dim", "attention_head_dim", "mamba_head_dim", "max_position_embeddings", "n_positions",
	"intermediate_size", "moe_intermediate_size", "shared_expert_intermediate_size", "n_inner",
	"num_local_experts", "n_routed_experts", "num_experts", "num_experts_per_tok", "experts_per_token", "decoder_sparse_step",
	"state_size", "ssm_state_size", "num_heads", "mamba_num_heads", "n_groups", "conv_kernel", "chunk_size", "expand",
	"linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim",
}

// checkSizes reports every size in hfSizes this architecture reads that
// the file gives as 0 or less, and a negative sliding_window.
func (h *hfReader) checkSizes() {
	for _, k := range hfSizes {
		if n, ok := h.raw[k].(json.Number); ok && h.asked[k] {
			if f, err := n.Float64(); err == nil && f <= 0 {
				h.bad(k, fmt.Errorf("got %s: want a positive size", n))
			}
		}
	}
	if n, ok := h.raw["sliding_window"].(json.Number); ok && h.asked["sliding_window"] {
		if f, err := n.Float64(); err == nil && f < 0 {
			h.bad("sliding_window", fmt.Errorf("got %s: want a window of tokens, or null for none", n))
		}
	}
}

// hfKeys maps Config keys to the config.json keys they came from, for
// error positions.
var hfKeys = map[string][]string{
	"layers": {"num_hidden_layers", "n_layer"}, "d_model": {"hidden_size", "n_embd"},
	"heads": {"num_attention_heads", "n_head"}, "kv_heads": {"num_key_value_heads"},
	"head_dim": {"attention_head_dim", "head_dim"}, "ffn": {"intermediate_size", "n_inner"}, "vocab": {"vocab_size"},
	"max_context": {"max_position_embeddings", "n_positions"}, "experts": {"num_local_experts", "n_routed_experts", "num_experts"},
	"top_k": {"num_experts_per_tok", "experts_per_token"},
	// Where a model has both, the experts' width is moe_intermediate_size
	// (DeepSeek, Qwen3-MoE); Mixtral and gpt-oss give intermediate_size.
	"expert_ffn": {"moe_intermediate_size", "intermediate_size"},
	"image_size": {"image_size"}, "patch_size": {"patch_size"}, "channels": {"num_channels"},
	"type_vocab":       {"type_vocab_size"},
	"linear_key_heads": {"linear_num_key_heads"}, "linear_value_heads": {"linear_num_value_heads"},
	"linear_key_head_dim": {"linear_key_head_dim"}, "linear_value_head_dim": {"linear_value_head_dim"},
	"linear_conv": {"linear_conv_kernel_dim"},
	// Windows and Mamba-2's mixers.
	"window": {"sliding_window"}, "ssm_state": {"state_size", "ssm_state_size"}, "ssm_heads": {"mamba_num_heads", "num_heads"},
	"ssm_head_dim": {"mamba_head_dim", "head_dim"}, "ssm_groups": {"n_groups"}, "ssm_conv": {"conv_kernel"}, "ssm_chunk": {"chunk_size"},
	// DeepSeek's MoE layout.
	"first_dense_layers": {"first_k_dense_replace"}, "shared_experts": {"n_shared_experts"},
}

// locate renames the Config keys in err's *ConfigErrors to config.json
// keys with their lines.
func (h *hfReader) locate(err error) error {
	list := errlist.Flatten(err)
	out := make([]error, len(list))
	for i, e := range list {
		var ce *ConfigError
		if !errors.As(e, &ce) {
			out[i] = e
			continue
		}
		c := *ce
		c.File = h.file
		// The config.json key the value came from, or, when it is
		// missing, the key this architecture reads it from.
		found := false
		for _, k := range hfKeys[c.Key] {
			if _, ok := h.raw[k]; ok {
				c.Key, c.Line, found = k, h.line(k), true
				break
			}
		}
		for _, k := range hfKeys[c.Key] {
			if !found && h.asked[k] {
				c.Key, c.Line = k, 0
				break
			}
		}
		if _, ok := h.raw[c.Key]; ok && !found {
			c.Line, found = h.line(c.Key), true // a key of the same name in both
		}
		// Config cannot tell a size left out from one given as 0: a
		// "missing" value the file does give is said as given.
		if v, ok := h.raw[c.Key]; ok && found && v != nil {
			if n, isNum := v.(json.Number); isNum {
				if f, err := n.Float64(); err == nil && f > 0 && strings.HasPrefix(c.Err.Error(), missingPrefix) {
					// A positive value is not what is missing: this
					// architecture reads the key as something else
					// (gpt-oss's intermediate_size is its experts'),
					// so the model's own key is named.
					c.Key, c.Line = ce.Key, 0
					out[i] = &c
					continue
				}
			}
			c.Err = saidAsGiven(c.Err, v)
		}
		out[i] = &c
	}
	return errors.Join(out...)
}

// window reads a sliding window: sliding_window (null for none), applied
// to every layer (Mistral 7B v0.1), or, where use_sliding_window says
// whether it is used (Qwen2, Qwen3), to the layers from max_window_layers
// on; an explicit layer_types list says it per layer.
func (h *hfReader) window(c *Config, gated bool) {
	w := h.int("sliding_window", 0)
	if gated && !h.bool("use_sliding_window", false) {
		h.int("max_window_layers", 0)
		w = 0
	}
	if w <= 0 {
		h.layerTypes(c)
		return
	}
	if c.MaxContext > 0 && w >= c.MaxContext {
		// A window as long as the context changes nothing: its layers
		// are full attention, but the list is still checked, and the
		// reading is said.
		h.warn(fmt.Errorf("sliding_window: %d is not shorter than the context of %d tokens (max_position_embeddings): priced as full attention, which a window that long computes", w, c.MaxContext))
		h.layerTypes(c)
		c.Window = 0
		for i, t := range c.LayerTypes {
			if t == MixerSliding {
				c.LayerTypes[i] = MixerFull
			}
		}
		return
	}
	c.Window = w
	if gated {
		from := h.int("max_window_layers", 0)
		if from > 0 && from < c.Layers && c.Layers <= maxDim {
			c.LayerTypes = make([]string, c.Layers)
			for i := range c.LayerTypes {
				c.LayerTypes[i] = MixerFull
				if i >= from {
					c.LayerTypes[i] = MixerSliding
				}
			}
		} else if from >= c.Layers {
			c.Window = 0
		}
	}
	h.layerTypes(c)
}

// layerTypes reads HF's layer_types ("full_attention",
// "sliding_attention") when present.
func (h *hfReader) layerTypes(c *Config) {
	h.asked["layer_types"] = true
	v, ok := h.raw["layer_types"]
	if !ok || v == nil {
		return
	}
	list, ok := v.([]any)
	if !ok {
		h.bad("layer_types", fmt.Errorf("want a list of strings, got %v", v))
		return
	}
	types := make([]string, 0, len(list))
	sliding := false
	for i, x := range list {
		s, _ := x.(string)
		switch s {
		case "full_attention":
			types = append(types, MixerFull)
		case "sliding_attention":
			types = append(types, MixerSliding)
			sliding = true
		default:
			h.bad("layer_types", fmt.Errorf("entry %d: unknown layer type %v (want full_attention or sliding_attention)", i, x))
			return
		}
	}
	if sliding && c.Window == 0 {
		c.Window = h.int("sliding_window", 0)
	}
	if !sliding {
		c.Window = 0
	}
	c.LayerTypes = types
}
