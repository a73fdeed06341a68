package serve

import (
	"fmt"
	"math"
	"slices"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// How vLLM sizes its KV cache, in both versions the presets name: v0.6.0
// (V0, the vllm-0.6 preset) and v0.10 (V1, the vllm preset). Read at
// vllm-project/vllm v0.6.0 (vllm/worker/worker.py, model_runner.py,
// distributed/device_communicators/custom_all_reduce.py) and, for V1, in
// vllm/v1/worker/gpu_worker.py with vllm/utils memory_profiling as
// vllm-project/vllm#19312 (June 2025, before v0.10.0) made them and as
// they stood until #25359 (22 September 2025, after v0.10.2) moved the
// first reading after NCCL's start. The two differ in how they measure,
// not in what they leave out:
//
//   - v0.6.0: Worker.init_device sets the device, empties the cache and
//     reads init_gpu_memory = cudaMemGetInfo's free memory, and only then
//     brings up the distributed environment (NCCL, pynccl, the custom
//     all-reduce); determine_num_available_blocks runs the profile and
//     takes peak = init_gpu_memory − free memory after it, so the peak
//     holds the weights, the activations the caching allocator kept, and
//     every allocation outside torch since the first reading; num_gpu_blocks
//     = ⌊(total × gpu_memory_utilization − peak) / block bytes⌋, total
//     cudaMemGetInfo's total.
//   - v0.10: init_device takes a MemorySnapshot (free, total, torch
//     reserved) before init_worker_distributed_environment; after the
//     profile run, memory_profiling counts weights (torch allocated while
//     loading) + the torch allocated peak's rise in the profile + the rise
//     of non-torch memory (cudaMemGetInfo's used less torch's reserved)
//     since that snapshot; the KV cache gets total × gpu_memory_utilization
//     less that, in whole blocks of every layer (kv_cache_utils.py:
//     num_blocks = bytes // page size // layers).
//
// So in both the CUDA context (created before the first reading) is not
// counted, and lives with the CUDA graphs (captured after the KV cache is
// allocated: v0.6.0 Worker._warm_up_model, v0.10
// compile_or_warm_up_model) and allocator slack in the 1 −
// gpu_memory_utilization left over; NCCL's buffers and the custom
// all-reduce's, allocated after it, are counted inside the fraction
// (VLLMNonTorch for v0.10, VLLM06NonTorch for v0.6.0).

// VLLMNonTorchBase is the memory outside torch that vLLM counts at TP 1
// (cuBLAS handles, kernels loaded on first use, attention backends'
// buffers): 0.16 GiB, "non_torch_memory takes 0.16GiB" in the log of
// vllm-project/vllm#12126 (January 2025, V0's memory_profiling, which
// counts from a reading taken after the CUDA context as both presets' code
// does; one H100 80GB, TP 1, a Llama 3.2 11B model). One measured figure,
// taken for every device.
const VLLMNonTorchBase = model.Bytes(0.16 * gib)

// VLLMCommBuffers is the memory NCCL's communicators and vLLM's custom
// all-reduce take on each device at TP × PP > 1 under vLLM V1 at v0.10
// (the vllm preset), counted inside gpu_memory_utilization. ASSUMED: no
// per-device or per-TP figure for that version was found; 4.52 GiB is
// the one public reading, vllm-project/vllm#25359 (September 2025, vLLM
// V1 at about v0.10, NCCL 2.26, on 80 GB GPUs, the TP size not stated,
// Ray's backend): free memory 78.59 GiB before NCCL's start and 74.07
// GiB after ("NCCL buffers (~4.5 GiB for tensor parallelism)"). v0.10 runs
// NCCL 2.26, whose buffers differ from v0.6.0's (NVLink SHARP's are a
// sixth of 2.20's: nvls.cc at v2.21.5 sizes them by NCCL_NVLS_CHUNKSIZE,
// and 2.22 connects a protocol's buffers only when first used), so
// v0.6.0's figures (VLLM06NonTorch) do not carry over.
const VLLMCommBuffers = model.Bytes(4.52 * gib)

// VLLMNonTorch returns the memory outside torch that vLLM V1 (v0.10)
// counts against gpu_memory_utilization on each device of a replica of
// ranks devices: VLLMNonTorchBase, and VLLMCommBuffers when there is
// more than one rank.
func VLLMNonTorch(ranks int) model.Bytes {
	if ranks > 1 {
		return VLLMNonTorchBase + VLLMCommBuffers
	}
	return VLLMNonTorchBase
}

// What vLLM v0.6.0 counts of NCCL. Its determine_num_available_blocks
// counts, as peak, all the free memory lost since init_device's reading,
// taken before init_worker_distributed_environment, so every buffer NCCL
// and the custom all-reduce allocate by the end of the profile run is
// inside gpu_memory_utilization: pynccl's communicator on the TP group
// (created and warmed up with an all-reduce at start-up),
// torch.distributed's own communicator on the same group (created by the
// first collective torch runs on it, the gather of the logits in the
// profile run), and the custom all-reduce's IPC buffers (about 24 MiB).
// v0.6.0 ran NCCL 2.20.5 (torch 2.4.0's; "vLLM API server version 0.6.0
// … vLLM is using nccl==2.20.5" in its logs), which sets up every ring
// and tree connection, and NVLink SHARP (NVLS) where there is one, when
// a communicator is created (init.cc; runtime connection came in 2.22).
// Two terms:
//
//   - VLLM06CommBase, at more than one rank: measured, vLLM V0's own
//     profile at two GPUs, where NVLS is off.
//   - NVLS, at more than two GPUs of one node behind an NVSwitch of NVLink
//     4 or later (NCCL 2.20.5 src/transport/nvls.cc ncclNvlsInit: off at
//     gpuCount <= 2 and across nodes; src/graph/search.cc: an NVSwitch
//     and compute capability 9.0 or more): each communicator binds
//     nChannels × 2 × (NCCL_BUFFSIZE + 2 MiB) × nHeads bytes on each
//     device (ncclNvlsSetup: buffSize, NVLS_MEM_ALIGN_SIZE; nHeads the
//     GPUs of the node, search.cc), nChannels its collective channels,
//     24 on H100 and H200 boards (nvlsPerRankSize 301,989,888 B =
//     24 × 12 MiB in the NCCL log quoted by vllm-project/vllm#9699). For
//     the two communicators that is 576 MiB × TP: 2.25 GiB at TP 4, 4.5
//     GiB at TP 8. vllm#9699 (October 2024, vLLM V0 on NCCL 2.20.5, eight
//     H200s, Llama 3.1 405B at TP 8) measured NVLS's share: 17,595 KV
//     blocks with it and 227xx without, 4.91 to 5.00 GiB of 1,032,192-B
//     blocks, against 4.5 GiB here.

// VLLM06CommBase is what vLLM V0 counts of NCCL and the custom all-reduce
// at two GPUs: 1.79 GiB, its own profile's non_torch_memory of Llama 3 8B
// on H100s at TP 2 (3.58 GiB) less that at TP 1 (1.79 GiB) in
// vllm-project/vllm#10511 (December 2024, V0's worker.py; NCCL 2.21,
// whose ring and tree buffers have 2.20's default sizes, NCCL_BUFFSIZE 4
// MiB and the LL and LL128 buffers; NVLS off at two GPUs). That
// version's TP 1 figure (1.79 GiB, against 0.16 GiB once #12126 polished
// the count) holds more than NCCL, so only the difference is taken; that
// TP 2 reads exactly twice TP 1 may be chance, and is a caveat: no other
// reading of V0's own count at two GPUs was found. SGLang's log
// at TP 2 a week before its v0.4.0, on vLLM 0.6's distributed package
// (SGLangDistributed), reads 1.64 GiB past the CUDA context. Taken for
// every device and every TP × PP > 1: the ring and tree buffers grow
// with NCCL's channels, not its ranks; other boards' channel counts were
// not found.
const VLLM06CommBase = model.Bytes(1.79 * gib)

// The NCCL 2.20.5 constants of NVLS's buffers (src/init.cc
// DEFAULT_BUFFSIZE, src/transport/nvls.cc NVLS_MEM_ALIGN_SIZE) and the
// collective channels NCCL builds on an H100 or H200 board (vllm#9699's
// log, above).
const (
	NCCLBuffSize       = model.Bytes(4 << 20)
	NCCLNVLSMemAlign   = model.Bytes(2 << 20)
	NCCLHopperChannels = 24
)

// NVLinkSHARP reports whether NCCL 2.20 sets up NVLink SHARP buffers for
// a TP group of tp devices of sys: more than two, all in one node, joined
// by a switch that reduces in the network (interconnect.intra
// in_network_reduction "nvlink-sharp" on topology "switch",
// hardware.Network.SHARP: the third-generation NVSwitch and later, on
// HGX H100, H200 and B200 boards and the GB200 NVL72; not the A100's
// second-generation NVSwitch, an NVLink bridge, PCIe, Infinity Fabric or
// ICI). NCCL's own test is the device's multicast support
// (ncclNvlsInit: CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED), which such a
// switch gives. A hardware file that does not say is read as having
// none; NVLinkSHARPUnstated says where that reading decides the count.
func NVLinkSHARP(sys *hardware.System, tp int) bool {
	if !nvlsGroup(sys, tp) {
		return false
	}
	sharp, _ := sys.Intra.SHARP()
	return sharp
}

// nvlsGroup reports whether tp devices of sys are a group NCCL 2.20.5
// would set NVLS up for on a switch that has it: more than two, in one
// node.
func nvlsGroup(sys *hardware.System, tp int) bool {
	return sys != nil && sys.Device != nil && tp > 2 && tp <= sys.DevicesPerNode
}

// NVLinkSHARPUnstated returns a warning where NVLinkSHARP's answer for a
// TP group of tp devices of sys rests on a hardware file that does not
// say whether its switch reduces in the network: a group NCCL would set
// NVLS up for (more than two devices in one node) behind a switch
// (topology "switch") without in_network_reduction, counted as none.
// nil elsewhere: the catalog states it for every device.
func NVLinkSHARPUnstated(sys *hardware.System, tp int) error {
	if !nvlsGroup(sys, tp) || sys.Intra.Topology != "switch" {
		return nil
	}
	if _, stated := sys.Intra.SHARP(); stated {
		return nil
	}
	return fmt.Errorf("%s: interconnect.intra does not say whether its switch reduces in the network (in_network_reduction), so vLLM v0.6's memory counts no NVLink SHARP buffers at TP %d; a switch with them (third-generation NVSwitch and later: HGX H100, H200, B200) takes %s more per device, off the KV cache. Give in_network_reduction = %q or %q",
		sys.Device.Name, tp, (2 * nvlsBytes(tp)).BinaryString(), hardware.ReductionNVLinkSHARP, hardware.ReductionNone)
}

// nvlsBytes is the NVLS memory one NCCL 2.20.5 communicator of tp GPUs
// binds on each device of a switch that has it (NVLSBuffers).
func nvlsBytes(tp int) model.Bytes {
	return model.Bytes(NCCLHopperChannels*2*tp) * (NCCLBuffSize + NCCLNVLSMemAlign)
}

// NVLSBuffers returns the NVLS memory one NCCL 2.20.5 communicator of tp
// GPUs binds on each device where NVLinkSHARP holds:
// NCCLHopperChannels × 2 × (NCCLBuffSize + NCCLNVLSMemAlign) × tp; 0
// elsewhere. (Blackwell boards are given the Hopper channel count; NCCL
// 2.20 predates them.)
func NVLSBuffers(sys *hardware.System, tp int) model.Bytes {
	if !NVLinkSHARP(sys, tp) {
		return 0
	}
	return nvlsBytes(tp)
}

// VLLM06NonTorch returns the memory outside torch that vLLM v0.6.0
// counts against gpu_memory_utilization on each device of a replica of
// tp × pp devices of sys: VLLMNonTorchBase; at more than one rank
// VLLM06CommBase; and the NVLS buffers of its two TP communicators
// (2 × NVLSBuffers).
func VLLM06NonTorch(sys *hardware.System, tp, pp int) model.Bytes {
	tp, pp = max(tp, 1), max(pp, 1)
	b := VLLMNonTorchBase
	if tp*pp > 1 {
		b += VLLM06CommBase
	}
	return b + 2*NVLSBuffers(sys, tp)
}

// NonTorchModel names which vLLM version's count of the memory outside
// torch a preset follows (Engine.NonTorch).
type NonTorchModel uint8

// The non-torch models.
const (
	// NonTorchV1 is vLLM V1's at v0.10 (VLLMNonTorch), and the zero value.
	NonTorchV1 NonTorchModel = iota
	// NonTorchV06 is vLLM v0.6.0's (VLLM06NonTorch).
	NonTorchV06
)

// nonTorch returns the memory outside torch that e's vLLM version counts
// on each device of p's replica.
func (e *Engine) nonTorch(p *sim.Pricer) model.Bytes {
	sc := p.Scenario()
	if e.NonTorch == NonTorchV06 {
		return VLLM06NonTorch(p.System(), sc.TP, sc.PP)
	}
	return VLLMNonTorch(max(sc.TP, 1) * max(sc.PP, 1))
}

// MemoryWarnings returns what e's count of the memory outside torch on
// p's replica rests on that the hardware file does not say: the NVLink
// SHARP buffers of vLLM v0.6's accounting (NVLinkSHARPUnstated), where
// that count sizes the KV cache (no KV cache given, no reserve set in the
// scenario).
func (e *Engine) MemoryWarnings(p *sim.Pricer) []error {
	if p == nil || e.KVTokens > 0 || e.MemBase != OfTotal || e.NonTorch != NonTorchV06 {
		return nil
	}
	sc := p.Scenario()
	if sc.Reserve != nil {
		return nil
	}
	if w := NVLinkSHARPUnstated(p.System(), sc.TP); w != nil {
		return []error{w}
	}
	return nil
}

// addWarnings appends to ws each of more not already in it (by message).
func addWarnings(ws []error, more ...error) []error {
	for _, m := range more {
		if !slices.ContainsFunc(ws, func(w error) bool { return w.Error() == m.Error() }) {
			ws = append(ws, m)
		}
	}
	return ws
}

// VLLMProfileRows is the sequences vLLM's profile run spreads its tokens
// over, each giving one row of logits to the sampler: max_num_seqs, at
// most one per token (v0.6.0 model_runner.py profile_run: max_num_seqs
// dummy sequences of max_num_batched_tokens // max_num_seqs tokens, the
// remainder one each to the first; v0.10 gpu_model_runner.py _dummy_run:
// num_reqs = min(num_tokens, max_num_seqs), then _dummy_sampler_run on
// their last tokens).
func VLLMProfileRows(maxSeqs, maxTokens int) int { return max(min(maxSeqs, maxTokens), 1) }

// VLLMProfilePeak returns the activation peak of vLLM's profile run: the
// larger of the forward pass's working set at max_num_batched_tokens
// (forward, sim's) and the sampler's float32 logits of rows sequences over
// the whole vocabulary (both versions' samplers cast the logits to
// float32, gathered whole on the first rank, the one whose memory binds:
// the executor takes the least over the workers). The logits are a lower
// bound on the sampler's peak (its top-k/top-p sort and probabilities
// make further copies, not counted).
func VLLMProfilePeak(forward model.Bytes, rows, vocab int) model.Bytes {
	return max(forward, model.Bytes(4*float64(rows)*float64(vocab)))
}

// VLLMKVTokens returns the tokens of KV cache vLLM gives one device:
// whole blocks of block tokens of unit bytes each (a token's KV over every
// layer on the device) in total × util − counted, where total is
// cudaMemGetInfo's total (the usable memory) and counted the weights, the
// profile's activation peak, the memory outside torch and any runtime
// buffers. A result under one block is vLLM's "No available memory for the
// cache blocks".
func VLLMKVTokens(total, counted model.Bytes, util, unit float64, block int) float64 {
	b := max(block, 1)
	blocks := math.Floor((float64(total)*util - float64(counted)) / (unit * float64(b)))
	return blocks * float64(b)
}
