package sim

import (
	"math"

	"github.com/perfsim/perfsim/model"
)

// paramSplit returns the parameters of one transformer layer, dense and
// routed experts apart, and of the embedding (and, the same, the output
// layer). The input embedding and the output layer are taken as untied,
// vocab·d each (Megatron-LM's default, --untie-embeddings-and-output-
// weights aside), bounded by half the parameters; the routed experts'
// parameters are (total − active)·E/(E − top-k), since a token uses top-k
// of E experts.
func (r *runner) paramSplit() (layerDense, layerExperts, embed float64) {
	s := r.shape
	total := r.w.Params()
	embed = math.Min(float64(s.Vocab)*float64(s.DModel), total/4)
	var experts float64
	if s.Experts > s.TopK && s.TopK > 0 {
		experts = (total - r.w.ActiveParams()) * float64(s.Experts) / float64(s.Experts-s.TopK)
		experts = math.Max(0, math.Min(experts, total-2*embed))
	}
	L := float64(max(s.Layers, 1))
	return (total - 2*embed - experts) / L, experts / L, embed
}

// rankParams returns the dense and the expert parameters one rank of the
// most loaded pipeline stage holds: its layers' share split by TP (and
// the experts by EP too), plus the embedding on the first stage and the
// output layer on the last.
func (r *runner) rankParams() (dense, experts float64) {
	sc := r.sc
	ld, le, emb := r.paramSplit()
	tp := float64(sc.TP)
	best := -1.0
	sp, pp := r.stages()
	for i := range pp {
		ell := float64(sp.stage(i))
		var outer float64
		if i == 0 {
			outer += emb
		}
		if i == pp-1 {
			outer += emb
		}
		d, e := (ell*ld+outer)/tp, ell*le/(tp*float64(max(sc.EP, 1)))
		if d+e > best {
			best, dense, experts = d+e, d, e
		}
	}
	return dense, experts
}

// zeroShare returns the parameters of a rank's dense and expert
// parameters whose states ZeRO leaves on it: each parameter's states are
// sharded over the ranks that hold a copy of it, DP·CP for the dense
// ones and the expert-data-parallel group, DP·CP/EP, for an expert's
// (Megatron-Core's expert_data_parallel group; dpComm reduces the
// experts' gradients over the same group).
func (r *runner) zeroShare(dense, experts float64) float64 {
	n := max(r.sc.DP*r.sc.CP, 1)
	ne := max(n/max(r.sc.EP, 1), 1)
	return dense/float64(n) + experts/float64(ne)
}

// stages returns how the layers spread over the pipeline's stages
// (ChunkLayers); L/PP each if they do not spread (a scenario Validate
// refuses).
func (r *runner) stages() (split, int) {
	sc := r.sc
	L, pp := max(r.shape.Layers, 1), max(sc.PP, 1)
	sp, err := newSplit(L, pp, sc.VirtualStages, sc.EmbeddingSlot, sc.LossSlot)
	if err != nil {
		return split{per: L / pp, pp: pp, v: 1}, pp
	}
	return sp, pp
}

// scaledMemory sizes the most loaded rank of a layout: the model states
// of its stage, sharded by ZeRO over DP·CP (ZeROStates' formulas, with
// the scenario's types and optimizer), the activations the schedule
// keeps in flight (Korthikanti et al. 2022; InFlight), and the reserve.
func (r *runner) scaledMemory(fused bool, micro int) Memory {
	sc := r.sc
	dense, experts := r.rankParams()
	params := dense + experts
	sharded := r.zeroShare(dense, experts)
	w := float64(sc.Weights.Bytes(params)) * (1 + sc.Weights.ScaleOverhead())
	g := float64(r.gradType().Bytes(params))
	o := params * sc.Optimizer.stateBytes()
	if sc.ZeRO >= 1 {
		o = sharded * sc.Optimizer.stateBytes()
	}
	if sc.ZeRO >= 2 {
		g = float64(r.gradType().Bytes(sharded))
	}
	if sc.ZeRO >= 3 {
		w = float64(sc.Weights.Bytes(sharded)) * (1 + sc.Weights.ScaleOverhead())
	}
	m := Memory{Weights: model.Bytes(w), Gradients: model.Bytes(g), Optimizer: model.Bytes(o), Reserve: r.reserve()}
	m.Activations = r.stageActivations(fused, micro)
	return r.fit(m)
}

// LayerActivations returns the activations one transformer layer keeps
// for its backward pass per micro-batch of b sequences of seq tokens
// (seq already divided by context parallelism), after Korthikanti et al.,
// "Reducing Activation Recomputation in Large Transformer Models" (2022),
// §4, for 16-bit activations (other types scale by size/2):
//
//	tensor parallelism t, no SP:  s·b·h·(10 + 24/t + 5·a·s/(h·t))
//	with sequence parallelism:    s·b·h·(34 + 5·a·s/h) / t
//	selective recomputation:      the 5·a·s/h term is recomputed, not kept
//	full recomputation:           2·s·b·h (/t with SP): only the input
//
// A fused (FlashAttention) kernel keeps no score matrix, so the 5·a·s/h
// term applies only to unfused attention.
func LayerActivations(s Shape, seq, b, tp int, sp bool, rc Recompute, fused bool, act model.DType) model.Bytes {
	h, a := float64(s.DModel), float64(s.Heads)
	t := float64(max(tp, 1))
	sbh := float64(seq) * float64(b) * h
	var c float64
	switch {
	case rc == RecomputeFull && sp:
		c = 2 / t
	case rc == RecomputeFull:
		c = 2
	case sp:
		c = 34 / t
	default:
		c = 10 + 24/t
	}
	if rc == RecomputeNone && !fused && h > 0 {
		c += 5 * a * float64(seq) / (h * t)
	}
	return model.Bytes(sbh * c * act.Size() / 2)
}

// stageActivations returns the activations of the most loaded stage: its
// layers times the micro-batches the schedule keeps in flight there
// (stageInFlight), plus on the last stage the output layer and the fp32
// logits of the loss for one micro-batch, 4·s·b·h·(1 + v/h)/t (as
// TrainingActivations).
func (r *runner) stageActivations(fused bool, micro int) model.Bytes {
	sc, s := r.sc, r.shape
	seq := sc.Seq / sc.CP
	layer := float64(LayerActivations(s, seq, sc.Batch, sc.TP, sc.SP, sc.Recompute, fused, sc.Act))
	h := float64(s.DModel)
	head := 0.0
	if h > 0 {
		head = 4 * float64(seq) * float64(sc.Batch) * h * (1 + float64(s.Vocab)/h) / float64(sc.TP) * sc.Act.Size() / 2
	}
	sp, pp := r.stages()
	if pp == 1 {
		return model.Bytes(float64(sp.stage(0))*layer*InFlight(sc.PP, micro, sc.VirtualStages, sc.Schedule) + head)
	}
	var most float64
	for i := range pp {
		a := float64(sp.stage(i)) * layer * stageInFlight(sc.PP, micro, sc.VirtualStages, sc.Schedule, i)
		if i == sc.PP-1 {
			a += head
		}
		most = math.Max(most, a)
	}
	return model.Bytes(most)
}

// stageInFlight is the micro-batches stage i of p holds at its peak, in
// units of one micro-batch through all of its layers: InFlight for the
// first stage and lastInFlight for the last; between them, p − i for
// 1F1B (its warm-up forwards and one more), all m for GPipe, and for
// interleaved 1F1B Megatron-LM's warm-up of 2·(p−i−1) + (v−1)·p chunks
// and one more, (p·v + p − 2i − 1)/v (megatron/core/pipeline_parallel/
// schedules.py, forward_backward_pipelining_with_interleaving), which is
// InFlight's p·(1 + (p−1)/(p·v)) at i = 0.
func stageInFlight(p, m, v int, s Schedule, i int) float64 {
	switch {
	case i == 0:
		return InFlight(p, m, v, s)
	case i == p-1:
		return lastInFlight(m, s)
	}
	m = max(m, 1)
	switch s {
	case GPipe:
		return float64(m)
	case Interleaved:
		if v > 1 && m >= p {
			return float64(p*v+p-2*i-1) / float64(v)
		}
	}
	return float64(min(p-i, m))
}

// lastInFlight is the micro-batches the last stage holds: one in 1F1B
// (each forward is followed at once by its backward), all in GPipe.
func lastInFlight(m int, s Schedule) float64 {
	if s == GPipe {
		return float64(max(m, 1))
	}
	return 1
}
