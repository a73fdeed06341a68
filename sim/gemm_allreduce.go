package sim

import (
	"github.com/perfsim/perfsim/model"
)

// TensorRT-LLM's gemm_allreduce_plugin (Scenario.GEMMAllReduce) replaces
// each row-parallel linear layer's GEMM and the TP all-reduce that
// follows it with one kernel: CUTLASS's warp-specialized persistent GEMM
// whose epilogue stores each output tile to a buffer mapped for NVLink
// multicast, while a collective warp group waits for that tile on every
// rank (a system barrier per tile), reduces its share of the tiles in
// the switch (multimem.ld_reduce) and multicasts the sums back
// (multimem.st), beside the MMA warps computing the next tiles
// (NVIDIA/TensorRT-LLM cpp/tensorrt_llm/kernels/cutlass_kernels/
// allreduce_gemm: kernel/sm90_gemm_allreduce_tma_warpspecialized_pingpong.hpp
// and communication/sm90_allreduce_nvls_warpspecialized.hpp, "NVLS
// two-shot"; RowLinear in tensorrt_llm/layers/linear.py calls it when the
// plugin is set). NVIDIA's MLPerf Inference v5.0 and v5.1 Llama 3.1 405B
// engines on eight H200s set it (trtllm_build_flags
// 'gemm_allreduce_plugin': 'float16').
//
// The tiles come out in W waves of the GEMM (GEMMChoice.Waves, at least
// one); the reduction of a wave runs during the next wave's arithmetic,
// so the fused kernel takes the longer of the GEMM g and the all-reduce
// c plus the shorter one's last (or first) wave:
//
//	t = max(g, c) + min(g, c)/W
//
// and the all-reduce op is charged t − g beyond its GEMM. With one wave
// (a decode step's few rows) nothing overlaps: g + c, the unfused price.
// The all-reduce's own time c is the device's, as it prices the
// collective alone (NCCL's NVLink SHARP all-reduce is the same
// in-switch reduction).

// fusedPairs names each row-parallel GEMM whose output a TP all-reduce
// reduces, by the all-reduce's op name.
var fusedPairs = map[string]string{
	"attn.allreduce": "attn.out",
	"ffn.allreduce":  "ffn.down",
}

// fuseGEMMAllReduce pairs, in place, each TP all-reduce of ops with the
// row-parallel GEMM it reduces (model.Collective.Beside), where the pass
// has that GEMM for as many layers; an all-reduce without one (a mixture
// of experts' FFN, whose outputs are combined first) stays a kernel of
// its own.
func fuseGEMMAllReduce(ops []model.Op) {
	for i := range ops {
		name, ok := fusedPairs[ops[i].Name]
		if !ok {
			continue
		}
		c, ok := ops[i].Kernel.(model.Collective)
		if !ok || c.Kind != model.AllReduce {
			continue
		}
		for _, o := range ops {
			g, ok := o.Kernel.(model.GEMM)
			if ok && o.Name == name && o.Count == ops[i].Count {
				c.Beside = g
				ops[i].Kernel = c
				break
			}
		}
	}
}

// besideGEMM returns what an all-reduce of time t fused with the GEMM g
// (its output's producer) takes beyond g.
func (c *coster) besideGEMM(g model.GEMM, t model.Seconds) model.Seconds {
	gc, _ := c.gemmCost(g)
	_, ch := c.p.GEMMDetail(g)
	w := model.Seconds(max(ch.Waves, 1))
	tg := gc.Time
	return max(tg, t) + min(tg, t)/w - tg
}
