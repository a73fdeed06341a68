package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/perfsim/perfsim/cmd/perfsim/internal/chart"
)

const plotEnergySynopsis = "perfsim plot energy --hw A,B[,...] --model NAME|FILE --batch 1..256x2 [--input S] [--output G] [--tp N] [--dtype T] [--cost --price 2.5/h | --prices FILE] [-o FILE]"

const plotEnergyExamples = `  # output tokens per joule (GPU boundary) as the batch grows, a line per hardware
  perfsim plot energy --hw a100,h100,b200 --model llama3-8b --batch 1..256x2 -o energy.svg

  # cost per million output tokens at one hourly price for all
  perfsim plot energy --cost --price 2.5/h --hw h100,b200 --model llama3-8b --batch 1..256x2 -o cost.svg
`

// runPlotEnergy draws tokens per joule, or with --cost the cost per
// million output tokens, against the batch, a line per hardware.
func runPlotEnergy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var out plotOutput
	var sc plotScenario
	var en energyOptions
	var cost bool
	fs := newFlagSet("plot energy", plotEnergySynopsis, plotEnergyExamples, stderr)
	sc.AddFlags(fs, true, true, false)
	en.AddFlags(fs)
	fs.BoolVar(&cost, "cost", false, "plot the cost per million output tokens (needs --price, --prices or a TCO) instead of tokens per joule")
	out.AddFlags(fs, "energy")
	if err := parseFlagsNoArgs(fs, args, "plot energy"); err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	if !cost {
		// The tokens per joule chart is the GPUs' energy, unpriced: a
		// price or a PUE given without --cost had been dropped.
		var errs []error
		for _, f := range []string{"price", "prices", "price-name", "purchase", "years", "energy-price", "pue"} {
			if fs.Changed(f) {
				errs = append(errs, usagef("--%s: only with --cost (tokens per joule are the GPUs' energy, unpriced)", f))
			}
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
	s, err := sc.spec()
	if err != nil {
		return err
	}
	if len(s.Input) != 1 {
		return usagef("plot energy: one --input")
	}
	if err := generatesTokens(s, "energy"); err != nil {
		return err
	}
	if err := en.sweep(fs, s); err != nil {
		return err
	}
	if cost {
		for i, p := range s.Prices {
			if p == nil || (p.Hourly.Per == 0 && !p.TCO()) {
				return usagef("--cost: no price for %s: give --price, --prices or --purchase/--years/--energy-price", s.HW[i].Name)
			}
		}
	}
	res, err := simulateAll(ctx, s)
	if err != nil {
		return err
	}
	warnPoints(stderr, res)
	first := res[0].Report
	l := chart.Lines{XLabel: "batch size", LogX: true, LogY: true}
	what := "Output tokens per joule (GPU)"
	l.YLabel = "output tokens per J, GPU boundary"
	var inputs []string
	if cost {
		what = "Cost per million output tokens"
		l.YLabel = "cost per million output tokens (" + s.Prices[0].Currency() + ")"
		for i, p := range s.Prices {
			inputs = append(inputs, s.HW[i].Name+": "+p.Inputs())
		}
	}
	l.Title = fmt.Sprintf("%s — %s\n%s", what, first.Model, scenarioText(first, false))
	byHW := map[int]int{}
	for k := range res {
		r := &res[k]
		i, ok := byHW[r.Point.HW]
		if !ok {
			i = len(l.Lines)
			byHW[r.Point.HW] = i
			l.Lines = append(l.Lines, chart.Line{Name: r.Report.Hardware})
		}
		ej, cj := sweepEnergy(s, r)
		y := math.NaN()
		switch {
		case cost && cj != nil && cj.PerMOutput != nil:
			y = *cj.PerMOutput
		case !cost && ej != nil:
			y = ej.TokensPerJ
		}
		p := chart.LinePoint{X: float64(r.Report.Scenario.Batch), Y: y, Label: fmt.Sprint(r.Report.Scenario.Batch)}
		p.Unfit = !r.Report.Memory.Fits
		l.Lines[i].Points = append(l.Lines[i].Points, p)
	}
	c, err := l.Chart()
	if err != nil {
		return err
	}
	if len(inputs) > 0 {
		fmt.Fprintf(stderr, "perfsim: prices: %s\n", strings.Join(inputs, "; "))
	}
	noteCalibration(c, s.HW)
	return out.write(c, stdout, stderr)
}
