package sim

import (
	"math"
	"strings"

	"github.com/perfsim/perfsim/model"
)

// This file prices the work of a training step that the forward and
// backward op lists leave out: the fused attention's backward running
// slower than its forward, the dense gradient of an embedding lookup, and
// the framework's passes over the gradient buffer each step.

// flashBwdSeq and flashBwdRatio are the backward pass's throughput over
// the forward's of cuDNN's fused attention (the backend Transformer
// Engine selects on Hopper: transformer_engine/pytorch/attention.py,
// get_attention_backend, "Disabling FlashAttention to give FusedAttention
// preference on Hopper+ for performance reasons"), both counted as
// FlashAttention's benchmarks count them (the backward's FLOPs 2.5 times
// the forward's, recomputation included). Source: Shah et al.,
// "FlashAttention-3" (2024), Figures 5 and 6: H100 80GB SXM5, bf16, no
// causal mask, batch × sequence 16k tokens, cuDNN's bars, TFLOP/s
// forward / backward at sequence 512, 1k, 2k, 4k, 8k, 16k:
//
//	head dim 64:  335/266 373/348 395/395 408/417 412/432 413/433
//	head dim 128: 497/305 574/408 617/465 609/499 600/518 595/516
//
// The same figures give FlashAttention-2 at head dim 128 ratios of
// 0.69–0.87 and FlashAttention-3 0.64–0.87 over the same lengths: the
// backward's five products, its dQ accumulation and its lower occupancy
// run slower than the forward's two products whatever the kernel.
var (
	flashBwdSeq   = [...]float64{512, 1024, 2048, 4096, 8192, 16384}
	flashBwdRatio = [2][6]float64{
		{266. / 335, 348. / 373, 395. / 395, 417. / 408, 432. / 412, 433. / 413}, // head dim 64
		{305. / 497, 408. / 574, 465. / 617, 499. / 609, 518. / 600, 516. / 595}, // head dim 128
	}
)

// FlashBackwardRatio returns the throughput of a fused attention's
// backward pass over its forward's (FlashAttention's FLOPs convention) at
// a sequence length and head dimension, interpolated in log₂ of each
// between the measured points (flashBwdRatio) and held at the nearest
// outside them.
func FlashBackwardRatio(seq, headDim int) float64 {
	at := func(row *[6]float64) float64 {
		x := math.Log2(math.Max(float64(seq), 1))
		lo, hi := math.Log2(flashBwdSeq[0]), math.Log2(flashBwdSeq[len(flashBwdSeq)-1])
		if x <= lo {
			return row[0]
		}
		if x >= hi {
			return row[len(row)-1]
		}
		i := int(x - lo) // the points are a power of two apart
		f := x - lo - float64(i)
		return row[i] + f*(row[i+1]-row[i])
	}
	r64, r128 := at(&flashBwdRatio[0]), at(&flashBwdRatio[1])
	switch d := float64(headDim); {
	case d <= 64:
		return r64
	case d >= 128:
		return r128
	default:
		f := math.Log2(d / 64)
		return r64 + f*(r128-r64)
	}
}

// embeddingGradTime prices the dense weight gradient of one micro-batch's
// embedding lookup on the first stage: PyTorch's embedding backward
// (embedding_dense_backward) zero-fills a gradient the size of this
// rank's table (vocabulary / TP rows, the weights' type) and scatter-adds
// the tokens' rows into it (the gather row already priced), and
// Megatron-LM's gradient hook adds it into the main gradient
// (megatron/core/distributed/distributed_data_parallel.py r0.8,
// param_hook: param.main_grad.add_(param.grad.data)): the table written
// once, then read with the main gradient and the main gradient written.
// 0 unless the forward looks the tokens up (a gather) and the model's
// own layers train (the backward computes their weight gradients; ops of
// class other, such as adapters, do not count: a frozen base, as under
// LoRA, leaves its embedding without a gradient).
func (r *runner) embeddingGradTime(fwd, bwd []model.Op) model.Seconds {
	if r.shape.Vocab == 0 || r.shape.DModel == 0 {
		return 0
	}
	lookup, trains := false, false
	for i := range fwd {
		if _, ok := fwd[i].Kernel.(model.Gather); ok && fwd[i].Class == model.ClassEmbedding {
			lookup = true
		}
	}
	for i := range bwd {
		if _, ok := bwd[i].Kernel.(model.GEMM); ok && bwd[i].Class != model.ClassOther && strings.HasSuffix(bwd[i].Name, ".wgrad") {
			trains = true
		}
	}
	if !lookup || !trains {
		return 0
	}
	n := float64(r.shape.Vocab) / float64(r.sc.TP) * float64(r.shape.DModel)
	w, g := r.sc.Weights.Size(), r.gradType().Size()
	k := model.Elementwise{Kind: "embedding_grad", Elements: n, Work: model.FLOPs(n),
		Read: model.Bytes(n * (w + g)), Written: model.Bytes(n * (w + g))}
	return r.c.p.StreamCost(k.Work, k.Read+k.Written, r.gradType()).Time
}

// gradBufferOps returns the passes Megatron-LM's data-parallel wrapper
// makes each step over this rank's whole gradient buffer of params
// parameters (megatron/core/distributed/param_and_grad_buffer.py, r0.8),
// on the compute stream:
//
//   - reset: grad_data.zero_() before the first micro-batch (one write);
//   - start_grad_sync, per bucket when its last gradient is ready:
//     grad_data.norm(p=2), the NaN check that
//     --check-for-nan-in-loss-and-grad turns on by default (one read), and,
//     with more than one data-parallel rank, grad_data *=
//     gradient_scaling_factor, 1/DP unless --ddp-average-in-collective
//     (default off; one read and one write).
func (r *runner) gradBufferOps(params float64) []model.Op {
	g := r.gradType().Size()
	if r.sc.ZeRO >= 2 {
		params /= float64(r.sc.DP * r.sc.CP) // the gradients are sharded
	}
	op := func(name string, flops, read, written float64) model.Op {
		return model.Op{Name: name, Stage: "optimizer", Class: model.ClassOptimizer, Count: 1,
			Kernel: model.Elementwise{Kind: name, Elements: params, Work: model.FLOPs(flops * params),
				Read: model.Bytes(read * g * params), Written: model.Bytes(written * g * params)}}
	}
	ops := []model.Op{op("grad.zero", 0, 0, 1), op("grad.nan_check", 2, 1, 0)}
	if r.sc.DP*r.sc.CP > 1 {
		ops = append(ops, op("grad.scale", 1, 1, 1))
	}
	return ops
}

// sustainedStretch is what a training step adds to its matrix kernels'
// time per unit of it: 1/s − 1 for the device's sustained share s
// (model.PowerParams.Sustained, which run holds the processor's matrix
// kernels at: PowerParams.Held). A step keeps the tensor cores busy for
// seconds, the regime in which the power limiter has lowered the clocks;
// the kernel tables the costs come from timed most shapes in bursts of a
// few milliseconds, before it acts. A --power-cap's own stretch is priced
// from this clock (model.Processor.CappedMatrix), not on top of it.
func (r *runner) sustainedStretch() model.Seconds {
	s := r.c.p.PowerModel.Held
	if !(s > 0 && s < 1) {
		return 0
	}
	return model.Seconds(1/s - 1)
}

// matrixPerLayer sums a pass's matrix kernels (GEMMs, grouped GEMMs,
// attention): per layer those run by every layer, and in all those run
// fewer times (the output layer).
func matrixPerLayer(p *PhaseReport, L int) (layer, rest model.Seconds) {
	for i := range p.Ops {
		o := &p.Ops[i]
		switch o.Kind {
		case kindGEMM, kindGrouped, kindAttention:
		default:
			continue
		}
		if o.Count >= L {
			layer += o.Time
		} else if o.Class != model.ClassEmbedding {
			rest += o.Time
		}
	}
	return layer / model.Seconds(max(L, 1)), rest
}

// sustain stretches the matrix kernels of a layer's forward and backward
// (with ubF and ubB, what TP overlap's split GEMMs add to them), the
// output layer's, and the tensor-parallel blocks' GEMMs the collectives
// hide behind, by sustainedStretch. lc's backward already holds the fused
// attention's recomputation and slower rate, matrix work beyond the
// pass's attention.
func (r *runner) sustain(lc *layerCost, blocks []tpBlock, ubF, ubB model.Seconds, fwd, bwd *PhaseReport, L int) {
	k := r.sustainedStretch()
	if k <= 0 {
		return
	}
	mF, lF := matrixPerLayer(fwd, L)
	mB, lB := matrixPerLayer(bwd, L)
	_, passAttnB, _, _ := perLayer(bwd, L)
	for i := range blocks {
		b := &blocks[i]
		b.colF, b.rowF = b.colF*(1+k), b.rowF*(1+k)
		b.colD, b.colW = b.colD*(1+k), b.colW*(1+k)
		b.rowD, b.rowW = b.rowD*(1+k), b.rowW*(1+k)
	}
	lc.fwd += k * (mF + ubF)
	lc.bwd += k * (mB + ubB + lc.attnB - passAttnB)
	lc.attnF *= 1 + k
	lc.attnB *= 1 + k
	lc.last += k * (lF + lB)
}
