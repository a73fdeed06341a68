package serve_test

import (
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
	"github.com/perfsim/perfsim/workloads"
)

// adapter is the test's copy of cmd/perfsim's simWorkload.
type adapter struct{ m *workloads.Model }

func (w adapter) Name() string                                     { return w.m.Name() }
func (w adapter) Params() float64                                  { return w.m.Params() }
func (w adapter) ActiveParams() float64                            { return w.m.ActiveParams() }
func (w adapter) KVBytesPerToken(kv model.DType) model.Bytes       { return w.m.KVBytesPerToken(kv) }
func (w adapter) WeightBytes(d model.DType) model.Bytes            { return w.m.WeightBytes(d) }
func (w adapter) ActivationBytes(b int, d model.DType) model.Bytes { return w.m.ActivationBytes(b, d) }
func (w adapter) Ops(ph sim.Phase) ([]model.Op, error) {
	kinds := [...]workloads.PhaseKind{workloads.Prefill, workloads.Decode, workloads.TrainForward, workloads.TrainBackward}
	return w.m.Ops(workloads.Phase{Kind: kinds[ph.Kind], Batch: ph.Batch, Seq: ph.Seq, Context: ph.Context,
		Weights: ph.Weights, Act: ph.Act, KV: ph.KV, TP: ph.TP})
}
func (w adapter) Shape() sim.Shape {
	s := w.m.Shape()
	return sim.Shape{Arch: sim.Decoder, Layers: s.Layers, DModel: s.DModel, Heads: s.Heads, KVHeads: s.KVHeads, HeadDim: s.HeadDim,
		FFN: s.FFN, Vocab: s.Vocab, Experts: s.Experts, TopK: s.TopK, MaxContext: s.MaxContext}
}

// setup returns a system of devices hw and a model.
func setup(t testing.TB, hw, mdl string, devices int) (*hardware.System, sim.Workload) {
	t.Helper()
	d, err := hardware.Resolve(hw)
	if err != nil {
		t.Fatal(err)
	}
	per := min(devices, max(1, d.Intra.DevicesPerNode))
	sys, err := hardware.NewSystem(d, per, (devices+per-1)/per)
	if err != nil {
		t.Fatal(err)
	}
	m, err := workloads.Resolve(mdl)
	if err != nil {
		t.Fatal(err)
	}
	return sys, adapter{m}
}

func pricer(t testing.TB, sys *hardware.System, w sim.Workload, sc sim.Scenario) *sim.Pricer {
	t.Helper()
	p, err := sim.NewPricer(sys, w, sc)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
