// Package hardware describes devices and systems: the TOML schema of a
// hardware file, a strict loader that reports every problem at once with
// its file and line, and an embedded catalog of real accelerators, each
// number with its source.
//
// # Reading guide
//
//   - device.go: Device, Memory, Network and System, the Go API.
//   - load.go and table.go: Load and LoadFile, the decoder of the schema
//     below; validate.go: Validate.
//   - catalog.go: the embedded catalog (devices/*.toml), Catalog, Lookup
//     and Resolve; system.go: NewSystem and system files.
//   - systems.go: the catalog of whole systems with their network tiers
//     (dgx-a100, dgx-h100, hgx-h200, gb200-nvl72, mi300x-platform): the
//     scale-up domain, the scale-out Fabric (NICs per node, bandwidth per
//     NIC, rail optimisation, oversubscription), each number with its
//     source; LookupSystem and System.GroupPerNode. TPU slices (3-D tori
//     without switches) are left out: their collectives are not modelled.
//   - transfer.go: efficiencies carried to a device without its own fit
//     (Transfer, Calibration), and the per-SM datasheet rates they use
//     (SoftmaxRate, SharedBandwidth); derive.go: what-if devices (Derive):
//     each kernel keeps the calibrated base's own tables (Device.Kept) when
//     its roofline reads none of the changed numbers (model.Processor.Reads:
//     an fp8 peak reaches fp8 kernels, not bf16 ones) and carries them
//     otherwise, with the base's residual tables, so a what-if is
//     continuous with its base; a setting equal to the base's value
//     changes nothing.
//   - allreduce.go: serving engines' own all-reduce kernels (vLLM's custom
//     all-reduce), their dispatch from the engine's code and their
//     latencies and efficiencies fitted to measurements on the devices
//     that have them; EngineAllReduceOn.
//
// # The device schema
//
// A hardware file is TOML. Every quantity is a string with its unit
// ("989.5 TFLOP/s", "3.35 TB/s", "80 GB", "4 us"); a bare number where a
// unit is needed is an error. GB means 1e9 bytes and GiB 2^30; rates are
// decimal. Keys not listed here are errors, with the closest key
// suggested.
//
// Top level:
//
//	name            string, required   "H100 SXM"
//	vendor          string, required   "NVIDIA"
//	kind            string, required   gpu, cpu, tpu or accelerator
//	aliases         array of strings   short names for --hw: ["h100"]
//	architecture    string             "Hopper GH100"
//	source          string             where the numbers come from (see Sources)
//	compute_units   integer, required  SMs, CUs, cores, TensorCores, MMEs
//	clock           frequency          "1.98 GHz"
//	tdp             power              "700 W"
//	launch_overhead time               kernel launch overhead, "4 us" (default 0)
//
// [peak.matrix], [peak.vector], [peak.sparse]: compute rates keyed by data
// type (fp64, fp32, tf32, bf16, fp16, fp8, int8, int4, fp4), e.g.
// bf16 = "989.5 TFLOP/s" or int8 = "1979 TOPS". matrix holds the dense
// tensor-core (matrix unit) peaks, vector the dense CUDA-core (vector
// unit) peaks where they differ, sparse the 2:4 structured-sparsity
// peaks where given. At least one dense peak is required; a sparse peak
// needs a dense matrix peak of the same type and may not be below it. A
// type computes at its matrix peak, else its vector peak: an fp32 GEMM on
// an A100 runs on CUDA cores (vector fp32 19.5 TFLOP/s) while tf32 is its
// own type on the tensor cores.
//
// [memory]:
//
//	capacity   size, required       physical memory, "80 GiB" (HBM and GDDR are
//	                                sized in binary units: an "80GB" H100 has 80 GiB)
//	usable     size                 what programs can allocate, the total that
//	                                cudaMemGetInfo / hipMemGetInfo reports,
//	                                "79.11 GiB" (default: the capacity, said so
//	                                in its source); fits are sized against it
//	bandwidth  bandwidth, required  "3.35 TB/s"
//	l2         size                 last-level on-chip cache or SRAM, "50 MB"
//	reserve    size                 held back for the framework (default DefaultReserve, 2 GiB)
//	type       string               "HBM3"
//
// [efficiency] holds the achievable fractions the cost model uses until
// the device is calibrated; its keys are the toml tags of
// model.Efficiency, read by reflection so that parameters added there are
// accepted here:
//
//	vector                      fraction of the vector peak for elementwise arithmetic
//	[efficiency.gemm.<dtype>]   compute, memory (fractions of peak and bandwidth),
//	                            launch (time; default launch_overhead), cta_overhead,
//	                            k_step_floor, split_k_cost (times), overlap_exponent,
//	                            l2_factor, quant_bytes, waves, residual, source, ...
//	[efficiency.memory]         efficiency (fraction), half_size (size), source
//	[efficiency.attention]      compute, memory (fractions), launch (time), source, ...
//	[efficiency.mla]            the [efficiency.attention] keys, for the MLA kernels
//	[efficiency.moe]            compute, compute_fp8, compute_fp4, memory (fractions),
//	                            launch, expert_overhead, launch_fp4,
//	                            expert_overhead_fp4, reduce_element (times), row_tile,
//	                            overlap_exponent, residual, source, ...
//
// Fractions (compute, memory, efficiency, vector) are in (0, 1]; every
// number is finite and not negative.
//
// [power] (power.go, model.PowerParams; docs/energy.md), optional:
//
//	idle                     power    drawn with nothing running (default a tenth of cap)
//	cap                      power    the limit the peaks hold under (default tdp)
//	static, compute, memory  numbers  shares of cap − idle: a running kernel draws
//	                                  idle + (cap − idle)·min(1, static + compute·u_c + memory·u_m)
//	wait                     number   share of cap − idle drawn between kernels while in use
//	                                  (the host's dispatch, pipeline bubbles; default 0.2)
//	sustained                number   share of the compute rate kept when the matrix units run
//	                                  for seconds (training, MLPerf inference runs) against the
//	                                  tables' short bursts (default: not measured, 1)
//	node                     power    the rest of a node (CPUs, memory, NICs, fans)
//
// [interconnect.intra] (the scale-up link within a node),
// [interconnect.inter] (the scale-out network between nodes) and
// [interconnect.host] (the host link), each optional:
//
//	name              string, required     "NVLink 4"
//	bandwidth         bandwidth, required  per device, per direction, "450 GB/s"
//	latency           time                 per message step, "2 us"
//	efficiency        number               achievable fraction of bandwidth (NCCL bus
//	                                       bandwidth / link rate), in (0, 2]; default 1
//	base_latency      time                 fixed cost of one collective; default 0
//	allreduce_latency, allreduce_efficiency  the one-shot all-reduce kernel
//	efficiency_half_size, efficiency_slope   the ring efficiency's rise with
//	                                       message size; default flat
//	efficiency_rank_factor  number         its rise with the rank count
//	                                       (model.Link RankFactor), finite and
//	                                       not negative; default 0
//	devices_per_node  integer (intra only, required)  devices the link joins
//	topology          string (intra only, required)   switch, ring, mesh or torus
//
// # Sources
//
// Every number needs a source. A table's source key covers the numbers in
// it and in the tables below it; a sources inline table overrides it key
// by key: sources = { l2 = "Hopper tuning guide" }. Device.Sources maps
// each dotted key ("peak.matrix.bf16") to its source; defaults carry
// "default: ...". Sources name a datasheet, or say "measured", "fitted",
// "assumed", or the rule used ("sibling: ...").
//
// # Systems
//
// A system file names a device and how many there are:
//
//	device            string, required  a catalog name or a device file (relative to the system file)
//	devices_per_node  integer           default: the device's interconnect.intra.devices_per_node
//	nodes             integer           default 1
//	source            string            for the numbers in [intra] and [inter]
//	[intra], [inter]                    keys of [interconnect.intra] / [interconnect.inter]
//	                                    that override the device's
//
// docs/hardware.md has the same schema with examples, and the catalog.
package hardware
