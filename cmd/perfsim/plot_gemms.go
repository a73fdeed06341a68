package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/perfsim/perfsim/cmd/perfsim/internal/chart"
)

const plotGemmsSynopsis = "perfsim plot gemms --model NAME|FILE [--phase prefill|decode] [--batch B] [--seq S] [-o FILE]"

const plotGemmsExamples = `  # the GPT-3 175B GEMM table as log bars
  perfsim plot gemms --model gpt3-175b -o gemms.png
`

func runPlotGemms(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var out plotOutput
	var o gemmsOptions
	fs := newFlagSet("plot gemms", plotGemmsSynopsis, plotGemmsExamples, stderr)
	o.AddFlags(fs)
	fs.MarkHidden("format")
	fs.MarkHidden("all")
	out.AddFlags(fs, "gemms")
	if err := parseFlagsNoArgs(fs, args, "plot gemms"); err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	var errs []error
	for _, f := range []string{"format", "all"} {
		if fs.Changed(f) {
			// gemms' table flags, hidden here: the chart had been drawn
			// as if they were not given.
			errs = append(errs, usagef("--%s: a flag of perfsim gemms' table; plot gemms draws the chart (-o picks its format)", f))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	o.seqChanged, o.ctxChanged = fs.Changed("seq"), fs.Changed("context")
	rep, err := gemms(o)
	if err != nil {
		return err
	}
	for _, w := range rep.warnings {
		fmt.Fprintf(stderr, "perfsim: warning: %s\n", w)
	}
	c, err := chart.StackedBars(gemmsTitle(rep), gemmsBars(rep))
	if err != nil {
		return err
	}
	return out.write(c, stdout, stderr)
}

// gemmsTitle names the model and the shape.
func gemmsTitle(rep *gemmsReport) string {
	t := fmt.Sprintf("MACs per GEMM — %s, %s, batch %d", rep.Model, rep.Phase, rep.Batch)
	if rep.Phase == "decode" {
		t += fmt.Sprintf(", context %d", rep.Context)
	} else if rep.Seq > 0 {
		t += fmt.Sprintf(", sequence %d", rep.Seq)
	}
	if rep.TP > 1 {
		t += fmt.Sprintf(", tp %d", rep.TP)
	}
	return t
}

// gemmsBars is one horizontal log bar per GEMM of the report, first at
// the top, with the MACs of one instance (per head, layer or model, as the
// seed's table counts them) — the "macs_each" of perfsim gemms.
func gemmsBars(rep *gemmsReport) chart.Bars {
	b := chart.Bars{XLabel: "GEMM (one instance: per head, layer or model)", YLabel: "multiply-accumulates (MACs)",
		Log: true, Horizontal: true, Totals: true}
	s := chart.Stack{Name: "MACs"}
	for _, g := range rep.GEMMs {
		name := g.Description
		if name == "" {
			name = g.Op
		}
		b.Categories = append(b.Categories, fmt.Sprintf("%s [%s]", name, g.Per))
		s.Values = append(s.Values, g.MACsEach)
	}
	b.Stacks = []chart.Stack{s}
	return b
}
