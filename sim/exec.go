package sim

import (
	"fmt"
	"strings"

	"github.com/perfsim/perfsim/model"
)

// Exec is how a framework runs a pass's kernels.
type Exec uint8

// The execution modes.
const (
	// ExecGraph launches the kernels back to back with only the device's
	// launch cost between them, as a captured graph (CUDA graphs,
	// torch.compile, XLA) or a host far ahead of the device runs them.
	// It is the default, and what perfsim priced before execution modes.
	ExecGraph Exec = iota
	// ExecEager dispatches every kernel from the host, as eager PyTorch
	// does: the host spends HostOverhead per kernel, and a kernel starts
	// when both the host has issued it and the device has finished the
	// one before (see hostPipeline). A small batch is host-bound.
	ExecEager
	// ExecFused runs the graph an inference engine builds (TensorRT): a
	// CNN's batch norms folded into the convolutions, activations in the
	// epilogues (workloads' FuseCNN), launched from a captured graph.
	ExecFused
)

func (e Exec) String() string {
	if int(e) < len(execNames) {
		return execNames[e]
	}
	return fmt.Sprintf("Exec(%d)", e)
}

var execNames = [...]string{"graph", "eager", "fused"}

// ParseExec parses "graph", "eager" or "fused" (also "tensorrt", "trt").
func ParseExec(s string) (Exec, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "graph", "cuda-graphs", "compiled":
		return ExecGraph, nil
	case "eager":
		return ExecEager, nil
	case "fused", "tensorrt", "trt":
		return ExecFused, nil
	}
	return 0, fmt.Errorf("unknown execution mode %q (want graph, eager or fused)", s)
}

// DefaultHostOverhead is the host time eager PyTorch spends per kernel
// (the Python module call, the dispatcher, cuDNN's or cuBLAS's host-side
// setup and the launch), used when Scenario.HostOverhead is 0. It is
// fitted, not measured by us: NVIDIA DeepLearningExamples' ResNet-50 v1.5
// inference on a DGX-1 V100 in FP32 at batch 1 (10.37 ms over the 175
// kernels perfsim's ResNet-50 graph launches, whose device time is 1.9
// ms) gives 58 µs per kernel; the 143 other inference rows of that table
// (other batches, precisions and the T4) are held out
// (cmd/perfsim TestDLE_resnet50). It depends on the host CPU and the
// framework version: give --host-overhead for yours.
const DefaultHostOverhead model.Seconds = 58e-6

// hostPipeline returns the time of a pass run eagerly: the host issues
// launch i at i·h (it never waits for the device: launches queue), and
// the device starts it at the later of that and the end of launch i−1.
// The rows are the pass's ops in launch order, each Count launches of
// Time/Count.
func hostPipeline(rows []OpRow, h model.Seconds) model.Seconds {
	return hostPipelineOf(rows, h, func(r *OpRow) model.Seconds { return r.Time })
}

// hostPipelineOf is hostPipeline over the device times time(row) gives
// (a row's Time, Low or High).
func hostPipelineOf(rows []OpRow, h model.Seconds, time func(*OpRow) model.Seconds) model.Seconds {
	var host, dev float64
	hh := float64(h)
	for i := range rows {
		r := &rows[i]
		if r.Count <= 0 {
			continue
		}
		t := float64(time(r)) / float64(r.Count)
		for range r.Count {
			host += hh
			dev = max(dev, host) + t
		}
	}
	return model.Seconds(dev)
}

// eager rescales a pass's time to the host-bound pipeline when the
// scenario runs eagerly: the time becomes hostPipeline's and the op rows
// keep their proportions (the host's wait is spread over the ops in
// proportion to their device time). The band's ends are the pipeline's
// over the ops' low and high times: the host's time, an assumption and
// not a fit, carries no kernel error (it had been stretched with the
// band, so a host-bound resnet50 on a T4 read ±10% of the kernels').
func (r *runner) eager(ph *PhaseReport) {
	if r.sc.Exec != ExecEager || ph.Time <= 0 {
		return
	}
	h := r.sc.HostOverhead
	if h <= 0 {
		h = DefaultHostOverhead
	}
	t := hostPipeline(ph.Ops, h)
	if t <= ph.Time {
		return
	}
	f := float64(t) / float64(ph.Time)
	// Each op's band is the pass's, in proportion to its time, so that
	// it holds the time and the ops sum to the pipeline's band (the
	// pipeline is monotone in the ops' times: low ≤ t ≤ high).
	lo := float64(hostPipelineOf(ph.Ops, h, func(r *OpRow) model.Seconds { return r.Low })) / float64(t)
	hi := float64(hostPipelineOf(ph.Ops, h, func(r *OpRow) model.Seconds { return r.High })) / float64(t)
	lo, hi = min(lo, 1), max(hi, 1)
	ph.Wait = t - ph.Time
	for i := range ph.Ops {
		o := &ph.Ops[i]
		tt := f * float64(o.Time)
		o.Time, o.Low, o.High = model.Seconds(tt), model.Seconds(lo*tt), model.Seconds(hi*tt)
	}
	ph.total()
	ph.Bound = model.LatencyBound
	ph.HostBound = true
}
