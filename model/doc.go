// Package model is the vocabulary every other perfsim package shares: typed
// quantities in base SI units, data types, the kernel IR, and the cost of
// one kernel on one device.
//
// # Units
//
// Every quantity is a float64 in base SI units with its own type: Seconds,
// Bytes, FLOPs, FLOPRate, ByteRate, Hertz, Watts, Intensity. Mixing types
// does not compile; cross-unit arithmetic goes through named methods
// (FLOPs.At, Bytes.At, IntensityOf, Ridge). Units are parsed and printed
// only at the edges: each type implements encoding.TextUnmarshaler, so
// TOML, flags and JSON accept "989.5 TFLOP/s", "3.35 TB/s", "80 GiB",
// "4.5 us", "1.98 GHz" and "700 W". GB means 1e9 bytes and GiB 2^30. A
// bare number where a unit is expected is an error naming the unit
// expected. String scales with SI prefixes ("1.23 ms").
//
// # Data types
//
// DType names fp64, fp32, tf32, bf16, fp16, fp8 (E4M3), fp8e5m2, int8,
// int4 and fp4, with their storage size (half a byte for 4-bit types).
// CommType and VocabType give the types collectives and a decoder's
// embedding and LM head keep when the weights are narrower.
//
// # Kernels and their cost
//
// A workload is a list of Ops, each wrapping a Kernel: GEMM, Attention,
// Elementwise, Gather or Collective, and for today's architectures
// GroupedGEMM (a mixture of experts' routed experts, moe.go) and Scan (a
// Mamba-2 mixer's chunked scan, ssm.go, or with Delta a Gated DeltaNet's
// gated delta rule, delta.go). Each kernel knows its FLOPs and the
// minimum bytes it moves. Processor.Cost prices one launch on one device
// with a roofline whose efficiencies come from the hardware file:
//
//	t_compute = F / (P[dtype] · η_c)
//	t_memory  = B / (W · η_m)
//	t         = max(t_compute, t_memory) + t_launch
//
// A fused attention kernel can instead be priced from its measured
// throughput (FlashRates, flash.go: FlashAttention-2 by head dim and KV
// length), set as AttentionParams.Rates.
//
// A what-if processor (whatif.go) holds two sets of efficiencies: its
// own, carried to changed datasheet numbers, and Kept, the calibrated
// device's; For picks per kernel by what its time reads (Changes).
//
// CollectiveTime prices a collective with the alpha-beta ring model over
// one link, its efficiency rising with the message size and the rank
// count (Link HalfSize, Slope and RankFactor); TieredTime (tiers.go) prices it over a two-tier network (the
// scale-up domain and the scale-out fabric) by ring, tree, hierarchical
// or direct algorithms, picking as NCCL's tuner would. A link can carry a
// serving engine's own all-reduce kernel (AllReduceKernel, allreduce.go:
// vLLM's one- and two-stage custom all-reduce), which then prices the
// all-reduces it takes and leaves the rest to the ring.
//
// This package imports nothing outside the standard library.
package model
