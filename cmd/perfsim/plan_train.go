package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/plan"
	"github.com/perfsim/perfsim/sim"
	"github.com/spf13/pflag"
)

const planTrainSynopsis = "perfsim plan train --model M --system NAME --gpus N --global-batch B --seq S [--tokens T] [--top N] [--dtype T] [--format table|json] [--scaling LIST]"

const planTrainExamples = `  # the best layouts to pretrain a 70B model on 1,024 H100s, and the time for 15 T tokens
  perfsim plan train --model llama3-70b --system dgx-h100 --gpus 1024 --global-batch 1536 --seq 4096 --tokens 15e12

  # strong scaling of the best layout's step from 256 to 2,048 GPUs
  perfsim plan train --model llama3-8b --system dgx-h100 --gpus 256 --global-batch 512 --seq 4096 --scaling 256,512,1024,2048

The search enumerates TP (within the scale-up domain) × CP × PP × DP ×
EP, micro-batch, pipeline schedule and virtual stages, recomputation,
ZeRO stage and TP-communication overlap; simulates each with the full
model; drops what does not fit; and ranks the layouts by step time. The
runners-up say where they lose to the winner. Progress and timing go
to stderr.`

type planTrainOptions struct {
	model, system, format, scaling string
	plot, scalingPlot, gradType    string
	gpus, gb, seq, top             int
	tokens                         float64
	dtype                          model.DType
	noOverlap, unfused             bool
	imbalance, dropout             float64
}

func (o *planTrainOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.model, "model", "", "model: a catalog name or a model .toml, a HuggingFace config.json or a model directory holding one")
	fs.StringVar(&o.system, "system", "", "a catalog system: "+strings.Join(hardware.SystemNames(), ", "))
	fs.IntVar(&o.gpus, "gpus", 0, "GPUs to lay the model out on")
	fs.IntVar(&o.gb, "global-batch", 0, "sequences per optimizer step (images for an image model)")
	fs.IntVar(&o.seq, "seq", 4096, "tokens per sequence")
	fs.Float64Var(&o.tokens, "tokens", 0, "training token budget for the time and GPU-hours to train, e.g. 15e12 (images for an image model: 90 epochs of ImageNet-1k, 115.3M)")
	fs.IntVar(&o.top, "top", 5, "layouts to print")
	o.dtype = model.BF16
	fs.Var(&o.dtype, "dtype", "data type of weights and activations")
	fs.BoolVar(&o.noOverlap, "no-overlap", false, "expose all data-, pipeline- and context-parallel communication")
	fs.Float64Var(&o.imbalance, "expert-imbalance", 1, "the busiest expert rank's tokens over the mean (MoE)")
	fs.StringVar(&o.gradType, "grad-dtype", "", gradDTypeUsage)
	fs.Float64Var(&o.dropout, "dropout", 0, dropoutUsage)
	fs.BoolVar(&o.unfused, "unfused-attention", false, unfusedUsage+"; the search then tries no context parallelism, which needs a fused kernel")
	fs.StringVar(&o.scaling, "scaling", "", "GPU counts for strong scaling (the global batch fixed) and weak scaling (the batch per GPU fixed), e.g. 256,512,1024")
	fs.StringVar(&o.plot, "plot", "", "also draw the layouts' step breakdowns, a bar per layout, into this file: .svg, .png or .pdf")
	fs.StringVar(&o.scalingPlot, "scaling-plot", "", "also draw the scaling curve (strong and weak efficiency against GPUs; needs --scaling) into this file: .svg, .png or .pdf")
	fs.StringVar(&o.format, "format", "table", "output format: table or json")
}

func runPlanTrainCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	var o planTrainOptions
	fs := newFlagSet("plan train", planTrainSynopsis, planTrainExamples, stderr)
	o.AddFlags(fs)
	if err := parseFlagsNoArgs(fs, args, "plan train"); err != nil {
		return err
	}
	var errs []error
	f := format(o.format)
	if f != formatTable && f != formatJSON {
		errs = append(errs, usagef("--format: unknown format %q (plan train writes table or json)", o.format))
	}
	if o.model == "" {
		errs = append(errs, usagef("--model: no model given"))
	}
	if o.system == "" {
		errs = append(errs, usagef("--system: no system given (%s)", strings.Join(hardware.SystemNames(), ", ")))
	}
	if o.gpus < 1 || o.gpus > sim.MaxDevices {
		errs = append(errs, usagef("--gpus: want 1 to %d, got %d", sim.MaxDevices, o.gpus))
	}
	if o.gb < 1 {
		errs = append(errs, usagef("--global-batch: must be at least 1, got %d", o.gb))
	}
	if o.seq < 1 {
		errs = append(errs, usagef("--seq: must be at least 1, got %d", o.seq))
	}
	if o.top < 1 {
		errs = append(errs, usagef("--top: must be at least 1, got %d", o.top))
	}
	if !(o.tokens >= 0 && o.tokens <= sim.MaxTrainTokens) {
		errs = append(errs, usagef("--tokens: want a budget (tokens, or images for an image model) from 0 to %g, got %v", sim.MaxTrainTokens, o.tokens))
	} else if o.tokens == 0 && fs.Changed("tokens") {
		// An explicit 0 had meant no budget without a word.
		errs = append(errs, usagef("--tokens: 0 is no token budget (leave the flag out for none)"))
	}
	if math.IsNaN(o.imbalance) || o.imbalance < 1 || o.imbalance > 64 {
		errs = append(errs, usagef("--expert-imbalance: want a factor from 1 to 64, got %v", o.imbalance))
	}
	if !(o.dropout >= 0 && o.dropout < 1) {
		errs = append(errs, usagef("--dropout: want a probability from 0 to below 1, got %v", o.dropout))
	}
	errs = append(errs, checkOutputs(outputFile{"plot", o.plot, true}, outputFile{"scaling-plot", o.scalingPlot, true})...)
	if o.scalingPlot != "" {
		if o.scaling == "" {
			errs = append(errs, usagef("--scaling-plot: needs --scaling (the GPU counts to draw)"))
		}
	}
	if fs.Changed("scaling") && strings.TrimSpace(o.scaling) == "" {
		// An empty list had meant no scaling without a word.
		errs = append(errs, usagef("--scaling: empty list (give GPU counts, e.g. 256,512,1024)"))
	}
	counts, err := parseCounts("scaling", o.scaling)
	if err != nil {
		errs = append(errs, err)
	}
	if err := sim.TrainingWeights(o.dtype); err != nil {
		errs = append(errs, usagef("--dtype: %v", err))
	}
	grad, err := parseGradDType(o.gradType)
	if err != nil {
		errs = append(errs, err)
	}
	// --model and --system's name are read beside the flags' checks, so
	// that every problem is said at once.
	m, mErr := resolveModel(o.model)
	if _, err := hardware.LookupSystem(o.system, 1); errors.Is(err, hardware.ErrUnknownSystem) {
		errs = append(errs, systemError(o.system, err, false))
	}
	if err := errors.Join(append(errs, mErr)...); err != nil {
		return err
	}
	w := simWorkload{M: m}
	if o.imbalance > 1 && w.Shape().Experts == 0 {
		return usagef("--expert-imbalance: %g for %s, a model without experts", o.imbalance, m.Name())
	}
	if s := w.Shape(); s.Arch == sim.Vision && s.Tokens > 0 {
		// A ViT trains on its image's tokens: --seq would be ignored.
		if fs.Changed("seq") {
			return usagef("--seq: %s is a vision model, which trains on its images' own %d tokens", m.Name(), s.Tokens)
		}
		o.seq = s.Tokens
	}
	base := sim.Default()
	base.Weights, base.Act, base.KV = o.dtype, o.dtype, o.dtype
	base.NoOverlap, base.ExpertImbalance, base.GradType = o.noOverlap, o.imbalance, grad
	base.Dropout, base.UnfusedAttention = o.dropout, o.unfused
	req := plan.TrainRequest{GPUs: o.gpus, GlobalBatch: o.gb, Seq: o.seq, Tokens: o.tokens, Top: o.top, Base: base}
	start := time.Now()
	p, err := searchOn(o.system, w, req)
	if err != nil {
		return err
	}
	for _, w := range p.Warnings {
		fmt.Fprintf(stderr, "perfsim: warning: %v\n", w)
	}
	fmt.Fprintf(stderr, "perfsim: plan train: %d configurations, %d refused, %d simulated, %d out of memory, in %.2f s\n",
		p.Seen, p.Invalid, p.Simulated, p.NoFit, time.Since(start).Seconds())
	var sc []scalingRow
	if len(counts) > 0 {
		if sc, err = scaling(o.system, w, req, counts); err != nil {
			return err
		}
	}
	// No layout fits: the report is written and the run exits 3 (no
	// answer); --plot, which draws the ranked layouts, is not drawn.
	var none error
	if len(p.Best) == 0 {
		none = noAnswerf("plan train: no layout of %s fits %d GPUs of %s", m.Name(), req.GPUs, o.system)
		if o.plot != "" {
			none = noAnswerf("%v; --plot not drawn: no layout to draw", none)
		}
	}
	if o.plot != "" && none == nil {
		what := fmt.Sprintf("%s on %s × %d GPUs\nglobal batch %d × %d tokens", m.Name(), o.system, req.GPUs, req.GlobalBatch, req.Seq)
		if err := savePlanTrainChart(o.plot, what, p); err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
	}
	if o.scalingPlot != "" {
		what := fmt.Sprintf("%s on %s\nglobal batch %d × %d tokens at %d GPUs", m.Name(), o.system, req.GlobalBatch, req.Seq, req.GPUs)
		if err := saveScalingChart(o.scalingPlot, what, sc); err != nil {
			return fmt.Errorf("--scaling-plot: %w", err)
		}
	}
	if f == formatJSON {
		err = writeJSON(stdout, planTrainJSON(m.Name(), o.system, w.Shape().Arch == sim.Vision, req, p, sc))
	} else {
		err = writePlanTrainTable(stdout, m.Name(), o.system, w.Shape().Arch == sim.Vision, req, p, sc)
	}
	if err != nil {
		return err
	}
	return none
}

// searchOn runs the search on the catalog system sized for req.GPUs.
func searchOn(system string, w sim.Workload, req plan.TrainRequest) (*plan.TrainPlan, error) {
	sys, err := hardware.LookupSystem(system, req.GPUs)
	if errors.Is(err, hardware.ErrUnknownSystem) {
		return nil, systemError(system, err, false)
	}
	if err != nil {
		return nil, err
	}
	p, err := plan.Train(sys, w, req)
	if err != nil {
		var se *sim.ScenarioError
		if errors.As(err, &se) {
			return nil, usageError{err}
		}
		return nil, err
	}
	return p, nil
}

// parseCounts parses flag's comma-separated list of positive GPU counts,
// sorted; every problem is a usage error naming the flag, all at once.
func parseCounts(flag, s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	var errs []error
	for _, f := range strings.Split(s, ",") {
		var n int
		if _, err := fmt.Sscanf(strings.TrimSpace(f), "%d", &n); err != nil || n < 1 || fmt.Sprint(n) != strings.TrimSpace(f) {
			errs = append(errs, usagef("--%s: %q is not a positive GPU count", flag, f))
			continue
		}
		if n > sim.MaxDevices {
			errs = append(errs, usagef("--%s: %d GPUs is over the limit of %d", flag, n, sim.MaxDevices))
			continue
		}
		out = append(out, n)
	}
	errs = append(errs, repeatedItems(flag, out))
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sort.Ints(out)
	return out, nil
}

// trainBaseNote names the settings every candidate of a search shares
// and its figures depend on: "weights and activations fp8, gradients
// fp32, no overlap, expert imbalance 1.2, unfused attention, dropout
// 0.1".
func trainBaseNote(b sim.Scenario) string {
	s := "weights and activations " + b.Weights.String()
	if b.GradType != model.Invalid {
		s += ", gradients " + b.GradType.String()
	}
	if b.NoOverlap {
		s += ", no overlap"
	}
	if b.ExpertImbalance > 1 {
		s += fmt.Sprintf(", expert imbalance %g", b.ExpertImbalance)
	}
	if b.UnfusedAttention {
		s += ", unfused attention"
	}
	if b.Dropout > 0 {
		s += ", dropout " + strconv.FormatFloat(b.Dropout, 'g', -1, 64)
	}
	return s
}

// writePlanTrainTable prints the ranked layouts and why the runners-up
// lose.
func writePlanTrainTable(w io.Writer, name, system string, images bool, req plan.TrainRequest, p *plan.TrainPlan, sc []scalingRow) error {
	batch, unit := fmt.Sprintf("%d × %d tokens", req.GlobalBatch, req.Seq), "tokens/s"
	if images {
		batch, unit = fmt.Sprintf("%d images of %d tokens", req.GlobalBatch, req.Seq), "images/s"
	}
	fmt.Fprintf(w, "%s on %s × %d GPUs: global batch %s; %s\n", name, system, req.GPUs, batch, trainBaseNote(req.Base))
	if len(p.Best) == 0 {
		if m := p.ClosestMiss; m != nil {
			fmt.Fprintf(w, "no layout fits: the closest, %s (%s), needs %s of %s usable (%s short)\n",
				m.Layout(), settings(m.Scenario), m.Memory.Total.BinaryString(), m.Memory.Usable.BinaryString(), (-m.Memory.Headroom).BinaryString())
		} else {
			fmt.Fprintf(w, "no layout divides the model and the GPUs\n")
		}
		return nil
	}
	tw := newTable(w)
	fmt.Fprintf(tw, "rank\tlayout\tsettings\tstep\tMFU\t%s\tmemory/GPU", unit)
	if req.Tokens > 0 {
		fmt.Fprintf(tw, "\ttime to train\tGPU-hours")
	}
	fmt.Fprintf(tw, "\twhy not first\n")
	win := &p.Best[0]
	for i := range p.Best {
		c := &p.Best[i]
		why := "winner: " + leading(c)
		if i > 0 {
			why = plan.Why(c, win)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%v\t%.1f%%\t%s\t%v", i+1, c.Layout(), settings(c.Scenario), c.Step, 100*c.MFU, fnum(c.Tokens), c.Memory.Total.BinaryString())
		if req.Tokens > 0 {
			fmt.Fprintf(tw, "\t%s days\t%s", fnum(float64(c.TimeToTrain)/86400), fnum(c.GPUHours()))
		}
		fmt.Fprintf(tw, "\t%s\n", why)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b := win.Break
	fmt.Fprintf(w, "\nwinner's step: compute %v, TP comm %v, CP comm %v, EP comm %v, PP comm %v, bubble %v, DP comm %v, overlap %v, optimizer %v\n",
		b.Compute, b.TPComm, b.CPComm, b.EPComm, b.PPComm, b.Bubble, b.DPComm, b.Overlap, b.Optimizer)
	return writeScalingTable(w, sc)
}

// leading names the biggest part of a candidate's step after compute.
func leading(c *plan.TrainCandidate) string {
	b := c.Break
	// Every part of the step but compute, as plan.Why weighs them.
	names := []string{"TP comm", "CP comm", "EP comm", "PP comm", "bubble", "DP comm", "overlap", "optimizer", "input"}
	vals := []model.Seconds{b.TPComm, b.CPComm, b.EPComm, b.PPComm, b.Bubble, b.DPComm, b.Overlap, b.Optimizer, b.Input}
	at := 0
	for i := range vals {
		if vals[i] > vals[at] {
			at = i
		}
	}
	return fmt.Sprintf("compute %.0f%% of the step, then %s %.1f%%", 100*float64(b.Compute/c.Step), names[at], 100*float64(vals[at]/c.Step))
}

// settings names a candidate's settings beside its layout.
func settings(s sim.Scenario) string {
	out := fmt.Sprintf("mbs %d, %s", s.Batch, s.Schedule)
	if s.VirtualStages > 1 {
		out += fmt.Sprintf("×%d", s.VirtualStages)
	}
	if s.EmbeddingSlot && s.LossSlot {
		out += " (embedding and loss as layer slots)"
	}
	out += fmt.Sprintf(", recompute %s, ZeRO %d", s.Recompute, s.ZeRO)
	if s.TPOverlap {
		out += ", TP overlap"
	}
	return out
}
