package model_test

import (
	"fmt"

	"github.com/perfsim/perfsim/model"
)

// ExampleCollectiveTime prices a ring all-reduce of 64 MiB over 8 ranks
// on a 450 GB/s link at 80% efficiency with 2 µs a step: each rank sends
// 2·7/8 of the data (117.4 MB) in 2·7 steps, so 117.4 MB / 360 GB/s =
// 326.2 µs plus 14 × 2 µs.
func ExampleCollectiveTime() {
	c := model.Collective{Kind: model.AllReduce, Size: 64 << 20, Ranks: 8}
	l := model.Link{Bandwidth: 450e9, Latency: 2e-6, Efficiency: 0.8}
	fmt.Println(c.Traffic(), c.Steps(), model.CollectiveTime(c, l))
	// Output:
	// 117.4 MB 14 354.2 us
}
