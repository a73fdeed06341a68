// Package simload adapts the workloads package's models to the
// simulator: sim declares what it needs of a workload (sim.Workload) and
// never imports workloads, so the phase and shape types are translated
// here, once, for the command and for every package's tests.
package simload
