// Package workloads describes AI workloads (decoder and encoder
// transformers, mixtures of experts, vision transformers, CNNs) and
// decomposes each phase (training forward and backward, prefill, one
// decode step) at a shape into the kernels of package model.
//
// # Reading guide
//
//   - Resolve turns a --model argument into a *Model: a name from the
//     embedded catalog (Catalog, CatalogNames; files in models/), a .toml
//     description (Load, LoadFile) or a HuggingFace config.json (LoadHF).
//   - A *Model answers Name, Params, ActiveParams, NormParams, Shape,
//     KVBytesPerToken, WeightBytes and ActivationBytes, and Ops(Phase),
//     the kernels of one phase at a batch, sequence, context and tensor
//     parallel degree. Per-layer kernels appear once with Count = layers.
//   - ExpandAttention and AttentionGEMMs turn a fused attention into the
//     Q·Kᵀ and scores·V GEMMs that the seed's GPT-3 table lists.
//   - Scale grows a GPT-3-like or Llama-like model to a parameter count,
//     for "what is the largest model that fits".
//
// # Decomposition
//
// A transformer layer is: norm, Q/K/V projections (one fused GEMM, or one
// per head with Phase.PerHead), rotary embedding (RoPE models), attention
// (model.Attention; causal for decoders), output projection, residual
// adds, norm, MLP (up and down; gate, up and down when gated), or for a
// mixture of experts a router GEMM, a top-k softmax and the routed experts
// as one grouped GEMM each for gate-and-up and for down
// (model.GroupedGEMM: t·top_k routed rows over the expected number of
// distinct experts under uniform routing, E·(1 − (1 − k/E)^t)), then the
// shared experts. Layers may differ (layer_types, mlp_types): full or
// sliding-window attention, multi-head latent attention, Mamba-2 and
// Gated DeltaNet mixers,
// dense or MoE MLPs; each kind of kernel appears once with Count the
// layers that run it. With TP > 1, heads, FFN columns and the vocabulary
// are split over the ranks (KV heads replicated when TP exceeds them; a
// dimension TP does not split is a *SplitError inside Ops's error) and
// each layer has two all-reduces of the activations (Megatron-LM); with
// EP > 1 the experts are split over the ranks (Phase.EP). The token embedding
// is a gather, or the seed's one-hot GEMM (Phase.Embedding); prefill
// computes the last position's logits unless Phase.AllLogits. A CNN
// convolution is an implicit GEMM: M = batch·H_out·W_out, K =
// C_in·R·S/groups, N = C_out/groups, once per group (GEMM.Batch =
// groups); layers with the same GEMM are one op with a count. The
// backward phase has, for each forward GEMM Y = X·W, a data gradient
// dX = dY·Wᵀ and a weight gradient dW = Xᵀ·dY of the same MACs each, and
// twice the forward attention and elementwise work.
//
// # The model description (TOML)
//
// Unknown keys are errors. Every problem is reported at once, each naming
// the file, the line, the key and the rule broken. Sizes above 2^24, and
// models above MaxParams (100 T parameters), are refused; so are shapes
// whose products would overflow an int: more than 2^40 tokens
// (batch·(seq+context)), routed tokens (tokens·top_k) or CNN GEMM rows
// (batch·H_out·W_out), and CNN feature maps of more than 2^40 elements.
//
// Every model:
//
//	name            string, required: the model's name
//	source          string: where the numbers come from (paper, HF config)
//	kind            "decoder" | "encoder" | "vit" | "cnn", required
//
// Transformers (decoder, encoder, vit):
//
//	layers          blocks, required
//	d_model         hidden width, required
//	heads           query heads, required
//	kv_heads        key/value heads (default heads; fewer is grouped-query,
//	                1 is multi-query); must divide heads
//	head_dim        width of a head (default d_model/heads, which must then
//	                divide evenly)
//	ffn             MLP width, required unless experts is set
//	vocab           vocabulary, required for decoders and encoders
//	max_context     longest sequence; required with learned positions
//	norm            "layernorm" (default) | "rmsnorm"
//	activation      "gelu" (default) | "relu" | "silu" | "swiglu" | "geglu";
//	                the last two are gated (three MLP matrices)
//	position        "learned" (default; "rope" for rmsnorm decoders) |
//	                "rope" | "sinusoidal" | "alibi" | "none" |
//	                "relative" (T5's bias on the scores, an encoder's only:
//	                its attention runs as HF's T5Attention, see relative.go)
//	relative_buckets position "relative": buckets of relative distance,
//	                one bias each per head, shared by the layers (T5: 32)
//	bias            biases in the linear layers (default false)
//	qkv_bias        biases in Q, K and V (default bias; Qwen2: true alone)
//	out_bias        bias in the attention output projection (default bias)
//	lm_head_bias    bias in the LM head (GPT-J)
//	tied_embeddings the LM head is the token embedding (GPT-2/3, Gemma)
//	parallel_attn   attention and MLP read one norm (GPT-J): one norm a layer
//	final_norm      a norm after the last block (default true; BERT false)
//	embedding_norm  a norm after the embeddings (BERT)
//	type_vocab      token-type embeddings (BERT: 2)
//	pooler          a dense d_model×d_model pooler on the first token (BERT, ViTModel)
//	mlm_head        BERT's masked-LM head: dense, norm, tied decoder with bias
//	classes         a classifier of this many classes (ViT: 1000)
//
// Mixture of experts (decoders):
//
//	experts         routed experts per layer
//	top_k           experts per token, at most experts
//	shared_experts  experts every token uses (DeepSeek, Qwen-MoE)
//	expert_ffn      an expert's MLP width (default ffn)
//
//	first_dense_layers  the first layers use a dense MLP of width ffn
//	expert_bias     biases in the expert projections (gpt-oss)
//	router_bias     a bias per expert in the router
//	expert_weights  the type the experts ship in ("fp8"; "fp4", NVFP4;
//	                "mxfp4", gpt-oss's, an E8M0 scale per 32 values), used
//	                when narrower than the phase's weights
//
// Today's attention and per-layer types (decoders):
//
//	window          sliding window (tokens) of "sliding" layers; at most
//	                max_context; alone, every layer is sliding
//	layer_types     one mixer per layer: full | sliding | mamba | deltanet | none
//	mlp_types       one MLP per layer: dense | moe | none
//	qk_norm         RMSNorm of every query and key head
//	sandwich_norm   norms after the attention and the MLP too
//	attention_sinks a learned sink logit per head
//	q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim,
//	v_head_dim      multi-head latent attention, on when kv_lora_rank > 0
//	                (head_dim = nope + rope; kv_heads = heads)
//	ssm_state, ssm_heads, ssm_head_dim, ssm_groups, ssm_conv, ssm_chunk
//	                Mamba-2 mixers (defaults: head dim 64, 1 group, conv
//	                4, chunk 256)
//	linear_value_heads, linear_key_heads, linear_key_head_dim,
//	linear_value_head_dim, linear_conv, linear_chunk
//	                Gated DeltaNet mixers ("deltanet" layers; defaults: key
//	                heads = value heads, d_v = d_k, conv 4, chunk 64)
//	attn_output_gate  gated attention: q_proj also yields a sigmoid gate
//	shared_expert_gate  a sigmoid gate (d_model → 1) on the shared experts
//
// Vision transformers:
//
//	image_size      input side in pixels, required
//	patch_size      patch side, required; must divide image_size
//	channels        input channels (default 3)
//	class_token     a class token is prepended (default true)
//
// CNNs: image_size and channels (and image_depth for a 3-D input: every
// kernel, stride and padding then applies to the depth too), then the
// layers in order as [[layer]] tables. Shapes are inferred from the image; a layer reads the previous
// layer's output unless input names another.
//
//	name        the layer's name; the text before the first "." is its
//	            stage in breakdowns (layer1.0.conv1 → layer1)
//	op          "conv" | "conv_transpose" | "fc" | "maxpool" | "avgpool" |
//	            "global_avgpool" | "batchnorm" | "act" | "add" | "mul" |
//	            "flatten" | "upsample" | "concat" | "embedding" | "cross" |
//	            "input" | "attention" | "geglu" | "norm" | "gather" | "gat" |
//	            "scalar" | "copy"
//	            scalar: one pass over the input with a number (x + 1);
//	            copy: one pass copying it into a new layout (a permuting
//	            reshape, .contiguous(), a torch.cat of one tensor); either
//	            runs once a forward over a once tensor
//	input       read this earlier layer's output instead of the previous one
//	from        add, mul: the earlier layer whose output is added to (mul:
//	            multiplies) the input, of the same shape or one vector of
//	            the input's channels broadcast over its positions (a time
//	            embedding, a DiT's adaLN shift, scale and gate), or a
//	            tensor shared by the batch (once) of the input's channels
//	            and positions (a position table: read once a forward);
//	            cross: x_0, multiplied elementwise (same shape)
//	inputs      concat: the earlier layers joined along the channels (same
//	            spatial shape)
//	shares      conv, conv_transpose, fc: use this earlier layer's weights
//	            (same shape; no new parameters)
//	scale       upsample: the nearest-neighbour factor per spatial axis
//	rows        embedding: the table's rows (out is the row size); gather:
//	            the feature store's
//	lookups     embedding: rows read and summed per sample (default 1);
//	            gather: rows read per sample (required)
//	rank        cross: the low rank r of DCNv2's U·V
//	            op gather: a graph network's node features, read from a
//	            feature store of rows × out (the dataset's, not parameters):
//	            lookups rows a sample, written as a node map of out × lookups
//	dtype       gather: the type the store holds (default the weights')
//	            op gat: one relation's graph-attention convolution (DGL's
//	            GATConv) from the input's source nodes to nodes destination
//	            nodes (among from's nodes where from is given) over edges
//	            edges a sample, out = heads × head size; edges and nodes 0
//	            for a relation with no edges (its weights only)
//	edges       gat: the relation's edges a sample
//	nodes       gat: its destination nodes a sample
//	out         conv: output channels; fc: output features
//	kernel      conv and pooling: the window side
//	stride      default 1 (conv) or kernel (pooling); 0 is an error
//	padding     default 0
//	dilation    default 1
//	groups      conv: default 1; must divide the input and output channels
//	bias        conv default false, fc default true
//	norm        "batchnorm" | "instancenorm" | "groupnorm" | "layernorm"
//	            after the layer; required for op "norm"
//	affine      instancenorm, groupnorm, layernorm: a learned scale and
//	            shift per channel (default true; false for a DiT's adaLN
//	            norms, elementwise_affine=False)
//	length      input: the positions of a sequence input (text tokens);
//	            "input" is a further input of out features, costing nothing
//	once        input: one tensor for the whole batch (a buffer or a
//	            parameter such as a position table), not one a sample
//	heads       attention: the heads (head size = channels/heads); inputs
//	            names its queries, keys and values, each an earlier layer
//	activation  "relu" | "relu6" | "leaky_relu" | "silu" | "gelu" | "sigmoid" | "hardswish",
//	            after the layer (and its norm); required for op "act"
//
// A kernel larger than the padded input, groups that do not divide the
// channels, an add of mismatched shapes and a reference to no earlier
// layer are errors.
package workloads
