package simload

import (
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
	"github.com/perfsim/perfsim/workloads"
)

// Workload is a workloads.Model as a sim.Workload.
type Workload struct{ M *workloads.Model }

var (
	_ sim.PureWorkload = Workload{}
	_ sim.Sharder      = Workload{}
)

// PureOps says that Run may keep a decomposition between runs: a
// workloads.Model never changes once built.
func (Workload) PureOps() {}

func (w Workload) Name() string                               { return w.M.Name() }
func (w Workload) Params() float64                            { return w.M.Params() }
func (w Workload) ActiveParams() float64                      { return w.M.ActiveParams() }
func (w Workload) KVBytesPerToken(kv model.DType) model.Bytes { return w.M.KVBytesPerToken(kv) }
func (w Workload) WeightBytes(d model.DType) model.Bytes      { return w.M.WeightBytes(d) }
func (w Workload) ActivationBytes(b int, d model.DType) model.Bytes {
	return w.M.ActivationBytes(b, d)
}

var phaseKinds = [...]workloads.PhaseKind{
	sim.Prefill: workloads.Prefill, sim.Decode: workloads.Decode,
	sim.TrainForward: workloads.TrainForward, sim.TrainBackward: workloads.TrainBackward,
}

func (w Workload) Ops(ph sim.Phase) ([]model.Op, error) {
	return w.M.Ops(phaseOf(ph))
}

// AppendOps is sim.OpsAppender's: Ops appended to dst.
func (w Workload) AppendOps(dst []model.Op, ph sim.Phase) ([]model.Op, error) {
	return w.M.AppendOps(dst, phaseOf(ph))
}

func phaseOf(ph sim.Phase) workloads.Phase {
	return workloads.Phase{
		Kind: phaseKinds[ph.Kind], Batch: ph.Batch, Seq: ph.Seq, Context: ph.Context,
		Weights: ph.Weights, Act: ph.Act, KV: ph.KV, Comm: ph.Comm, TP: ph.TP, EP: ph.EP, Group: ph.Group, Imbalance: ph.Imbalance,
		FuseCNN: ph.FuseCNN, Autocast: ph.Autocast,
	}
}

var archs = map[workloads.Kind]sim.Arch{
	workloads.Decoder: sim.Decoder, workloads.Encoder: sim.Encoder, workloads.ViT: sim.Vision, workloads.CNN: sim.CNN,
}

func (w Workload) Shape() sim.Shape {
	s := w.M.Shape()
	return sim.Shape{
		Arch: archs[s.Kind], Layers: s.Layers, DModel: s.DModel, Heads: s.Heads, KVHeads: s.KVHeads,
		HeadDim: s.HeadDim, FFN: s.FFN, Vocab: s.Vocab, Experts: s.Experts, TopK: s.TopK,
		MaxContext: s.MaxContext, Tokens: s.Tokens, ImageSize: w.M.ImageSize(),
		SSMHeads: s.SSMHeads, SSMGroups: s.SSMGroups, LinearValueHeads: s.LinearValueHeads, LinearKeyHeads: s.LinearKeyHeads,
		ExpertFFN: s.ExpertFFN, SharedFFN: s.SharedFFN,
	}
}

// Family adapts workloads.Scale to sim.Family.
type Family string

func (f Family) Member(params float64) (sim.Workload, error) {
	m, err := workloads.Scale(string(f), params)
	if err != nil {
		return nil, err
	}
	return Workload{m}, nil
}

func (w Workload) WeightBytesPerDevice(d model.DType, tp, ep int) model.Bytes {
	return w.M.WeightBytesPerDevice(d, tp, ep)
}

func (w Workload) KVBytes(tokens, tp int, kv model.DType) model.Bytes {
	return w.M.KVBytes(tokens, tp, kv)
}

// KVLayers is the split of the model's attention layers into full and
// sliding-window ones (sim.Windowed).
func (w Workload) KVLayers() (full, windowed, window int) { return w.M.KVLayers() }

// FeatureBytes and GatheredBytes are a graph network's feature store
// (mlperf.FeatureStore): the whole store and what a batch gathers.
func (w Workload) FeatureBytes(d model.DType) model.Bytes { return w.M.FeatureBytes(d) }

func (w Workload) GatheredBytes(batch int, d model.DType) model.Bytes {
	return w.M.GatheredBytes(batch, d)
}
