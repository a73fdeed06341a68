package workloads

import (
	"strings"

	"github.com/perfsim/perfsim/model"
)

// Stage names, as the seed's GPT-3 table names the parts of a model.
const (
	StageEmbedding = "embedding"
	StageAttention = "attention"
	StageFFN       = "ffn"
	StageDecoding  = "decoding" // final norm and LM head
	StageHead      = "head"     // pooler and classifier of encoders, ViTs and CNNs
)

// Ops decomposes the model for a phase into kernels. Ops that repeat in
// every layer appear once with Count = layers (an expert GEMM with its
// Batch the experts in use), so the list is short whatever the depth. With
// ph.TP > 1 the ops are those of one device. The backward phase holds,
// for every forward GEMM, a data-gradient and a weight-gradient GEMM of
// the same MACs, and twice the attention and elementwise work.
func (m *Model) Ops(ph Phase) ([]model.Op, error) {
	ph, err := ph.norm(m)
	if err != nil {
		return nil, err
	}
	if m.cfg.Kind == CNN {
		ops := m.cnnOps(ph)
		if ph.Kind == TrainBackward {
			ops = backward(ops)
		}
		return ops, nil
	}
	// A transformer's ops are built in a buffer on the stack and copied
	// once into a slice of their exact length (a simulation asks for
	// several decompositions per scenario; see BenchmarkOps).
	var buf [maxTransformerOps]model.Op
	ops := m.transformerOps(ph, buf[:0])
	if ph.Kind == TrainBackward {
		return backward(ops), nil
	}
	return append(make([]model.Op, 0, len(ops)), ops...), nil
}

// AppendOps appends the ops of Ops(ph) to dst and returns the extended
// slice: a caller that keeps decompositions in buffers of its own (the
// simulator's runners) gets them without a slice made and copied for
// each.
func (m *Model) AppendOps(dst []model.Op, ph Phase) ([]model.Op, error) {
	if m.cfg.Kind == CNN || ph.Kind == TrainBackward {
		ops, err := m.Ops(ph)
		if err != nil {
			return dst, err
		}
		return append(dst, ops...), nil
	}
	ph, err := ph.norm(m)
	if err != nil {
		return dst, err
	}
	return m.transformerOps(ph, dst), nil
}

// maxTransformerOps is the most ops transformerOps appends (a ViT or BERT
// with every option, or a MoE with shared experts, has about 25); more
// would still work, only with a heap-allocated buffer.
const maxTransformerOps = 40

// Elementwise FLOPs per element, rough counts of the arithmetic each pass
// does (they matter little: these passes are memory-bound).
const (
	flopsLayerNorm = 7 // mean, variance, normalise, scale, shift
	flopsRMSNorm   = 4 // square-sum, rsqrt-scale, gain
	flopsGELU      = 8 // tanh approximation
	flopsSiLUMul   = 5 // x·σ(x)·up
	flopsReLU      = 1
	flopsAdd       = 1
	flopsRotary    = 3 // two multiplies and an add per element
	flopsSoftmax   = 5 // max, subtract, exp, sum, divide
)

// ew returns an elementwise pass over n elements of d reading `reads`
// tensors of n elements and writing `writes`.
func ew(kind string, n float64, flopsPer float64, reads, writes float64, d model.DType) model.Elementwise {
	return model.Elementwise{Kind: kind, Elements: n, Work: model.FLOPs(n * flopsPer),
		Read: d.Bytes(n * reads), Written: d.Bytes(n * writes)}
}

// transformerOps appends the ops of a transformer to ops. Identical
// kernels (the norms, the residual adds, the two all-reduces of a layer)
// share one boxed model.Kernel value.
func (m *Model) transformerOps(ph Phase, ops []model.Op) []model.Op {
	c := &m.cfg
	b, s, tp := ph.Batch, ph.Seq, ph.TP
	t := b * s // tokens in this pass
	d := c.DModel
	act, w := ph.Act, ph.Weights
	T, D := float64(t), float64(d)
	gemm := func(m_, k, n int) model.GEMM { return model.GEMM{M: m_, K: k, N: n, A: act, B: w, C: act} }
	add := func(name, stage string, class model.Class, count int, k model.Kernel) {
		ops = append(ops, model.Op{Name: name, Stage: stage, Class: class, Count: count, Kernel: k})
	}
	normFLOPs, normKind := float64(flopsLayerNorm), "layernorm"
	if c.Norm == "rmsnorm" {
		normFLOPs, normKind = flopsRMSNorm, "rmsnorm"
	}
	// The residual stream of a decoder (its norms and adds, as its
	// collectives) is in ph.Comm: bf16 when the GEMMs run in 8 or 4 bits,
	// since the engines quantize only the linear layers' inputs (vLLM
	// docs quantization/fp8, v0.6.3: "all Linear modules (except for the
	// final lm_head)" are quantized, activations scaled at those modules;
	// TensorRT-LLM docs/source/precision.md: quantize/dequantize around
	// the GEMMs). Encoders keep act: NVIDIA's INT8 BERT runs its
	// skip-layernorm in int8.
	stream := act
	if c.Kind == Decoder && ph.Comm.Valid() {
		stream = ph.Comm
	}
	// Kernels that recur, boxed once.
	norm := model.Kernel(ew(normKind, T*D, normFLOPs, 1, 1, stream))
	addTD := model.Kernel(ew("add", T*D, flopsAdd, 2, 1, stream))
	var allReduce model.Kernel
	if tp > 1 {
		allReduce = model.Collective{Kind: model.AllReduce, Size: ph.Comm.Bytes(T * D), Ranks: tp, Tier: model.IntraNode}
	}

	// Embeddings.
	switch c.Kind {
	case ViT:
		p := c.PatchSize
		patches := (c.ImageSize / p) * (c.ImageSize / p)
		add("embed.patch", StageEmbedding, model.ClassEmbedding, 1, gemm(b*patches, c.Channels*p*p, d))
		add("embed.position", StageEmbedding, model.ClassEmbedding, 1, addTD)
	default:
		if ph.Embedding == EmbedOneHot {
			add("embed.onehot", StageEmbedding, model.ClassEmbedding, 1, gemm(t, c.Vocab, d))
		} else {
			table := act
			if c.Kind == Decoder && model.VocabType(w) != w {
				table = model.VocabType(w) // stored in 16 bits
			}
			add("embed.tokens", StageEmbedding, model.ClassEmbedding, 1, model.Gather{Rows: t, Width: d, DType: table})
		}
		if c.Position == "learned" || c.Position == "sinusoidal" {
			add("embed.position", StageEmbedding, model.ClassEmbedding, 1, addTD)
		}
		if c.Position == "relative" {
			ops = m.relativeBiasOps(ops, ph)
		}
		if c.TypeVocab > 0 {
			add("embed.type", StageEmbedding, model.ClassEmbedding, 1, addTD)
		}
	}
	if c.EmbeddingNorm {
		add("embed.norm", StageEmbedding, model.ClassNorm, 1, norm)
	}

	// The blocks: each kind of kernel once, with Count the layers that
	// run it (see layerCounts).
	n := m.n
	if mx := n.mixers(); mx > 0 {
		add("attn.norm", StageAttention, model.ClassNorm, mx, norm)
	}
	if n.attn() > 0 {
		if c.mla() {
			ops = m.mlaOps(ops, ph, norm)
		} else if c.Position == "relative" {
			ops = m.relativeAttnOps(ops, ph)
		} else {
			ops = m.attnOps(ops, ph)
		}
	}
	if n.mamba > 0 {
		ops = m.mambaOps(ops, ph)
	}
	if n.delta > 0 {
		ops = m.deltaOps(ops, ph)
	}
	if c.SandwichNorm && n.mixers() > 0 {
		add("attn.post_norm", StageAttention, model.ClassNorm, n.mixers(), norm)
	}
	if tp > 1 && n.mixers() > 0 {
		add("attn.allreduce", StageAttention, model.ClassComm, n.mixers(), allReduce)
	}
	if r := n.mixers() + n.mlps(); r > 0 {
		add("residual", StageFFN, model.ClassElementwise, r, addTD)
	}
	if !c.ParallelAttn && n.mlps() > 0 {
		add("ffn.norm", StageFFN, model.ClassNorm, n.mlps(), norm)
	}
	if n.moe > 0 {
		ops = m.moeOps(ops, ph)
	}
	if n.dense > 0 {
		ops = m.ffnOps(ops, &ffnNames, model.ClassFFN, n.dense, 1, t, c.FFN/tp, ph)
	}
	if c.SandwichNorm && n.mlps() > 0 {
		add("ffn.post_norm", StageFFN, model.ClassNorm, n.mlps(), norm)
	}
	if tp > 1 && n.mlps() > 0 {
		add("ffn.allreduce", StageFFN, model.ClassComm, n.mlps(), allReduce)
	}

	// Head.
	if boolOr(c.FinalNorm, true) {
		stage := StageDecoding
		if c.Kind != Decoder {
			stage = StageHead
		}
		add("final.norm", stage, model.ClassNorm, 1, norm)
	}
	switch c.Kind {
	case Decoder:
		rows := t
		if ph.Kind == Decode || (ph.Kind == Prefill && !ph.AllLogits) {
			rows = b
		}
		// The LM head runs in its 16-bit storage type under narrower
		// weights (model.VocabType), on the residual stream's output.
		head := gemm(rows, d, (c.Vocab+tp-1)/tp)
		if hw := model.VocabType(w); hw != w {
			head.A, head.B, head.C = stream, hw, stream
		}
		add("lm_head", StageDecoding, model.ClassLogits, 1, head)
		if tp > 1 && (ph.Kind == Prefill || ph.Kind == Decode) {
			// Each rank computes vocab/TP logits; the sampler needs all
			// of them, gathered across TP in the head's 16-bit output
			// type before sampling: TensorRT-LLM's lm_head is a
			// ColumnLinear with gather_output=True (an all-gather; the
			// cast to logits_dtype float32 comes after it,
			// tensorrt_llm/models/llama/model.py), vLLM's
			// LogitsProcessor calls tensor_model_parallel_gather and
			// SGLang's tensor_model_parallel_all_gather. Training
			// computes the loss vocabulary-parallel (Megatron's
			// vocab_parallel_cross_entropy), without it. Its class is
			// logits: like the LM head it runs on the rows that sample.
			padded := (c.Vocab + tp - 1) / tp * tp
			add("logits.gather", StageDecoding, model.ClassLogits, 1,
				model.Collective{Kind: model.AllGather, Size: head.C.Bytes(float64(rows) * float64(padded)), Ranks: tp, Tier: model.IntraNode})
		}
	case Encoder, ViT:
		if c.Pooler {
			add("pooler", StageHead, model.ClassLogits, 1, gemm(b, d, d))
		}
		if c.MLMHead {
			add("mlm.transform", StageHead, model.ClassLogits, 1, gemm(t, d, d))
			add("mlm.norm", StageHead, model.ClassNorm, 1, norm)
			add("mlm.logits", StageHead, model.ClassLogits, 1, gemm(t, d, c.Vocab))
		}
		if c.Classes > 0 {
			add("classifier", StageHead, model.ClassLogits, 1, gemm(b, d, c.Classes))
		}
	}
	return ops
}

// mlpNames are the op names of one MLP, spelled out so that no name is
// built per call.
type mlpNames struct{ gate, up, act, down string }

var (
	ffnNames    = mlpNames{"ffn.gate", "ffn.up", "ffn.act", "ffn.down"}
	sharedNames = mlpNames{"shared.gate", "shared.up", "shared.act", "shared.down"}
)

// ffnOps appends to ops an MLP of width f run `groups` times (experts in
// use) on `rows` tokens each.
func (m *Model) ffnOps(ops []model.Op, names *mlpNames, class model.Class, L, groups, rows, f int, ph Phase) []model.Op {
	c := &m.cfg
	act, w := ph.Act, ph.Weights
	g := func(k, n int) model.GEMM {
		return withBatch(model.GEMM{M: rows, K: k, N: n, A: act, B: w, C: act}, groups)
	}
	add := func(name string, class model.Class, k model.Kernel) {
		ops = append(ops, model.Op{Name: name, Stage: StageFFN, Class: class, Count: L, Kernel: k})
	}
	n := float64(rows) * float64(groups) * float64(f)
	if gated(c.Activation) {
		up := model.Kernel(g(c.DModel, f)) // the gate and up GEMMs share a shape
		add(names.gate, class, up)
		add(names.up, class, up)
		add(names.act, model.ClassElementwise, ew(c.Activation, n, flopsSiLUMul, 2, 1, act))
	} else {
		add(names.up, class, g(c.DModel, f))
		fl := float64(flopsGELU)
		if c.Activation == "relu" || c.Activation == "relu2" {
			fl = flopsReLU + 1 // relu2 squares: one more multiply
		}
		add(names.act, model.ClassElementwise, ew(c.Activation, n, fl, 1, 1, act))
	}
	add(names.down, class, g(f, c.DModel))
	return ops
}

func withBatch(g model.GEMM, n int) model.GEMM {
	if n > 1 {
		g.Batch = n
	}
	return g
}

// backward turns forward ops into the ops of the backward pass, last
// layer first: each GEMM Y[M×N] = X[M×K]·W[K×N] gives a data gradient
// dX = dY·Wᵀ (M×N·N×K) and a weight gradient dW = Xᵀ·dY (K×M·M×N), each
// of the forward MACs. A convolution's gradients are implicit GEMMs too
// (cuDNN's backward-data and backward-filter algorithms): dX is written
// as the input gradient, not the unfolded matrix, and the weight
// gradient reads the input tensor, so the forward's AElems becomes the
// data gradient's CElems and the weight gradient's AElems. Attention runs twice the forward work (a close
// match to FlashAttention's backward without the recomputation, which
// counts as hardware FLOPs, not model FLOPs); elementwise passes read the
// gradient and the saved input and write a gradient, about twice the
// forward traffic; gathers become scatter-adds of the same traffic;
// collectives repeat on the gradients.
func backward(fwd []model.Op) []model.Op {
	n := len(fwd)
	for _, op := range fwd {
		switch op.Kernel.(type) {
		case model.GEMM, model.GroupedGEMM:
			n++
		}
	}
	out := make([]model.Op, 0, n)
	for i := len(fwd) - 1; i >= 0; i-- {
		op := fwd[i]
		switch k := op.Kernel.(type) {
		case model.GEMM:
			dg := k
			dg.K, dg.N = k.N, k.K
			dg.A, dg.B, dg.C = k.C, k.B, k.A
			dg.AElems, dg.CElems = k.CElems, k.AElems
			wg := k
			wg.M, wg.K, wg.N = k.K, k.M, k.N
			wg.A, wg.B, wg.C = k.A, k.C, k.B
			wg.AElems, wg.CElems = k.AElems, 0
			out = append(out,
				model.Op{Name: op.Name + ".dgrad", Stage: op.Stage, Class: op.Class, Count: op.Count, Kernel: dg},
				model.Op{Name: op.Name + ".wgrad", Stage: op.Stage, Class: op.Class, Count: op.Count, Kernel: wg})
		case model.GroupedGEMM:
			// dX = dY·Wᵀ per expert (K and N swapped); dW = Xᵀ·dY per
			// expert, the same rows, MACs and weight-sized traffic.
			dg := k
			dg.K, dg.N = k.N, k.K
			out = append(out,
				model.Op{Name: op.Name + ".dgrad", Stage: op.Stage, Class: op.Class, Count: op.Count, Kernel: dg},
				model.Op{Name: op.Name + ".wgrad", Stage: op.Stage, Class: op.Class, Count: op.Count, Kernel: k})
		case model.Attention, model.Elementwise, model.Scan:
			op.Name += ".bwd"
			op.Count *= 2
			out = append(out, op)
		default:
			op.Name += ".bwd"
			out = append(out, op)
		}
	}
	return out
}

// AttentionGEMMs returns the two products a (fused) attention computes,
// per head and sequence, as GEMMs: Q·Kᵀ (QLen × HeadDim · HeadDim ×
// span) and scores·V (QLen × span · span × ValueDim), each with Batch =
// sequences × heads, where a query's span is KVLen, or the sliding
// window when shorter. As a GEMM computes them, the causal mask saves
// nothing: the full rectangle is counted, as the seed's table does.
func AttentionGEMMs(a model.Attention) (qk, pv model.GEMM) {
	n, span := a.Batch*a.Heads, a.KVLen
	if a.Window > 0 && a.Window < span {
		span = a.Window
	}
	qk = model.GEMM{M: a.QLen, K: a.HeadDim, N: span, Batch: n, A: a.DType, B: a.KVDType, C: a.DType}
	pv = model.GEMM{M: a.QLen, K: span, N: a.ValueDim(), Batch: n, A: a.DType, B: a.KVDType, C: a.DType}
	return qk, pv
}

// ExpandAttention returns ops with every attention kernel replaced by its
// Q·Kᵀ GEMM, its softmax and its scores·V GEMM (see AttentionGEMMs):
// the view of the seed's table, which lists the attention products as
// GEMMs.
func ExpandAttention(ops []model.Op) []model.Op {
	out := make([]model.Op, 0, len(ops)+4)
	for _, op := range ops {
		a, ok := op.Kernel.(model.Attention)
		if !ok {
			out = append(out, op)
			continue
		}
		// The products keep the kernel's kind: a sliding layer's
		// (attn.core.sliding) are attn.qk.sliding and attn.pv.sliding.
		suffix := ""
		if strings.Contains(op.Name, ".sliding") {
			suffix = ".sliding"
		}
		if strings.HasSuffix(op.Name, ".bwd") {
			suffix += ".bwd"
		}
		qk, pv := AttentionGEMMs(a)
		scores := float64(qk.Batch) * float64(qk.M) * float64(qk.N)
		out = append(out,
			model.Op{Name: "attn.qk" + suffix, Stage: op.Stage, Class: op.Class, Count: op.Count, Kernel: qk},
			model.Op{Name: "attn.softmax" + suffix, Stage: op.Stage, Class: op.Class, Count: op.Count,
				Kernel: ew("softmax", scores, flopsSoftmax, 1, 1, a.DType)},
			model.Op{Name: "attn.pv" + suffix, Stage: op.Stage, Class: op.Class, Count: op.Count, Kernel: pv})
	}
	return out
}
