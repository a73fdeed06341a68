package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"gonum.org/v1/plot/vg"

	"github.com/perfsim/perfsim/cmd/perfsim/internal/chart"
	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/internal/fileio"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// A plotKind is one chart perfsim plot draws.
type plotKind struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func plotKinds() map[string]plotKind {
	return map[string]plotKind{
		"roofline":  {"ops on the device's roofline, prefill and decode", runPlotRoofline},
		"breakdown": {"stacked time by op class, prefill and decode, across hardware or batch sizes", runPlotBreakdown},
		"memory":    {"stacked memory by kind against capacity, across batch sizes or context lengths", runPlotMemory},
		"sweep":     {"throughput against latency across batch sizes, a line per hardware; --speedup: a heat map", runPlotSweep},
		"gemms":     {"MACs per GEMM of a model (as the reference GPT-3 GEMM table counts them), log bars", runPlotGemms},
		"energy":    {"output tokens per joule, or --cost per million tokens, across batch sizes, a line per hardware", runPlotEnergy},
	}
}

func printPlotUsage(w io.Writer) {
	fmt.Fprint(w, `Usage: perfsim plot <chart> [flags] [-o FILE.svg|FILE.png|FILE.pdf|-]

Charts:
`)
	kinds := plotKinds()
	for _, k := range sortedKeys(kinds) {
		fmt.Fprintf(w, "  %-10s %s\n", k, kinds[k].summary)
	}
	fmt.Fprint(w, `
The format follows the output file's extension (.svg, .png, .pdf); -o -
writes SVG to stdout. The default output is <chart>.svg. Run
'perfsim plot <chart> --help' for a chart's flags.

Exit status: 0 success, 1 failure, 2 usage error or bad input file.
`)
}

// runPlotCmd dispatches perfsim plot <chart>.
func runPlotCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		printPlotUsage(stderr)
		return usagef("plot: no chart given (want %s)", strings.Join(sortedKeys(plotKinds()), ", "))
	}
	switch args[0] {
	case "-h", "--help", "help":
		printPlotUsage(stderr)
		return pflag.ErrHelp
	}
	k, ok := plotKinds()[args[0]]
	if !ok {
		return usagef("plot: unknown chart %q (want %s)", args[0], strings.Join(sortedKeys(plotKinds()), ", "))
	}
	return k.run(ctx, args[1:], stdout, stderr)
}

// plotOutput are the flags every chart has: where it goes and its size.
type plotOutput struct {
	out           string
	width, height float64 // inches
}

func (o *plotOutput) AddFlags(fs *pflag.FlagSet, kind string) {
	fs.StringVarP(&o.out, "out", "o", kind+".svg", "output file; its extension picks the format: .svg, .png or .pdf; - writes SVG to stdout")
	fs.Float64Var(&o.width, "width", 8, "width in inches")
	fs.Float64Var(&o.height, "height", 5, "height in inches")
}

// check validates the output flags before any work is done.
func (o *plotOutput) check() error {
	var errs []error
	if _, err := chart.FormatOf(o.out); err != nil {
		errs = append(errs, usagef("--out: %v", err))
	} else if o.out != "-" {
		if err := fileio.CheckOutput(o.out); err != nil {
			errs = append(errs, fmt.Errorf("--out: %w", err))
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"width", o.width}, {"height", o.height}} {
		if !(f.v >= 1 && f.v <= 100) {
			errs = append(errs, usagef("--%s: %v inches is outside 1 to 100", f.name, f.v))
		}
	}
	return errors.Join(errs...)
}

// write saves c, and tells stderr what was left out of it.
func (o *plotOutput) write(c *chart.Chart, stdout, stderr io.Writer) error {
	if len(c.Skipped) > 0 {
		fmt.Fprintf(stderr, "perfsim: left out of the log axes (no FLOPs or no bytes): %s\n", strings.Join(c.Skipped, ", "))
	}
	w, h := vg.Length(o.width)*vg.Inch, vg.Length(o.height)*vg.Inch
	if o.out == "-" {
		return chart.Write(stdout, c, w, h, "svg")
	}
	return chart.Save(o.out, c, w, h)
}

// noteCalibration adds to c's title a line for each device whose
// efficiencies were not fitted to its own measurements: "L40S:
// transferred from A100 80GB SXM", "My accelerator: uncalibrated:
// datasheet peaks at 80% efficiency" (the label's first clause; the full
// label is in simulate's output).
func noteCalibration(c *chart.Chart, devs []*hardware.Device) {
	seen := map[string]bool{}
	for _, d := range devs {
		cal := d.Calibration()
		if cal.Kind == "calibrated" || seen[d.Name] {
			continue
		}
		seen[d.Name] = true
		l, _, _ := strings.Cut(d.CalibrationLabel(), ";")
		switch {
		case d.Kept != nil:
			// A what-if carrying some kernels: which, not its whole label.
			l = d.TransferredKernels() + " transferred from " + cal.From
		case cal.Kind == "transferred":
			l, _, _ = strings.Cut(l, ":")
		}
		c.Title += "\n" + d.Name + ": " + l
	}
}

// plotScenario are the scenario flags the charts share; the lists allow
// several values where a chart compares them.
type plotScenario struct {
	hw, model, batch, input string
	output, tp, pp          int
	dtype                   model.DType
}

func (o *plotScenario) AddFlags(fs *pflag.FlagSet, hwList, batchList, inputList bool) {
	hwHelp := hwFlagUsage
	if hwList {
		hwHelp = "hardware, a comma list: catalog names or hardware TOML files"
	}
	fs.StringVar(&o.hw, "hw", "", hwHelp)
	fs.StringVar(&o.model, "model", "", "model: a catalog name (llama3-70b, ...) or a model .toml, a HuggingFace config.json or a model directory holding one")
	bh := "sequences per batch"
	if batchList {
		bh = "batch sizes: a list such as 1,8,64 or 1..256x2"
	}
	fs.StringVar(&o.batch, "batch", "1", bh)
	ih := "prompt tokens per sequence"
	if inputList {
		ih = "prompt lengths: a list such as 1024,4096 or 1024..32768x2"
	}
	fs.StringVar(&o.input, "input", "2048", ih)
	fs.IntVar(&o.output, "output", 128, "generated tokens per sequence")
	fs.IntVar(&o.tp, "tp", 1, "tensor-parallel degree")
	fs.IntVar(&o.pp, "pp", 1, "pipeline-parallel degree")
	o.dtype = model.BF16
	fs.Var(&o.dtype, "dtype", "data type of weights, activations and KV cache")
}

// maxPlotPoints bounds the scenarios of one chart: the docs' largest,
// plot sweep --speedup over 9 batch sizes × 7 prompt lengths × 2 devices,
// has 126. A roofline draws every op of every scenario (4,000 scenarios
// made a 15 MB SVG and took minutes), and no reader tells apart more
// lines or cells than this.
const maxPlotPoints = 256

// spec resolves the flags into a sweep over their lists.
func (o *plotScenario) spec() (*sweepSpec, error) {
	var errs []error
	batch, err := parseIntList("batch", o.batch)
	errs = append(errs, err)
	input, err := parseIntList("input", o.input)
	errs = append(errs, err)
	for _, f := range []struct {
		name string
		v    int
	}{{"output", o.output}, {"tp", o.tp}, {"pp", o.pp}} {
		if f.v < 1 {
			errs = append(errs, usagef("--%s: must be at least 1, got %d", f.name, f.v))
		}
	}
	names, err := parseNameList("hw", o.hw)
	if strings.TrimSpace(o.hw) == "" {
		err = usagef("--hw: no hardware given (a catalog name such as h100, or a .toml file)")
	}
	errs = append(errs, err)
	if errors.Join(errs...) == nil {
		if n := len(names) * len(batch) * len(input); n > maxPlotPoints {
			return nil, usagef("plot: %d scenarios (%d hardware × %d batch sizes × %d prompt lengths) is more than the %d a chart can show; narrow --batch or --input (perfsim sweep takes more)",
				n, len(names), len(batch), len(input), maxPlotPoints)
		}
	}
	// Every problem at once: each hardware and the model, beside the
	// flags (the first had hidden the rest).
	s := &sweepSpec{DTypes: []model.DType{o.dtype}, TP: []int{o.tp}, PP: []int{o.pp},
		Batch: batch, Input: input, Output: []int{o.output}}
	for _, n := range names {
		d, err := resolveHardware(n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		s.HW = append(s.HW, d)
	}
	m, err := resolveModel(o.model)
	if err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	s.Models = append(s.Models, m)
	return s, nil
}

// simulateAll runs every point of s and fails on the first point that
// cannot run (a chart with a hole would mislead).
func simulateAll(ctx context.Context, s *sweepSpec) ([]sweepResult, error) {
	res, err := runSweep(ctx, s, sweepOptions{})
	if err != nil {
		return nil, err
	}
	for _, r := range res {
		if r.Err != nil {
			return nil, scenarioUsage(r.Err)
		}
	}
	return res, nil
}

// warnPoints prints the distinct warnings of a plot's points on stderr,
// once each in point order, as sweep does (a data type emulated at
// another's rate, lengths beyond the trained context).
func warnPoints(stderr io.Writer, res []sweepResult) {
	said := map[string]bool{}
	n := 0
	for _, r := range res {
		if r.Report == nil {
			continue
		}
		for _, w := range r.Report.Warnings {
			m := w.Error()
			if said[m] {
				continue
			}
			said[m] = true
			if n++; n <= maxSweepWarnings {
				fmt.Fprintf(stderr, "perfsim: warning: %s\n", m)
			}
		}
	}
	if n > maxSweepWarnings {
		fmt.Fprintf(stderr, "perfsim: warning: (%d more)\n", n-maxSweepWarnings)
	}
}

// scenarioText describes a scenario for a chart's title: "2048 in / 128
// out, bf16, tp 8".
func scenarioText(r *sim.Report, withBatch bool) string {
	sc := r.Scenario
	var parts []string
	if withBatch {
		parts = append(parts, fmt.Sprintf("batch %d", sc.Batch))
	}
	// Tokens in and out are a decoder's; an encoder reads its input, and
	// a CNN's or ViT's image fixes its size.
	switch r.Arch {
	case sim.Decoder:
		parts = append(parts, fmt.Sprintf("%d in / %d out", sc.Input, sc.Output))
	case sim.Encoder:
		parts = append(parts, fmt.Sprintf("%d tokens", sc.Input))
	}
	if sc.Weights == sc.Act && sc.Act == sc.KV {
		parts = append(parts, sc.Act.String())
	} else {
		parts = append(parts, fmt.Sprintf("weights %s, act %s, kv %s", sc.Weights, sc.Act, sc.KV))
	}
	if sc.TP > 1 {
		parts = append(parts, fmt.Sprintf("tp %d", sc.TP))
	}
	if sc.PP > 1 {
		parts = append(parts, fmt.Sprintf("pp %d", sc.PP))
	}
	return strings.Join(parts, ", ")
}

// classNames returns the classes that take time in any of the phase
// reports, in model.Classes order.
func classNames(phases ...*sim.PhaseReport) []model.Class {
	seen := map[model.Class]bool{}
	for _, p := range phases {
		if p == nil {
			continue
		}
		for _, c := range p.Classes {
			if c.Time > 0 {
				seen[c.Class] = true
			}
		}
	}
	var out []model.Class
	for _, c := range model.Classes() {
		if seen[c] {
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
