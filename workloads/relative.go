package workloads

import "github.com/perfsim/perfsim/model"

// T5's relative position bias (position = "relative"): one learned scalar
// per bucket of relative distance and head (relative_buckets × heads,
// shared by the layers), added to every attention score before the
// softmax. FlashAttention takes no such bias, so the attention runs as
// HF transformers' T5Attention.forward runs it, its only implementation
// (src/transformers/models/t5/modeling_t5.py @ 6b8b757), each step its
// own eager kernel:
//
//	q, k, v = self.q(x), self.k(x), self.v(x)        three GEMMs; .view().transpose(1, 2) views
//	scores = torch.matmul(q, k.transpose(3, 2))      q and kᵀ, not foldable into a batch of
//	                                                 matrices, copied (reshape), then one bmm
//	scores += position_bias                          add over B·H·S·L
//	softmax(scores.float(), dim=-1).type_as(scores)  cast to fp32, softmax, cast back
//	torch.matmul(attn_weights, v)                    v copied, one bmm
//	.transpose(1, 2).contiguous()                    copy
//	self.o(…)                                        GEMM
//
// The first layer computes the bias (compute_bias: the bucket of every
// query–key distance, an embedding lookup of S·L rows of heads) and adds
// the encoder's mask to it (position_bias + causal_mask: B·H·S·L
// written); every layer then reads that B·H·S·L bias. The integer
// arithmetic that buckets the S·L distances (about 20 small kernels once
// a forward) is not priced. Dropout is off at inference.

// relativeBiasOps appends the first layer's bias: the embedding lookup
// and the mask added to it.
func (m *Model) relativeBiasOps(ops []model.Op, ph Phase) []model.Op {
	c := &m.cfg
	h, s, l := c.Heads/ph.TP, ph.Seq, ph.Context+ph.Seq
	sl := float64(s) * float64(l)
	scores := float64(ph.Batch) * float64(h) * sl
	ops = addOp(ops, StageEmbedding, "embed.relative_bias", model.ClassEmbedding, 1, model.Gather{Rows: s * l, Width: h, DType: ph.Act})
	// (1, H, S, L) + (B, 1, 1, L): the bias once, each sequence's mask
	// row once, the sum written for every sequence.
	ops = addOp(ops, StageEmbedding, "embed.relative_mask", model.ClassEmbedding, 1, model.Elementwise{Kind: "add", Elements: scores,
		Work: model.FLOPs(scores), Read: ph.Act.Bytes(float64(h)*sl + float64(ph.Batch)*float64(l)), Written: ph.Act.Bytes(scores)})
	return ops
}

// relativeAttnOps appends the attention of the A layers as T5Attention
// runs it.
func (m *Model) relativeAttnOps(ops []model.Op, ph Phase) []model.Op {
	c := &m.cfg
	A := m.n.attn()
	b, s, l, hd, h := ph.Batch, ph.Seq, ph.Context+ph.Seq, c.HeadDim, c.Heads/ph.TP
	t := b * s
	act := ph.Act
	proj := phaseGEMM(ph, t, c.DModel, h*hd)
	for _, name := range []string{"attn.q", "attn.k", "attn.v"} {
		ops = addOp(ops, StageAttention, name, model.ClassQKV, A, proj)
	}
	qkv := float64(t) * float64(h*hd)
	copyQKV := ew("copy", qkv, 0, 1, 1, act)
	ops = addOp(ops, StageAttention, "attn.copy", model.ClassElementwise, 3*A, copyQKV) // q, kᵀ, v into batches of matrices
	ops = addOp(ops, StageAttention, "attn.scores", model.ClassAttention, A,
		withBatch(model.GEMM{M: s, K: hd, N: l, A: act, B: act, C: act}, b*h))
	e := float64(b) * float64(h) * float64(s) * float64(l)
	ops = addOp(ops, StageAttention, "attn.bias", model.ClassElementwise, A, ew("add", e, flopsAdd, 2, 1, act))
	ops = addOp(ops, StageAttention, "attn.upcast", model.ClassElementwise, A,
		model.Elementwise{Kind: "cast", Elements: e, Read: act.Bytes(e), Written: model.FP32.Bytes(e)})
	ops = addOp(ops, StageAttention, "attn.softmax", model.ClassElementwise, A, ew("softmax", e, flopsSoftmax, 1, 1, model.FP32))
	ops = addOp(ops, StageAttention, "attn.downcast", model.ClassElementwise, A,
		model.Elementwise{Kind: "cast", Elements: e, Read: model.FP32.Bytes(e), Written: act.Bytes(e)})
	ops = addOp(ops, StageAttention, "attn.context", model.ClassAttention, A,
		withBatch(model.GEMM{M: s, K: l, N: hd, A: act, B: act, C: act}, b*h))
	ops = addOp(ops, StageAttention, "attn.transpose", model.ClassElementwise, A, copyQKV)
	ops = addOp(ops, StageAttention, "attn.out", model.ClassOutProj, A, phaseGEMM(ph, t, h*hd, c.DModel))
	return ops
}
