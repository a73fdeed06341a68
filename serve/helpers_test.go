package serve_test

import (
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/internal/simload"
	"github.com/perfsim/perfsim/sim"
	"github.com/perfsim/perfsim/workloads"
)

// adapter is a model as the simulator takes it (internal/simload, as cmd has it).
type adapter = simload.Workload

// setup returns a system of devices hw and a model.
func setup(t testing.TB, hw, mdl string, devices int) (*hardware.System, sim.Workload) {
	t.Helper()
	d, err := hardware.Resolve(hw)
	if err != nil {
		t.Fatal(err)
	}
	per := min(devices, max(1, d.Intra.DevicesPerNode))
	sys, err := hardware.NewSystem(d, per, (devices+per-1)/per)
	if err != nil {
		t.Fatal(err)
	}
	m, err := workloads.Resolve(mdl)
	if err != nil {
		t.Fatal(err)
	}
	return sys, adapter{M: m}
}

func pricer(t testing.TB, sys *hardware.System, w sim.Workload, sc sim.Scenario) *sim.Pricer {
	t.Helper()
	p, err := sim.NewPricer(sys, w, sc)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
