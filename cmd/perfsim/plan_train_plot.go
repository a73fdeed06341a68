package main

import (
	"fmt"
	"math"

	"gonum.org/v1/plot/vg"

	"github.com/perfsim/perfsim/cmd/perfsim/internal/chart"
	"github.com/perfsim/perfsim/plan"
)

// planTrainChart draws the ranked layouts' step breakdowns as stacked bars
// (seconds), one bar per layout.
func planTrainChart(name string, p *plan.TrainPlan) (*chart.Chart, error) {
	if len(p.Best) == 0 {
		return nil, fmt.Errorf("plan train: no layout fits, nothing to plot")
	}
	b := chart.Bars{Title: "step by layout", XLabel: "layout (rank)", YLabel: "step (s)", Totals: true}
	names := []string{"compute", "TP comm", "CP comm", "EP comm", "PP comm", "bubble", "DP comm", "overlap", "optimizer", "input"}
	vals := make([][]float64, len(names))
	for i := range p.Best {
		c := &p.Best[i]
		l := c.Layout()
		b.Categories = append(b.Categories, fmt.Sprintf("%d: tp%d pp%d dp%d cp%d ep%d", i+1, l.TP, l.PP, l.DP, l.CP, l.EP))
		k := c.Break
		for j, v := range []float64{float64(k.Compute), float64(k.TPComm), float64(k.CPComm), float64(k.EPComm), float64(k.PPComm),
			float64(k.Bubble), float64(k.DPComm), float64(k.Overlap), float64(k.Optimizer), float64(k.Input)} {
			vals[j] = append(vals[j], v)
		}
	}
	for j, n := range names {
		nonzero := false
		for _, v := range vals[j] {
			nonzero = nonzero || v > 0
		}
		if nonzero {
			b.Stacks = append(b.Stacks, chart.Stack{Name: n, Values: vals[j]})
		}
	}
	return chart.StackedBars("Training layouts — "+name, b)
}

// scalingChart draws the scaling curve: strong-scaling efficiency (the
// global batch fixed) and weak-scaling efficiency (the batch per GPU
// fixed) in percent against the GPU count, and the linear 100%. Counts
// where nothing fits are left out (the chart names them as skipped).
func scalingChart(name string, sc []scalingRow) (*chart.Chart, error) {
	if len(sc) == 0 {
		return nil, fmt.Errorf("plan train: --scaling-plot needs --scaling")
	}
	strong := chart.Line{Name: "strong scaling efficiency"}
	weak := chart.Line{Name: "weak scaling efficiency"}
	lin := chart.Line{Name: "linear"}
	nan := math.NaN()
	for _, r := range sc {
		x := float64(r.GPUs)
		s, w := nan, nan
		if r.StrongFits {
			s = 100 * r.StrongEff
		}
		if r.WeakFits {
			w = 100 * r.WeakEff
		}
		// The x axis is labelled at the GPU counts (XTicks): the points
		// carry no label of their own, which overlapped where the lines
		// meet.
		strong.Points = append(strong.Points, chart.LinePoint{X: x, Y: s})
		weak.Points = append(weak.Points, chart.LinePoint{X: x, Y: w})
		lin.Points = append(lin.Points, chart.LinePoint{X: x, Y: 100})
	}
	var ticks []float64
	for _, r := range sc {
		ticks = append(ticks, float64(r.GPUs))
	}
	return chart.Lines{Title: "Scaling — " + name, XLabel: "GPUs", YLabel: "efficiency (%)", LogX: true, XTicks: ticks,
		Lines: []chart.Line{strong, weak, lin}}.Chart()
}

// savePlanTrainChart writes the breakdown chart to path (its extension
// picks the format), atomically.
func savePlanTrainChart(path, name string, p *plan.TrainPlan) error {
	c, err := planTrainChart(name, p)
	if err != nil {
		return err
	}
	return chart.Save(path, c, 9*vg.Inch, 5*vg.Inch)
}

// saveScalingChart writes the scaling curve to path, atomically.
func saveScalingChart(path, name string, sc []scalingRow) error {
	c, err := scalingChart(name, sc)
	if err != nil {
		return err
	}
	return chart.Save(path, c, 7*vg.Inch, 5*vg.Inch)
}
