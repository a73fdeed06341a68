package sim

import (
	"math"

	"github.com/perfsim/perfsim/model"
)

// trainingScaled simulates one optimizer step of a transformer under a
// TP × CP × EP × DP × PP layout on a two-tier system. What overlaps with
// what:
//
//   - Tensor-parallel collectives (tpComm, train_tp.go): forward, exposed
//     between the GEMMs that produce and consume them; backward, the
//     column-parallel input gradient's reduction beside the weight
//     gradient (Megatron-LM's asynchronous communication). With
//     TPOverlap, Transformer Engine's userbuffers pair each collective
//     with its own GEMM, chunk by chunk; what exceeds the GEMM is
//     exposed.
//   - Context-parallel KV blocks travel around the ring while the
//     previous block's attention runs: each of the CP−1 steps exposes
//     what its transfer takes beyond one block of attention.
//   - Expert-parallel all-to-alls (dispatch and combine, forward and
//     backward) are exposed.
//   - Pipeline point-to-point sends are exposed in 1F1B and GPipe, and
//     hidden behind compute by the interleaved schedule (Megatron-LM's
//     overlap_p2p_comm).
//   - The data-parallel gradient reduction runs bucket by bucket beside
//     the last micro-batch's backward pass; the parameter all-gather of
//     the distributed optimizer beside the next step's first forward
//     (Megatron-LM's overlap_grad_reduce and overlap_param_gather); the
//     last bucket of each is exposed, and so is whatever the pass cannot
//     cover. ZeRO-2 reduces its partitioned gradients after every
//     micro-batch, beside that micro-batch's backward; ZeRO-3 gathers the
//     weights and reduces the gradients at every micro-batch, beside its
//     forward and backward.
//   - Compute that shares the device with an overlapped collective slows
//     by overlapSlowdown for as long as they overlap.
//
// NoOverlap exposes every collective.
func (r *runner) trainingScaled() error {
	sc, rep := r.sc, r.rep
	m := sc.GlobalBatch / (sc.Batch * sc.DP)
	tr := &TrainingResult{MicroBatches: m}
	rep.Training = tr
	L := max(r.shape.Layers, 1)
	seq := sc.Seq / sc.CP
	tokens := sc.Batch * seq

	ph := r.phase(TrainForward)
	ph.Seq = seq
	raw, err := r.ops(ph, nil)
	if err != nil {
		return err
	}
	fwd, tpCount, tpSize := r.layoutOps(raw, tokens)
	// The FLOPs of the fused attention an unfused core replaces, and
	// those its kernels run, per pass: the model's FLOPs are the fused
	// kernel's whatever runs them.
	var fusedF, fusedB, runF, runB model.FLOPs
	if sc.Dropout > 0 {
		fwd = hiddenDropout(fwd, false)
	}
	if sc.UnfusedAttention {
		fwd, fusedF, runF = unfusedAttention(fwd, false, sc.Dropout > 0)
	}
	tr.Forward = r.c.pass("forward", fwd)
	ph.Kind = TrainBackward
	raw, err = r.ops(ph, nil)
	if err != nil {
		return err
	}
	bwd, _, _ := r.layoutOps(raw, tokens)
	if sc.Dropout > 0 {
		bwd = hiddenDropout(bwd, true)
	}
	if sc.UnfusedAttention {
		bwd, fusedB, runB = unfusedAttention(bwd, true, sc.Dropout > 0)
	}
	tr.Backward = r.c.pass("backward", bwd)

	var lc layerCost
	lc.fwd, lc.attnF, lc.first, lc.last = perLayer(&tr.Forward, L)
	var f1, l1 model.Seconds
	lc.bwd, lc.attnB, f1, l1 = perLayer(&tr.Backward, L)
	lc.first += f1
	lc.last += l1
	lc.fused = !sc.UnfusedAttention
	for _, o := range fwd {
		if a, ok := o.Kernel.(model.Attention); ok && !a.Fused {
			lc.fused = false
		}
	}
	if lc.fused {
		// FlashAttention's backward recomputes the scores and
		// probabilities, one of the forward's two products: half the
		// forward attention again (Dao et al., "FlashAttention", 2022,
		// Algorithm 4; hardware work, not model FLOPs).
		lc.bwd += lc.attnF / 2
		lc.attnB += lc.attnF / 2
		// The backward runs at a lower rate than the forward
		// (FlashBackwardRatio, train_kernels.go).
		hd := r.shape.HeadDim
		if hd == 0 && r.shape.Heads > 0 {
			hd = r.shape.DModel / r.shape.Heads
		}
		slow := lc.attnB * model.Seconds(1/FlashBackwardRatio(seq, hd)-1)
		lc.bwd += slow
		lc.attnB += slow
	}
	lc.first += r.embeddingGradTime(fwd, bwd)
	lc.last += r.lossTime(tokens) + r.lossSync()
	blocks, nb := tpBlocks(&tr.Forward, &tr.Backward, L)
	var ubF, ubB model.Seconds
	for i, a := range r.ubChunks(fwd, bwd) {
		blocks[i].colF += a.colF
		blocks[i].rowF += a.rowF
		blocks[i].rowD += a.rowD
		ubF += a.colF + a.rowF
		ubB += a.rowD
	}
	lc.fwd += ubF
	lc.bwd += ubB
	r.sustain(&lc, blocks[:], ubF, ubB, &tr.Forward, &tr.Backward, L)
	tc := r.tpTime(blocks, nb, tpCount, tpSize)
	lc.tpF, lc.tpB = tc.fwd, tc.bwd
	over := tc.overF + tc.overB
	if rc := recomputed(fwd, sc.Recompute); len(rc) > 0 {
		p := r.c.pass("recompute", rc)
		tr.Recompute = &p
		lc.rc, _, _, _ = perLayer(&p, L)
		if k := r.sustainedStretch(); k > 0 {
			m, _ := matrixPerLayer(&p, L)
			lc.rc += k * m
		}
		if sc.Recompute == RecomputeFull {
			// The recomputed forward communicates as the forward did.
			lc.tpRc = lc.tpF
			over += tc.overF
		}
	}
	var b Breakdown

	// One layer's exposed communication and overlap slowdown, per
	// micro-batch.
	tpExp := lc.tpF + lc.tpB + lc.tpRc
	cpExp, cpOver := r.cpComm(&lc, tokens)
	over += cpOver
	epExp := r.epComm(tokens)

	// Pipeline sends: the activation of a micro-batch forward and its
	// gradient backward, once per model chunk.
	var ppExp model.Seconds
	if sc.PP > 1 && (sc.Schedule != Interleaved || sc.NoOverlap) {
		size := sc.CommType().Bytes(float64(tokens) * float64(r.shape.DModel))
		if sc.SP {
			size /= model.Bytes(sc.TP)
		}
		ppExp = 2 * model.Seconds(sc.VirtualStages) * r.p2p(size, sc.PP, sc.TP*sc.CP*sc.DP)
	}

	// Chunk times per micro-batch, stage by stage: each chunk's layers
	// (ChunkLayers), the embedding in the first chunk, the output layer
	// and the loss in the last.
	sp, err := newSplit(L, sc.PP, sc.VirtualStages, sc.EmbeddingSlot, sc.LossSlot)
	if err != nil {
		return err
	}
	var buf [256]model.Seconds
	times := buf[:0]
	if sc.PP*sp.v > len(buf) {
		times = make([]model.Seconds, 0, sc.PP*sp.v)
	}
	times = chunkTimes(times, sp, lc.fwd+lc.bwd+lc.rc, tpExp+cpExp+epExp+over, ppExp, lc.first, lc.last)
	w, worst := 0, model.Seconds(-1)
	for i := range sc.PP {
		var stage model.Seconds
		for _, t := range times[i*sp.v : (i+1)*sp.v] {
			stage += t
		}
		if stage > worst {
			w, worst = i, stage
		}
	}
	pipe, bubble := pipelineChunks(times, sc.PP, sp.v, m, sc.Schedule)

	// The breakdown is the slowest stage's.
	ell := model.Seconds(sp.stage(w))
	var extra model.Seconds
	if w == 0 {
		extra += lc.first
	}
	if w == sc.PP-1 {
		extra += lc.last
	}
	mm := model.Seconds(m)
	b.Compute = mm * (ell*(lc.fwd+lc.bwd+lc.rc) + extra)
	b.TPComm = mm * ell * tpExp
	b.CPComm = mm * ell * cpExp
	b.EPComm = mm * ell * epExp
	b.PPComm = mm * ppExp
	b.Overlap = mm * ell * over
	b.Bubble = bubble

	// Data parallelism and the optimizer.
	dense, experts := r.rankParams()
	dpExp, dpOver := r.dpComm(dense, experts, m, ell*lc.fwd, ell*(lc.bwd+lc.rc))
	b.DPComm = dpExp
	b.Overlap += dpOver
	opt := r.c.pass("optimizer", append(r.optimizerOpsFor(dense, experts), r.gradBufferOps(dense+experts)...))
	tr.Optimizer = opt
	b.Optimizer = opt.Time
	step := pipe + dpExp + dpOver + opt.Time
	if lr := sc.LoaderRate; lr > 0 {
		if floor := model.Seconds(float64(sc.GlobalBatch) / lr); floor > step {
			b.Input, step, tr.LoaderBound = floor-step, floor, true
		}
	}
	tr.Breakdown = &b
	tr.StepTime = step
	ratio := func(a, c model.Seconds) float64 {
		if c <= 0 {
			return 1
		}
		return float64(a / c)
	}
	sum := tr.Forward.Time + tr.Backward.Time
	tr.StepTimeLow = model.Seconds(float64(step) * ratio(tr.Forward.Low+tr.Backward.Low, sum))
	tr.StepTimeHigh = model.Seconds(float64(step) * ratio(tr.Forward.High+tr.Backward.High, sum))

	// Model FLOPs over all devices: each pass above is one TP rank's share
	// of the whole model for one micro-batch of one CP shard.
	per := float64(sc.TP*sc.CP) * float64(m) * float64(sc.DP)
	mf := float64(matrixWork(tr.Forward.Ops)+matrixWork(tr.Backward.Ops)) * per
	mf += float64(fusedF+fusedB-runF-runB) * per
	hf := mf
	if p := tr.Recompute; p != nil {
		// Either recomputation runs the attention core again, counted
		// as the forward's.
		hf += float64(matrixWork(p.Ops)+fusedF-runF) * per
	}
	r.finishTraining(tr, step, mf, hf)
	rep.Memory = r.scaledMemory(lc.fused, m)
	return nil
}

// chunkTimes appends to dst each model chunk's time per micro-batch,
// stage by stage: its layers (sp) at unit of compute and comm of exposed
// communication and slowdown each, its share of the stage's pipeline
// sends pp, the embedding (first) in the first stage's first chunk and
// the output layer and loss (last) in the last stage's last.
func chunkTimes(dst []model.Seconds, sp split, unit, comm, pp, first, last model.Seconds) []model.Seconds {
	ppChunk := pp / model.Seconds(sp.v)
	for i := range sp.pp {
		for j := range sp.v {
			n := model.Seconds(sp.chunk(i, j))
			t := n*unit + n*comm + ppChunk
			if i == 0 && j == 0 {
				t += first
			}
			if i == sp.pp-1 && j == sp.v-1 {
				t += last
			}
			dst = append(dst, t)
		}
	}
	return dst
}

// lossRead and lossWritten are the memory traffic of the cross-entropy
// loss per logit, Megatron-LM's unfused vocab-parallel cross entropy
// (megatron/core/tensor_parallel/cross_entropy.py, core_r0.8.0; the
// fused one is off by default, --cross-entropy-loss-fusion), pass by
// pass:
//
//   - calculate_logits_max: the 16-bit logits cast to fp32 (.float():
//     read 2, written 4), their maximum (torch.max: read 4);
//   - calculate_predicted_logits: the maximum subtracted in place (-=:
//     read 4, written 4), then exponentiated in place, a second kernel
//     (torch.exp(out=): read 4, written 4), summed (read 4);
//   - calculate_cross_entropy_loss: normalised in place (div_: read 4,
//     written 4), kept for the backward;
//   - backward: the softmax times the incoming gradient in place (mul_:
//     read 4, written 4), and autograd's cast of that fp32 gradient back
//     to the logits' 16 bits (.float()'s backward: read 4, written 2).
//
// 30 bytes read and 22 written, 52 in all (44 until 2026-11-26, which
// counted the subtraction and the exponentiation as one pass). The
// target's gather and its one-hot update touch a logit per token.
const (
	lossRead    = 2 + 4 + 4 + 4 + 4 + 4 + 4 + 4
	lossWritten = 4 + 4 + 4 + 4 + 4 + 2
)

// lossTime prices the cross-entropy loss over one micro-batch's logits
// (tokens × vocab / TP) on the last stage, forward and backward.
func (r *runner) lossTime(tokens int) model.Seconds {
	if r.shape.Arch != Decoder || r.shape.Vocab == 0 {
		return 0
	}
	n := float64(tokens) * float64(r.shape.Vocab) / float64(r.sc.TP)
	k := model.Elementwise{Kind: "cross_entropy", Elements: n, Work: model.FLOPs(8 * n),
		Read: model.Bytes(lossRead * n), Written: model.Bytes(lossWritten * n)}
	return r.c.p.StreamCost(k.Work, k.Read+k.Written, model.FP32).Time
}

// lossSync prices what Megatron-LM's GPT loss function does after each
// micro-batch's loss on the last stage (pretrain_gpt.py loss_func,
// core_r0.8.0): the loss and its token count (two fp32) all-reduced over
// the context-parallel group, then, for logging, over the data-parallel
// group, each a blocking torch.distributed.all_reduce the next kernel
// waits for (and a NaN check between them that waits on the host).
func (r *runner) lossSync() model.Seconds {
	sc := r.sc
	if r.shape.Arch != Decoder || r.shape.Vocab == 0 {
		return 0
	}
	const size = 2 * 4 // bytes: the loss and the tokens, fp32
	var t model.Seconds
	if sc.CP > 1 {
		t += r.comm(model.AllReduce, size, r.group(sc.CP, sc.TP))
	}
	if sc.DP > 1 {
		t += r.comm(model.AllReduce, size, r.group(sc.DP, sc.TP*sc.CP))
	}
	return t
}

// finishTraining fills the rates of tr from its step time and FLOPs.
func (r *runner) finishTraining(tr *TrainingResult, step model.Seconds, mf, hf float64) {
	sc := r.sc
	tr.ModelFLOPs, tr.HardwareFLOPs = model.FLOPs(mf), model.FLOPs(hf)
	d, _ := r.c.p.Supported(sc.Act)
	peak, _ := r.c.p.Peak(d)
	devs := float64(r.rep.Devices)
	if step > 0 && peak > 0 {
		denom := float64(step) * devs * float64(peak)
		tr.MFU, tr.HFU = mf/denom, hf/denom
	}
	samples := float64(sc.GlobalBatch)
	tokens := samples * float64(sc.Seq)
	if r.shape.Arch == CNN || r.shape.Arch == Vision {
		tokens = samples
	}
	if step > 0 {
		tr.SamplesPerSecond = samples / float64(step)
		tr.TokensPerSecond = tokens / float64(step)
	}
	tr.TimeToTrain = timeToTrain(sc.Tokens, tokens, step)
}

// timeToTrain returns the time a budget of tokens (an image model's:
// images) takes at perStep a step of the given time: whole optimizer
// steps, the last one run in full however little of the budget it still
// needs (MLPerf counts CEIL(samples/GBS) steps); 0 without a budget.
func timeToTrain(budget, perStep float64, step model.Seconds) model.Seconds {
	if !(budget > 0 && perStep > 0 && step > 0) {
		return 0
	}
	return model.Seconds(math.Ceil(budget/perStep)) * step
}

// cpComm returns one layer's exposed context-parallel communication per
// micro-batch and the compute it slows: the KV blocks of the ring
// attention, K and V of this rank's shard (forward) and their gradients
// too (backward), CP−1 steps each, each beside one block of attention.
func (r *runner) cpComm(lc *layerCost, tokens int) (exposed, over model.Seconds) {
	sc := r.sc
	if sc.CP <= 1 {
		return 0, 0
	}
	kvh := max(r.shape.KVHeads, 1) / sc.TP
	if kvh < 1 {
		kvh = 1
	}
	kv := sc.Act.Bytes(2 * float64(tokens) * float64(kvh) * float64(r.shape.HeadDim))
	step := r.p2p(kv, sc.CP, sc.TP)
	steps := model.Seconds(sc.CP - 1)
	cp := model.Seconds(sc.CP)
	blockF, blockB := lc.attnF/cp, lc.attnB/cp
	if sc.NoOverlap {
		return steps * 3 * step, 0
	}
	k := model.Seconds(r.overlapSlowdown())
	exposed = steps * (max(0, step-blockF) + max(0, 2*step-blockB))
	over = steps * k * (min(step, blockF) + min(2*step, blockB))
	return exposed, over
}

// epComm returns one layer's expert-parallel all-to-alls per micro-batch:
// dispatch and combine, forward and backward, each moving every token's
// hidden state to its top-k experts' ranks.
func (r *runner) epComm(tokens int) model.Seconds {
	sc := r.sc
	if sc.EP <= 1 || r.shape.Experts == 0 {
		return 0
	}
	t := float64(tokens)
	if sc.SP {
		t /= float64(sc.TP)
	}
	size := sc.CommType().Bytes(t * float64(max(r.shape.TopK, 1)) * float64(r.shape.DModel))
	return 4 * r.comm(model.AllToAll, size, r.group(sc.EP, sc.TP*sc.CP))
}

// dpComm returns the exposed data-parallel communication of a step and
// the compute it slows. dense and experts are this rank's parameters; fwd
// and bwd are one micro-batch's forward and backward (with
// recomputation) on this stage, the windows the collectives overlap.
func (r *runner) dpComm(dense, experts float64, m int, fwd, bwd model.Seconds) (exposed, over model.Seconds) {
	sc := r.sc
	n := sc.DP * sc.CP
	if n <= 1 {
		return 0, 0
	}
	g := r.group(n, sc.TP)
	ge := r.group(max(n/sc.EP, 1), sc.TP*sc.EP)
	gb, wb := r.gradType(), sc.Weights
	coll := func(k model.CollectiveKind, d model.DType) model.Seconds {
		t := r.comm(k, d.Bytes(dense), g)
		if experts > 0 && ge.Ranks > 1 {
			t += r.comm(k, d.Bytes(experts), ge)
		}
		return t
	}
	var grads, params model.Seconds
	switch {
	case sc.ZeRO == 0:
		grads = coll(model.AllReduce, gb)
	case sc.ZeRO == 1:
		grads = coll(model.ReduceScatter, gb)
		params = coll(model.AllGather, wb)
	case sc.ZeRO == 2:
		// Partitioned gradients are reduced after every backward, not
		// once per step: each rank keeps only its partition's
		// accumulated gradients ("gradient reduction is required after
		// every backward because of gradient partitioning", DeepSpeed
		// maintainer, github deepspeedai/DeepSpeed issue #2252). Each
		// micro-batch's reduce-scatter runs beside its backward; the
		// weights are gathered once, beside the first forward.
		rs, ag := coll(model.ReduceScatter, gb), coll(model.AllGather, wb)
		if sc.NoOverlap {
			return model.Seconds(m)*rs + ag, 0
		}
		frac := model.Seconds(math.Min(1, ddpBucket(n)/math.Max(dense+experts, 1)))
		k := model.Seconds(r.overlapSlowdown())
		mm := model.Seconds(m)
		exposed = mm*max(frac*rs, rs-bwd) + max(frac*ag, ag-fwd)
		over = k * (mm*min(rs, bwd) + min(ag, fwd))
		return exposed, over
	default:
		// Every micro-batch gathers the weights for its forward and its
		// backward and reduce-scatters its gradients.
		ag, rs := coll(model.AllGather, wb), coll(model.ReduceScatter, gb)
		if sc.NoOverlap {
			return model.Seconds(m) * (2*ag + rs), 0
		}
		frac := model.Seconds(math.Min(1, ddpBucket(n)/math.Max(dense+experts, 1)))
		k := model.Seconds(r.overlapSlowdown())
		mm := model.Seconds(m)
		exposed = mm * (max(frac*ag, ag-fwd) + max(frac*(ag+rs), ag+rs-bwd))
		over = mm * k * (min(ag, fwd) + min(ag+rs, bwd))
		return exposed, over
	}
	if sc.NoOverlap {
		return grads + params, 0
	}
	frac := model.Seconds(math.Min(1, r.endBucket(n)/math.Max(dense+experts, 1)))
	k := model.Seconds(r.overlapSlowdown())
	exposed = max(frac*grads, grads-bwd) + max(frac*params, params-fwd)
	over = k * (min(grads, bwd) + min(params, fwd))
	return exposed, over
}

// endBucket returns the parameters of the data-parallel bucket a step
// exposes, the last whose gradients are reduced and the first whose
// parameters are gathered, under Megatron-LM's DDP (ZeRO 0 and 1) over n
// ranks. Megatron-Core r0.8 fills its buckets walking the parameters in
// reverse (megatron/core/distributed/param_and_grad_buffer.py: "for param
// in params[::-1]"), closing a bucket once it holds ddpBucket(n)
// parameters or more, and never splitting a parameter; a GPT's first
// parameter is its word embedding (megatron/core/models/gpt/gpt_model.py),
// so the last bucket holds the whole embedding table of this rank
// (vocabulary/TP × d), whose gradient the backward computes last, and
// the first gather of the next step's forward (the distributed
// optimizer's all-gather, one bucket ahead of the forward) is that
// bucket's. With a 131,072-token vocabulary at d 2,048 that is 268 M
// parameters, where ddpBucket gives 48 M at 48 ranks. The bucket's
// other parameters (the first layer's, fewer than ddpBucket) are not
// counted. The first pipeline stage holds the embedding; in 1F1B and
// interleaved schedules it is also the stage whose backward ends last.
func (r *runner) endBucket(n int) float64 {
	b := ddpBucket(n)
	if r.shape.Arch != Decoder && r.shape.Arch != Encoder {
		return b
	}
	return math.Max(b, float64(r.shape.Vocab)/float64(r.sc.TP)*float64(r.shape.DModel))
}

// optimizerOpsFor returns the optimizer step over this rank's share of
// its dense and expert parameters: all of them, or with ZeRO its shard
// (zeroShare: Megatron-LM's distributed optimizer shards over the data-
// and context-parallel ranks, an expert's over its expert-data-parallel
// group).
func (r *runner) optimizerOpsFor(dense, experts float64) []model.Op {
	n := dense + experts
	if r.sc.ZeRO >= 1 {
		n = r.zeroShare(dense, experts)
	}
	b, f := r.sc.Optimizer.stepTraffic(r.gradType())
	return []model.Op{{Name: "optimizer." + r.sc.Optimizer.String(), Stage: "optimizer", Class: model.ClassOptimizer, Count: 1,
		Kernel: model.Elementwise{Kind: r.sc.Optimizer.String(), Elements: n, Work: model.FLOPs(f * n),
			Read: model.Bytes(n * b / 2), Written: model.Bytes(n * b / 2)}}}
}
