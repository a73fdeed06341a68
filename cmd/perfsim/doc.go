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
// The commands:
//
//	simulate   latency, throughput and memory of a model on hardware
//	gemms      the GEMMs (with MAC counts) a model decomposes into
//	kernel     the predicted time of one kernel (a GEMM, a copy)
//	maxmodel   the largest model that fits a device or a node
//	hardware   list and show the hardware catalog or a hardware file
//	calibrate  measure kernels, fit the cost model, validate a fit
//	sweep      simulate the cartesian product of scenarios
//	plot       rooflines, breakdowns, memory and sweep charts
//	version    print the version
//
// Run "perfsim help <command>" for a command's flags and examples.
//
// Exit status: 0 on success (and for --help), 1 when a run fails, 2 for a
// usage error.
package main
