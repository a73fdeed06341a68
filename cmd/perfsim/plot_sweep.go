package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/perfsim/perfsim/cmd/perfsim/internal/chart"
	"github.com/perfsim/perfsim/sim"
	"github.com/perfsim/perfsim/workloads"
)

const plotSweepSynopsis = "perfsim plot sweep --hw A,B[,...] --model NAME|FILE --batch 1..256x2 [--input S] [--output G] [--tp N] [--dtype T] [--speedup --input 1024..32768x2 [--metric e2e|ttft|tpot]] [-o FILE]"

const plotSweepExamples = `  # throughput per GPU against TPOT as the batch grows, a line per hardware
  perfsim plot sweep --hw a100,h100 --model llama3-8b --batch 1..256x2 -o sweep.png

  # the speedup of the first hardware over the second across batch × context
  perfsim plot sweep --speedup --hw h100,a100 --model llama3-8b --batch 1..64x2 --input 512..16384x2 -o speedup.png
`

func runPlotSweep(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var out plotOutput
	var sc plotScenario
	var speedup bool
	var metric string
	fs := newFlagSet("plot sweep", plotSweepSynopsis, plotSweepExamples, stderr)
	sc.AddFlags(fs, true, true, true)
	fs.BoolVar(&speedup, "speedup", false, "a heat map of the speedup of the first --hw over the second across --batch × --input")
	fs.StringVar(&metric, "metric", "e2e", "with --speedup, the latency compared: e2e, ttft or tpot")
	out.AddFlags(fs, "sweep")
	if err := parseFlagsNoArgs(fs, args, "plot sweep"); err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	get, ok := latencyMetrics[metric]
	if !ok {
		return usagef("--metric: unknown %q (want e2e, ttft or tpot)", metric)
	}
	if fs.Changed("metric") && !speedup {
		// The throughput–latency chart plots TPOT whatever --metric says.
		return usagef("--metric: only with --speedup (the heat map's latency); the throughput–latency chart plots TPOT")
	}
	s, err := sc.spec()
	if err != nil {
		return err
	}
	if speedup && len(s.HW) != 2 {
		return usagef("plot sweep --speedup: two --hw (the first's speedup over the second), got %d", len(s.HW))
	}
	if !speedup && len(s.Input) != 1 {
		return usagef("plot sweep: one --input for the throughput–latency chart (or --speedup for a batch × context heat map)")
	}
	if !speedup {
		if err := generatesTokens(s, "sweep"); err != nil {
			return err
		}
	}
	res, err := simulateAll(ctx, s)
	if err != nil {
		return err
	}
	warnPoints(stderr, res)
	if err := fitsSomewhere(s, res); err != nil {
		return err
	}
	var c *chart.Chart
	if speedup {
		c, err = speedupMap(s, res, metric, get).Chart()
	} else {
		c, err = throughputLines(res).Chart()
	}
	if err != nil {
		return err
	}
	noteCalibration(c, s.HW)
	return out.write(c, stdout, stderr)
}

// generatesTokens refuses, naming --model, each model that generates no
// output tokens (a CNN, an encoder, a ViT): the chart draws them, and had
// no point to draw.
func generatesTokens(s *sweepSpec, chartName string) error {
	var errs []error
	for _, m := range s.Models {
		if m.Kind() != workloads.Decoder {
			errs = append(errs, usagef("--model: %s is %s: it generates no output tokens, which plot %s draws (perfsim simulate gives its throughput)", m.Name(), withArticle(string(m.Kind())), chartName))
		}
	}
	return errors.Join(errs...)
}

// fitsSomewhere fails, naming the model, the hardware and a layout that
// fits, when no point of the sweep fits in memory: the chart would have
// nothing to draw. The smallest point (the first batch and input) says
// how far off it is.
func fitsSomewhere(s *sweepSpec, res []sweepResult) error {
	for _, r := range res {
		if r.Report.Memory.Fits {
			return nil
		}
	}
	r := res[0]
	sys, err := systemFor(s.HW[r.Point.HW], max(r.Report.Scenario.TP, 1)*max(r.Report.Scenario.PP, 1))
	if err != nil {
		return err
	}
	layout := fitLayout(sys, simWorkload{M: s.Models[r.Point.Model]}, r.Report.Scenario)
	var names []string
	for _, d := range s.HW {
		names = append(names, d.Name)
	}
	msg := fmt.Sprintf("plot sweep: %s fits on none of %s at any point of the sweep; at batch %d, %s",
		r.Report.Model, joinList(names), r.Report.Scenario.Batch, notFit(r.Report, layout))
	return errors.New(msg)
}

// latencyMetrics are the latencies a speedup compares.
var latencyMetrics = map[string]func(*sim.InferenceResult) float64{
	"e2e":  func(r *sim.InferenceResult) float64 { return float64(r.E2E) },
	"ttft": func(r *sim.InferenceResult) float64 { return float64(r.TTFT) },
	"tpot": func(r *sim.InferenceResult) float64 { return float64(r.TPOT) },
}

// throughputLines is a line per hardware through its batch sizes: TPOT
// in ms against output tokens/s per device, each point labelled with its
// batch. A point that does not fit in memory is marked so (a cross off
// the line, chart.LinePoint.Unfit), where its times would put it.
func throughputLines(res []sweepResult) chart.Lines {
	first := res[0].Report
	l := chart.Lines{XLabel: "TPOT: time per output token (ms)", YLabel: "output tokens/s per device", LogY: true}
	l.Title = fmt.Sprintf("Throughput vs latency — %s\n%s, batch %d to %d", first.Model, scenarioText(first, false),
		res[0].Point.Batch, res[len(res)-1].Point.Batch)
	byHW := map[int]int{}
	for _, r := range res {
		i, ok := byHW[r.Point.HW]
		if !ok {
			i = len(l.Lines)
			byHW[r.Point.HW] = i
			l.Lines = append(l.Lines, chart.Line{Name: r.Report.Hardware})
		}
		in := r.Report.Inference
		p := chart.LinePoint{X: 1e3 * float64(in.TPOT), Y: in.OutputTokensPerSecondPerDevice, Label: fmt.Sprint(r.Report.Scenario.Batch)}
		p.Unfit = !r.Report.Memory.Fits
		l.Lines[i].Points = append(l.Lines[i].Points, p)
	}
	return l
}

// speedupMap is the speedup of the first hardware over the second,
// latency(B)/latency(A), across batch sizes (columns) and context lengths
// (rows); a cell where either does not fit in memory has no value.
func speedupMap(s *sweepSpec, res []sweepResult, metric string, get func(*sim.InferenceResult) float64) chart.Heatmap {
	a, b := s.HW[0].Name, s.HW[1].Name
	sc := res[0].Report.Scenario
	h := chart.Heatmap{XLabel: "batch size", YLabel: "input length (tokens)",
		Title: fmt.Sprintf("Speedup of %s over %s (%s) — %s\n%d out, %s", a, b, metric, res[0].Report.Model, sc.Output, sc.Act),
		Above: a + " faster", Below: b + " faster", Missing: "does not fit"}
	if sc.TP > 1 {
		h.Title += fmt.Sprintf(", tp %d", sc.TP)
	}
	for _, v := range s.Batch {
		h.Cols = append(h.Cols, fmt.Sprint(v))
	}
	for _, v := range s.Input {
		h.Rows = append(h.Rows, fmt.Sprint(v))
	}
	h.Values = make([][]float64, len(s.Input))
	cell := map[[3]int]*sim.Report{}
	for _, r := range res {
		cell[[3]int{r.Point.HW, r.Point.Batch, r.Point.In}] = r.Report
	}
	for i, in := range s.Input {
		h.Values[i] = make([]float64, len(s.Batch))
		for j, bt := range s.Batch {
			ra, rb := cell[[3]int{0, bt, in}], cell[[3]int{1, bt, in}]
			v := math.NaN()
			if ra != nil && rb != nil && ra.Memory.Fits && rb.Memory.Fits {
				if ta, tb := get(ra.Inference), get(rb.Inference); ta > 0 && tb > 0 {
					v = tb / ta
				}
			}
			h.Values[i][j] = v
		}
	}
	return h
}
