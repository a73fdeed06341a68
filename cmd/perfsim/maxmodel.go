package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
	"github.com/perfsim/perfsim/workloads"
)

const maxModelSynopsis = "perfsim maxmodel --hw NAME|FILE --mode train|inference [--devices N] [--family gpt3|llama] [--batch B] [--seq S] [--dtype T] [--recompute none|selective|full] [--shard-optimizer] [--format table|json|csv]"

const maxModelExamples = `  # the largest GPT-3-shaped model one H100 can train (published estimate: about 3.5–4 B; docs/simulate.md)
  perfsim maxmodel --hw h100 --mode train

  # on a node of four with the model states sharded ZeRO-3 style (published estimate: about 16 B)
  perfsim maxmodel --hw h100 --mode train --devices 4 --shard-optimizer --recompute selective

  # the largest Llama-shaped model one H100 serves in fp8 at batch 8 and 4096 tokens
  perfsim maxmodel --hw h100 --mode inference --family llama --dtype fp8 --batch 8 --input 4096 --output 128
`

// maxModelOptions are the flags of perfsim maxmodel.
type maxModelOptions struct {
	hw, mode, family, format string
	devices, batch, seq      int
	input, output, zero      int
	dtype                    model.DType
	recompute, optimizer     string
	shard                    bool
	reserve                  model.Bytes
}

func (o *maxModelOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.hw, "hw", "", hwFlagUsage)
	fs.StringVar(&o.mode, "mode", "train", "train or inference")
	fs.IntVar(&o.devices, "devices", 1, "devices in the node: training shards the model states over them (with --shard-optimizer), inference splits the layers")
	fs.StringVar(&o.family, "family", "gpt3", "model family to scale: "+strings.Join(workloads.Families, " or "))
	fs.IntVar(&o.batch, "batch", 1, "sequences per device (training: the micro-batch)")
	o.seq, o.input, o.output = 2048, 2048, 128
	fs.Var(intCount{&o.seq}, "seq", "training sequence length")
	fs.Var(intCount{&o.input}, "input", "inference: prompt tokens per sequence")
	fs.Var(intCount{&o.output}, "output", "inference: generated tokens per sequence")
	o.dtype = model.BF16
	fs.Var(&o.dtype, "dtype", "data type of weights and activations (and KV cache)")
	fs.StringVar(&o.recompute, "recompute", "none", "training: activation recomputation none, selective or full")
	fs.StringVar(&o.optimizer, "optimizer", "adam", "training: adam, adamw or sgd (mixed precision)")
	fs.BoolVar(&o.shard, "shard-optimizer", false, "training: shard the model states over --devices (ZeRO stage 3: weights, gradients, optimizer state; see --zero)")
	fs.IntVar(&o.zero, "zero", 0, "training: ZeRO stage 1, 2 or 3 when sharding (default 3 with --shard-optimizer)")
	fs.Var(&o.reserve, "reserve", "framework memory reserve per device (default: the hardware file's)")
	addFormatFlag(fs, &o.format)
}

// maxModelJSON is the JSON of perfsim maxmodel (docs/simulate.md).
type maxModelJSON struct {
	Schema   string       `json:"schema"`
	Hardware string       `json:"hardware"`
	Mode     string       `json:"mode"`
	Family   string       `json:"family"`
	Devices  int          `json:"devices"`
	Scenario scenarioJSON `json:"scenario"`
	Found    bool         `json:"found"`
	Model    *memberJSON  `json:"model"`
	Next     *memberJSON  `json:"next"`
	Capacity int64        `json:"capacity_bytes"`
	Usable   int64        `json:"usable_bytes"`
}

type memberJSON struct {
	Name    string     `json:"name"`
	Params  int64      `json:"params"`
	Layers  int        `json:"layers"`
	DModel  int        `json:"d_model"`
	Heads   int        `json:"heads"`
	KVHeads int        `json:"kv_heads"`
	FFN     int        `json:"ffn"`
	Vocab   int        `json:"vocab"`
	Memory  memoryJSON `json:"memory"`
}

func member(w sim.Workload, m sim.Memory, training bool) *memberJSON {
	if w == nil {
		return nil
	}
	s := w.Shape()
	return &memberJSON{Name: w.Name(), Params: whole(w.Params()), Layers: s.Layers, DModel: s.DModel, Heads: s.Heads,
		KVHeads: s.KVHeads, FFN: s.FFN, Vocab: s.Vocab, Memory: memoryOf(m, training)}
}

func runMaxModelCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o maxModelOptions
	fs := newFlagSet("maxmodel", maxModelSynopsis, maxModelExamples, stderr)
	o.AddFlags(fs)
	if err := parseFlagsNoArgs(fs, args, "maxmodel"); err != nil {
		return err
	}
	// Every flag problem at once, before the hardware is read.
	f, fmtErr := parseFormat(o.format)
	fam := simFamily(strings.ToLower(o.family))
	var famErr error
	if _, err := fam.Member(1e9); err != nil {
		famErr = usagef("--family: %v", err)
	}
	sc, scErr := o.scenario(fs)
	if err := errors.Join(fmtErr, famErr, scErr); err != nil {
		return err
	}
	dev, err := resolveHardware(o.hw)
	if err != nil {
		return err
	}
	sys, err := systemFor(dev, o.devices)
	if err != nil {
		return usagef("--devices: %v", err)
	}
	// Search from 10 M to 50 T parameters (under workloads.MaxParams, which
	// a scaled member may overshoot by a layer).
	res, err := sim.MaxModel(sys, fam, sc, 1e7, workloads.MaxParams/2)
	if err != nil {
		return scenarioUsage(err)
	}
	j := maxModelJSON{Schema: "perfsim.maxmodel/v1", Hardware: dev.Name, Mode: sc.Mode.String(), Family: string(fam), Devices: o.devices,
		Found: res.Model != nil, Model: member(res.Model, res.Memory, sc.Mode == sim.Training), Next: member(res.Next, res.NextMemory, sc.Mode == sim.Training),
		Capacity: whole(float64(dev.Memory.Capacity)), Usable: whole(float64(dev.Memory.Limit()))}
	j.Scenario = scenarioOf(sc, sim.Decoder)
	switch f {
	case formatJSON:
		return writeJSON(stdout, j)
	case formatCSV:
		var rows [][]string
		for _, m := range []struct {
			what string
			m    *memberJSON
		}{{"largest_fitting", j.Model}, {"next_not_fitting", j.Next}} {
			if m.m == nil {
				continue
			}
			rows = append(rows, []string{m.what, m.m.Name, strconv.FormatInt(m.m.Params, 10), strconv.Itoa(m.m.Layers), strconv.Itoa(m.m.DModel),
				strconv.Itoa(m.m.Heads), strconv.Itoa(m.m.KVHeads), strconv.Itoa(m.m.FFN), strconv.FormatInt(m.m.Memory.Total, 10), strconv.FormatInt(m.m.Memory.Capacity, 10), strconv.FormatBool(m.m.Memory.Fits)})
		}
		return writeCSV(stdout, []string{"result", "name", "params", "layers", "d_model", "heads", "kv_heads", "ffn", "total_bytes", "capacity_bytes", "fits"}, rows)
	}
	what := "train"
	if sc.Mode == sim.Inference {
		what = "serve"
	}
	where := "one " + dev.Name
	if o.devices > 1 {
		where = fmt.Sprintf("a node of %d × %s", o.devices, dev.Name)
	}
	if res.Model == nil {
		fmt.Fprintf(stdout, "no %s-family model of 10 M parameters or more can %s on %s in this scenario\n", fam, what, where)
		return nil
	}
	fmt.Fprintf(stdout, "largest %s-family model to %s on %s: %s parameters\n", fam, what, where, paramsShort(res.Model.Params()))
	s := res.Model.Shape()
	fmt.Fprintf(stdout, "  shape: %d layers, d_model %d, %d heads (%d KV), ffn %d, vocab %d\n", s.Layers, s.DModel, s.Heads, s.KVHeads, s.FFN, s.Vocab)
	m := res.Memory
	tw := newTable(stdout)
	fmt.Fprintf(tw, "  weights\t%s\n", m.Weights.BinaryString())
	if sc.Mode == sim.Training {
		fmt.Fprintf(tw, "  gradients\t%s\n", m.Gradients.BinaryString())
		fmt.Fprintf(tw, "  optimizer\t%s\n", m.Optimizer.BinaryString())
	} else {
		fmt.Fprintf(tw, "  KV cache\t%s\n", m.KVCache.BinaryString())
	}
	fmt.Fprintf(tw, "  activations\t%s\n", m.Activations.BinaryString())
	fmt.Fprintf(tw, "  reserve\t%s\n", m.Reserve.BinaryString())
	fmt.Fprintf(tw, "  total\t%s\tof %s per device, %s headroom\n", m.Total.BinaryString(), usableText(m), m.Headroom.BinaryString())
	if err := tw.Flush(); err != nil {
		return err
	}
	if res.Next != nil {
		// The next shape of the family, named by its layers and width as
		// well: its parameter count can round to the same figure, or even
		// fall a little (more layers of a narrower width), while its
		// memory per device still grows.
		ns := res.Next.Shape()
		fmt.Fprintf(stdout, "  the next size, %s (%d layers, d_model %d), needs %s\n", paramsShort(res.Next.Params()), ns.Layers, ns.DModel, res.NextMemory.Total.BinaryString())
	}
	if sc.Mode == sim.Training {
		scores := ""
		if sc.Recompute == sim.RecomputeNone {
			// sim.MaxModel sizes as its seed assumptions do.
			scores = " (the attention scores kept, as without FlashAttention: simulate, which fuses attention, needs less)"
		}
		fmt.Fprintf(stdout, "assumptions: mixed-precision %s (%g bytes of model state per parameter before sharding), micro-batch %d × %d tokens, recompute %s%s, ZeRO %d over %s\n",
			sc.Optimizer, sc.ModelStateBytes(), sc.Batch, sc.Seq, sc.Recompute, scores, sc.ZeRO, deviceCount(max(sc.DP, 1)))
	} else {
		fmt.Fprintf(stdout, "assumptions: batch %d, %d tokens in and %d out, %s weights, layers split over %s\n", sc.Batch, sc.Input, sc.Output, sc.Weights, deviceCount(max(sc.PP, 1)))
	}
	return nil
}

// scenario builds the maxmodel scenario from the flags.
func (o *maxModelOptions) scenario(fs *pflag.FlagSet) (sim.Scenario, error) {
	sc := sim.Default()
	var errs []error
	mode, err := sim.ParseMode(o.mode)
	if err != nil {
		errs = append(errs, usagef("--mode: %v", err))
	}
	sc.Mode = mode
	// A flag of the other mode would be silently ignored (issue 17 item 11).
	if err == nil {
		only, other := []string{"input", "output"}, "inference"
		if mode == sim.Inference {
			only, other = []string{"seq", "recompute", "optimizer", "shard-optimizer", "zero"}, "training"
		}
		errs = append(errs, ignoredFlags(fs, "only for --mode "+other+"; "+mode.String()+" mode would ignore it", only...)...)
	}
	if o.devices < 1 || o.devices > sim.MaxDevices {
		errs = append(errs, usagef("--devices: want 1 to %d, got %d", sim.MaxDevices, o.devices))
	}
	if o.batch < 1 {
		errs = append(errs, usagef("--batch: must be at least 1, got %d", o.batch))
	}
	sc.Batch, sc.Seq, sc.Input, sc.Output = o.batch, o.seq, o.input, o.output
	sc.Weights, sc.Act, sc.KV = o.dtype, o.dtype, o.dtype
	if sc.Mode == sim.Training {
		if err := sim.TrainingWeights(sc.Weights); err != nil {
			errs = append(errs, usagef("--dtype: %v", err))
		}
		rc, err := sim.ParseRecompute(o.recompute)
		if err != nil {
			errs = append(errs, usagef("--recompute: %v", err))
		}
		opt, err := sim.ParseOptimizer(o.optimizer)
		if err != nil {
			errs = append(errs, usagef("--optimizer: %v", err))
		}
		sc.Recompute, sc.Optimizer = rc, opt
		sc.DP = o.devices
		switch {
		case fs.Changed("zero"):
			sc.ZeRO = o.zero
		case o.shard:
			sc.ZeRO = 3
		}
	} else {
		sc.PP = o.devices
	}
	if len(errs) > 0 {
		return sc, errors.Join(errs...)
	}
	if fs.Changed("reserve") {
		r := o.reserve
		sc.Reserve = &r
	}
	if err := sc.Validate(sim.Shape{Arch: sim.Decoder}); err != nil {
		return sc, scenarioUsage(err)
	}
	return sc, nil
}

// paramsShort writes a parameter count to three digits in millions,
// billions or trillions: "%.3g B" wrote 1.22 trillion as "1.22e+03 B",
// and the next size after it the same.
func paramsShort(n float64) string {
	switch {
	case n >= 999.5e9:
		return fmt.Sprintf("%.3g T", n/1e12)
	case n >= 999.5e6:
		return fmt.Sprintf("%.3g B", n/1e9)
	}
	return fmt.Sprintf("%.3g M", n/1e6)
}
