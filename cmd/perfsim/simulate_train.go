package main

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
	"github.com/spf13/pflag"
)

// trainFlags are simulate's flags for training at scale.
type trainFlags struct {
	cp, ep, virtual, micro int
	sp, tpOverlap, noOver  bool
	embedSlot, lossSlot    bool
	schedule, system       string
	gradType               string
	imbalance, dropout     float64
	unfused                bool
}

// dropoutUsage and unfusedUsage are the help of --dropout and
// --unfused-attention, which simulate and plan train share.
const (
	dropoutUsage = "dropout probability (training): Megatron-LM's hidden dropout before each residual add (--hidden-dropout, 0.1 by default there) and, with --unfused-attention, on the attention probabilities; priced as its masks' traffic, whatever the probability (0: none)"
	unfusedUsage = "run the attention core as Megatron-LM did before FlashAttention (training): scores and probabilities written to memory, every pair computed (Narayanan et al. 2021, Korthikanti et al. 2022)"
)

// gradDTypeUsage is the help of --grad-dtype.
const gradDTypeUsage = "type gradients are accumulated and data-parallel reduced in (training): fp32 as Megatron-LM does for bf16 models; default the weights' type"

// parseGradDType parses --grad-dtype; "" is model.Invalid, the weights'
// type.
func parseGradDType(s string) (model.DType, error) {
	if s == "" {
		return model.Invalid, nil
	}
	d, err := model.ParseDType(s)
	if err != nil {
		return d, usagef("--grad-dtype: %v", err)
	}
	if !d.IsFloat() || d.Size() < 2 || d.Size() > 4 {
		return d, usagef("--grad-dtype: gradients are kept in a float type of 16 or 32 bits, not %s", d)
	}
	return d, nil
}

func (o *trainFlags) AddFlags(fs *pflag.FlagSet) {
	fs.IntVar(&o.cp, "cp", 1, "context-parallel degree (training): ring attention over sequence shards")
	fs.IntVar(&o.ep, "ep", 1, "expert-parallel degree (MoE): in training, experts split over data-parallel ranks; in inference, inside the TP group (ep divides tp) or across --dp replicas of data-parallel attention (ep a multiple of tp) with all-to-all dispatch and combine")
	fs.BoolVar(&o.sp, "sp", false, "sequence parallelism with tensor parallelism (training)")
	fs.StringVar(&o.schedule, "schedule", "1f1b", "pipeline schedule (training): 1f1b, gpipe or interleaved")
	fs.IntVar(&o.virtual, "virtual-stages", 1, "model chunks per pipeline stage (training, --schedule interleaved)")
	fs.BoolVar(&o.embedSlot, "account-for-embedding-in-pipeline-split", false, "count the input embedding as one layer's slot when spreading layers over the pipeline's chunks (training; Megatron-LM's flag of that name)")
	fs.BoolVar(&o.lossSlot, "account-for-loss-in-pipeline-split", false, "count the output layer and loss as one layer's slot when spreading layers over the pipeline's chunks (training; Megatron-LM's flag of that name)")
	fs.IntVar(&o.micro, "micro-batch", 0, "sequences per micro-batch (training; the same as --batch)")
	fs.StringVar(&o.system, "system", "", "a catalog system with network tiers instead of --hw: "+fmt.Sprint(hardware.SystemNames()))
	fs.BoolVar(&o.tpOverlap, "tp-overlap", false, "overlap tensor-parallel collectives with their GEMMs (training: Transformer Engine userbuffers, --tp-comm-overlap; needs --sp)")
	fs.BoolVar(&o.noOver, "no-overlap", false, "expose all data-, pipeline- and context-parallel communication (training: no overlap with compute)")
	fs.Float64Var(&o.imbalance, "expert-imbalance", 1, "the busiest expert rank's tokens over the mean (MoE; 1 is balanced)")
	fs.StringVar(&o.gradType, "grad-dtype", "", gradDTypeUsage)
	fs.Float64Var(&o.dropout, "dropout", 0, dropoutUsage)
	fs.BoolVar(&o.unfused, "unfused-attention", false, unfusedUsage)
}

// apply sets the training fields of sc from the flags.
func (o *trainFlags) apply(sc *sim.Scenario, fs *pflag.FlagSet) error {
	var errs []error
	for _, f := range []struct {
		name string
		v    int
	}{{"cp", o.cp}, {"ep", o.ep}, {"virtual-stages", o.virtual}} {
		if f.v < 1 {
			errs = append(errs, usagef("--%s: must be at least 1, got %d", f.name, f.v))
		}
	}
	if fs.Changed("micro-batch") {
		if fs.Changed("batch") && o.micro != sc.Batch {
			errs = append(errs, usagef("--micro-batch: %d disagrees with --batch %d (give one)", o.micro, sc.Batch))
		}
		sc.Batch = o.micro
	}
	s, err := sim.ParseSchedule(o.schedule)
	if err != nil {
		errs = append(errs, usagef("--schedule: %v", err))
	}
	if math.IsNaN(o.imbalance) || o.imbalance < 1 || o.imbalance > 64 {
		errs = append(errs, usagef("--expert-imbalance: want a factor from 1 to 64, got %v", o.imbalance))
	}
	if g, err := parseGradDType(o.gradType); err != nil {
		errs = append(errs, err)
	} else {
		sc.GradType = g
	}
	sc.CP, sc.EP, sc.VirtualStages, sc.SP, sc.Schedule = o.cp, o.ep, o.virtual, o.sp, s
	sc.TPOverlap, sc.NoOverlap, sc.ExpertImbalance = o.tpOverlap, o.noOver, o.imbalance
	sc.EmbeddingSlot, sc.LossSlot = o.embedSlot, o.lossSlot
	sc.Dropout, sc.UnfusedAttention = o.dropout, o.unfused
	return errors.Join(errs...)
}

// catalogSystem returns the --system named, sized for n devices.
func (o *trainFlags) catalogSystem(fs *pflag.FlagSet, n int) (*hardware.System, error) {
	if fs.Changed("hw") {
		return nil, usagef("--system: give --system or --hw, not both")
	}
	sys, err := hardware.LookupSystem(o.system, n)
	if errors.Is(err, hardware.ErrUnknownSystem) {
		return nil, systemError(o.system, err, true)
	}
	return sys, err
}

type part struct {
	name string
	t    model.Seconds
}

// breakdownParts lists a breakdown's parts in a fixed order.
func breakdownParts(b *sim.Breakdown) []part {
	return []part{{"compute", b.Compute}, {"TP comm", b.TPComm}, {"CP comm", b.CPComm}, {"EP comm", b.EPComm},
		{"PP comm", b.PPComm}, {"bubble", b.Bubble}, {"DP comm", b.DPComm}, {"overlap", b.Overlap}, {"optimizer", b.Optimizer}, {"input", b.Input}}
}

// breakdownJSON is a step breakdown in seconds.
type breakdownJSON struct {
	Compute   float64 `json:"compute_s"`
	TPComm    float64 `json:"tp_comm_s"`
	CPComm    float64 `json:"cp_comm_s"`
	EPComm    float64 `json:"ep_comm_s"`
	PPComm    float64 `json:"pp_comm_s"`
	Bubble    float64 `json:"bubble_s"`
	DPComm    float64 `json:"dp_comm_s"`
	Overlap   float64 `json:"overlap_s"`
	Optimizer float64 `json:"optimizer_s"`
	Input     float64 `json:"input_s,omitempty"`
}

func breakdownOf(b *sim.Breakdown) *breakdownJSON {
	if b == nil {
		return nil
	}
	return &breakdownJSON{float64(b.Compute), float64(b.TPComm), float64(b.CPComm), float64(b.EPComm), float64(b.PPComm),
		float64(b.Bubble), float64(b.DPComm), float64(b.Overlap), float64(b.Optimizer), float64(b.Input)}
}

// writeLayoutTable prints a transformer step's layout and breakdown rows
// into the result table.
func writeLayoutTable(w io.Writer, sc sim.Scenario, tr *sim.TrainingResult) {
	b := tr.Breakdown
	if b == nil {
		return
	}
	fmt.Fprintf(w, "layout\ttp %d × pp %d × dp %d × cp %d, ep %d; sp %v; %s", sc.TP, sc.PP, sc.DP, sc.CP, sc.EP, sc.SP, sc.Schedule)
	if sc.VirtualStages > 1 {
		fmt.Fprintf(w, " × %d virtual stages", sc.VirtualStages)
	}
	switch {
	case sc.EmbeddingSlot && sc.LossSlot:
		fmt.Fprint(w, "; embedding and loss as layer slots")
	case sc.EmbeddingSlot:
		fmt.Fprint(w, "; embedding as a layer slot")
	case sc.LossSlot:
		fmt.Fprint(w, "; loss as a layer slot")
	}
	if sc.TPOverlap {
		fmt.Fprint(w, "; TP overlap")
	}
	if sc.GradType != model.Invalid {
		fmt.Fprintf(w, "; %s gradients", sc.GradType)
	}
	fmt.Fprintln(w)
	for _, p := range breakdownParts(b) {
		if p.t > 0 {
			fmt.Fprintf(w, "  %s\t%v\t%.1f%% of the step\n", p.name, p.t, 100*float64(p.t/tr.StepTime))
		}
	}
}
