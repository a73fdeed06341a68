package sim

import (
	"github.com/perfsim/perfsim/model"
)

// gradType is the type gradients are kept and reduced in:
// Scenario.GradType, or the weights' type, or bf16 when weights are
// narrower than 16 bits (training keeps 16-bit gradients).
func (r *runner) gradType() model.DType { return r.sc.gradType() }

func (sc Scenario) gradType() model.DType {
	if g := sc.GradType; g != model.Invalid {
		return g
	}
	if sc.Weights.Size() < 2 {
		return model.BF16
	}
	return sc.Weights
}

// ModelStateBytes returns the model state training keeps per parameter
// before ZeRO sharding, as trainingMemory sizes it: the weights in their
// type, the gradients in theirs (gradType) and the optimizer's fp32
// state (stateBytes). Mixed-precision Adam with bf16 weights: 2 + 2 + 12
// = 16 bytes (Rajbhandari et al. 2020, §3.1); fp8 weights beside their
// fp32 master copy: 1 + 2 + 12 = 15; fp32 weights: 4 + 4 + 12 = 20.
func (sc Scenario) ModelStateBytes() float64 {
	return sc.Weights.Size() + sc.gradType().Size() + sc.Optimizer.stateBytes()
}

// training simulates one optimizer step. A transformer's goes to
// trainingScaled (train_step.go), with its parallel layout and overlap; a
// CNN's is here, on one node: MicroBatches × (forward,
// backward, recomputation), the data-parallel gradient synchronisation
// (not overlapped with the backward pass: a conservative bound), and the
// optimizer's memory-bound pass over its state.
func (r *runner) training() error {
	if r.shape.Arch != CNN {
		return r.trainingScaled()
	}
	sc, rep := r.sc, r.rep
	tr := &TrainingResult{MicroBatches: sc.GlobalBatch / (sc.Batch * sc.DP)}
	rep.Training = tr

	ph := r.phase(TrainForward)
	ph.Seq = sc.Seq
	fwd, err := r.ops(ph, nil)
	if err != nil {
		return err
	}
	fwd = append([]model.Op(nil), fwd...)
	tr.Forward = r.c.pass("forward", fwd)
	r.eager(&tr.Forward)
	ph.Kind = TrainBackward
	bwd, err := r.ops(ph, nil)
	if err != nil {
		return err
	}
	tr.Backward = r.c.pass("backward", bwd)
	r.eager(&tr.Backward)

	if rc := recomputed(fwd, sc.Recompute); len(rc) > 0 {
		p := r.c.pass("recompute", rc)
		tr.Recompute = &p
	}
	micro := model.Seconds(tr.MicroBatches)
	step := micro * (tr.Forward.Time + tr.Backward.Time)
	low := micro * (tr.Forward.Low + tr.Backward.Low)
	high := micro * (tr.Forward.High + tr.Backward.High)
	if p := tr.Recompute; p != nil {
		step += micro * p.Time
		low += micro * p.Low
		high += micro * p.High
	}

	if g := r.gradientOps(tr.MicroBatches); len(g) > 0 {
		p := r.c.pass("gradients", g)
		tr.Gradients = &p
		step, low, high = step+p.Time, low+p.Low, high+p.High
	}
	tr.Optimizer = r.c.pass("optimizer", r.optimizerOps())
	step += tr.Optimizer.Time
	low += tr.Optimizer.Low
	high += tr.Optimizer.High
	if lr := sc.LoaderRate; lr > 0 {
		if floor := model.Seconds(float64(sc.GlobalBatch) / lr); floor > step {
			step, low, high, tr.LoaderBound = floor, max(low, floor), max(high, floor), true
		}
	}
	tr.StepTime, tr.StepTimeLow, tr.StepTimeHigh = step, low, high

	// Model FLOPs: the matrix work of forward and backward on every
	// device; hardware FLOPs add the recomputation.
	devs := float64(rep.Devices)
	mf := float64(matrixFLOPs(tr.Forward.Ops)+matrixFLOPs(tr.Backward.Ops)) * float64(tr.MicroBatches) * devs
	hf := mf
	if p := tr.Recompute; p != nil {
		hf += float64(matrixFLOPs(p.Ops)) * float64(tr.MicroBatches) * devs
	}
	tr.ModelFLOPs, tr.HardwareFLOPs = model.FLOPs(mf), model.FLOPs(hf)
	d, _ := r.c.p.Supported(sc.Act)
	peak, _ := r.c.p.Peak(d)
	if step > 0 && peak > 0 {
		denom := float64(step) * devs * float64(peak)
		tr.MFU, tr.HFU = mf/denom, hf/denom
	}
	samples := float64(sc.GlobalBatch)
	tokens := samples * float64(sc.Seq)
	if r.shape.Arch == CNN || r.shape.Arch == Vision {
		tokens = samples // images
	}
	if step > 0 {
		tr.SamplesPerSecond = samples / float64(step)
		tr.TokensPerSecond = tokens / float64(step)
	}
	tr.TimeToTrain = timeToTrain(sc.Tokens, tokens, step)
	rep.Memory = r.trainingMemory()
	return nil
}

// matrixFLOPs sums the FLOPs of the GEMM and attention rows.
func matrixFLOPs(rows []OpRow) model.FLOPs {
	var f model.FLOPs
	for i := range rows {
		if k := rows[i].Kind; k == kindGEMM || k == kindAttention {
			f += rows[i].FLOPs
		}
	}
	return f
}

// recomputed returns the forward ops a recomputation policy runs again
// in the backward pass: the attention core for selective recomputation
// (Korthikanti et al. 2022, §4.2: the QKᵀ, softmax, dropout and
// attention-over-V ops), every layer's ops for full recomputation (the
// embedding and the LM head are not recomputed).
func recomputed(fwd []model.Op, rc Recompute) []model.Op {
	var out []model.Op
	for _, o := range fwd {
		switch {
		case rc == RecomputeSelective && o.Class == model.ClassAttention:
		case rc == RecomputeFull && o.Class != model.ClassEmbedding && o.Class != model.ClassLogits && o.Class != model.ClassComm:
		default:
			continue
		}
		out = append(out, o)
	}
	return out
}

// gradientOps returns the data-parallel synchronisation of one step: an
// all-reduce of this device's gradients (ZeRO 1 and 2 do a
// reduce-scatter and an all-gather, the same traffic), or with ZeRO 3 a
// reduce-scatter of the gradients and two all-gathers of the weights per
// micro-batch (forward and backward).
func (r *runner) gradientOps(micro int) []model.Op {
	sc := r.sc
	if sc.DP <= 1 {
		return nil
	}
	n := r.w.Params() / float64(sc.TP)
	tier := r.tier(sc.TP * sc.DP)
	grads := r.gradType().Bytes(n)
	if sc.ZeRO < 3 {
		return []model.Op{{Name: "dp.grad_all_reduce", Stage: "data_parallel", Class: model.ClassComm, Count: 1,
			Kernel: model.Collective{Kind: model.AllReduce, Size: grads, Ranks: sc.DP, Tier: tier}}}
	}
	return []model.Op{
		{Name: "dp.grad_reduce_scatter", Stage: "data_parallel", Class: model.ClassComm, Count: 1,
			Kernel: model.Collective{Kind: model.ReduceScatter, Size: grads, Ranks: sc.DP, Tier: tier}},
		{Name: "dp.weight_all_gather", Stage: "data_parallel", Class: model.ClassComm, Count: 2 * micro,
			Kernel: model.Collective{Kind: model.AllGather, Size: sc.Weights.Bytes(n), Ranks: sc.DP, Tier: tier}},
	}
}

// shards returns how many ways the model states are split: TP always,
// DP when the ZeRO stage shards that state.
func (r *runner) shards(stage int) float64 {
	s := float64(r.sc.TP)
	if r.sc.ZeRO >= stage {
		s *= float64(r.sc.DP)
	}
	return s
}

// optimizerOps returns the optimizer step as one memory-bound pass over
// this device's share of the optimizer state.
func (r *runner) optimizerOps() []model.Op {
	n := r.w.Params() / r.shards(1)
	b, f := r.sc.Optimizer.stepTraffic(r.gradType())
	return []model.Op{{Name: "optimizer." + r.sc.Optimizer.String(), Stage: "optimizer", Class: model.ClassOptimizer, Count: 1,
		Kernel: model.Elementwise{Kind: r.sc.Optimizer.String(), Elements: n, Work: model.FLOPs(f * n),
			Read: model.Bytes(n * b / 2), Written: model.Bytes(n * b / 2)}}}
}

// trainingMemory sizes one device for training: weights, gradients and
// optimizer state (sharded per ZeRO stage), activations, reserve.
//
// With mixed-precision Adam this is 16 bytes per parameter of model
// state (2 weights + 2 gradients + 4 master + 4 + 4 moments; Rajbhandari
// et al. 2020, §3.1) plus activations.
func (r *runner) trainingMemory() Memory {
	sc := r.sc
	n := r.w.Params()
	m := Memory{
		Weights:   model.Bytes(float64(r.w.WeightBytes(sc.Weights)) / r.shards(3)),
		Gradients: model.Bytes(float64(r.gradType().Bytes(n)) / r.shards(2)),
		Optimizer: model.Bytes(n * sc.Optimizer.stateBytes() / r.shards(1)),
		Reserve:   r.reserve(),
	}
	if r.shape.Arch == CNN {
		m.Activations = r.w.ActivationBytes(sc.Batch, sc.Act)
	} else {
		seq := sc.Seq
		if r.shape.Arch == Vision && r.shape.Tokens > 0 {
			seq = r.shape.Tokens
		}
		m.Activations = TrainingActivations(r.shape, seq, sc.Batch, sc.TP, sc.Recompute, sc.Act)
	}
	return r.fit(m)
}

// TrainingActivations returns the activations a transformer keeps for the
// backward pass on one device, after Korthikanti et al., "Reducing
// Activation Recomputation in Large Transformer Models" (2022), with
// tensor and sequence parallelism over tp devices, s the sequence, b the
// micro-batch, h the model width, a the heads, L the layers, v the
// vocabulary:
//
//	per layer, no recomputation: s·b·h·(34 + 5·a·s/h) / tp bytes (§4.1, eq. 2 with sequence parallelism)
//	selective recomputation:     s·b·h·34 / tp                   (§4.2)
//	full recomputation:          2·s·b·h / tp                    (only each layer's input; §4.2)
//
// plus, once, the output layer and the fp32 logits of the loss,
// 4·s·b·h·(1 + v/h) / tp (our reading of §4.3). The constants count
// 16-bit activations with a GPT MLP of 4h; other activation types scale
// by their size / 2 bytes, and a wider or gated MLP is not adjusted for.
func TrainingActivations(s Shape, seq, b, tp int, rc Recompute, act model.DType) model.Bytes {
	if tp < 1 {
		tp = 1
	}
	h, a := float64(s.DModel), float64(s.Heads)
	if h <= 0 {
		return 0
	}
	sbh := float64(seq) * float64(b) * h
	var layer float64
	switch rc {
	case RecomputeNone:
		layer = sbh * (34 + 5*a*float64(seq)/h)
	case RecomputeSelective:
		layer = sbh * 34
	default:
		layer = 2 * sbh
	}
	total := (float64(s.Layers)*layer + 4*sbh*(1+float64(s.Vocab)/h)) / float64(tp)
	return model.Bytes(total * act.Size() / 2)
}
