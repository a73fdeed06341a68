// Package plan searches deployments and layouts. It prints nothing.
//
// For serving under latency SLOs (Serve), the layouts (TP, PP, replicas;
// for an MoE model EP within TP, ep.go, and data-parallel attention
// groups with EP across their replicas, dpattn.go), data types and batch limits of a
// model on a device, and (disagg.go)
// disaggregated prefill and decode pools, each candidate it reports
// checked by a full simulation of package serve; and the highest
// rate a deployment sustains (MaxRate), by bisection. A search enumerates
// a declared space, prunes what cannot run (a layout whose weights leave
// no KV cache, a request that cannot fit) and what cannot meet the load
// (fewer replicas than the rate over one replica's throughput at maximum
// load, an optimistic bound), and simulates the rest; it counts what it
// saw, pruned and simulated. serve.go holds the serving search
// (ServeQuery, Candidate, SLO); cost.go its objective, the fewest GPUs or
// the lowest cost (Objective, Coster).
//
// For training at scale (train.go: Train, perfsim plan train), the
// layouts TP × PP × DP × CP × EP with micro-batch, pipeline schedule and
// virtual stages, recomputation, ZeRO stage and TP-communication overlap,
// each configuration one sim.Run (nothing is priced here); what does not
// fit is dropped, each layout keeps its fastest configuration, layouts
// are ranked by step time, Why says where a runner-up loses, and the
// closest miss is named when nothing fits. scaling.go: strong and weak
// scaling over GPU counts.
//
// sensitivity.go: Sensitivity, what 10% more of each datasheet number
// (bandwidth, peak, capacity, link; a Knob each) buys one scenario in
// TTFT, TPOT, max batch and throughput at an SLO (perfsim sensitivity).
package plan
