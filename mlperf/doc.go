// Package mlperf holds the MLPerf Inference datacenter suite as
// scenarios for the simulator: each benchmark's model, dataset,
// precision and Server latency bound, pinned to one round (v5.0, with
// BERT-large taken from v4.1, the last datacenter round that ran it),
// and the two datacenter scenarios: Offline (the highest throughput) and
// Server (the highest Poisson rate whose 99th-percentile latency meets
// the bound).
//
// Fixed-size benchmarks (ResNet-50, RetinaNet, 3D U-Net, BERT,
// DLRM-DCNv2, and SDXL as a pipeline of models per sample) are served
// here, by a batching server of single-sample queries: each accelerator,
// when idle, takes every queued sample up to its batch limit and runs
// them as one batch, priced by package sim. The LLM benchmarks are
// served by package serve, as TensorRT-LLM's in-flight batching
// (llm.go), on as many samples as LoadGen issues (llm_loadgen.go: the
// Offline query and the Server run, whole copies of the dataset lasting
// LoadGen's 600 s), each request one of the dataset's samples with its
// own lengths where they are published (llm_samples.go, lengths/*.csv).
// R-GAT, a graph network, is a fixed-size benchmark whose
// model gathers node features from a store split over the node's
// devices (graph.go: FeatureStore, priced with the peers' rows over the
// scale-up link). A benchmark whose model perfsim cannot express has a
// row that says which capability it lacks.
//
// MLPerf Training (training.go) prices a benchmark's time to train: the
// reference's convergence point (RCP) at a global batch over the
// simulated throughput, plus the evaluations on the clock. Most train
// data parallel through package sim; Llama 2 70B LoRA runs tensor
// parallel with adapters on a frozen base (lora.go, training_layout.go);
// DLRM-DCNv2 shards its embedding tables over the devices beside its
// data-parallel MLPs (training_sharded.go).
//
// mlperf imports sim and serve, never workloads: the caller hands it a
// function that resolves a model name to a sim.Workload.
package mlperf
