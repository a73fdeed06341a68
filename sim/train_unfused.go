package sim

import (
	"strings"

	"github.com/perfsim/perfsim/model"
)

// This file prices two settings of a transformer's training step that
// the workload's op lists leave out: the attention core as Megatron-LM
// ran it before FlashAttention (Scenario.UnfusedAttention), and dropout
// (Scenario.Dropout).
//
// Megatron-LM's CoreAttention (megatron/model/transformer.py, v2.x to
// v3.0, 2021–2022; the runs of Narayanan et al. 2021 and Korthikanti et
// al. 2022) computes, per micro-batch and TP rank, with np = heads/TP:
//
//   - torch.baddbmm of Q and Kᵀ into scores [b·np, sq, sk] in the
//     activations' type, every pair (the causal mask is applied after);
//   - FusedScaleMaskSoftmax (scaled_upper_triang_masked_softmax_cuda for
//     a causal mask): the scores read, the probabilities written;
//   - attention_dropout on the probabilities (torch dropout: read, written,
//     and a one-byte mask written);
//   - torch.bmm of the probabilities and V.
//
// Autograd's backward: bmm's two products (dP = dO·Vᵀ, written [b·np,
// sq, sk]; dV = Pᵀ·dO), dropout's (dP and the mask read, dP written),
// the fused softmax's (dP and the probabilities read, dS written), and
// baddbmm's two (dQ = dS·K, dK = dSᵀ·Q).
//
// Hidden dropout is Megatron-LM's bias-dropout-add fusion before each
// residual add (bias_dropout_add_fused_train, a jit-fused kernel): the
// forward adds the one-byte mask it writes to the residual add's traffic;
// the backward runs its own pass, the gradient and the mask read and the
// gradient written. Dropout inside a fused attention kernel (FlashAttention
// draws its mask in registers) is not priced: no measurement of its cost
// was found.

// dropoutMaskBytes is the size of a dropout mask element: PyTorch's
// native_dropout returns a bool mask (aten/src/ATen/native/cuda/Dropout.cu,
// dropout_cuda: mask of kBool).
const dropoutMaskBytes = 1

// softmaxWork is the arithmetic per score of a scaled, masked softmax:
// scale, max, subtract, exponentiate, sum, divide.
const softmaxWork = 6

// unfusedAttention returns ops with each fused attention op replaced by
// the kernels of Megatron-LM's unfused core attention (see above), forward
// or backward (whose attention op counts two launches a layer: the
// forward's count is half of it), with dropout on the probabilities when
// dropout is on; the FLOPs the replaced ops counted, which the model's
// FLOPs keep (model FLOPs do not depend on the implementation), and those
// of the products that replace them (every pair, the mask applied after).
func unfusedAttention(ops []model.Op, backward, dropout bool) (out []model.Op, fused, run model.FLOPs) {
	out = ops[:0:0]
	for _, o := range ops {
		a, ok := o.Kernel.(model.Attention)
		if !ok || !a.Fused {
			out = append(out, o)
			continue
		}
		fused += model.FLOPs(float64(a.FLOPs()) * float64(o.Count))
		count := o.Count
		if backward {
			count = (o.Count + 1) / 2
		}
		base := strings.TrimSuffix(o.Name, ".bwd")
		batch := a.Batch * a.Heads
		q, k, d, v := a.QLen, a.KVLen, a.HeadDim, a.ValueDim()
		// In 16 bits under an 8- or 4-bit step: fp8 training casts the
		// linear layers' inputs only (Transformer Engine's fp8_autocast
		// covers its te.Linear modules; its UnfusedDotProductAttention
		// runs in the activations' 16-bit type).
		dt := model.CommType(a.DType)
		e := dt.Size()
		n := float64(batch) * float64(q) * float64(k) // scores, every pair
		gemm := func(name string, m, kk, nn int) model.Op {
			g := model.GEMM{M: m, K: kk, N: nn, Batch: batch, A: dt, B: dt, C: dt}
			run += model.FLOPs(float64(g.FLOPs()) * float64(count))
			return model.Op{Name: name, Stage: o.Stage, Class: o.Class, Count: count, Kernel: g}
		}
		ew := func(name string, work, read, written float64) model.Op {
			return model.Op{Name: name, Stage: o.Stage, Class: o.Class, Count: count,
				Kernel: model.Elementwise{Kind: name, Elements: n, Work: model.FLOPs(work * n),
					Read: model.Bytes(read * n), Written: model.Bytes(written * n)}}
		}
		if !backward {
			out = append(out, gemm(base+".scores", q, d, k),
				ew(base+".softmax", softmaxWork, e, e))
			if dropout {
				out = append(out, ew(base+".dropout", 1, e, e+dropoutMaskBytes))
			}
			out = append(out, gemm(base+".context", q, k, v))
			continue
		}
		out = append(out, gemm(base+".context.bwd_probs", q, v, k), gemm(base+".context.bwd_values", k, q, v))
		if dropout {
			out = append(out, ew(base+".dropout.bwd", 1, e+dropoutMaskBytes, e))
		}
		out = append(out, ew(base+".softmax.bwd", 3, 2*e, e),
			gemm(base+".scores.bwd_queries", q, k, d), gemm(base+".scores.bwd_keys", k, q, d))
	}
	return out, fused, run
}

// hiddenDropout adds Megatron-LM's hidden dropout to a pass's ops (laid
// out for the run, which hiddenDropout may change in place): the
// forward's residual adds write a one-byte mask an element besides their
// output; the backward gains a pass per residual add, the gradient and
// the mask read and the gradient written.
func hiddenDropout(ops []model.Op, backward bool) []model.Op {
	for i, o := range ops {
		r, ok := o.Kernel.(model.Elementwise)
		if !ok || backward || o.Name != "residual" {
			continue
		}
		r.Written += model.Bytes(dropoutMaskBytes * r.Elements)
		r.Work += model.FLOPs(r.Elements)
		ops[i].Kernel = r
	}
	if !backward {
		return ops
	}
	for _, o := range ops {
		r, ok := o.Kernel.(model.Elementwise)
		if !ok || o.Name != "residual.bwd" {
			continue
		}
		// The residual's backward lists two passes an add (its two
		// inputs' gradients); dropout runs once an add.
		e := float64(r.Written) / r.Elements
		return append(ops, model.Op{Name: "residual.dropout.bwd", Stage: o.Stage, Class: o.Class, Count: (o.Count + 1) / 2,
			Kernel: model.Elementwise{Kind: "dropout_bwd", Elements: r.Elements, Work: model.FLOPs(r.Elements),
				Read: model.Bytes((e + dropoutMaskBytes) * r.Elements), Written: model.Bytes(e * r.Elements)}})
	}
	return ops
}
