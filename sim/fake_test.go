package sim

import (
	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// fake is a small Llama-style decoder built by hand for the unit tests:
// the tests of sim do not depend on the workloads catalog.
type fake struct {
	name                                     string
	layers, d, heads, kvHeads, ffn, vocab, L int
}

func tinyLlama() *fake {
	return &fake{name: "fake-1b", layers: 16, d: 2048, heads: 16, kvHeads: 4, ffn: 8192, vocab: 32000, L: 8192}
}

func (f *fake) Name() string { return f.name }
func (f *fake) hd() int      { return f.d / f.heads }
func (f *fake) layerParams() float64 {
	d, hd := float64(f.d), float64(f.hd())
	return d*float64(f.heads+2*f.kvHeads)*hd + float64(f.heads)*hd*d + 3*d*float64(f.ffn) + 2*d
}
func (f *fake) Params() float64 {
	return float64(f.layers)*f.layerParams() + 2*float64(f.vocab)*float64(f.d) + float64(f.d)
}
func (f *fake) ActiveParams() float64 { return f.Params() }
func (f *fake) KVBytesPerToken(kv model.DType) model.Bytes {
	return kv.Bytes(2 * float64(f.layers*f.kvHeads*f.hd()))
}
func (f *fake) WeightBytes(w model.DType) model.Bytes {
	return model.Bytes(float64(w.Bytes(f.Params())) * (1 + w.ScaleOverhead()))
}
func (f *fake) ActivationBytes(int, model.DType) model.Bytes { return 0 }
func (f *fake) Shape() Shape {
	return Shape{Arch: Decoder, Layers: f.layers, DModel: f.d, Heads: f.heads, KVHeads: f.kvHeads,
		HeadDim: f.hd(), FFN: f.ffn, Vocab: f.vocab, MaxContext: f.L}
}

func (f *fake) Ops(ph Phase) ([]model.Op, error) {
	tp := max(ph.TP, 1)
	b, s := ph.Batch, ph.Seq
	if ph.Kind == Decode {
		s = 1
	}
	ctx := ph.Context
	if ph.Kind == TrainForward || ph.Kind == TrainBackward {
		ctx = 0
	}
	m := b * s
	w, a := ph.Weights, ph.Act
	L := f.layers
	hq, hkv := f.heads/tp, f.kvHeads/tp
	rows := m
	if ph.Kind == Prefill {
		rows = b // logits of the last position only
	}
	ops := []model.Op{
		{Name: "embed", Class: model.ClassEmbedding, Count: 1, Kernel: model.Gather{Rows: m, Width: f.d, DType: a}},
		{Name: "attn.norm", Class: model.ClassNorm, Count: L, Kernel: model.Elementwise{Kind: "rmsnorm", Elements: float64(m * f.d), Work: model.FLOPs(4 * m * f.d), Read: a.Bytes(float64(m * f.d)), Written: a.Bytes(float64(m * f.d))}},
		{Name: "attn.qkv", Class: model.ClassQKV, Count: L, Kernel: model.GEMM{M: m, K: f.d, N: (hq + 2*hkv) * f.hd(), A: a, B: w, C: a}},
		{Name: "attn.core", Class: model.ClassAttention, Count: L, Kernel: model.Attention{Batch: b, Heads: hq, KVHeads: hkv, QLen: s, KVLen: ctx + s, HeadDim: f.hd(), Causal: true, Fused: true, DType: a, KVDType: ph.KV}},
		{Name: "attn.out", Class: model.ClassOutProj, Count: L, Kernel: model.GEMM{M: m, K: hq * f.hd(), N: f.d, A: a, B: w, C: a}},
		{Name: "ffn.gate_up", Class: model.ClassFFN, Count: L, Kernel: model.GEMM{M: m, K: f.d, N: 2 * f.ffn / tp, A: a, B: w, C: a}},
		{Name: "ffn.down", Class: model.ClassFFN, Count: L, Kernel: model.GEMM{M: m, K: f.ffn / tp, N: f.d, A: a, B: w, C: a}},
		{Name: "logits", Class: model.ClassLogits, Count: 1, Kernel: model.GEMM{M: rows, K: f.d, N: f.vocab / tp, A: a, B: w, C: a}},
	}
	if tp > 1 {
		ops = append(ops, model.Op{Name: "tp.all_reduce", Class: model.ClassComm, Count: 2 * L,
			Kernel: model.Collective{Kind: model.AllReduce, Size: a.Bytes(float64(m * f.d)), Ranks: tp}})
	}
	if ph.Kind == TrainBackward {
		var bwd []model.Op
		for _, o := range ops {
			if g, ok := o.Kernel.(model.GEMM); ok {
				dg := g
				dg.K, dg.N = g.N, g.K
				wg := model.GEMM{M: g.K, K: g.M, N: g.N, A: a, B: a, C: a}
				bwd = append(bwd, model.Op{Name: o.Name + ".dgrad", Class: o.Class, Count: o.Count, Kernel: dg},
					model.Op{Name: o.Name + ".wgrad", Class: o.Class, Count: o.Count, Kernel: wg})
				continue
			}
			if at, ok := o.Kernel.(model.Attention); ok {
				bwd = append(bwd, o, model.Op{Name: o.Name + ".2", Class: o.Class, Count: o.Count, Kernel: at})
				continue
			}
			bwd = append(bwd, o)
		}
		ops = bwd
	}
	return ops, nil
}

// testDevice is an A100-like device with hand-set numbers (not the
// catalog's), so that the unit tests pin the simulator, not the data.
func testDevice() *hardware.Device {
	return &hardware.Device{
		Name: "test-gpu", ComputeUnits: 108, Launch: 4e-6,
		Matrix: map[model.DType]model.FLOPRate{model.BF16: 312e12, model.FP16: 312e12, model.INT8: 624e12, model.TF32: 156e12},
		Vector: map[model.DType]model.FLOPRate{model.FP32: 19.5e12, model.FP16: 78e12, model.BF16: 39e12},
		Memory: hardware.Memory{Capacity: 80e9, Bandwidth: 2.039e12, L2: 40e6, Reserve: 2e9},
		Eff: model.Efficiency{
			GEMM:      map[model.DType]model.GEMMParams{model.BF16: {Compute: 0.8, Memory: 0.85, Launch: 5e-6}, model.FP16: {Compute: 0.8, Memory: 0.85, Launch: 5e-6}},
			Memory:    model.MemoryParams{Efficiency: 0.85},
			Attention: model.AttentionParams{Compute: 0.6, Memory: 0.8},
			Vector:    0.8,
		},
		Intra: hardware.Network{Name: "nvlink", Bandwidth: 300e9, Latency: 2e-6, Efficiency: 0.8, DevicesPerNode: 8},
		Inter: hardware.Network{Name: "ib", Bandwidth: 25e9, Latency: 5e-6, Efficiency: 0.8},
	}
}

func testSystem(n int) *hardware.System {
	d := testDevice()
	return &hardware.System{Device: d, DevicesPerNode: min(n, 8), Nodes: (n + 7) / 8, Intra: d.Intra, Inter: d.Inter}
}
