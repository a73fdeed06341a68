package workloads

import (
	"github.com/perfsim/perfsim/model"
)

// addOp appends an op of count runs, none when count is 0. (A plain
// function returning the slice, so that the caller's stack buffer does
// not escape.)
func addOp(ops []model.Op, stage, name string, class model.Class, count int, k model.Kernel) []model.Op {
	if count > 0 {
		ops = append(ops, model.Op{Name: name, Stage: stage, Class: class, Count: count, Kernel: k})
	}
	return ops
}

// phaseGEMM returns a GEMM of ph's activation and weight types.
func phaseGEMM(ph Phase, m, k, n int) model.GEMM {
	return model.GEMM{M: m, K: k, N: n, A: ph.Act, B: ph.Weights, C: ph.Act}
}

// attnOps appends the projections and attention of the full and sliding
// layers (multi-head, grouped-query or multi-query attention). With TP
// beyond the KV heads each rank computes and keeps one replicated KV head.
func (m *Model) attnOps(ops []model.Op, ph Phase) []model.Op {
	c, n := &m.cfg, m.n
	b, s, tp := ph.Batch, ph.Seq, ph.TP
	t := b * s
	hd, hq, hkv := c.HeadDim, c.Heads/tp, c.kvLocal(tp)
	A := n.attn()
	qw := hd // a query head's width in q_proj: twice with the output gate
	if c.AttnOutputGate {
		qw = 2 * hd
	}
	if ph.PerHead {
		ops = addOp(ops, StageAttention, "attn.q", model.ClassQKV, A, withBatch(phaseGEMM(ph, t, c.DModel, qw), hq))
		ops = addOp(ops, StageAttention, "attn.k", model.ClassQKV, A, withBatch(phaseGEMM(ph, t, c.DModel, hd), hkv))
		ops = addOp(ops, StageAttention, "attn.v", model.ClassQKV, A, withBatch(phaseGEMM(ph, t, c.DModel, hd), hkv))
	} else {
		ops = addOp(ops, StageAttention, "attn.qkv", model.ClassQKV, A, phaseGEMM(ph, t, c.DModel, hq*qw+2*hkv*hd))
	}
	if c.QKNorm {
		ops = addOp(ops, StageAttention, "attn.qk_norm", model.ClassNorm, A, ew("rmsnorm", float64(t)*float64((hq+hkv)*hd), flopsRMSNorm, 1, 1, ph.Act))
	}
	if c.Position == "rope" {
		ops = addOp(ops, StageAttention, "attn.rotary", model.ClassElementwise, A, ew("rotary", float64(t)*float64((hq+hkv)*hd), flopsRotary, 1, 1, ph.Act))
	}
	core := model.Attention{Batch: b, Heads: hq, KVHeads: hkv, QLen: s, KVLen: ph.Context + s, HeadDim: hd,
		Causal: c.Kind == Decoder, Fused: !ph.Unfused, DType: ph.Act, KVDType: ph.KV}
	if n.full > 0 {
		ops = addOp(ops, StageAttention, "attn.core", model.ClassAttention, n.full, core)
	}
	if n.sliding > 0 { // boxed only when used
		core.Window = c.Window
		ops = addOp(ops, StageAttention, "attn.core.sliding", model.ClassAttention, n.sliding, core)
	}
	if c.AttnOutputGate {
		// o·sigmoid(gate) before o_proj (transformers' Qwen3NextAttention).
		ops = addOp(ops, StageAttention, "attn.output_gate", model.ClassElementwise, A, ew("sigmoid-mul", float64(t)*float64(hq*hd), flopsSiLUMul, 2, 1, ph.Act))
	}
	ops = addOp(ops, StageAttention, "attn.out", model.ClassOutProj, A, phaseGEMM(ph, t, hq*hd, c.DModel))
	return ops
}

// mlaOps appends multi-head latent attention (DeepSeek-V2/V3). Queries
// go through the low-rank q_a/q_b pair; keys and values through one
// down-projection to the latent and the shared rope key (kv_a, not split
// by TP: every rank needs the whole latent), which is what the cache
// holds. Prefill and training up-project the latent of every key to
// per-head keys and values (kv_b) and run ordinary attention of head
// width nope+rope and value width v. A decode step absorbs the
// up-projections instead, as FlashMLA and the engines run it: each head's
// query is mapped into the latent space (a batched GEMM per head), the
// attention reads the latent once for all heads (Attention.Latent, width
// kv_lora+rope, values kv_lora), and the result is mapped back to the
// value width per head before the output projection.
func (m *Model) mlaOps(ops []model.Op, ph Phase, norm model.Kernel) []model.Op {
	c, n := &m.cfg, m.n
	b, s, tp := ph.Batch, ph.Seq, ph.TP
	t := b * s
	hq, hd, nope, rope, v, kvr := c.Heads/tp, c.HeadDim, c.QKNopeDim, c.QKRopeDim, c.VHeadDim, c.KVLoraRank
	A := n.attn()
	if r := c.QLoraRank; r > 0 {
		ops = addOp(ops, StageAttention, "mla.q_a", model.ClassQKV, A, phaseGEMM(ph, t, c.DModel, r))
		ops = addOp(ops, StageAttention, "mla.q_a_norm", model.ClassNorm, A, ew("rmsnorm", float64(t)*float64(r), flopsRMSNorm, 1, 1, ph.Act))
		ops = addOp(ops, StageAttention, "mla.q_b", model.ClassQKV, A, phaseGEMM(ph, t, r, hq*hd))
	} else {
		ops = addOp(ops, StageAttention, "mla.q", model.ClassQKV, A, phaseGEMM(ph, t, c.DModel, hq*hd))
	}
	ops = addOp(ops, StageAttention, "mla.kv_a", model.ClassQKV, A, phaseGEMM(ph, t, c.DModel, kvr+rope))
	ops = addOp(ops, StageAttention, "mla.kv_a_norm", model.ClassNorm, A, ew("rmsnorm", float64(t)*float64(kvr), flopsRMSNorm, 1, 1, ph.Act))
	ops = addOp(ops, StageAttention, "attn.rotary", model.ClassElementwise, A, ew("rotary", float64(t)*float64((hq+1)*rope), flopsRotary, 1, 1, ph.Act))
	if ph.Kind == Decode {
		ops = addOp(ops, StageAttention, "mla.absorb_q", model.ClassQKV, A, withBatch(phaseGEMM(ph, t, nope, kvr), hq))
		ops = addOp(ops, StageAttention, "attn.core", model.ClassAttention, A, model.Attention{Batch: b, Heads: hq, KVHeads: 1, QLen: s, KVLen: ph.Context + s,
			HeadDim: kvr + rope, VDim: kvr, Latent: true, Causal: true, Fused: !ph.Unfused, DType: ph.Act, KVDType: ph.KV})
		ops = addOp(ops, StageAttention, "mla.absorb_o", model.ClassOutProj, A, withBatch(phaseGEMM(ph, t, kvr, v), hq))
	} else {
		keys := b * (ph.Context + s) // every key's latent is up-projected
		ops = addOp(ops, StageAttention, "mla.kv_b", model.ClassQKV, A, phaseGEMM(ph, keys, kvr, hq*(nope+v)))
		ops = addOp(ops, StageAttention, "attn.core", model.ClassAttention, A, model.Attention{Batch: b, Heads: hq, KVHeads: hq, QLen: s, KVLen: ph.Context + s,
			HeadDim: hd, VDim: v, Causal: true, Fused: !ph.Unfused, DType: ph.Act, KVDType: ph.Act})
	}
	ops = addOp(ops, StageAttention, "attn.out", model.ClassOutProj, A, phaseGEMM(ph, t, hq*v, c.DModel))
	return ops
}

// mambaOps appends the Mamba-2 mixers: the input projection to z, x, B,
// C and the step sizes, the convolution and chunked scan (model.Scan; the
// state update when decoding), the gated norm and the output projection.
// TP splits the heads (and the groups, replicated when fewer than TP).
func (m *Model) mambaOps(ops []model.Op, ph Phase) []model.Op {
	c, n := &m.cfg, m.n
	b, s, tp := ph.Batch, ph.Seq, ph.TP
	t := b * s
	sc := m.scan(b, s, tp, ph.Act, ph.KV)
	sc.Prompt = ph.Kind != Decode
	di := sc.Heads * sc.HeadDim
	ops = addOp(ops, StageAttention, "ssm.in_proj", model.ClassQKV, n.mamba, phaseGEMM(ph, t, c.DModel, 2*di+2*sc.Groups*sc.State+sc.Heads))
	ops = addOp(ops, StageAttention, "ssm.scan", model.ClassAttention, n.mamba, sc)
	ops = addOp(ops, StageAttention, "ssm.norm", model.ClassNorm, n.mamba, ew("rmsnorm-gated", float64(t)*float64(di), flopsRMSNorm+flopsSiLUMul, 2, 1, ph.Act))
	ops = addOp(ops, StageAttention, "ssm.out_proj", model.ClassOutProj, n.mamba, phaseGEMM(ph, t, di, c.DModel))
	return ops
}

// moeOps appends the MoE MLPs: the router and its top-k, the routed
// experts as one grouped GEMM each for gate-and-up and for down (see
// model.GroupedGEMM), the shared experts, and, across data-parallel
// attention replicas, the all-to-all dispatch and combine.
//
// The experts are split over EP ranks. The tokens an EP group routes
// are T = t·max(1, EP/TP) (EP/TP replicas of t tokens each), or
// Phase.Group when set (replicas with batches of their own); the busiest
// rank gets Imbalance × the mean T·top_k/EP assignments; they touch the
// expected number of distinct experts among the rank's E/EP under uniform
// routing, (E/EP)·(1 − (1 − k/E)^T) (model.ExpectedExperts). An expert's
// width is split over TP/EP ranks when EP ≤ TP.
func (m *Model) moeOps(ops []model.Op, ph Phase) []model.Op {
	c, n := &m.cfg, m.n
	b, s, tp, ep := ph.Batch, ph.Seq, ph.TP, ph.EP
	t := b * s
	E, k := c.Experts, c.TopK
	// The router runs in its 16-bit storage type under narrower weights
	// (unquantised in the engines, see WeightBytesPerDevice), on the
	// residual stream, as the LM head does.
	router := phaseGEMM(ph, t, c.DModel, E)
	if hw := model.VocabType(ph.Weights); hw != ph.Weights {
		stream := model.CommType(ph.Act)
		router.A, router.B, router.C = stream, hw, stream
	}
	ops = addOp(ops, StageFFN, "moe.router", model.ClassExperts, n.moe, router)
	ops = addOp(ops, StageFFN, "moe.topk", model.ClassExperts, n.moe, ew("softmax-topk", float64(t)*float64(E), flopsSoftmax, 1, 1, ph.Act))
	group, width := t, c.ExpertFFN/max(1, tp/ep)
	if ep > tp {
		group = t * (ep / tp)
		if ph.Group > 0 {
			group = ph.Group
		}
	}
	local := float64(E / ep)
	distinct := model.ExpectedExperts(group, k, E) / float64(ep)
	rowsF := float64(group) * float64(k) / float64(ep) * ph.Imbalance
	rows := int(min(rowsF+0.5, float64(group)*local)) // at most every local expert for every token
	rows = max(rows, 1)
	_ = local
	var comm model.Kernel
	if ep > tp {
		comm = model.Collective{Kind: model.AllToAll, Size: ph.Comm.Bytes(float64(t) / float64(tp) * float64(k) * float64(c.DModel)), Ranks: ep, Tier: model.IntraNode}
		ops = addOp(ops, StageFFN, "moe.dispatch", model.ClassComm, n.moe, comm)
	}
	wd := m.expertDType(ph.Weights)
	gg := func(kk, nn int) model.GroupedGEMM {
		return model.GroupedGEMM{Rows: rows, Experts: distinct, K: kk, N: nn, A: ph.Act, B: wd, C: ph.Act}
	}
	el := float64(rows) * float64(width)
	// The rows are gathered into expert order and, after the down GEMM,
	// summed back into token order: over the rank's own tokens, or, after
	// an all-to-all dispatch, over the rows it received.
	tok := t
	if comm != nil {
		tok = rows
	}
	ops = addOp(ops, StageFFN, "moe.permute", model.ClassElementwise, n.moe, model.MoEPermute(tok, rows, c.DModel, ph.Act, ph.Act))
	if gated(c.Activation) {
		ops = addOp(ops, StageFFN, "expert.gate_up", model.ClassExperts, n.moe, gg(c.DModel, 2*width))
		ops = addOp(ops, StageFFN, "expert.act", model.ClassElementwise, n.moe, ew(c.Activation, el, flopsSiLUMul, 2, 1, ph.Act))
	} else {
		ops = addOp(ops, StageFFN, "expert.up", model.ClassExperts, n.moe, gg(c.DModel, width))
		fl := float64(flopsGELU)
		if c.Activation == "relu" || c.Activation == "relu2" {
			fl = flopsReLU + 1
		}
		ops = addOp(ops, StageFFN, "expert.act", model.ClassElementwise, n.moe, ew(c.Activation, el, fl, 1, 1, ph.Act))
	}
	ops = addOp(ops, StageFFN, "expert.down", model.ClassExperts, n.moe, gg(width, c.DModel))
	ops = addOp(ops, StageFFN, "moe.finalize", model.ClassElementwise, n.moe, model.MoEFinalize(tok, rows, c.DModel, ph.Act))
	if comm != nil {
		ops = addOp(ops, StageFFN, "moe.combine", model.ClassComm, n.moe, comm)
	}
	if c.SharedExperts > 0 {
		ops = m.ffnOps(ops, &sharedNames, model.ClassExperts, n.moe, 1, t, c.SharedExperts*c.ExpertFFN/tp, ph)
	}
	if c.SharedExpertGate {
		// sigmoid(x·w_gate)·shared(x): a d_model → 1 projection, replicated
		// on every rank, and the scaling (vLLM's Qwen3-Next
		// shared_expert_gate, a ReplicatedLinear).
		ops = addOp(ops, StageFFN, "shared.expert_gate", model.ClassExperts, n.moe, phaseGEMM(ph, t, c.DModel, 1))
		ops = addOp(ops, StageFFN, "shared.expert_scale", model.ClassElementwise, n.moe, ew("sigmoid-mul", float64(t)*float64(c.DModel), flopsSiLUMul, 2, 1, ph.Act))
	}
	return ops
}
