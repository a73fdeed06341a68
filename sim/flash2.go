package sim

import (
	"fmt"
	"sort"
	"strings"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// AttentionKernel is the fused attention kernel a run's prefills (a
// transformer's forward pass, a diffusion model's attention layers) are
// priced as.
type AttentionKernel uint8

// The attention kernels.
const (
	// AttentionEngine is the device's calibrated kernel (its hardware
	// file's [efficiency.attention]: the serving engines' kernels,
	// TensorRT-LLM's context FMHA where calibrated).
	AttentionEngine AttentionKernel = iota
	// AttentionFA2 is FlashAttention-2, priced from its measured forward
	// throughput on the device (flash2Rates): what an eager PyTorch model
	// calls through the flash_attn package (xDiT's attention processors,
	// HF transformers' "flash_attention_2") or PyTorch's
	// scaled_dot_product_attention flash backend. Its kernels are
	// compiled for head dims in steps of 32, so a head dim of 72 runs at
	// 96; on Hopper and Blackwell they use the Ampere-generation tensor
	// core instructions. On the B200 that is far below the engines'
	// kernels; on the H100 one measured point (non-causal, 8k tokens)
	// prices every shape, optimistic for short and causal prefills.
	// Decode steps keep the calibrated kernel.
	AttentionFA2
)

var attentionKernelNames = [...]string{"engine", "fa2"}

func (k AttentionKernel) String() string {
	if int(k) < len(attentionKernelNames) {
		return attentionKernelNames[k]
	}
	return fmt.Sprintf("AttentionKernel(%d)", k)
}

// ParseAttentionKernel parses "engine" or "fa2" (also "flash-attention-2",
// "flash_attention_2").
func ParseAttentionKernel(s string) (AttentionKernel, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "engine", "calibrated":
		return AttentionEngine, nil
	case "fa2", "flash-attention-2", "flash_attention_2":
		return AttentionFA2, nil
	}
	return 0, fmt.Errorf("unknown attention kernel %q (want engine or fa2)", s)
}

// flash2Step is FlashAttention-2's head-dim step: flash_attn's
// csrc/flash_attn/flash_api.cpp rounds the head size to a multiple of 32
// (head_size_rounded = round_multiple(head_size, 32)) and dispatches the
// kernel compiled for it (run_mha_fwd_hdim32 … hdim256).
const flash2Step = 32

// flash2Lengths are the sequence (KV) lengths of the measured points.
var flash2Lengths = []int{512, 1024, 2048, 4096, 8192, 16384}

// flash2Rates are FlashAttention-2's measured forward throughputs (bf16,
// no causal mask, FlashAttention's FLOP count) by catalog device, at head
// dims 64 and 128 and the KV lengths flash2Lengths, by the device's name.
var flash2Rates = map[string]*model.FlashRates{
	// B200: head dim 64 from Dao-AILab/flash-attention issue #1589
	// ("benchmark is low on B200", 2025-04-13: flash_attn 2.7.4.post1,
	// torch 2.8.0 cu128, benchmarks/benchmark_flash_attention.py, batch ×
	// sequence 16k tokens, 32 heads); head dim 128 from
	// meta-pytorch/tritonbench pull request #171 (2025-03-04: flash_v2 on
	// B200, batch 8, 16 heads).
	"B200": {
		DimStep: flash2Step, Dims: []int{64, 128}, KV: flash2Lengths,
		Rate: [][]model.FLOPRate{
			{308.40e12, 359.30e12, 380.99e12, 306.94e12, 343.07e12, 379.44e12},
			{245.26e12, 315.11e12, 352.10e12, 353.91e12, 361.59e12, 330.59e12},
		},
		Source: "FlashAttention-2 forward on B200: Dao-AILab/flash-attention#1589 (head dim 64), meta-pytorch/tritonbench#171 (head dim 128)",
	},
	// H100 SXM: Dao-AILab/flash-attention pull request #1791 (2025-07-31,
	// hopper/benchmark_attn.py on main): "Fav2 fwd: 2.972ms, 369.9 TFLOPS"
	// at head dim 128, sequence 8,192, no causal mask, beside FlashAttention-3
	// at 659.1 (which runs on Hopper only). One point, for every head dim
	// and length; Shah et al., "FlashAttention-3" (2024), put FA2 at 35% of
	// the H100 SXM5's 989 TFLOP/s (346), within 7% of it.
	"H100 SXM": {
		DimStep: flash2Step, Dims: []int{128}, KV: []int{8192},
		Rate:   [][]model.FLOPRate{{369.9e12}},
		Source: "FlashAttention-2 forward on H100 SXM: Dao-AILab/flash-attention#1791 (head dim 128, sequence 8192)",
	},
}

// attentionKernel sets p to price prefill attention with kernel k on d,
// refusing a kernel with no measurement for d.
func attentionKernel(p *model.Processor, d *hardware.Device, k AttentionKernel) error {
	switch k {
	case AttentionEngine:
		return nil
	case AttentionFA2:
		f, ok := flash2Rates[d.Name]
		if !ok {
			have := make([]string, 0, len(flash2Rates))
			for n := range flash2Rates {
				have = append(have, n)
			}
			sort.Strings(have)
			return &ScenarioError{"attention", fmt.Errorf("no FlashAttention-2 measurement for %s (measured: %s)", d.Name, strings.Join(have, ", "))}
		}
		p.Eff.Attention.Rates = f
		return nil
	}
	return &ScenarioError{"attention", fmt.Errorf("unknown attention kernel %d (want engine or fa2)", k)}
}

// fa2MLA refuses FlashAttention-2 for a workload whose attention is
// multi-head latent attention on a device with a calibrated MLA kernel:
// that kernel prices MLA whatever the flag says (model.AttentionParams
// applies Rates to other attention only), so the flag would be silently
// ignored. It looks at the workload's prefill kernels only when both hold.
func fa2MLA(p *model.Processor, w Workload, sc Scenario) error {
	if sc.Attention != AttentionFA2 || p.Eff.MLA.Source == "" {
		return nil
	}
	ops, err := w.Ops(Phase{Kind: Prefill, Batch: 1, Seq: 1, Weights: sc.Weights, Act: sc.Act, KV: sc.KV, TP: 1})
	if err != nil {
		return nil // the run itself reports it
	}
	for _, o := range ops {
		if a, ok := o.Kernel.(model.Attention); ok && model.IsMLA(a) {
			return &ScenarioError{"attention", fmt.Errorf("%s uses multi-head latent attention, which %s prices with its calibrated MLA kernel; FlashAttention-2 does not apply (drop --attention fa2)", w.Name(), p.Name)}
		}
	}
	return nil
}
