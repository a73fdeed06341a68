package calibrate

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfsim/perfsim/model"
)

// TestMeasureCPU takes real measurements on this machine at the Quick size
// (a second or two on two shared cores) and checks that they are sane.
func TestMeasureCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("takes real measurements; skipped with -short")
	}
	start := time.Now()
	var progress bytes.Buffer
	ms, err := MeasureCPU(context.Background(), CPUOptions{Quick: true}, &progress)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d measurements in %v", len(ms), time.Since(start))

	// The rows come in the documented order: fp64 GEMMs, fp32 GEMMs,
	// read/write/copy/triad over the sizes, launch.
	var want []string
	for _, dt := range []string{"fp64", "fp32"} {
		for _, s := range cpuGEMMShapes(true) {
			want = append(want, "gemm "+dt+" "+itoa(s[0])+"x"+itoa(s[1])+"x"+itoa(s[2]))
		}
	}
	for _, k := range []string{"read", "write", "copy", "triad"} {
		for _, b := range cpuArraySizes(true) {
			want = append(want, k+" fp64 "+itoa(b))
		}
	}
	want = append(want, "launch")
	var got []string
	for _, m := range ms {
		switch m.Kernel {
		case KernelGEMM:
			got = append(got, "gemm "+m.DType.String()+" "+itoa(m.M)+"x"+itoa(m.N)+"x"+itoa(m.K))
		case KernelLaunch:
			got = append(got, "launch")
		default:
			// bytes moved: 1× the array for read and write, 2× copy, 3× triad
			per := map[string]float64{"read": 1, "write": 1, "copy": 2, "triad": 3}[m.Kernel]
			got = append(got, m.Kernel+" "+m.DType.String()+" "+itoa(int(float64(m.Bytes)/per)))
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Plausible rates: a core does at most 64 fp32 FLOPs per cycle (two
	// AVX-512 FMA units: 2 × 16 lanes × 2), so at 5 GHz no CPU core passes
	// 320 GFLOP/s; anything under 10 MFLOP/s on a 128³ GEMM means the timing
	// is broken. Memory: between 100 MB/s and 10 TB/s.
	maxRate := model.FLOPRate(320e9 * float64(runtime.NumCPU()))
	for _, m := range ms {
		if m.Time <= 0 || m.TimeMin <= 0 || m.TimeMin > m.Time || m.TimeMax < m.Time {
			t.Errorf("%s:%s: times %v ≤ %v ≤ %v out of order or not positive", m.Kernel, m.DType, m.TimeMin, m.Time, m.TimeMax)
		}
		if m.Reps < minReps {
			t.Errorf("%s: %d samples, want ≥ %d", m.Kernel, m.Reps, minReps)
		}
		if m.Source != "perfsim-cpu" || m.Device == "" || m.Device != ms[0].Device {
			t.Errorf("%s: source %q, device %q", m.Kernel, m.Source, m.Device)
		}
		switch m.Kernel {
		case KernelGEMM:
			e := m.DType.Size()
			wantF := 2 * float64(m.M) * float64(m.N) * float64(m.K)
			wantB := e * float64(m.M*m.K+m.K*m.N+m.M*m.N)
			if float64(m.FLOPs) != wantF || float64(m.Bytes) != wantB || m.Batch != 1 {
				t.Errorf("gemm %dx%dx%d: flops %v bytes %v batch %d, want %v, %v, 1", m.M, m.N, m.K, m.FLOPs, m.Bytes, m.Batch, wantF, wantB)
			}
			r := m.FLOPs.Rate(m.Time)
			if r > maxRate || (m.M >= 128 && m.N >= 128 && m.K >= 128 && r < 10e6) {
				t.Errorf("gemm %s %dx%dx%d: %v, implausible", m.DType, m.M, m.N, m.K, r)
			}
		case KernelLaunch:
			if m.Time > 1e-6 {
				t.Errorf("an empty call takes %v, implausibly long", m.Time)
			}
		default:
			if r := m.Bytes.Rate(m.Time); r < 100e6 || r > 10e12 {
				t.Errorf("%s %v: %v, implausible", m.Kernel, m.Bytes, r)
			}
		}
	}

	// The rows survive the CSV schema.
	var buf bytes.Buffer
	if err := WriteCSV(&buf, ms); err != nil {
		t.Fatal(err)
	}
	back, warns, err := ReadCSV(&buf, "cpu.csv")
	if err != nil || len(warns) > 0 || len(back) != len(ms) {
		t.Fatalf("ReadCSV(WriteCSV(MeasureCPU)) = %d rows, %v, %v", len(back), warns, err)
	}
	if errs := CheckDevice(back, ""); errs != nil {
		t.Errorf("CheckDevice = %v", errs)
	}
	if time.Since(start) < progressAfter && progress.Len() > 0 {
		t.Errorf("progress printed for a short run: %q", progress.String())
	}
}

func TestMeasureCPU_kernels(t *testing.T) {
	ms, err := MeasureCPU(context.Background(), CPUOptions{Quick: true, Kernels: []string{"launch"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].Kernel != "launch" || ms[0].DType != model.Invalid || ms[0].Time <= 0 {
		t.Errorf("MeasureCPU(launch) = %+v", ms)
	}
	if _, err := MeasureCPU(context.Background(), CPUOptions{Kernels: []string{"fft"}}, nil); err == nil || !strings.Contains(err.Error(), `unknown kernel "fft"`) {
		t.Errorf("MeasureCPU(fft) error = %v", err)
	}
}

func TestMeasureCPU_cancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	ms, err := MeasureCPU(ctx, CPUOptions{}, nil)
	if !errors.Is(err, context.Canceled) || ms != nil {
		t.Errorf("MeasureCPU(cancelled) = %d rows, %v; want context.Canceled", len(ms), err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("MeasureCPU took %v to notice the cancellation", d)
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{1, 2, 10}, 2},
		{[]float64{1, 2, 4, 10}, 3},
	}
	for _, tt := range tests {
		if got := median(tt.xs); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.xs, got, tt.want)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
