package hardware

import (
	"fmt"
	"sort"
	"strings"

	"github.com/perfsim/perfsim/model"
)

// An EngineAllReduce is a serving engine's own all-reduce kernel, as
// measured on the devices it has been measured on.
type EngineAllReduce struct {
	// Dispatch holds what the engine's code decides (the stage
	// thresholds, the size handed to NCCL, the rank counts); Measured
	// the latencies and efficiencies, by device name (Device.Name).
	Dispatch model.AllReduceKernel
	Measured map[string]model.AllReduceKernel
	Source   string
}

// engineAllReduces are the engines' all-reduce kernels by name.
//
// vllm: vLLM's custom all-reduce. Dispatch from vLLM v0.6.0's code
// (vllm/distributed/device_communicators/custom_all_reduce.py: world
// sizes 2, 4, 6 and 8, messages below max_size 8 MiB, and only on fully
// NVLink-connected GPUs above two; csrc/custom_all_reduce.cuh allreduce:
// the one-stage kernel at 2 GPUs, below 512 KiB at up to 4 and below
// 256 KiB at up to 8, the two-stage kernel above), unchanged through
// v0.14. Latencies and efficiencies fitted (least squares on relative
// error, one pair per stage count, against the link's bandwidth) to
// aiconfigurator's measurements of vLLM 0.14.0's kernel in a CUDA graph,
// bf16 (ai-dynamo/aiconfigurator@095f58a5
// systems/data/<gpu>/comm/vllm/0.14.0/custom_allreduce_perf.parquet,
// kernel_source vLLM_custom_graph; message_size counts elements), on the
// rows vLLM 0.14 sends to this kernel by its dispatch: below 8 MiB at 2
// and 4 GPUs, and at 8 GPUs below 256 KiB (on Hopper 0.14 hands larger
// messages at 8 GPUs to its symmetric-memory path,
// CUSTOM_ALL_REDUCE_MAX_SIZES in all_reduce_utils.py). The two-stage pair
// rests on the 4-GPU rows from 512 KiB to 4 MiB alone (4 points).
// Leave-one-out |error| (median / p90): A100 80GB SXM one-stage 5.4% /
// 11.0% (36 points), two-stage 0.3% / 0.5%; H100 SXM 2.6% / 5.3%, 8.8% /
// 13.3%; H200 SXM 2.9% / 6.2%, 9.9% / 14.4%. At 4 GPUs on an H100 it
// measures 4.97, 5.84 and 7.10 µs at 32, 128 and 256 KB and 11.36 µs at
// 512 KB (TensorRT-LLM 1.3's one-shot kernel there: 5.48 µs at 256 KB).
var engineAllReduces = map[string]EngineAllReduce{
	"vllm": {
		Dispatch: model.AllReduceKernel{OneStageBelow4: 512 << 10, OneStageBelow8: 256 << 10, MaxSize: 8 << 20,
			Ranks: 1<<2 | 1<<4 | 1<<6 | 1<<8},
		Measured: map[string]model.AllReduceKernel{
			"A100 80GB SXM": {OneStageLatency: 5.348e-6, OneStageEfficiency: 0.6410, TwoStageLatency: 10.68e-6, TwoStageEfficiency: 0.6819},
			"H100 SXM":      {OneStageLatency: 4.480e-6, OneStageEfficiency: 0.6039, TwoStageLatency: 8.146e-6, TwoStageEfficiency: 0.6513},
			"H200 SXM":      {OneStageLatency: 4.586e-6, OneStageEfficiency: 0.6111, TwoStageLatency: 7.297e-6, TwoStageEfficiency: 0.6469},
		},
		Source: "vLLM v0.6.0 custom_all_reduce.py and csrc/custom_all_reduce.cuh (dispatch); fitted to aiconfigurator's vLLM 0.14.0 custom_allreduce_perf (graph) tables",
	},
}

// AllReduceKernels lists the names EngineAllReduceOn takes, sorted.
func AllReduceKernels() []string {
	names := make([]string, 0, len(engineAllReduces))
	for n := range engineAllReduces {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// EngineAllReduceOn returns the all-reduce kernel name runs on device d's
// intra-node link, and whether it has been measured there; where it has
// not (another device, or GPUs not joined by a switch, where the engine
// would not run it above two), ok is false and the device's own
// collectives price the all-reduce. An unknown name is an error.
func EngineAllReduceOn(name string, d *Device) (k model.AllReduceKernel, ok bool, err error) {
	e, found := engineAllReduces[strings.ToLower(name)]
	if !found {
		return k, false, fmt.Errorf("hardware: unknown all-reduce kernel %q (want %s)", name, strings.Join(AllReduceKernels(), ", "))
	}
	if d == nil || d.Intra.Topology != "switch" {
		return k, false, nil
	}
	m, found := e.Measured[d.Name]
	if !found {
		return k, false, nil
	}
	k = e.Dispatch
	k.OneStageLatency, k.OneStageEfficiency = m.OneStageLatency, m.OneStageEfficiency
	k.TwoStageLatency, k.TwoStageEfficiency = m.TwoStageLatency, m.TwoStageEfficiency
	return k, true, nil
}
