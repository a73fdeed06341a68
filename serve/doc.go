// Package serve simulates an LLM serving engine under load, request by
// request: arrivals over time, an engine's iteration-level scheduler
// (continuous batching with a token budget, chunked prefill and a paged
// KV cache), and the latency every request sees. It prices nothing
// itself: each iteration's time comes from sim.Pricer. It prints
// nothing.
//
// # Reading guide
//
//   - request.go: a Request (arrival, input and output tokens) and the
//     workloads that make them: arrival processes (Poisson, gamma,
//     constant, all at once) and length distributions, each drawn from an
//     explicit seeded source.
//   - engine.go: an Engine's settings (the cap on running sequences, the
//     token budget, chunked prefill, KV block size, the memory fraction
//     and what it is a fraction of, admission and preemption policy,
//     host overheads) and the presets vllm, sglang and trtllm, each
//     setting with its source.
//   - sglang.go, headroom.go: what is SGLang's own: its defaults derived
//     from the TP size, the device's memory and the KV cache (PresetFor),
//     its waiting queue's order (longest prefix match; retracted requests
//     to the back), and its decode reserve and retraction (Headroom).
//   - vllm.go: how vLLM v0.6.0 and V1 v0.10 size their KV cache
//     (VLLMKVTokens): what gpu_memory_utilization covers (weights, the
//     profile run's peak, memory outside torch such as NCCL's) and what
//     it leaves out (the CUDA context, the CUDA graphs).
//   - buffers.go, trtllm014.go: an engine's own runtime buffers and how
//     they count against the KV cache's memory (BufferModel; TensorRT-LLM's
//     sized by its build limits, TRTLLMBuffers, which trtllm-bench 0.14
//     picks per model and layout, TRTLLMBench014); kvstate.go: the KV
//     blocks of a model with a fixed state per sequence (Mamba-2, gated
//     DeltaNet: StateBlocks), and of one with sliding-window layers, held
//     as each engine holds them (Engine.Windows: every token in every
//     layer, capped at the window, or vLLM V1's KV-cache groups per layer
//     kind freeing the blocks behind the window).
//   - graphs.go: how each engine captures and replays CUDA graphs
//     (Engine.Capture): which iterations, up to which size, padded to
//     which (vLLM v0.6.0, vLLM V1's piecewise graphs, SGLang v0.4.0).
//   - loop.go (options.go): Run, the event loop. The clock advances one engine
//     iteration at a time (every event but an arrival falls on an
//     iteration boundary); the scheduler decides what the next iteration
//     holds exactly as the engine would; the pricer says how long it
//     takes.
//   - schedule.go: the scheduler: admission, chunked prefill, the KV
//     blocks each request takes, preemption when they run out, and
//     multi-step decode.
//   - replicas.go: RunReplicas, data-parallel replicas behind a
//     round-robin router, each its own event loop reading its share of
//     the requests; goodput.
//   - cluster.go (events.go): RunDeployment, every scheduler of a
//     deployment in one event loop in time order: the least-outstanding router, a closed
//     loop of users, disaggregated prefill and decode pools, and the
//     prefix cache's hits.
//   - flight.go: what a deployment holds of a request: drawn as the
//     loop reaches it, a 56-byte arrival while it waits for its
//     scheduler, its state (a flight) from then until it has finished
//     end to end, and after that what the results need.
//   - transfer.go, hold.go: a disaggregated request's hand-off between
//     the pools: its decode blocks reserved before its KV cache is sent
//     (sim.KVTransfer), its prefill blocks held until it has arrived.
//   - parse.go, trace.go, trace_rows.go: the parsers of layouts (2P1D),
//     length files and traces; a trace read as a stream, checked whole,
//     and kept as 24 bytes a row (Trace, RunDeploymentTrace).
//   - source.go: a run's requests read by cursors, from a slice (Run), a
//     trace's rows, or drawn from a workload's generator as the engine
//     reaches them (RunWorkload), never held; a replica's share of them;
//     and the check of every request.
//   - records.go: what a run keeps of a finished request (36 bytes:
//     four times and the output length), from which every metric and
//     summary is computed (every Metrics only where Options.Records
//     asks); gaps.go: the inter-token gaps, a multiset of distinct
//     iteration times with their counts.
//   - metrics.go: per-request metrics (queueing, TTFT, TPOT, E2E) and
//     their summaries (mean and percentiles), throughput, goodput, and
//     the bookkeeping checks (Little's law).
//
// Metrics follow DESIGN.md: TTFT is arrival to first token (queueing
// plus prefill); TPOT is (E2E − TTFT)/(output − 1); E2E is arrival to
// last token. Percentiles are the empirical quantile of gonum's
// stat.Quantile (stat.Empirical) over the sorted values.
package serve
