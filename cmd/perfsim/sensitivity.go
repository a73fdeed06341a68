package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/plan"
	"github.com/perfsim/perfsim/sim"
)

const sensitivitySynopsis = `perfsim sensitivity --hw NAME|FILE --model NAME|FILE [--batch B] [--input S] [--output G] [--tp N] [--slo-tpot T] [--step F]

How much TTFT, TPOT, the largest batch that fits and the throughput at a
TPOT SLO change per 10% more memory bandwidth, matrix peak, memory
capacity and scale-up link bandwidth: each a what-if device (see --set in
docs/hardware.md), relative to the device as given, as simulate prices
it. A bandwidth or peak row carries the device's calibration to the
kernels its change reaches; capacity and link rows keep it.`

const sensitivityExamples = `  # Llama 3 8B on an H100 at batch 8: which datasheet number matters most
  perfsim sensitivity --hw h100 --model llama3-8b --batch 8
`

// runSensitivityCmd implements "perfsim sensitivity".
func runSensitivityCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sensitivity", sensitivitySynopsis, sensitivityExamples, stderr)
	var (
		hw, mdl              string
		sets                 []string
		batch, input, output int
		tp                   int
		slo                  model.Seconds
		step                 float64
	)
	fs.StringVar(&hw, "hw", "", hwFlagUsage)
	fs.StringArrayVar(&sets, "set", nil, setFlagUsage)
	fs.StringVar(&mdl, "model", "", "model: a catalog name or a model file")
	fs.IntVar(&batch, "batch", 8, "sequences per batch (TTFT and TPOT are at this batch)")
	input, output = 2048, 128
	fs.Var(intCount{&input}, "input", "prompt tokens per sequence")
	fs.Var(intCount{&output}, "output", "generated tokens per sequence")
	fs.IntVar(&tp, "tp", 1, "tensor-parallel degree")
	slo = 50e-3
	fs.Var(&slo, "slo-tpot", "the TPOT SLO the throughput is measured at, with a unit (default 50ms)")
	fs.Float64Var(&step, "step", 0.1, "the relative increase of each number, from 0.001 (0.1%) to 1 (100%)")
	if err := parseFlagsNoArgs(fs, args, "sensitivity"); err != nil {
		return err
	}
	var errs []error
	if hw == "" {
		errs = append(errs, usagef("--hw: required (a catalog name or a hardware file)"))
	}
	if mdl == "" {
		errs = append(errs, usagef("--model: required (a catalog name or a model file)"))
	}
	// Below 0.1% the rows print as "+0%" and say nothing.
	if !(step >= minStep && step <= 1) {
		errs = append(errs, usagef("--step %g: want a fraction from %g (0.1%%) to 1 (100%%)", step, minStep))
	}
	if err := checkSLO("slo-tpot", slo); err != nil {
		errs = append(errs, err)
	}
	// --hw and --model are read beside the flags' checks, so that
	// every problem is said at once.
	dev, hwErr := resolveHardware(hw)
	if hwErr == nil {
		dev, hwErr = whatIf(dev, sets)
	}
	m, mErr := resolveModel(mdl)
	if err := errors.Join(append(errs, hwErr, mErr)...); err != nil {
		return err
	}
	w := simWorkload{M: m}
	if a := w.Shape().Arch; a != sim.Decoder {
		// Its rows are a decoder's TTFT, TPOT and tokens/s: resnet50 had
		// printed "TPOT 0 s, throughput at TPOT ≤ 50 ms: 0 tokens/s".
		return usagef("--model: %s is not a decoder (%s): sensitivity measures a decoder's TTFT, TPOT and tokens/s (simulate --set prices a what-if device for it)", w.Name(), a)
	}
	sc := sim.Default()
	sc.Batch, sc.Input, sc.Output, sc.TP = batch, input, output, tp
	if err := sc.Validate(w.Shape()); err != nil {
		return scenarioUsage(err)
	}
	base, rows, err := plan.Sensitivity(dev, w, sc, slo, step)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s on %s, batch %d, %d tokens in, %d out, tp %d\n", w.Name(), dev.Name, batch, input, output, tp)
	fmt.Fprintf(stdout, "%s: %s\n", dev.Name, dev.CalibrationLabel())
	point := func(p plan.SensitivityPoint) string {
		return fmt.Sprintf("TTFT %v, TPOT %v, max batch %d, throughput at TPOT ≤ %v: %s tokens/s (batch %d)", p.TTFT, p.TPOT, p.MaxBatch, slo, fnum(p.SLOThroughput), p.SLOBatch)
	}
	fmt.Fprintf(stdout, "base: %s\n", point(base))
	if base.Short > 0 {
		fmt.Fprintf(stdout, "DOES NOT FIT: batch %d is %s short of the usable memory; its TTFT and TPOT are those of a run that cannot happen.\n", batch, base.Short.BinaryString())
	}
	tw := newTable(stdout)
	fmt.Fprintf(tw, "+%.3g%% of\tTTFT\tTPOT\tmax batch\tthroughput at SLO\n", 100*step)
	pct := func(x float64) string { return fmt.Sprintf("%+.1f%%", 100*x) }
	// fromZero is a change from a base of 0, which no percentage states:
	// none when the row is 0 too, else the row's value.
	fromZero := func(v string, zero bool) string {
		if zero {
			return "— (0 both)"
		}
		return "0 → " + v
	}
	for _, r := range rows {
		if !r.Applies {
			fmt.Fprintf(tw, "%s\t—\t—\t—\t—\n", r.Knob)
			continue
		}
		mb, thr := pct(r.MaxBatch), pct(r.SLOThroughput)
		if base.MaxBatch == 0 {
			mb = fromZero(strconv.Itoa(r.Point.MaxBatch), r.Point.MaxBatch == 0)
		}
		if base.SLOThroughput == 0 {
			thr = fromZero(fnum(r.Point.SLOThroughput)+" tokens/s", r.Point.SLOThroughput == 0)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Knob, pct(r.TTFT), pct(r.TPOT), mb, thr)
	}
	return tw.Flush()
}

// minStep is the smallest --step sensitivity takes: 0.1%.
const minStep = 1e-3

// minSLO is the shortest latency objective taken: below a nanosecond
// no step of any device meets it, and it prints as nonsense (1e-288 ps).
const minSLO model.Seconds = 1e-9

// checkSLO is a usage error naming the flag unless v is a finite time
// of at least minSLO.
func checkSLO(flag string, v model.Seconds) error {
	if !(v >= minSLO) || math.IsInf(float64(v), 0) {
		return usagef("--%s %g s: want a time of at least 1ns", flag, float64(v))
	}
	return nil
}
