package calibrate

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/perfsim/perfsim/internal/fileio"
	"github.com/perfsim/perfsim/model"
)

// CPUOptions says what MeasureCPU measures.
type CPUOptions struct {
	// Quick measures a small grid (90 GEMMs up to 256³, arrays up
	// to 16 MiB) in a few seconds, for tests and smoke runs. The full grid
	// (120 GEMMs up to 1024³, arrays up to 128 MiB) takes about two
	// minutes on two cores (1:56 measured, 8 rounds of 12.5 s after 12 s
	// of set-up) and half a gigabyte of memory.
	Quick bool
	// Kernels restricts the run to these kernels (gemm, read, write, copy,
	// triad, launch); nil or empty measures all.
	Kernels []string
	// PointTime is the timed time to aim for per point, once the minimum
	// number of samples is taken; 0 means 10 ms (Quick) or 100 ms.
	PointTime time.Duration
	// Threads is the number of threads the kernels run on (GOMAXPROCS for
	// the run, recorded in each row's driver column); 0 means GOMAXPROCS
	// as it is. One thread is the steadier measurement on a machine that
	// other work shares.
	Threads int
}

// CPUKernels lists the kernels MeasureCPU knows, in the order it runs them.
var CPUKernels = []string{KernelGEMM, KernelRead, KernelWrite, KernelCopy, KernelTriad, KernelLaunch}

// The sampling plan. Each sample times enough back-to-back calls to last
// minSample (so that time.Now's resolution and the loop's own cost do not
// count). The samples are taken in rounds of one per point: at least
// minReps rounds, then more until PointTime per point is spent or maxReps
// rounds are taken; a point reports the median of its samples.
const (
	minSample     = 200 * time.Microsecond
	minReps       = placements // one round per operand placement (gemmBuffers)
	maxReps       = 51
	progressAfter = 2 * time.Second // first progress line
	progressEvery = 2 * time.Second // then at most one line per interval
)

// A cpuPoint is one row to measure: a kernel at a shape or size.
type cpuPoint struct {
	kernel  string
	dtype   model.DType
	m, n, k int
	size    int // elements per array, for the bandwidth kernels
}

// cpuGEMMShapes returns the GEMM shapes (m, n, k) of a grid, in order:
// squares; skinny, decode-like shapes (small m against weight-sized n×k);
// taller, prefill-like ones; and odd sizes on either side of the
// 64-element blocks gonum's Dgemm/Sgemm work in (gonum/blas/gonum
// dgemm.go: blockSize = 64), which expose its block quantisation.
func cpuGEMMShapes(quick bool) [][3]int {
	var s [][3]int
	sq := func(ns ...int) {
		for _, n := range ns {
			s = append(s, [3]int{n, n, n})
		}
	}
	cross := func(ms []int, nks [][2]int) {
		for _, nk := range nks {
			for _, m := range ms {
				s = append(s, [3]int{m, nk[0], nk[1]})
			}
		}
	}
	if quick {
		sq(32, 48, 64, 96, 128, 160, 192, 256)
		cross([]int{1, 2, 4, 8, 16, 32, 64}, [][2]int{{512, 512}, {1024, 256}, {256, 1024}, {768, 384}})
		sq(63, 65, 127, 129)
		s = append(s, [3]int{100, 300, 200}, [3]int{257, 129, 65}, [3]int{33, 500, 250}, [3]int{200, 100, 300}, [3]int{96, 640, 160})
		return s
	}
	sq(64, 128, 192, 256, 384, 512, 768, 1024)
	cross([]int{1, 2, 4, 8, 16, 32, 64, 128}, [][2]int{{1024, 1024}, {4096, 1024}, {1024, 4096}, {2048, 2048}})
	cross([]int{256, 512}, [][2]int{{1024, 1024}, {4096, 1024}, {1024, 4096}})
	sq(63, 65, 127, 129, 255, 257, 511, 513)
	s = append(s, [3]int{100, 300, 200}, [3]int{257, 129, 65}, [3]int{33, 500, 250},
		[3]int{768, 769, 256}, [3]int{769, 768, 256}, [3]int{1000, 1000, 1000})
	return s
}

// cpuArraySizes returns the array sizes, in bytes, of the bandwidth
// kernels: 1 MiB to 16 MiB (Quick) or 128 MiB, by factors of 2 or 4.
func cpuArraySizes(quick bool) []int {
	if quick {
		return []int{1 << 20, 4 << 20, 16 << 20}
	}
	return []int{1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20, 32 << 20, 64 << 20, 128 << 20}
}

// MeasureCPU times kernels on this machine's CPU and returns them as
// measurements in perfsim's schema, source "perfsim-cpu", in a fixed order:
// GEMMs (fp64 through gonum's blas64.Gemm, then fp32 through blas32.Gemm,
// shapes as cpuGEMMShapes lists them), then read, write, copy and triad
// over []float64 arrays (split across GOMAXPROCS goroutines), then the
// cost of an empty call.
//
// Each row's time is the median of at least 5 samples, after a warm-up;
// a sample times enough back-to-back calls to last 200 µs and divides.
// The samples are taken in rounds over all the points (one sample of each
// per round, spread over the run), so that a slow spell of a shared machine
// shifts every point's samples alike rather than a few points' medians.
// GEMM inputs are random and non-zero (gonum skips zero multipliers, so
// zeros would time less work). Bandwidth arrays are not flushed from the
// caches between samples: arrays that fit a cache are timed at the cache's
// speed, which is what such small copies get on a CPU.
//
// When the run lasts more than two seconds, MeasureCPU writes a progress
// line to progress (if not nil) every two seconds. It stops at the next
// sample when ctx is cancelled and returns ctx's error.
func MeasureCPU(ctx context.Context, opt CPUOptions, progress io.Writer) ([]Measurement, error) {
	want := map[string]bool{}
	for _, k := range opt.Kernels {
		if !slices.Contains(CPUKernels, k) {
			return nil, fmt.Errorf("calibrate: measure cpu: unknown kernel %q (want %s)", k, strings.Join(CPUKernels, ", "))
		}
		want[k] = true
	}
	runs := func(k string) bool { return len(want) == 0 || want[k] }
	pointTime := opt.PointTime
	if pointTime <= 0 {
		pointTime = 100 * time.Millisecond
		if opt.Quick {
			pointTime = 10 * time.Millisecond
		}
	}

	var points []cpuPoint
	if runs(KernelGEMM) {
		for _, dt := range []model.DType{model.FP64, model.FP32} {
			for _, s := range cpuGEMMShapes(opt.Quick) {
				points = append(points, cpuPoint{kernel: KernelGEMM, dtype: dt, m: s[0], n: s[1], k: s[2]})
			}
		}
	}
	maxElems := 0
	for _, k := range []string{KernelRead, KernelWrite, KernelCopy, KernelTriad} {
		if !runs(k) {
			continue
		}
		for _, b := range cpuArraySizes(opt.Quick) {
			points = append(points, cpuPoint{kernel: k, dtype: model.FP64, size: b / 8})
			maxElems = max(maxElems, b/8)
		}
	}
	if runs(KernelLaunch) {
		points = append(points, cpuPoint{kernel: KernelLaunch})
	}

	if opt.Threads < 0 {
		return nil, fmt.Errorf("calibrate: measure cpu: %d threads, want at least 1 (or 0 for GOMAXPROCS)", opt.Threads)
	}
	if opt.Threads > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(opt.Threads))
	}
	base := Measurement{
		Device: cpuName(),
		Driver: fmt.Sprintf("%s gonum %s GOMAXPROCS=%d", runtime.Version(), gonumVersion(), runtime.GOMAXPROCS(0)),
		Clocks: cpuClock(),
		Source: "perfsim-cpu",
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("calibrate: measure cpu: %w", err)
	}
	bufs := newGEMMBuffers(points, rand.New(rand.NewPCG(1, 2))) // fixed seed: the same inputs every run
	var arrays *streamArrays                                    // allocated at the first bandwidth point

	// Set every point up and size its samples; then take the samples in
	// rounds, one per point per round, so that a slow spell of a shared
	// machine (another process, a clock change) falls on every point
	// alike instead of on a run of neighbouring shapes.
	start := time.Now()
	ms := make([]Measurement, len(points))
	fns := make([]func(iters int), len(points))
	iters := make([]int, len(points))
	for i, p := range points {
		m := base
		m.Kernel, m.DType = p.kernel, p.dtype
		switch p.kernel {
		case KernelGEMM:
			m.M, m.N, m.K, m.Batch = p.m, p.n, p.k, 1
			m.FLOPs = model.FLOPs(2 * float64(p.m) * float64(p.n) * float64(p.k))
			m.Bytes = p.dtype.Bytes(float64(p.m*p.k + p.k*p.n + p.m*p.n))
			fns[i] = bufs.gemm(p)
		case KernelLaunch:
			fns[i] = func(iters int) {
				for range iters {
					emptyCall()
				}
			}
		default:
			if arrays == nil {
				arrays = newStreamArrays(maxElems)
			}
			m.Bytes, m.FLOPs, fns[i] = arrays.kernel(p.kernel, p.size)
		}
		ms[i] = m
		n, err := sampleIters(ctx, fns[i])
		if err != nil {
			return nil, fmt.Errorf("calibrate: measure cpu: %w", err)
		}
		iters[i] = n
	}
	samples := make([][]float64, len(points))
	budget := pointTime * time.Duration(len(points))
	begin, lastReport, reported := time.Now(), time.Now(), false
	for round := 0; round < maxReps && (round < minReps || time.Since(begin) < budget); round++ {
		bufs.place(round)
		for i, fn := range fns {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("calibrate: measure cpu: %w", err)
			}
			fn(1) // untimed: bring the operands back into the caches
			t0 := time.Now()
			fn(iters[i])
			samples[i] = append(samples[i], time.Since(t0).Seconds()/float64(iters[i]))
		}
		if progress != nil && time.Since(start) >= progressAfter && time.Since(lastReport) >= progressEvery {
			fmt.Fprintf(progress, "calibrate: measured round %d of %d kernels (%.0f s so far)\n", round+1, len(points), time.Since(start).Seconds())
			lastReport, reported = time.Now(), true
		}
	}
	for i := range ms {
		x := samples[i]
		slices.Sort(x)
		ms[i].Time, ms[i].TimeMin, ms[i].TimeMax, ms[i].Reps = model.Seconds(median(x)), model.Seconds(x[0]), model.Seconds(x[len(x)-1]), len(x)
	}
	if reported {
		fmt.Fprintf(progress, "calibrate: measured %d kernels in %.0f s\n", len(ms), time.Since(start).Seconds())
	}
	return ms, nil
}

func (p cpuPoint) String() string {
	switch p.kernel {
	case KernelGEMM:
		return fmt.Sprintf("gemm %s %dx%dx%d", p.dtype, p.m, p.n, p.k)
	case KernelLaunch:
		return "launch"
	}
	return fmt.Sprintf("%s %s", p.kernel, model.Bytes(p.size*8).BinaryString())
}

// gemmBuffers hold the operands of every GEMM of a run: per dtype one
// allocation holding A, B and C, each as large as the largest shape needs
// plus room to move, filled with random values in [0.5, 1.5) (gonum skips
// zero multipliers); each GEMM uses leading elements of each as its densely
// stored matrices.
//
// Where a matrix lies in memory changes its time on a CPU: rows whose
// addresses differ by a multiple of 4 KiB compete for the same cache sets,
// and the physical pages behind an array decide its sets in the larger
// caches, so one placement can run a shape 20–40% slower than another.
// The operands keep fixed offsets from each other (one allocation, each
// operand operandStagger bytes past a 4 KiB boundary from the previous
// one), and every round of samples moves all three by placementStep
// bytes, through placements positions, so that a point's samples span
// several placements instead of the one an allocation happened to get.
type gemmBuffers struct {
	f64   []float64
	f32   []float32
	off64 [3]int // element offsets of A, B and C in f64
	off32 [3]int
	shift int // the current placement's offset, in bytes
}

const (
	operandStagger = 320
	placementStep  = 4096 + 192
	placements     = 8
)

func newGEMMBuffers(points []cpuPoint, rng *rand.Rand) *gemmBuffers {
	var n [2][3]int // fp64, fp32 × A, B, C
	for _, p := range points {
		if p.kernel != KernelGEMM {
			continue
		}
		d := 0
		if p.dtype == model.FP32 {
			d = 1
		}
		n[d] = [3]int{max(n[d][0], p.m*p.k), max(n[d][1], p.k*p.n), max(n[d][2], p.m*p.n)}
	}
	// offsets returns the element offsets of A, B and C and the total
	// length, for elements of size e.
	offsets := func(n [3]int, e int) (off [3]int, total int) {
		at := 0
		for i, c := range n {
			off[i] = at
			bytes := (at+c)*e + 4096 - 1
			at = (bytes/4096*4096 + (i+1)*operandStagger) / e
		}
		return off, at + placements*placementStep/e
	}
	var g gemmBuffers
	var total int
	g.off64, total = offsets(n[0], 8)
	g.f64 = make([]float64, total)
	for i := range g.f64 {
		g.f64[i] = 0.5 + rng.Float64()
	}
	g.off32, total = offsets(n[1], 4)
	g.f32 = make([]float32, total)
	for i := range g.f32 {
		g.f32[i] = 0.5 + rng.Float32()
	}
	return &g
}

// place moves the operands to placement r (of placements, cyclically).
func (g *gemmBuffers) place(r int) { g.shift = (r % placements) * placementStep }

// gemm returns a function running C = A·B iters times for p's shape and
// dtype, with the operands where the current placement puts them.
func (g *gemmBuffers) gemm(p cpuPoint) func(iters int) {
	if p.dtype == model.FP32 {
		return func(iters int) {
			s, o := g.shift/4, g.off32
			a := blas32.General{Rows: p.m, Cols: p.k, Stride: p.k, Data: g.f32[s+o[0] : s+o[0]+p.m*p.k]}
			b := blas32.General{Rows: p.k, Cols: p.n, Stride: p.n, Data: g.f32[s+o[1] : s+o[1]+p.k*p.n]}
			c := blas32.General{Rows: p.m, Cols: p.n, Stride: p.n, Data: g.f32[s+o[2] : s+o[2]+p.m*p.n]}
			for range iters {
				blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, a, b, 0, c)
			}
		}
	}
	return func(iters int) {
		s, o := g.shift/8, g.off64
		a := blas64.General{Rows: p.m, Cols: p.k, Stride: p.k, Data: g.f64[s+o[0] : s+o[0]+p.m*p.k]}
		b := blas64.General{Rows: p.k, Cols: p.n, Stride: p.n, Data: g.f64[s+o[1] : s+o[1]+p.k*p.n]}
		c := blas64.General{Rows: p.m, Cols: p.n, Stride: p.n, Data: g.f64[s+o[2] : s+o[2]+p.m*p.n]}
		for range iters {
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, a, b, 0, c)
		}
	}
}

// emptyCall is the "kernel" of the launch measurement: a call that does
// nothing and is not inlined.
//
//go:noinline
func emptyCall() {}

// sampleIters runs fn(1) as a warm-up, then grows the number of calls
// per sample until a sample lasts minSample, and returns it.
func sampleIters(ctx context.Context, fn func(iters int)) (int, error) {
	fn(1) // warm-up: page in the arrays, fill the caches
	iters := 1
	for {
		t0 := time.Now()
		fn(iters)
		d := time.Since(t0)
		if d >= minSample || iters >= 1<<30 {
			return iters, nil
		}
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		// Aim a little past minSample, at most 100× more calls per step.
		grow := 100
		if d > 0 {
			grow = min(100, int(1.2*float64(minSample)/float64(d))+1)
		}
		iters *= max(2, grow)
	}
}

// median returns the median of sorted xs: the middle value, or the mean
// of the two middle values.
func median(xs []float64) float64 {
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// streamArrays holds the arrays of the bandwidth kernels, allocated once
// at the largest size and sliced for smaller ones.
type streamArrays struct {
	a, b, c []float64
	sink    []float64 // per-goroutine sums of the read kernel, kept so the loads are not dead
}

func newStreamArrays(n int) *streamArrays {
	s := &streamArrays{a: make([]float64, n), b: make([]float64, n), c: make([]float64, n),
		sink: make([]float64, runtime.GOMAXPROCS(0))}
	for i := range n { // non-zero values, touching every page
		s.a[i], s.b[i], s.c[i] = 1, 2, float64(i%7)
	}
	return s
}

// kernel returns the bytes moved, the FLOPs and the function of a
// bandwidth kernel over n elements (8 bytes each). The bytes follow
// STREAM's counting (McCalpin, "Memory Bandwidth and Machine Balance",
// 1995): read n·8, write n·8, copy 2·n·8, triad 3·n·8; write-allocate
// traffic is not counted. FLOPs: one add per element for read (the sum),
// two for triad.
func (s *streamArrays) kernel(name string, n int) (model.Bytes, model.FLOPs, func(iters int)) {
	a, b, c := s.a[:n], s.b[:n], s.c[:n]
	const scalar = 3.0
	e := float64(n) * 8
	switch name {
	case KernelRead:
		return model.Bytes(e), model.FLOPs(n), s.parallel(n, func(w, lo, hi int) {
			var s0, s1, s2, s3 float64 // four chains, so the adds keep up with the loads
			i := lo
			for ; i+4 <= hi; i += 4 {
				s0 += a[i]
				s1 += a[i+1]
				s2 += a[i+2]
				s3 += a[i+3]
			}
			for ; i < hi; i++ {
				s0 += a[i]
			}
			s.sink[w] += s0 + s1 + s2 + s3
		})
	case KernelWrite:
		return model.Bytes(e), 0, s.parallel(n, func(_, lo, hi int) {
			x := a[lo:hi]
			for i := range x {
				x[i] = scalar
			}
		})
	case KernelCopy:
		return model.Bytes(2 * e), 0, s.parallel(n, func(_, lo, hi int) {
			x, y := a[lo:hi], b[lo:hi]
			for i := range y {
				y[i] = x[i]
			}
		})
	case KernelTriad:
		return model.Bytes(3 * e), model.FLOPs(2 * n), s.parallel(n, func(_, lo, hi int) {
			x, y, z := a[lo:hi], b[lo:hi], c[lo:hi]
			for i := range x {
				x[i] = y[i] + scalar*z[i]
			}
		})
	}
	panic("calibrate: unknown bandwidth kernel " + name)
}

// parallel returns a function that runs body over [0, n) split into
// GOMAXPROCS contiguous chunks, one goroutine each, iters times.
func (s *streamArrays) parallel(n int, body func(worker, lo, hi int)) func(iters int) {
	workers := len(s.sink)
	return func(iters int) {
		for range iters {
			var wg sync.WaitGroup
			for w := range workers {
				lo, hi := n*w/workers, n*(w+1)/workers
				wg.Add(1)
				go func() { defer wg.Done(); body(w, lo, hi) }()
			}
			wg.Wait()
		}
	}
}

// cpuName returns the processor's model name from /proc/cpuinfo, or
// runtime.GOARCH where there is none.
func cpuName() string {
	if v := cpuinfo("model name"); v != "" {
		return v
	}
	return runtime.GOARCH
}

// cpuClock returns the first core's clock from /proc/cpuinfo at the start
// of the run, e.g. "2445 MHz", or "" where it is not given.
func cpuClock() string { return clockOf(cpuinfo("cpu MHz")) }

// clockOf formats a /proc/cpuinfo "cpu MHz" value, or returns "" where it
// is not a finite positive number.
func clockOf(v string) string {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f > 0) || math.IsInf(f, 0) {
		return ""
	}
	return fmt.Sprintf("%.0f MHz", f)
}

// cpuinfo returns the first value of key in /proc/cpuinfo, or "".
func cpuinfo(key string) string {
	f, err := fileio.Open("/proc/cpuinfo", procLimit, "cpuinfo file")
	if err != nil {
		return ""
	}
	defer f.Close()
	return cpuinfoValue(f, key)
}

// cpuinfoValue returns the first value of key in r, written as
// /proc/cpuinfo writes it ("model name\t: AMD EPYC 7B13"), with its
// spaces collapsed; "" where there is none or a line is over 64 KiB.
func cpuinfoValue(r io.Reader, key string) string {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return ""
}

// gonumVersion returns the gonum module version the binary was built
// with, or "(devel)" where the build information does not say.
func gonumVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "gonum.org/v1/gonum" {
				return d.Version
			}
		}
	}
	return "(devel)"
}
