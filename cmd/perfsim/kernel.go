package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

const kernelSynopsis = "perfsim kernel gemm --hw NAME|FILE --m M --k K --n N [--batch B] [--dtype T] | perfsim kernel copy --hw NAME|FILE --bytes SIZE [--format table|json|csv]"

const kernelExamples = `  # a 4096³ fp16 GEMM on an A100 (measured: 0.58 ms through cuBLAS; docs/hardware.md)
  perfsim kernel gemm --hw a100 --m 4096 --k 4096 --n 4096 --dtype fp16

  # a decode GEMV of Llama 3 8B's FFN, as JSON
  perfsim kernel gemm --hw h100 --m 1 --k 4096 --n 14336 --dtype bf16 --format json

  # copying a 4 GB buffer (8 GB of traffic: read and write)
  perfsim kernel copy --hw h100 --bytes 4GB
`

// kernelOptions are the flags of perfsim kernel.
type kernelOptions struct {
	hw, format string
	m, k, n    int
	batch      int
	dtype, out model.DType
	size       model.Bytes
	strict     bool
	sets       []string
}

func (o *kernelOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.hw, "hw", "", hwFlagUsage)
	fs.StringArrayVar(&o.sets, "set", nil, setFlagUsage)
	fs.IntVar(&o.m, "m", 0, "gemm: rows of A and C")
	fs.IntVar(&o.k, "k", 0, "gemm: the reduction dimension")
	fs.IntVar(&o.n, "n", 0, "gemm: columns of B and C")
	fs.IntVar(&o.batch, "batch", 1, "gemm: independent GEMMs in one batched launch")
	o.dtype = model.FP16
	fs.Var(&o.dtype, "dtype", "gemm: input data type (fp32, tf32, bf16, fp16, fp8, int8, ...)")
	fs.Var(&o.out, "out", "gemm: output data type (default: the input's; fp8 and int8 GEMMs write bf16)")
	fs.Var(&o.size, "bytes", "copy: the buffer copied, e.g. 4GB (the traffic is twice: read and write)")
	addFormatFlag(fs, &o.format)
	fs.BoolVar(&o.strict, "strict", false, "a data type the hardware has no peak for is an error, not a fallback")
}

func runKernelCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o kernelOptions
	fs := newFlagSet("kernel", kernelSynopsis, kernelExamples, stderr)
	o.AddFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("kernel: want one kind, gemm or copy (got %d arguments)", fs.NArg())
	}
	f, err := parseFormat(o.format)
	if err != nil {
		return err
	}
	var k model.Kernel
	var shape string
	var errs []error
	switch kind := fs.Arg(0); kind {
	case "gemm":
		for _, d := range []struct {
			name string
			v    int
		}{{"m", o.m}, {"k", o.k}, {"n", o.n}, {"batch", o.batch}} {
			if d.v < 1 {
				errs = append(errs, usagef("--%s: must be at least 1, got %d", d.name, d.v))
			} else if d.v > 1<<24 {
				errs = append(errs, usagef("--%s: %d is over the limit of %d", d.name, d.v, 1<<24))
			}
		}
		if fs.Changed("bytes") {
			errs = append(errs, usagef("--bytes: a gemm is sized by --m, --k and --n"))
		}
		out := o.out
		if !fs.Changed("out") {
			out = o.dtype
			if o.dtype.Size() < 2 {
				out = model.BF16
			}
		}
		k = model.GEMM{M: o.m, K: o.k, N: o.n, Batch: o.batch, A: o.dtype, B: o.dtype, C: out}
		shape = fmt.Sprintf("%d×%d×%d (m×k×n) %s→%s", o.m, o.k, o.n, o.dtype, out)
		if o.batch > 1 {
			shape = fmt.Sprintf("%d × %s", o.batch, shape)
		}
	case "copy":
		if !(o.size > 0) || o.size > 1e15 {
			errs = append(errs, usagef("--bytes: a copy needs a positive size below 1 PB, e.g. --bytes 4GB"))
		}
		for _, n := range []string{"m", "k", "n"} {
			if fs.Changed(n) {
				errs = append(errs, usagef("--%s: a copy is sized by --bytes", n))
			}
		}
		// A copy moves bytes: it has no data type or batch to ignore.
		errs = append(errs, ignoredFlags(fs, "a gemm's flag: a copy is sized by --bytes alone", "dtype", "out", "batch")...)
		k = model.Elementwise{Kind: "copy", Elements: float64(o.size), Read: o.size, Written: o.size}
		shape = fmt.Sprintf("copy of %v", o.size)
	default:
		return usagef("kernel: unknown kind %q (want gemm or copy)", kind)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	dev, err := resolveHardware(o.hw)
	if err != nil {
		return err
	}
	if dev, err = whatIf(dev, o.sets); err != nil {
		return err
	}
	r, err := sim.Kernel(dev, k, o.strict)
	if err != nil {
		return err
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(stderr, "perfsim: warning: %v\n", w)
	}
	j := kernelJSON{
		Schema: "perfsim.kernel/v1", Hardware: dev.Name, Calibration: dev.CalibrationLabel(), Kernel: fs.Arg(0), Shape: shape, DType: dtypeName(r.DType),
		FLOPs: float64(r.FLOPs), Bytes: float64(r.Bytes), Intensity: float64(r.Intensity), Bound: r.Bound.String(),
		Time: float64(r.Time), TimeLow: float64(r.Low), TimeHigh: float64(r.High), Interval: r.Interval,
		Achieved: float64(r.Achieved), AchievedBandwidth: float64(r.AchievedBandwidth),
		Peak: float64(r.Peak), Bandwidth: float64(r.Bandwidth), Efficiency: r.Efficiency,
	}
	peak := num(j.Peak)
	if _, ok := k.(model.GEMM); !ok {
		// A copy computes nothing: no data type, no FLOP/s peak.
		j.DType, j.Peak, peak = "", 0, ""
	}
	switch f {
	case formatJSON:
		return writeJSON(stdout, j)
	case formatCSV:
		return writeCSV(stdout,
			[]string{"hardware", "calibration", "kernel", "shape", "dtype", "flops", "bytes", "intensity_flop_per_byte", "bound", "time_s", "time_s_low", "time_s_high", "interval", "achieved_flop_per_s", "achieved_bytes_per_s", "peak_flop_per_s", "bandwidth_bytes_per_s", "efficiency"},
			[][]string{{j.Hardware, j.Calibration, j.Kernel, j.Shape, j.DType, num(j.FLOPs), num(j.Bytes), num(j.Intensity), j.Bound, num(j.Time), num(j.TimeLow), num(j.TimeHigh), j.Interval, num(j.Achieved), num(j.AchievedBandwidth), peak, num(j.Bandwidth), num(j.Efficiency)}})
	}
	tw := newTable(stdout)
	fmt.Fprintf(tw, "kernel\t%s on %s\n", shape, dev.Name)
	fmt.Fprintf(tw, "hardware\t%s\n", j.Calibration)
	fmt.Fprintf(tw, "time\t%s\n", span(r.Time, r.Low, r.High, r.Interval))
	if _, ok := k.(model.GEMM); ok {
		fmt.Fprintf(tw, "bound\t%s\tcomputed at %s\n", r.Bound, dtypeName(r.DType))
	} else {
		fmt.Fprintf(tw, "bound\t%s\ta copy moves bytes: no arithmetic\n", r.Bound)
	}
	fmt.Fprintf(tw, "FLOPs\t%v\n", r.FLOPs)
	fmt.Fprintf(tw, "bytes\t%v\n", r.Bytes)
	fmt.Fprintf(tw, "intensity\t%s FLOP/B\n", strconv.FormatFloat(float64(r.Intensity), 'g', 4, 64))
	if _, ok := k.(model.GEMM); ok {
		fmt.Fprintf(tw, "achieved\t%v\tof %v peak\n", r.Achieved, r.Peak)
		if r.Bound == model.MemoryBound && r.Bandwidth > 0 {
			// What bounds it: a GEMV's 0.2% of the FLOP/s peak had been
			// its only efficiency, its bandwidth left to the JSON.
			fmt.Fprintf(tw, "memory\t%v\tof %v bandwidth (%.1f%%)\n", r.AchievedBandwidth, r.Bandwidth, 100*float64(r.AchievedBandwidth)/float64(r.Bandwidth))
		}
	} else {
		fmt.Fprintf(tw, "achieved\t%v\tof %v bandwidth\n", r.AchievedBandwidth, r.Bandwidth)
	}
	fmt.Fprintf(tw, "efficiency\t%.1f%%\n", 100*r.Efficiency)
	return tw.Flush()
}

// kernelJSON is the JSON of perfsim kernel (docs/simulate.md).
type kernelJSON struct {
	Schema            string  `json:"schema"`
	Hardware          string  `json:"hardware"`
	Calibration       string  `json:"calibration"`
	Kernel            string  `json:"kernel"`
	Shape             string  `json:"shape"`
	DType             string  `json:"dtype,omitempty"`
	FLOPs             float64 `json:"flops"`
	Bytes             float64 `json:"bytes"`
	Intensity         float64 `json:"intensity_flop_per_byte"`
	Bound             string  `json:"bound"`
	Time              float64 `json:"time_s"`
	TimeLow           float64 `json:"time_s_low"`
	TimeHigh          float64 `json:"time_s_high"`
	Interval          string  `json:"interval"`
	Achieved          float64 `json:"achieved_flop_per_s"`
	AchievedBandwidth float64 `json:"achieved_bytes_per_s"`
	Peak              float64 `json:"peak_flop_per_s,omitempty"`
	Bandwidth         float64 `json:"bandwidth_bytes_per_s"`
	Efficiency        float64 `json:"efficiency"`
}
