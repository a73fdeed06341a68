package main

import "github.com/perfsim/perfsim/internal/simload"

// simWorkload is a workloads.Model as the simulator takes it, and
// simFamily a model family scaled to a parameter count (internal/simload,
// which the packages' tests share).
type (
	simWorkload = simload.Workload
	simFamily   = simload.Family
)
