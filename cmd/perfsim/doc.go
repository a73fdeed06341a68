// Command perfsim is an analytical performance model of AI workloads on
// accelerators. It decomposes a workload into kernels, costs each kernel
// with a calibrated roofline model, and answers capacity-planning
// questions: prefill and decode latency, memory, the largest model that
// fits, what a training step costs, which hardware wins.
//
// Usage:
//
//	perfsim <command> [flags]
//
// The commands (perfsim help lists them with the same summaries):
//
//	simulate     latency, throughput and memory of a model on hardware
//	serve        a serving engine under load: TTFT, TPOT, throughput per request
//	plan         capacity plans: serving layouts under latency SLOs, the highest
//	             sustained rate, training layouts ranked on a system
//	sweep        simulate the cartesian product of scenarios
//	sensitivity  what 10% more bandwidth, peak, capacity or link buys
//	gemms        the GEMMs (with MAC counts) a model decomposes into
//	kernel       the predicted time of one kernel (a GEMM, a copy)
//	maxmodel     the largest model that fits a device or a node
//	hardware     list and show the hardware catalog or a hardware file
//	calibrate    measure kernels, fit the cost model, validate a fit
//	mlperf       the MLPerf Inference datacenter suite and MLPerf Training
//	plot         rooflines, breakdowns, memory, energy, GEMM and sweep charts
//	completion   a shell completion script (bash, zsh, fish)
//	version      print the version
//
// Run "perfsim help <command>" for a command's flags and examples.
//
// The command only parses flags and files, wires the packages together
// and prints; what it prints is computed by sim, serve, plan, mlperf,
// price and calibrate.
//
// Exit status: 0 on success (and for --help), 1 when a run fails, 2 for a
// usage error (a flag, an unknown name, a file that cannot be read) or a
// bad input file, each of its problems at its file:line:key.
package main
