package hardware_test

import (
	"strings"
	"testing"

	"github.com/perfsim/perfsim/hardware"
)

// TestPower_siblingShares: a catalog device that takes the H100 SXM's
// fitted power shares (its [power] source says "sibling") holds the H100's
// numbers, and so do the defaults of a device without a [power] table;
// each device with a power model has a wait share.
func TestPower_siblingShares(t *testing.T) {
	h100, err := hardware.Resolve("h100")
	if err != nil {
		t.Fatal(err)
	}
	want := [3]float64{h100.Power.Static, h100.Power.Compute, h100.Power.Memory}
	if hardware.DefaultPowerShares != want {
		t.Errorf("DefaultPowerShares %v, the H100 SXM's shares %v", hardware.DefaultPowerShares, want)
	}
	for _, name := range []string{"a100", "h200"} {
		d, err := hardware.Resolve(name)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(d.Sources["power.static"], "sibling") {
			t.Fatalf("%s: power.static source %q, want a sibling's shares", name, d.Sources["power.static"])
		}
		if got := [3]float64{d.Power.Static, d.Power.Compute, d.Power.Memory}; got != want {
			t.Errorf("%s: shares %v, the H100 SXM's %v", name, got, want)
		}
		if d.Power.Wait != hardware.DefaultWaitShare {
			t.Errorf("%s: wait share %v, want the default %v", name, d.Power.Wait, hardware.DefaultWaitShare)
		}
	}
}
