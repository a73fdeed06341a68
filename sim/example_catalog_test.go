package sim_test

import (
	"fmt"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/internal/simload"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
	"github.com/perfsim/perfsim/workloads"
)

// ExampleMaxBatch asks how many sequences of the default scenario (2,048
// tokens in, 128 out, bf16) Llama 3 8B fits on one H100, and how long a
// context one sequence may reach, as the limits line of `perfsim
// simulate --hw h100 --model llama3-8b` says.
func ExampleMaxBatch() {
	d, err := hardware.Resolve("h100")
	if err != nil {
		fmt.Println(err)
		return
	}
	sys, err := hardware.NewSystem(d, 1, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := workloads.Resolve("llama3-8b")
	if err != nil {
		fmt.Println(err)
		return
	}
	w := simload.Workload{M: m}
	mem, err := sim.Footprint(sys, w, sim.Default())
	if err != nil {
		fmt.Println(err)
		return
	}
	batch, err := sim.MaxBatch(sys, w, sim.Default())
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, err := sim.MaxContext(sys, w, sim.Default())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("batch 1: %s of %s usable, fits %v\n", mem.Total.BinaryString(), mem.Usable.BinaryString(), mem.Fits)
	fmt.Println("max batch", batch, "max context", ctx)
	// Output:
	// batch 1: 17.39 GiB of 79.11 GiB usable, fits true
	// max batch 231 max context 492769
}

// ExampleKernel predicts one bf16 GEMM of 4096 × 4096 × 4096 on an H100,
// as `perfsim kernel gemm --hw h100 --m 4096 --k 4096 --n 4096 --dtype bf16`
// does.
func ExampleKernel() {
	d, err := hardware.Resolve("h100")
	if err != nil {
		fmt.Println(err)
		return
	}
	g := model.GEMM{M: 4096, K: 4096, N: 4096, A: model.BF16, B: model.BF16, C: model.BF16}
	r, err := sim.Kernel(d, g, true)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %v (%s band %v – %v), %v-bound\n", r.Kind, r.Time, r.Interval, r.Low, r.High, r.Bound)
	fmt.Printf("achieved %v of %v\n", r.Achieved, r.Peak)
	// Output:
	// gemm: 177.5 us (p90 band 163.2 us – 193 us), compute-bound
	// achieved 774.5 TFLOP/s of 989.5 TFLOP/s
}
