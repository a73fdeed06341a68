package plan_test

import (
	"fmt"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/internal/simload"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/plan"
	"github.com/perfsim/perfsim/sim"
	"github.com/perfsim/perfsim/workloads"
)

// ExampleSensitivity asks what 10% more of each datasheet number of an
// H100 buys Llama 3 8B at batch 8 (2,048 tokens in, 128 out), with the
// throughput taken at a 50 ms TPOT SLO, as `perfsim sensitivity --hw
// h100 --model llama3-8b` does.
func ExampleSensitivity() {
	d, err := hardware.Resolve("h100")
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := workloads.Resolve("llama3-8b")
	if err != nil {
		fmt.Println(err)
		return
	}
	sc := sim.Default()
	sc.Batch = 8
	base, rows, err := plan.Sensitivity(d, simload.Workload{M: m}, sc, model.Seconds(0.050), 0.1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("base: TTFT %v, TPOT %v, max batch %d, %.4g tokens/s at the SLO (batch %d)\n",
		base.TTFT, base.TPOT, base.MaxBatch, base.SLOThroughput, base.SLOBatch)
	for _, r := range rows {
		fmt.Printf("%-16s TTFT %+.1f%%  TPOT %+.1f%%  max batch %+.1f%%\n", r.Knob, 100*r.TTFT, 100*r.TPOT, 100*r.MaxBatch)
	}
	// Output:
	// base: TTFT 362.6 ms, TPOT 7.274 ms, max batch 231, 2081 tokens/s at the SLO (batch 231)
	// memory bandwidth TTFT -1.1%  TPOT -7.8%  max batch +0.0%
	// matrix peak      TTFT -7.6%  TPOT +0.0%  max batch +0.0%
	// memory capacity  TTFT +0.0%  TPOT +0.0%  max batch +13.0%
	// link bandwidth   TTFT +0.0%  TPOT +0.0%  max batch +0.0%
}
