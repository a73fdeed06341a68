package workloads

// Kind is the family of a model: how it decomposes into kernels.
type Kind string

// The model kinds.
const (
	Decoder Kind = "decoder" // causal language model (GPT, Llama, Mixtral)
	Encoder Kind = "encoder" // bidirectional encoder (BERT)
	ViT     Kind = "vit"     // vision transformer: patch embedding, class token, encoder
	CNN     Kind = "cnn"     // convolutional network described layer by layer
)

// Config is a model description as a TOML file writes it. Every key is
// documented in doc.go; zero values mean "not given" and take the
// defaults Validate documents. A Config is turned into a Model by New
// (or Load, LoadHF, Resolve), which validates it.
type Config struct {
	Name   string `toml:"name"`
	Source string `toml:"source"` // where the numbers come from: a paper, an HF config
	Kind   Kind   `toml:"kind"`

	// Transformers.
	Layers          int    `toml:"layers"`
	DModel          int    `toml:"d_model"`
	Heads           int    `toml:"heads"`
	KVHeads         int    `toml:"kv_heads"` // default heads (multi-head); 1 is multi-query
	HeadDim         int    `toml:"head_dim"` // default d_model/heads
	FFN             int    `toml:"ffn"`
	Vocab           int    `toml:"vocab"`
	MaxContext      int    `toml:"max_context"`
	Norm            string `toml:"norm"`             // layernorm | rmsnorm
	Activation      string `toml:"activation"`       // gelu | relu | silu | swiglu | geglu
	Position        string `toml:"position"`         // learned | rope | sinusoidal | alibi | none | relative
	RelativeBuckets int    `toml:"relative_buckets"` // position "relative": T5's buckets of relative distance (a bias per bucket and head)
	Bias            *bool  `toml:"bias"`             // biases in the linear layers
	QKVBias         *bool  `toml:"qkv_bias"`         // biases in Q, K, V (default bias)
	OutBias         *bool  `toml:"out_bias"`         // bias in the attention output projection (default bias)
	LMHeadBias      bool   `toml:"lm_head_bias"`
	TiedEmbeddings  bool   `toml:"tied_embeddings"`
	ParallelAttn    bool   `toml:"parallel_attn"` // attention and MLP share one norm (GPT-J)
	FinalNorm       *bool  `toml:"final_norm"`
	EmbeddingNorm   bool   `toml:"embedding_norm"`
	TypeVocab       int    `toml:"type_vocab"` // token-type embeddings (BERT)
	Pooler          bool   `toml:"pooler"`
	MLMHead         bool   `toml:"mlm_head"` // BERT's masked-LM head (tied decoder)

	// Mixture of experts.
	Experts          int    `toml:"experts"`
	TopK             int    `toml:"top_k"`
	SharedExperts    int    `toml:"shared_experts"`
	ExpertFFN        int    `toml:"expert_ffn"`         // default ffn
	FirstDenseLayers int    `toml:"first_dense_layers"` // the first layers use a dense MLP of width ffn (DeepSeek: 3)
	ExpertBias       bool   `toml:"expert_bias"`        // biases in the expert projections (gpt-oss)
	RouterBias       bool   `toml:"router_bias"`        // a bias per expert in the router (gpt-oss; DeepSeek-V3's score correction)
	ExpertWeights    string `toml:"expert_weights"`     // the data type the experts ship in ("fp8", "fp4", "mxfp4"), when narrower than the rest

	// Attention variants and per-layer types.
	Window         int      `toml:"window"`          // sliding window of "sliding" layers, in tokens
	LayerTypes     []string `toml:"layer_types"`     // each layer's mixer: full | sliding | mamba | none
	MLPTypes       []string `toml:"mlp_types"`       // each layer's MLP: dense | moe | none
	QKNorm         bool     `toml:"qk_norm"`         // RMSNorm of each query and key head (Qwen3, Gemma 3)
	SandwichNorm   bool     `toml:"sandwich_norm"`   // a norm after the attention and after the MLP too (Gemma 2/3)
	AttentionSinks bool     `toml:"attention_sinks"` // a learned sink logit per head (gpt-oss)

	// Multi-head latent attention (DeepSeek-V2/V3); kv_lora_rank > 0 turns it on.
	QLoraRank  int `toml:"q_lora_rank"` // 0: queries projected directly
	KVLoraRank int `toml:"kv_lora_rank"`
	QKNopeDim  int `toml:"qk_nope_head_dim"`
	QKRopeDim  int `toml:"qk_rope_head_dim"`
	VHeadDim   int `toml:"v_head_dim"`

	// Mamba-2 state-space layers ("mamba" in layer_types).
	SSMState   int `toml:"ssm_state"`    // d_state N
	SSMHeads   int `toml:"ssm_heads"`    // heads H (d_inner = H·ssm_head_dim)
	SSMHeadDim int `toml:"ssm_head_dim"` // default 64
	SSMGroups  int `toml:"ssm_groups"`   // groups sharing B and C, default 1
	SSMConv    int `toml:"ssm_conv"`     // convolution width, default 4
	SSMChunk   int `toml:"ssm_chunk"`    // SSD chunk length, default 256

	// Gated DeltaNet linear-attention layers ("deltanet" in layer_types;
	// Qwen3-Next's linear_attention layers).
	LinearKeyHeads   int `toml:"linear_key_heads"`      // query and key heads, default linear_value_heads
	LinearValueHeads int `toml:"linear_value_heads"`    // value heads, each with a key_dim × value_dim state
	LinearKeyDim     int `toml:"linear_key_head_dim"`   // d_k
	LinearValueDim   int `toml:"linear_value_head_dim"` // d_v, default d_k
	LinearConv       int `toml:"linear_conv"`           // short convolution width, default 4
	LinearChunk      int `toml:"linear_chunk"`          // chunk length of the chunked form, default 64

	AttnOutputGate   bool `toml:"attn_output_gate"`   // gated attention: q_proj also yields a sigmoid gate on the attention output (Qwen3-Next)
	SharedExpertGate bool `toml:"shared_expert_gate"` // a sigmoid gate (d_model → 1) scales the shared experts' output (Qwen2-MoE, Qwen3-Next)

	// Vision transformers and CNNs.
	ImageSize  int   `toml:"image_size"`
	PatchSize  int   `toml:"patch_size"`
	Channels   int   `toml:"channels"`
	Classes    int   `toml:"classes"`
	ClassToken *bool `toml:"class_token"`

	// Layered networks (kind "cnn"): a 3-D input of image_depth ×
	// image_size × image_size when image_depth > 0 (every kernel, stride
	// and padding then applies to the depth too), and the layers in order.
	ImageDepth int     `toml:"image_depth"`
	Layer      []Layer `toml:"layer"`
}

// A Layer is one layer of a CNN. Shapes are inferred from the input
// image; only what a layer adds is written.
type Layer struct {
	Name       string   `toml:"name"`
	Op         string   `toml:"op"`     // conv | conv_transpose | fc | maxpool | avgpool | global_avgpool | batchnorm | act | add | mul | scalar | copy | flatten | upsample | concat | embedding | cross | input | attention | geglu | norm | gather | gat
	Input      string   `toml:"input"`  // read the output of this named layer instead of the previous one
	From       string   `toml:"from"`   // add, mul: the layer whose output is added to (multiplies) the input; cross: x_0; gat: the destination type's nodes
	Inputs     []string `toml:"inputs"` // concat: the layers joined along the channels
	Out        int      `toml:"out"`    // conv: output channels; fc: output features
	Kernel     int      `toml:"kernel"`
	Stride     *int     `toml:"stride"`   // default 1 (conv) or kernel (pooling)
	Padding    int      `toml:"padding"`  // default 0
	Dilation   int      `toml:"dilation"` // default 1
	Groups     int      `toml:"groups"`   // default 1
	Bias       *bool    `toml:"bias"`     // conv default false, fc default true
	Norm       string   `toml:"norm"`     // "batchnorm" after a conv or fc
	Activation string   `toml:"activation"`
	Shares     string   `toml:"shares"`  // conv, conv_transpose, fc: use this earlier layer's weights (no new parameters)
	Scale      int      `toml:"scale"`   // upsample: the factor per spatial axis
	Rows       int      `toml:"rows"`    // embedding: the table's rows; gather: the feature store's
	Lookups    int      `toml:"lookups"` // embedding: rows read and summed per sample (multi-hot), default 1; gather: rows read per sample
	DType      string   `toml:"dtype"`   // gather: the type the features are stored in (default the weights')
	Edges      int      `toml:"edges"`   // gat: the edges of the relation per sample
	Nodes      int      `toml:"nodes"`   // gat: the destination nodes per sample (the first of the input's)
	Rank       int      `toml:"rank"`    // cross: the low rank r of U·V
	Heads      int      `toml:"heads"`   // attention, gat: the heads (head size = channels/heads)
	Length     int      `toml:"length"`  // input: the positions of a sequence input (out features each)
	Affine     *bool    `toml:"affine"`  // layernorm, groupnorm, instancenorm: a learned scale and shift (default true)
	Once       bool     `toml:"once"`    // input: one tensor for the whole batch (a buffer: a fixed position table), not one a sample
}

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

func gated(act string) bool { return act == "swiglu" || act == "geglu" }
