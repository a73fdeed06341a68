package calibrate

import (
	"bytes"
	"context"
	"testing"

	"github.com/perfsim/perfsim/hardware"
)

func TestFit_realCPU(t *testing.T) {
	// The target: on real CPU measurements, taken here at the
	// Quick size, the 5-fold held-out GEMM median |error| is at most 10%.
	// One thread and the fastest sample of each point: the steady
	// measurement on a machine that the other tests share (go test runs
	// packages in parallel).
	if testing.Short() {
		t.Skip("takes real measurements; skipped with -short")
	}
	ms, err := MeasureCPU(context.Background(), CPUOptions{Quick: true, Threads: 1, Kernels: []string{KernelGEMM, KernelCopy, KernelTriad, KernelLaunch}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ms = FastestSample(ms)
	text, err := HostTOML(ms, "test")
	if err != nil {
		t.Skip(err) // not Linux
	}
	dev, err := hardware.Load(bytes.NewReader(text), "host.toml")
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if dev.ComputeUnits != 1 || dev.Kind != "cpu" {
		t.Errorf("host device: %d compute units, kind %q; want the 1 thread measured, cpu", dev.ComputeUnits, dev.Kind)
	}
	res, err := Fit(dev, ms, Options{Folds: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range res.Warnings {
		t.Log("warning:", w)
	}
	seen := 0
	for _, c := range res.Classes {
		t.Logf("%s n=%d fitted=%v in-sample %.1f%%/%.1f%% held-out %.1f%%/%.1f%%", c.Name(), c.Points, c.Fitted,
			100*c.InSample.Median, 100*c.InSample.P90, 100*c.HeldOut.Median, 100*c.HeldOut.P90)
		if c.Class != KernelGEMM {
			continue
		}
		seen++
		if !c.Fitted || c.HeldOut.Median > 0.10 {
			t.Errorf("%s: fitted %v, held-out median %.1f%%, want a fit within 10%%", c.Name(), c.Fitted, 100*c.HeldOut.Median)
		}
	}
	if seen != 2 {
		t.Errorf("%d GEMM classes, want fp64 and fp32", seen)
	}
}
