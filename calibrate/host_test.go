package calibrate

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/internal/racedetect"
	"github.com/perfsim/perfsim/model"
)

func TestFit_realCPU(t *testing.T) {
	// The target: on real CPU measurements, taken here at the
	// Quick size, the 5-fold held-out GEMM median |error| is at most 10%.
	// One thread and the fastest sample of each point, over about 20
	// rounds (60 ms per point): the steady measurement on a machine that
	// the other tests share (go test runs packages in parallel). Measured
	// 2026-11-22 on a 2-core VM during go test ./...: 2.7–5.8% per dtype
	// (p90 9–16%) over 8 runs; with 25 ms per point it missed 10% in 3 of
	// 4 such runs.
	if testing.Short() {
		t.Skip("takes real measurements; skipped with -short")
	}
	if racedetect.Enabled {
		// Measured under -race: held-out p90 |error| 740% (fp32) and
		// 1010% (fp64), which Fit refuses. The detector's instrumentation
		// of the Go kernels, not the CPU, sets those times.
		t.Skip("fits real CPU timings, which the race detector's instrumentation slows unevenly (p90 error over 100%, refused); run without -race")
	}
	ms, err := MeasureCPU(context.Background(), CPUOptions{Quick: true, Threads: 1, PointTime: 60 * time.Millisecond, Kernels: []string{KernelGEMM, KernelCopy, KernelTriad, KernelLaunch}}, nil)
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

func TestHostTOML(t *testing.T) {
	// The description loads as a CPU, takes its thread count from the
	// rows' driver column and its bandwidth from the best streaming row,
	// and refuses measurements without one.
	if _, err := os.Stat("/proc/cpuinfo"); err != nil {
		t.Skip("no /proc/cpuinfo: HostTOML describes Linux machines")
	}
	ms := []Measurement{
		{Device: cpuName(), Driver: "go1.x gonum v0 GOMAXPROCS=3", Kernel: KernelGEMM, DType: model.FP64, M: 64, N: 64, K: 64, Batch: 1, Time: 1e-4},
		{Device: cpuName(), Driver: "go1.x gonum v0 GOMAXPROCS=3", Kernel: KernelCopy, DType: model.FP64, Bytes: 2e6, Time: 1e-4},
		{Device: cpuName(), Driver: "go1.x gonum v0 GOMAXPROCS=3", Kernel: KernelTriad, DType: model.FP64, Bytes: 3e6, Time: 1e-4},
		{Device: cpuName(), Kernel: KernelLaunch, Time: 2e-9},
	}
	text, err := HostTOML(ms, "2026-01-01")
	if err != nil {
		t.Skip(err) // a kernel that does not say the clock or the memory
	}
	dev, err := hardware.Load(bytes.NewReader(text), "host.toml")
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if dev.Kind != "cpu" || dev.ComputeUnits != 3 || dev.Name != cpuName() || dev.Memory.Bandwidth != 30e9 || dev.Launch != 2e-9 {
		t.Errorf("host: kind %q, %d units, name %q, bandwidth %v, launch %v; want cpu, 3, %q, 30 GB/s (the triad row), 2 ns\n%s",
			dev.Kind, dev.ComputeUnits, dev.Name, dev.Memory.Bandwidth, dev.Launch, cpuName(), text)
	}
	proc := dev.Processor()
	if p, _ := proc.Peak(model.FP32); p != 2*dev.Vector[model.FP64] || p <= 0 {
		t.Errorf("fp32 peak %v, want twice fp64's %v", p, dev.Vector[model.FP64])
	}
	if !proc.CPU {
		t.Error("a cpu device's processor does not take the CPU rule")
	}
	if _, err := HostTOML(ms[:1], "2026-01-01"); err == nil || !strings.Contains(err.Error(), "no read, write, copy or triad row") {
		t.Errorf("no bandwidth row: %v", err)
	}
}

func TestFMAFLOPsPerCycle(t *testing.T) {
	for _, tt := range []struct {
		flags string
		want  float64
	}{
		{"fpu sse2 avx avx2 fma avx512f", 32},
		{"fpu sse2 avx avx2 fma", 16},
		{"fpu sse2 avx avx2", 4}, // AVX2 without FMA: no fused multiply-add
		{"", 4},
	} {
		if got, _ := fmaFLOPsPerCycle(tt.flags); got != tt.want {
			t.Errorf("%q: %v, want %v", tt.flags, got, tt.want)
		}
	}
}

func TestMeasureCPU_threads(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	ms, err := MeasureCPU(context.Background(), CPUOptions{Quick: true, Threads: 1, Kernels: []string{KernelLaunch}, PointTime: time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ms[0].Driver, "GOMAXPROCS=1") || measuredThreads(ms) != 1 {
		t.Errorf("driver %q, want GOMAXPROCS=1 recorded", ms[0].Driver)
	}
	if runtime.GOMAXPROCS(0) != before {
		t.Errorf("GOMAXPROCS is %d after the run, was %d", runtime.GOMAXPROCS(0), before)
	}
	if _, err := MeasureCPU(context.Background(), CPUOptions{Threads: -1}, nil); err == nil {
		t.Error("-1 threads accepted")
	}
}
