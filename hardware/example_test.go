package hardware_test

import (
	"fmt"
	"strings"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

func ExampleLookup() {
	d, err := hardware.Lookup("h100")
	if err != nil {
		fmt.Println(err)
		return
	}
	bf16 := d.Matrix[model.BF16]
	fmt.Println(d.Name, bf16, d.Memory.Bandwidth)
	fmt.Println("memory:", d.Memory.Capacity.BinaryString(), "physical,", d.Memory.Usable.BinaryString(), "usable")
	fmt.Println("bf16 ridge:", model.Ridge(bf16, d.Memory.Bandwidth))
	fmt.Println("source:", d.Sources["peak.matrix.bf16"])
	// Output:
	// H100 SXM 989.5 TFLOP/s 3.35 TB/s
	// memory: 80 GiB physical, 79.11 GiB usable
	// bf16 ridge: 295.4 FLOP/B
	// source: N6: H100 product page, dense = sparse / 2
}

func ExampleLoad() {
	const file = `name = "Acme X1"
vendor = "Acme"
kind = "accelerator"
source = "Acme X1 datasheet"
compute_units = 64

[peak.matrix]
bf16 = "400 TFLOP/s"

[memory]
capacity = "64 GB"
bandwidth = 2
`
	_, err := hardware.Load(strings.NewReader(file), "x1.toml")
	fmt.Println(err)

	d, err := hardware.Load(strings.NewReader(strings.Replace(file, "= 2", `= "2 TB/s"`, 1)), "x1.toml")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Name, d.Matrix[model.BF16], d.Memory.Bandwidth)
	// Output:
	// hardware: x1.toml:12: memory.bandwidth: "2" is not a bandwidth: missing unit (expected "3.35 TB/s")
	// Acme X1 400 TFLOP/s 2 TB/s
}

// A hand-written file without efficiencies takes those of the nearest
// calibrated device of its kind, and says so.
func ExampleKindDefaults() {
	const file = `name = "Acme X1"
vendor = "Acme"
kind = "gpu"
source = "Acme X1 datasheet"
compute_units = 132

[peak.matrix]
bf16 = "989.5 TFLOP/s"

[memory]
capacity = "80 GiB"
bandwidth = "3.35 TB/s"
`
	d, err := hardware.Load(strings.NewReader(file), "x1.toml")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.CalibrationLabel())
	hardware.KindDefaults(d)
	fmt.Println(d.CalibrationLabel())
	// Output:
	// uncalibrated: datasheet peaks at 100% efficiency
	// uncalibrated: datasheet peaks at 80% efficiency; default efficiencies of H100 SXM, the nearest calibrated gpu, not measured on this device
}
