package mlperf

import (
	"fmt"
	"strings"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// LoRA fine-tuning (Hu et al. 2021, "LoRA: Low-Rank Adaptation of Large
// Language Models", §4.1): beside each targeted linear layer Y = X·W, a
// rank-r adapter adds dropout(X)·A·B·α/r, with A (in×r) and B (r×out)
// the only trained weights. What changes in a training step:
//
//   - Forward: the base model's kernels, plus per adapter a dropout pass
//     over its input and two thin GEMMs (X·A, then ·B).
//   - Backward: every base GEMM still computes its data gradient (the
//     gradient flows through the frozen layers to the adapters below),
//     but no base GEMM computes a weight gradient; the adapters compute
//     both, and the dropout its backward pass.
//   - Gradient synchronisation and the optimizer cover the adapters'
//     parameters only (data-parallel all-reduce, then Adam over them).
//   - Memory: the frozen weights, the activations, and the adapters'
//     weights, gradients and optimizer state; no gradient or optimizer
//     state for the base.
//
// lora wraps a base workload so that package sim prices the first two
// from the ops; loraStep replaces the last two.

// A LoRA is a low-rank adaptation of a base model's linear layers.
type LoRA struct {
	Rank int
	// Dropout is the probability of the dropout on each adapter's input
	// (0: none, no pass priced).
	Dropout float64
	// Targets are the base ops (by name) that get adapters.
	Targets []string
	// Source says where the settings come from.
	Source string
}

// lora is a base workload with adapters.
type lora struct {
	sim.Workload
	l LoRA
}

// adapterType is the type the adapters compute in: 16-bit when the base
// GEMMs run in 8 or 4 bits (NeMo's LoRA adapters are parallel linear
// layers outside Transformer Engine's fp8 autocast, kept in the model's
// bf16).
func adapterType(act model.DType) model.DType {
	if act.Size() < 2 {
		return model.BF16
	}
	return act
}

// adapters returns the forward ops of the adapters on the base forward
// ops fwd: for a target GEMM of M×K·K×N per device (K split under
// tensor parallelism for a row-parallel layer, N for a column-parallel
// one, as the adapters' A and B are split with their layer), A is
// M×K·K×r and B M×r·r×N, each with the target's count.
func (w lora) adapters(fwd []model.Op, act model.DType) []model.Op {
	d := adapterType(act)
	var out []model.Op
	for _, op := range fwd {
		g, ok := op.Kernel.(model.GEMM)
		if !ok || !w.targets(op.Name) {
			continue
		}
		if w.l.Dropout > 0 {
			n := float64(g.M) * float64(g.K)
			// Read the input, write the dropped input and a one-byte mask.
			out = append(out, model.Op{Name: "lora." + op.Name + ".dropout", Stage: op.Stage, Class: model.ClassOther, Count: op.Count,
				Kernel: model.Elementwise{Kind: "dropout", Elements: n, Work: model.FLOPs(2 * n), Read: d.Bytes(n), Written: d.Bytes(n) + model.Bytes(n)}})
		}
		out = append(out,
			model.Op{Name: "lora." + op.Name + ".a", Stage: op.Stage, Class: model.ClassOther, Count: op.Count,
				Kernel: model.GEMM{M: g.M, K: g.K, N: w.l.Rank, A: d, B: d, C: d}},
			model.Op{Name: "lora." + op.Name + ".b", Stage: op.Stage, Class: model.ClassOther, Count: op.Count,
				Kernel: model.GEMM{M: g.M, K: w.l.Rank, N: g.N, A: d, B: d, C: d}})
	}
	return out
}

func (w lora) targets(name string) bool {
	for _, t := range w.l.Targets {
		if name == t {
			return true
		}
	}
	return false
}

// Ops adds the adapters to a training pass and drops the base weight
// gradients from the backward one.
func (w lora) Ops(ph sim.Phase) ([]model.Op, error) {
	ops, err := w.Workload.Ops(ph)
	if err != nil || (ph.Kind != sim.TrainForward && ph.Kind != sim.TrainBackward) {
		return ops, err
	}
	if ph.Kind == sim.TrainForward {
		return append(ops, w.adapters(ops, ph.Act)...), nil
	}
	f := ph
	f.Kind = sim.TrainForward
	fwd, err := w.Workload.Ops(f)
	if err != nil {
		return nil, err
	}
	out := make([]model.Op, 0, len(ops)+3*len(w.l.Targets))
	for _, op := range ops {
		if !strings.HasSuffix(op.Name, ".wgrad") {
			out = append(out, op)
		}
	}
	ad := w.adapters(fwd, ph.Act)
	for i := len(ad) - 1; i >= 0; i-- {
		op := ad[i]
		switch k := op.Kernel.(type) {
		case model.GEMM:
			// dX = dY·Bᵀ (M×N·N×K), dB = Xᵀ·dY (K×M·M×N).
			dg, wg := k, k
			dg.K, dg.N = k.N, k.K
			wg.M, wg.K, wg.N = k.K, k.M, k.N
			out = append(out,
				model.Op{Name: op.Name + ".dgrad", Stage: op.Stage, Class: op.Class, Count: op.Count, Kernel: dg},
				model.Op{Name: op.Name + ".wgrad", Stage: op.Stage, Class: op.Class, Count: op.Count, Kernel: wg})
		default:
			// The dropout's backward: read the gradient and the mask,
			// write the gradient.
			op.Name += ".bwd"
			out = append(out, op)
		}
	}
	return out, nil
}

// adapterParams returns the adapters' parameters per device in a pass's
// forward ops (A: K·r, B: r·N per layer).
func (w lora) adapterParams(fwd []model.Op) float64 {
	var p float64
	for _, op := range fwd {
		if g, ok := op.Kernel.(model.GEMM); ok && strings.HasPrefix(op.Name, "lora.") {
			p += float64(op.Count) * float64(g.K) * float64(g.N)
		}
	}
	return p
}

// AdapterParams returns the adapters' parameters on the whole model (no
// tensor parallelism).
func (l LoRA) AdapterParams(w sim.Workload) (float64, error) {
	lw := lora{w, l}
	ops, err := lw.Ops(sim.Phase{Kind: sim.TrainForward, Batch: 1, Seq: 1, Weights: model.BF16, Act: model.BF16, KV: model.BF16, TP: 1})
	if err != nil {
		return 0, err
	}
	p := lw.adapterParams(ops)
	if p == 0 {
		return 0, fmt.Errorf("%s has none of the LoRA targets %s", w.Name(), strings.Join(l.Targets, ", "))
	}
	return p, nil
}
