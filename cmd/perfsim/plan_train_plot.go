package main

import (
	"fmt"

	"gonum.org/v1/plot/vg"

	"github.com/perfsim/perfsim/cmd/perfsim/internal/chart"
	"github.com/perfsim/perfsim/plan"
)

// planTrainChart draws the ranked layouts' step breakdowns as stacked bars
// (seconds) and, with scaling points, the strong and weak scaling
// efficiency per GPU count beside them.
func planTrainChart(name string, p *plan.TrainPlan, sc []scalingRow) (*chart.Chart, error) {
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
	panels := []chart.Bars{b}
	if len(sc) > 0 {
		s := chart.Bars{Title: "scaling efficiency", XLabel: "GPUs", YLabel: "efficiency (%)",
			Levels: []chart.Level{{Name: "linear", Value: 100}}}
		var strong, weak []float64
		for _, r := range sc {
			s.Categories = append(s.Categories, fmt.Sprint(r.GPUs))
			strong = append(strong, 100*r.StrongEff)
			weak = append(weak, 100*r.WeakEff)
		}
		// Side by side as two panels would need a grouped bar; one panel per kind.
		panels = append(panels,
			chart.Bars{Title: "strong scaling", XLabel: s.XLabel, YLabel: s.YLabel, Categories: s.Categories, Levels: s.Levels, Stacks: []chart.Stack{{Name: "strong efficiency", Values: strong}}},
			chart.Bars{Title: "weak scaling", XLabel: s.XLabel, YLabel: s.YLabel, Categories: s.Categories, Levels: s.Levels, Stacks: []chart.Stack{{Name: "weak efficiency", Values: weak}}})
	}
	return chart.StackedBars(name+": training layouts", panels...)
}

// savePlanTrainChart writes the chart to path (its extension picks the
// format), atomically.
func savePlanTrainChart(path, name string, p *plan.TrainPlan, sc []scalingRow) error {
	c, err := planTrainChart(name, p, sc)
	if err != nil {
		return err
	}
	w := 8.0
	if len(sc) > 0 {
		w = 14
	}
	return chart.Save(path, c, vg.Length(w)*vg.Inch, 5*vg.Inch)
}
