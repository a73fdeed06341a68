package workloads

import (
	"github.com/perfsim/perfsim/model"
)

// Gated DeltaNet mixers ("deltanet" in layer_types): Qwen3-Next's
// linear-attention layers (transformers' Qwen3NextGatedDeltaNet). The
// rule itself is model.Scan with Delta set (model/delta.go).

// deltaDefaults fills the defaults of the linear_* keys.
func deltaDefaults(c *Config) {
	if c.LinearValueHeads == 0 {
		return
	}
	if c.LinearKeyHeads == 0 {
		c.LinearKeyHeads = c.LinearValueHeads
	}
	if c.LinearValueDim == 0 {
		c.LinearValueDim = c.LinearKeyDim
	}
	if c.LinearConv == 0 {
		c.LinearConv = 4 // Qwen3NextConfig's linear_conv_kernel_dim
	}
	if c.LinearChunk == 0 {
		c.LinearChunk = 64 // flash-linear-attention's chunk_gated_delta_rule
	}
}

// validateDelta checks the linear_* keys, with the layer counts n.
func validateDelta(c *Config, n layerCounts, bad func(key, format string, args ...any), size func(key string, v int, required bool)) {
	size("linear_value_heads", c.LinearValueHeads, n.delta > 0)
	size("linear_key_head_dim", c.LinearKeyDim, n.delta > 0)
	size("linear_key_heads", c.LinearKeyHeads, false)
	size("linear_value_head_dim", c.LinearValueDim, false)
	size("linear_conv", c.LinearConv, false)
	size("linear_chunk", c.LinearChunk, false)
	if n.delta == 0 && (c.LinearValueHeads != 0 || c.LinearKeyHeads != 0 || c.LinearKeyDim != 0 || c.LinearValueDim != 0) {
		bad("linear_value_heads", "linear_* keys set, but no layer is \"deltanet\" in layer_types")
	}
	if c.LinearKeyHeads > 0 && c.LinearValueHeads > 0 && c.LinearValueHeads%c.LinearKeyHeads != 0 {
		bad("linear_key_heads", "%d does not divide linear_value_heads %d (each key head serves a group of value heads)", c.LinearKeyHeads, c.LinearValueHeads)
	}
	if c.AttnOutputGate && n.attn() == 0 {
		bad("attn_output_gate", "set, but no layer has attention")
	}
	if c.SharedExpertGate && c.SharedExperts == 0 {
		bad("shared_expert_gate", "set without shared_experts")
	}
}

// deltaParams counts one Gated DeltaNet mixer's parameters, as
// transformers' Qwen3NextGatedDeltaNet holds them: in_proj_qkvz (queries
// and keys of the key heads, values and the output gate z of the value
// heads), in_proj_ba (β and the decay input a per value head), the
// depthwise convolution over q, k and v without a bias, dt_bias and A_log
// per value head, the gated RMSNorm's gain over one value head (shared by
// all), out_proj.
func deltaParams(c *Config) float64 {
	d := float64(c.DModel)
	kd := float64(c.LinearKeyHeads) * float64(c.LinearKeyDim)
	hv := float64(c.LinearValueHeads)
	vd := hv * float64(c.LinearValueDim)
	return d*(2*kd+2*vd) + d*2*hv + (2*kd+vd)*float64(c.LinearConv) + 2*hv + float64(c.LinearValueDim) + vd*d
}

// deltaScan returns the gated delta rule of one layer on one of tp
// ranks (heads split over the ranks, as vLLM shards them).
func (m *Model) deltaScan(b, s, tp int, act, st model.DType) model.Scan {
	c := &m.cfg
	return model.Scan{Batch: b, Tokens: s, Heads: c.LinearValueHeads / tp, HeadDim: c.LinearValueDim,
		State: c.LinearKeyDim, Groups: max(1, c.LinearKeyHeads/tp), Conv: c.LinearConv, Chunk: c.LinearChunk,
		DType: act, StateDType: st, Delta: true}
}

// deltaStateElems returns one Gated DeltaNet layer's state of one
// sequence on one of tp ranks: each value head's d_k × d_v matrix and the
// convolution's last inputs.
func (m *Model) deltaStateElems(tp int) float64 {
	s := m.deltaScan(1, 1, tp, model.BF16, model.BF16)
	return float64(s.StateBytes(model.BF16)) / model.BF16.Size()
}

// deltaOps appends the Gated DeltaNet mixers: the two input projections
// (q, k, v and z; β and a), the convolution, gates and chunked rule
// (model.Scan with Delta; the recurrent update when decoding), the gated
// norm and the output projection.
func (m *Model) deltaOps(ops []model.Op, ph Phase) []model.Op {
	c, n := &m.cfg, m.n
	t := ph.Batch * ph.Seq
	sc := m.deltaScan(ph.Batch, ph.Seq, ph.TP, ph.Act, ph.KV)
	sc.Prompt = ph.Kind != Decode
	kd, vd := sc.Groups*sc.State, sc.Heads*sc.HeadDim
	ops = addOp(ops, StageAttention, "gdn.in_proj_qkvz", model.ClassQKV, n.delta, phaseGEMM(ph, t, c.DModel, 2*kd+2*vd))
	ops = addOp(ops, StageAttention, "gdn.in_proj_ba", model.ClassQKV, n.delta, phaseGEMM(ph, t, c.DModel, 2*sc.Heads))
	ops = addOp(ops, StageAttention, "gdn.rule", model.ClassAttention, n.delta, sc)
	ops = addOp(ops, StageAttention, "gdn.norm", model.ClassNorm, n.delta, ew("rmsnorm-gated", float64(t)*float64(vd), flopsRMSNorm+flopsSiLUMul, 2, 1, ph.Act))
	ops = addOp(ops, StageAttention, "gdn.out_proj", model.ClassOutProj, n.delta, phaseGEMM(ph, t, vd, c.DModel))
	return ops
}
