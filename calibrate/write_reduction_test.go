package calibrate

import (
	"bytes"
	"testing"

	"github.com/perfsim/perfsim/hardware"
)

// WriteDevice keeps the scale-up tier's in_network_reduction and its
// source, so that a calibrated device file (calibrate fit's output) says
// what its base said: NVLink SHARP on the H100, none on the MI300X, and
// nothing where its base said nothing (read back as unstated, not as
// none).
func TestWriteDevice_inNetworkReduction(t *testing.T) {
	for _, name := range []string{"h100", "mi300x", "unstated"} {
		base := name
		if name == "unstated" {
			base = "h100"
		}
		d, err := hardware.Lookup(base)
		if err != nil {
			t.Fatal(err)
		}
		if name == "unstated" {
			d.Intra.Reduction = ""
			delete(d.Sources, "interconnect.intra.in_network_reduction")
		}
		var b bytes.Buffer
		if err := WriteDevice(&b, d, nil); err != nil {
			t.Fatal(err)
		}
		back, err := hardware.Load(&b, name+".toml")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if back.Intra.Reduction != d.Intra.Reduction {
			t.Errorf("%s: in_network_reduction %q read back, want %q", name, back.Intra.Reduction, d.Intra.Reduction)
		}
		k := "interconnect.intra.in_network_reduction"
		if d.Intra.Reduction != "" && back.Sources[k] != d.Sources[k] {
			t.Errorf("%s: its source %q read back, want %q", name, back.Sources[k], d.Sources[k])
		}
	}
}
