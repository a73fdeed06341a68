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
	var host, dev float64
	hh := float64(h)
	for _, r := range rows {
		if r.Count <= 0 {
			continue
		}
		t := float64(r.Time) / float64(r.Count)
		for range r.Count {
			host += hh
			dev = max(dev, host) + t
		}
	}
	return model.Seconds(dev)
}

// eager rescales a pass's time to the host-bound pipeline when the
// scenario runs eagerly: the time becomes hostPipeline's, and the band
// and the op rows keep their proportions (the host's wait is spread over
// the ops in proportion to their device time).
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
	ph.Wait = t - ph.Time
	for i := range ph.Ops {
		o := &ph.Ops[i]
		o.Time, o.Low, o.High = model.Seconds(f*float64(o.Time)), model.Seconds(f*float64(o.Low)), model.Seconds(f*float64(o.High))
	}
	ph.total()
	ph.Bound = model.LatencyBound
	ph.HostBound = true
}
