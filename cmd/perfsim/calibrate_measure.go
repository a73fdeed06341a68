package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/perfsim/perfsim/calibrate"
	"github.com/perfsim/perfsim/internal/fileio"
)

const calibrateMeasureSynopsis = "perfsim calibrate measure --device cpu [--quick] [--kernels LIST] [--threads N] [-o FILE] [--describe host.toml]"

const calibrateMeasureExamples = `  perfsim calibrate measure --device cpu -o cpu.csv
  perfsim calibrate measure --device cpu --quick --kernels gemm,copy

Measure, describe this machine, and fit it (one thread and the fastest
samples: the steady choice on a machine that other work shares):
  perfsim calibrate measure --device cpu --quick --threads 1 -o cpu.csv --describe host.toml
  perfsim calibrate fit --hw host.toml --measurements cpu.csv --time min -o host-fitted.toml

GPUs are measured with the CUDA suite, not by perfsim:
  make -C kernels && kernels/run.sh > h200.csv
`

// calibrateMeasureOptions are the flags of "perfsim calibrate measure".
type calibrateMeasureOptions struct {
	device   string
	quick    bool
	kernels  []string
	output   string
	threads  int
	describe string
}

func (o *calibrateMeasureOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.device, "device", "cpu", "the device to measure: only cpu (GPUs: kernels/run.sh)")
	fs.BoolVar(&o.quick, "quick", false, "a small grid, a few seconds, for smoke runs")
	fs.StringSliceVar(&o.kernels, "kernels", nil, "measure only these kernels: "+strings.Join(calibrate.CPUKernels, ","))
	fs.StringVarP(&o.output, "output", "o", "", "write the CSV to this file (whole or not at all) instead of stdout")
	fs.IntVar(&o.threads, "threads", 0, "run the kernels on this many threads (GOMAXPROCS); 0: all")
	fs.StringVar(&o.describe, "describe", "", "also write a hardware TOML describing this machine's CPU (cores, clock, vector peaks, measured bandwidth), for calibrate fit --hw")
}

// runCalibrateMeasure implements "perfsim calibrate measure": it times
// kernels on this machine's CPU (calibrate.MeasureCPU) and writes them as
// CSV in the schema of kernels/README.md. Progress goes to stderr.
func runCalibrateMeasure(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("calibrate measure", calibrateMeasureSynopsis, calibrateMeasureExamples, stderr)
	var o calibrateMeasureOptions
	o.addFlags(fs)
	if err := parseFlagsNoArgs(fs, args, "calibrate measure"); err != nil {
		return err
	}
	if strings.ToLower(o.device) != "cpu" {
		return usagef("calibrate measure: --device %q: perfsim measures only the cpu; GPUs are measured with the CUDA suite: make -C kernels && kernels/run.sh > gpu.csv (see kernels/README.md)", o.device)
	}
	for _, k := range o.kernels {
		if !slices.Contains(calibrate.CPUKernels, k) {
			return usagef("calibrate measure: --kernels: unknown kernel %q (want %s)", k, strings.Join(calibrate.CPUKernels, ","))
		}
	}
	if err := repeatedItems("kernels", o.kernels); err != nil {
		return err
	}
	if o.threads < 0 {
		return usagef("calibrate measure: --threads %d: want at least 1 (0: all)", o.threads)
	}
	// Fail before minutes of measuring, not after.
	for _, f := range []struct{ flag, path string }{{"-o", o.output}, {"--describe", o.describe}} {
		if f.path == "" {
			continue
		}
		if err := fileio.CheckOutput(f.path); err != nil {
			return fmt.Errorf("calibrate measure: %s: %w", f.flag, err)
		}
	}
	streams := func(k string) bool {
		return k == calibrate.KernelRead || k == calibrate.KernelWrite || k == calibrate.KernelCopy || k == calibrate.KernelTriad
	}
	if o.describe != "" && len(o.kernels) > 0 && !slices.ContainsFunc(o.kernels, streams) {
		return usagef("calibrate measure: --describe takes the memory bandwidth from the read, write, copy or triad rows: add one to --kernels")
	}

	progress := &measureProgressWriter{w: stderr, prefix: "perfsim: "}
	ms, err := calibrate.MeasureCPU(ctx, calibrate.CPUOptions{Quick: o.quick, Kernels: o.kernels, Threads: o.threads}, progress)
	if err != nil {
		return err
	}
	if o.describe != "" {
		text, err := calibrate.HostTOML(ms, time.Now().UTC().Format("2006-01-02"))
		if err != nil {
			return err
		}
		if err := writeMeasurementsFile(o.describe, text); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	if err := calibrate.WriteCSV(&buf, ms); err != nil {
		return err
	}
	if o.output == "" {
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	return writeMeasurementsFile(o.output, buf.Bytes())
}

// writeMeasurementsFile writes data to path atomically (fileio.WriteFile):
// path holds the old contents or the new, never a part.
func writeMeasurementsFile(path string, data []byte) error {
	return fileio.WriteFile(path, data)
}

// A measureProgressWriter writes each line given to it with a prefix.
type measureProgressWriter struct {
	w      io.Writer
	prefix string
}

func (p *measureProgressWriter) Write(b []byte) (int, error) {
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line == "" {
			continue
		}
		if _, err := io.WriteString(p.w, p.prefix+line); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}
