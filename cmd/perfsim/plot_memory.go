package main

import (
	"context"
	"fmt"
	"io"

	"github.com/perfsim/perfsim/cmd/perfsim/internal/chart"
)

const plotMemorySynopsis = "perfsim plot memory --hw NAME|FILE --model NAME|FILE [--batch 1..64x2 | --input 1024..32768x2] [--output G] [--tp N] [--dtype T] [-o FILE]"

const plotMemoryExamples = `  # memory against batch size on one H100
  perfsim plot memory --hw h100 --model llama3-8b --batch 1..128x2 --input 4096 -o memory.png

  # against context length
  perfsim plot memory --hw h100 --model llama3-8b --batch 8 --input 1024..65536x2
`

func runPlotMemory(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var out plotOutput
	var sc plotScenario
	fs := newFlagSet("plot memory", plotMemorySynopsis, plotMemoryExamples, stderr)
	sc.AddFlags(fs, false, true, true)
	out.AddFlags(fs, "memory")
	if err := parseFlagsNoArgs(fs, args, "plot memory"); err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	s, err := sc.spec()
	if err != nil {
		return err
	}
	if len(s.HW) != 1 {
		return usagef("plot memory: one --hw (the bars stand against its capacity)")
	}
	res, err := simulateAll(ctx, s)
	if err != nil {
		return err
	}
	warnPoints(stderr, res)
	title, bars := memoryBars(res)
	c, err := chart.StackedBars(title, bars)
	if err != nil {
		return err
	}
	noteCalibration(c, s.HW)
	return out.write(c, stdout, stderr)
}

// gib is 2^30 bytes: memory charts are in GiB, as capacities are sold.
const gib = 1 << 30

// memoryBars stacks the memory of the most loaded device, in GiB, by
// kind, one bar per point (across batch sizes, context lengths or both),
// against the device's capacity.
func memoryBars(res []sweepResult) (string, chart.Bars) {
	first := res[0].Report
	batches, inputs := map[int]bool{}, map[int]bool{}
	for _, r := range res {
		batches[r.Report.Scenario.Batch] = true
		inputs[r.Report.Scenario.Input] = true
	}
	b := chart.Bars{YLabel: "memory per device (GiB)", Totals: true}
	label := func(r sweepResult) string {
		sc := r.Report.Scenario
		switch {
		case len(batches) > 1 && len(inputs) > 1:
			return fmt.Sprintf("b=%d, %s", sc.Batch, chart.SI(float64(sc.Input+sc.Output)))
		case len(inputs) > 1:
			return fmt.Sprint(sc.Input + sc.Output)
		}
		return fmt.Sprint(sc.Batch)
	}
	switch {
	case len(batches) > 1 && len(inputs) > 1:
		b.XLabel = "batch size and context (tokens)"
	case len(inputs) > 1:
		b.XLabel = "context: input + output (tokens)"
	default:
		b.XLabel = "batch size"
	}
	kinds := []struct {
		name string
		get  func(r sweepResult) float64
	}{
		{"weights", func(r sweepResult) float64 { return float64(r.Report.Memory.Weights) }},
		{"KV cache", func(r sweepResult) float64 { return float64(r.Report.Memory.KVCache) }},
		{"activations", func(r sweepResult) float64 { return float64(r.Report.Memory.Activations) }},
		{"gradients", func(r sweepResult) float64 { return float64(r.Report.Memory.Gradients) }},
		{"optimizer state", func(r sweepResult) float64 { return float64(r.Report.Memory.Optimizer) }},
		{"reserve", func(r sweepResult) float64 { return float64(r.Report.Memory.Reserve) }},
	}
	for _, r := range res {
		b.Categories = append(b.Categories, label(r))
	}
	for _, k := range kinds {
		s := chart.Stack{Name: k.name}
		any := false
		for _, r := range res {
			v := k.get(r) / gib
			any = any || v > 0
			s.Values = append(s.Values, v)
		}
		// Kinds that are zero everywhere (gradients in inference) stay
		// out of the legend.
		if any {
			b.Stacks = append(b.Stacks, s)
		}
	}
	// The line is the memory a program can use, the figure fits are sized
	// against; the physical capacity is named beside it.
	usable := float64(first.Memory.Usable)
	b.Levels = []chart.Level{{Name: usableText(first.Memory), Value: usable / gib}}
	title := fmt.Sprintf("Memory — %s, %s", first.Hardware, first.Model)
	sc := first.Scenario
	var sub string
	switch {
	case len(batches) > 1 && len(inputs) > 1:
		sub = scenarioText(first, false)
	case len(inputs) > 1:
		sub = fmt.Sprintf("batch %d, %d out, %s", sc.Batch, sc.Output, sc.Act)
	default:
		sub = scenarioText(first, false)
	}
	return title + "\n" + sub, b
}
