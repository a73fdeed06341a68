package workloads_test

import (
	"fmt"

	"github.com/perfsim/perfsim/workloads"
)

// One decode step of Llama 3 8B at batch 8 and context 1023: every GEMM
// has M = 8, and attention reads 1024 keys.
func ExampleModel_Ops() {
	m, err := workloads.Resolve("llama3-8b")
	if err != nil {
		fmt.Println(err)
		return
	}
	ops, err := m.Ops(workloads.Phase{Kind: workloads.Decode, Batch: 8, Context: 1023})
	if err != nil {
		fmt.Println(err)
		return
	}
	var macs float64
	for _, op := range ops {
		macs += op.MACs()
	}
	fmt.Printf("%s: %.0f parameters, %d ops, %.4g GEMM MACs per step\n", m.Name(), m.Params(), len(ops), macs)
	// Output:
	// llama3-8b: 8030261248 parameters, 14 ops, 6.004e+10 GEMM MACs per step
}
