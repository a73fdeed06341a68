package main

import (
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
	"github.com/perfsim/perfsim/workloads"
)

// simWorkload adapts a workloads.Model to sim.Workload: sim declares what
// it needs and never imports workloads, so the phase and shape types are
// translated here.
type simWorkload struct{ m *workloads.Model }

var _ sim.PureWorkload = simWorkload{}

// PureOps says that Run may keep a decomposition between runs: a
// workloads.Model never changes once built.
func (simWorkload) PureOps() {}

func (w simWorkload) Name() string                               { return w.m.Name() }
func (w simWorkload) Params() float64                            { return w.m.Params() }
func (w simWorkload) ActiveParams() float64                      { return w.m.ActiveParams() }
func (w simWorkload) KVBytesPerToken(kv model.DType) model.Bytes { return w.m.KVBytesPerToken(kv) }
func (w simWorkload) WeightBytes(d model.DType) model.Bytes      { return w.m.WeightBytes(d) }
func (w simWorkload) ActivationBytes(b int, d model.DType) model.Bytes {
	return w.m.ActivationBytes(b, d)
}

var phaseKinds = [...]workloads.PhaseKind{
	sim.Prefill: workloads.Prefill, sim.Decode: workloads.Decode,
	sim.TrainForward: workloads.TrainForward, sim.TrainBackward: workloads.TrainBackward,
}

func (w simWorkload) Ops(ph sim.Phase) ([]model.Op, error) {
	return w.m.Ops(workloads.Phase{
		Kind: phaseKinds[ph.Kind], Batch: ph.Batch, Seq: ph.Seq, Context: ph.Context,
		Weights: ph.Weights, Act: ph.Act, KV: ph.KV, Comm: ph.Comm, TP: ph.TP, EP: ph.EP, Imbalance: ph.Imbalance,
		FuseCNN: ph.FuseCNN, Autocast: ph.Autocast,
	})
}

var archs = map[workloads.Kind]sim.Arch{
	workloads.Decoder: sim.Decoder, workloads.Encoder: sim.Encoder, workloads.ViT: sim.Vision, workloads.CNN: sim.CNN,
}

func (w simWorkload) Shape() sim.Shape {
	s := w.m.Shape()
	return sim.Shape{
		Arch: archs[s.Kind], Layers: s.Layers, DModel: s.DModel, Heads: s.Heads, KVHeads: s.KVHeads,
		HeadDim: s.HeadDim, FFN: s.FFN, Vocab: s.Vocab, Experts: s.Experts, TopK: s.TopK,
		MaxContext: s.MaxContext, Tokens: s.Tokens, ImageSize: w.m.ImageSize(),
	}
}

// simFamily adapts workloads.Scale to sim.Family.
type simFamily string

func (f simFamily) Member(params float64) (sim.Workload, error) {
	m, err := workloads.Scale(string(f), params)
	if err != nil {
		return nil, err
	}
	return simWorkload{m}, nil
}

var _ sim.Sharder = simWorkload{}

func (w simWorkload) WeightBytesPerDevice(d model.DType, tp, ep int) model.Bytes {
	return w.m.WeightBytesPerDevice(d, tp, ep)
}

func (w simWorkload) KVBytes(tokens, tp int, kv model.DType) model.Bytes {
	return w.m.KVBytes(tokens, tp, kv)
}
