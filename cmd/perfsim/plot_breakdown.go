package main

import (
	"context"
	"fmt"
	"io"

	"github.com/perfsim/perfsim/cmd/perfsim/internal/chart"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

const plotBreakdownSynopsis = "perfsim plot breakdown --hw A[,B...] --model NAME|FILE [--batch 1,8,64] [--input S] [--output G] [--tp N] [--dtype T] [-o FILE]"

const plotBreakdownExamples = `  # where the time goes on one H100 as the batch grows
  perfsim plot breakdown --hw h100 --model llama3-8b --batch 1,8,64 -o breakdown.png

  # the same scenario across hardware
  perfsim plot breakdown --hw a100,h100,h200 --model llama3-70b --tp 8 --batch 16
`

func runPlotBreakdown(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var out plotOutput
	var sc plotScenario
	fs := newFlagSet("plot breakdown", plotBreakdownSynopsis, plotBreakdownExamples, stderr)
	sc.AddFlags(fs, true, true, false)
	out.AddFlags(fs, "breakdown")
	if err := parseFlagsNoArgs(fs, args, "plot breakdown"); err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	s, err := sc.spec()
	if err != nil {
		return err
	}
	if len(s.Input) != 1 {
		return usagef("plot breakdown: one --input (the bars compare hardware or batch sizes)")
	}
	res, err := simulateAll(ctx, s)
	if err != nil {
		return err
	}
	warnPoints(stderr, res)
	title, panels := breakdownBars(res)
	c, err := chart.StackedBars(title, panels...)
	if err != nil {
		return err
	}
	noteCalibration(c, s.HW)
	return out.write(c, stdout, stderr)
}

// pointLabel names a sweep point by what varies among res: the hardware,
// the batch, or both.
func pointLabel(res []sweepResult, r sweepResult) string {
	hws, batches := map[string]bool{}, map[int]bool{}
	for _, x := range res {
		hws[x.Report.Hardware] = true
		batches[x.Report.Scenario.Batch] = true
	}
	switch {
	case len(hws) > 1 && len(batches) > 1:
		return fmt.Sprintf("%s b=%d", r.Report.Hardware, r.Report.Scenario.Batch)
	case len(hws) > 1:
		return r.Report.Hardware
	}
	return fmt.Sprint(r.Report.Scenario.Batch)
}

// breakdownBars returns two panels of stacked bars, prefill (TTFT) and
// decode (TPOT: the decode phase's time over its steps), with a layer per
// op class in the unit of the panel's tallest bar (timeScale), and the chart's title.
func breakdownBars(res []sweepResult) (string, []chart.Bars) {
	first := res[0].Report
	hws, batches := map[string]bool{}, map[int]bool{}
	var phases []*sim.PhaseReport
	for _, r := range res {
		hws[r.Report.Hardware] = true
		batches[r.Report.Scenario.Batch] = true
		phases = append(phases, &r.Report.Inference.Prefill, r.Report.Inference.Decode)
	}
	xlabel := "batch size"
	title := fmt.Sprintf("Time by op class — %s, %s", first.Hardware, first.Model)
	switch {
	case len(hws) > 1 && len(batches) > 1:
		xlabel = "hardware and batch size"
		title = "Time by op class — " + first.Model
	case len(hws) > 1:
		xlabel = "hardware"
		title = "Time by op class — " + first.Model
	}
	title += "\n" + scenarioText(first, len(batches) == 1)
	classes := classNames(phases...)
	pre := chart.Bars{Title: "prefill (TTFT)", XLabel: xlabel, Totals: true}
	dec := chart.Bars{Title: "decode (TPOT, per token)", XLabel: xlabel, Totals: true}
	if first.Arch != sim.Decoder {
		pre.Title = "forward pass (latency)"
	}
	for _, r := range res {
		l := pointLabel(res, r)
		if !r.Report.Memory.Fits {
			l += "\n(does not fit)" // its times are of a run that cannot happen
		}
		pre.Categories = append(pre.Categories, l)
		dec.Categories = append(dec.Categories, l)
	}
	// Seconds per point and class, then each panel in the unit of its
	// tallest bar (s, ms or µs: "3.29 s", not "3.29k ms").
	var preMax, decMax float64
	pv, dv := make([][]float64, len(classes)), make([][]float64, len(classes))
	for i, c := range classes {
		for _, r := range res {
			in := r.Report.Inference
			pv[i] = append(pv[i], float64(classTime(&in.Prefill, c)))
			d := 0.0
			if in.Decode != nil && in.Decode.Steps > 0 {
				d = float64(classTime(in.Decode, c)) / float64(in.Decode.Steps)
			}
			dv[i] = append(dv[i], d)
		}
	}
	for j := range res {
		var p, d float64
		for i := range classes {
			p, d = p+pv[i][j], d+dv[i][j]
		}
		preMax, decMax = max(preMax, p), max(decMax, d)
	}
	ps, pu := timeScale(preMax)
	ds, du := timeScale(decMax)
	pre.YLabel, dec.YLabel = "time ("+pu+")", "time ("+du+")"
	for i, c := range classes {
		a, b := chart.Stack{Name: c.String()}, chart.Stack{Name: c.String()}
		for j := range res {
			a.Values = append(a.Values, ps*pv[i][j])
			b.Values = append(b.Values, ds*dv[i][j])
		}
		pre.Stacks = append(pre.Stacks, a)
		dec.Stacks = append(dec.Stacks, b)
	}
	if first.Inference.Decode == nil {
		return title, []chart.Bars{pre}
	}
	return title, []chart.Bars{pre, dec}
}

// timeScale returns the factor and unit an axis whose largest value is
// maxSeconds reads best in: s from a second up, ms from a millisecond, µs
// below.
func timeScale(maxSeconds float64) (float64, string) {
	switch {
	case maxSeconds >= 1:
		return 1, "s"
	case maxSeconds >= 1e-3:
		return 1e3, "ms"
	}
	return 1e6, "µs"
}

// classTime returns the time of class c in phase p.
func classTime(p *sim.PhaseReport, c model.Class) model.Seconds {
	for _, r := range p.Classes {
		if r.Class == c {
			return r.Time
		}
	}
	return 0
}
