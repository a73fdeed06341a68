// Package sim puts hardware and workloads together: it costs the ops of a
// workload's phases on a system and answers capacity-planning questions
// (prefill and decode latency, training steps, memory, fit, inverse
// queries, parallel layouts). It prints nothing.
//
// # Reading guide
//
// Start with Run in run.go: it validates a Scenario (scenario.go),
// builds a runner, and hands over to inference or training.
//
//   - workload.go: the Workload interface sim needs (ops of a Phase at a
//     shape, parameter counts, KV bytes per token, weight bytes, the
//     Shape), declared here so that sim never imports package workloads;
//     internal/simload adapts workloads.Model to it.
//   - scenario.go: what is asked — mode, batch, lengths, data types,
//     parallel degrees (TP, PP, DP), recomputation, optimizer, ZeRO stage —
//     and Validate, whose *ScenarioError names the offending field as its
//     CLI flag.
//   - cost.go: the coster, which prices one kernel launch with
//     model.Processor (GEMMCost, AttentionCost, StreamCost) and
//     model.CollectiveTime, remembers every GEMM and attention it priced
//     so none is derived twice in a run, adds the dequantisation of
//     weight-only int4/int8 GEMMs, checks data-type fallbacks, and sums a
//     pass's rows into a PhaseReport with per-class rows.
//   - run.go: inference — prefill (TTFT), decode (TPOT, E2E, tokens/s),
//     pipeline transfers, and the inference memory (weights, KV cache,
//     working set, reserve).
//   - totals.go: RunTotals, a run's totals without its per-op and
//     per-class rows, for sweeps that print none.
//   - energy.go: Energy, a run's power and energy at the devices and at
//     the node (docs/energy.md).
//   - decode.go: how the G−1 decode steps of a generation are summed
//     cheaply: decompose at the first and last context, price the ops that
//     do not change once, interpolate the ones that do (the attention over
//     the KV cache); exact up to 64 steps, a composite trapezoid beyond
//     (tested to 0.1% against pricing every step). Decode steps run as
//     CUDA graphs unless Scenario.NoGraphs (GraphLaunch).
//   - exec.go, flash2.go: how the framework runs a pass (Exec: graph,
//     eager with the host's dispatch, fused) and which fused attention
//     kernel its prefills run (AttentionKernel: the device's calibrated
//     one, or FlashAttention-2 from its measured throughput, as eager
//     PyTorch calls it).
//   - training.go: a training step — micro-batches of forward, backward
//     and recomputation, data-parallel gradient synchronisation, the
//     optimizer's memory-bound pass — MFU and HFU, and the training
//     memory: 16 bytes per parameter of mixed-precision Adam state,
//     sharded per ZeRO stage, and activations per Korthikanti et al.
//     (2022) (TrainingActivations).
//   - train_step.go, train_parallel.go, train_tp.go, train_memory.go,
//     train_layout.go, pipeline.go: a transformer's step at scale — TP with sequence
//     parallelism, PP (GPipe, 1F1B, interleaved; PipelineTime, and
//     PipelineChunks chunk by chunk, the layers spread by ChunkLayers
//     with the embedding and the loss as layer slots on request), DP with
//     ZeRO-1/2/3 and bucketed, overlapped gradient reduction, CP (ring
//     attention), EP (all-to-all, load imbalance), each collective priced
//     on the system's two tiers (model.TieredTime) with what overlaps
//     with what written down in trainingScaled; the Breakdown of the
//     slowest stage; memory per rank (ZeROStates, LayerActivations,
//     InFlight); the layout's divisibility checks. train_kernels.go:
//     the step's work the op lists leave out (the fused attention's
//     slower backward, an embedding's dense gradient, the framework's
//     passes over the gradient buffer).
//   - inverse.go: Footprint (memory without timing), MaxBatch, MaxContext
//     and MaxModel (the largest member of a Family that fits).
//   - pricecache.go, opscache.go, passcache.go, label.go: what a pooled runner keeps from one
//     Run to the next, in fixed-size tables — the prices of GEMMs and
//     attention kernels, for as long as the processor is the same
//     (sameProcessor), and the decompositions of a PureWorkload — so
//     that a sweep or a serving loop does not price a recurring kernel
//     again (TestRun_cachesChangeNothing: reports identical with and
//     without them).
//   - iteration.go: Pricer, the time of one continuous-batching engine
//     iteration (prefill chunks and decode tokens, each at its own
//     context) for package serve, launched as the engine launches it
//     (eagerly, in CUDA graphs padded to a captured size, or in
//     piecewise graphs), with bounded memos of the parts that depend
//     only on token counts. budget.go: the token budget and the
//     prefill chunks it cuts (PrefillChunks); transfer.go: a
//     disaggregated request's KV cache (Pricer.KVBytes) and its time over
//     a link (KVTransfer).
//   - kernel.go: Kernel, the prediction for one launch (perfsim kernel).
//   - report.go: Report, a plain struct of per-phase totals, per-class and
//     per-op rows, memory and Warnings, in base units.
//
// Metrics follow DESIGN.md: TTFT is the prefill (no queueing); TPOT is
// (E2E − TTFT)/(output − 1); E2E is TTFT plus every decode step;
// throughput is output tokens per second of the system (and per device);
// MFU is the model's matrix FLOPs (≈ 6·N·tokens plus attention) over the
// step time, the devices and the peak; HFU adds recomputation.
//
// Run is cheap (a few microseconds for a 70B model with 128 output
// tokens when its kernels recur, tens when every kernel is new:
// BenchmarkSimulate) and its results do not depend on what ran before, so
// sweeps may call it many times, from several goroutines.
package sim
