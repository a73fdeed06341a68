package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/spf13/pflag"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/internal/errlist"
	"github.com/perfsim/perfsim/internal/fileio"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/price"
	"github.com/perfsim/perfsim/sim"
)

const simulateSynopsis = "perfsim simulate --hw NAME|FILE --model NAME|FILE [--batch B] [--input S] [--output G] [--tp N] [--pp N] [--dtype T | --weights T --act T --kv T] [--mode inference|training] [--breakdown] [--format table|json|csv]"

const simulateExamples = `  # the default scenario: batch 1, 2048 tokens in, 128 out, bf16
  perfsim simulate --hw h100 --model llama3-8b

  # Llama 3 70B in fp8 on four H100s with tensor parallelism, where the time goes
  perfsim simulate --hw h100 --model llama3-70b --tp 4 --dtype fp8 --batch 16 --breakdown

  # int4 weights with bf16 activations, as JSON
  perfsim simulate --hw h100 --model llama2-7b --weights int4 --format json

  # a training step of GPT-3 2.7B with selective recomputation, and the time for 300B tokens
  perfsim simulate --hw h100 --model gpt3-2.7b --mode training --seq 2048 --global-batch 8 --recompute selective --tokens 300e9
`

// simulateOptions are the flags of perfsim simulate.
type simulateOptions struct {
	hw, model, mode, format   string
	batch, input, output      int
	tp, pp, dp, zero          int
	seq, globalBatch, top     int
	dtype, weights, act, kv   model.DType
	comm                      model.DType
	recompute, optimizer      string
	tokens                    float64
	reserve                   model.Bytes
	breakdown, strict, graphs bool
	gemmAllReduce             bool
	requireFit                bool
	maxNumTokens              int
	exec                      string
	hostOverhead              model.Seconds
	attention                 string
	amp                       bool
	train                     trainFlags
	loaderRate                float64
	sets                      []string
	energy                    energyOptions
}

func (o *simulateOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.hw, "hw", "", hwFlagUsage)
	fs.StringArrayVar(&o.sets, "set", nil, setFlagUsage)
	fs.StringVar(&o.model, "model", "", "model: a catalog name (llama3-8b, gpt3-175b, ...) or a model .toml, a HuggingFace config.json or a model directory holding one")
	fs.StringVar(&o.mode, "mode", "inference", "inference or training")
	o.batch = 1
	fs.Var(intCount{&o.batch}, "batch", "sequences (images) per batch; in training, the micro-batch per data-parallel replica")
	o.input = 2048
	fs.Var(intCount{&o.input}, "input", "prompt tokens per sequence (inference), with an optional k, M or Ki suffix: 128k = 128000, 128Ki = 131072")
	o.output = 128
	fs.Var(intCount{&o.output}, "output", "generated tokens per sequence (inference), with an optional suffix: 4k")
	fs.IntVar(&o.tp, "tp", 1, "tensor-parallel degree")
	fs.IntVar(&o.pp, "pp", 1, "pipeline-parallel degree")
	fs.IntVar(&o.dp, "dp", 1, "data-parallel degree: training replicas; in inference, replicas each serving --batch (data-parallel attention under --ep)")
	o.dtype, o.weights, o.act, o.kv = model.BF16, model.BF16, model.BF16, model.BF16
	fs.Var(&o.dtype, "dtype", "data type of the weights (the GEMMs' weight inputs), the activations (GEMM inputs, attention and the other compute) and the KV cache: fp32, bf16, fp16, fp8, int8, int4, fp4; under an 8- or 4-bit type the residual stream and its tensor-parallel, pipeline and expert-parallel collectives stay in bf16, as engines run them (see --comm), and so do a decoder's token embedding and LM head, as quantisers leave them")
	fs.Var(&o.comm, "comm", "data type the residual stream's collectives move: the tensor-parallel all-reduces, pipeline sends and MoE all-to-alls (default: bf16 when --act is 8 or 4 bits, as vLLM and TensorRT-LLM do; else --act)")
	fs.Var(&o.weights, "weights", "data type of the weights (overrides --dtype); int4/int8 with 16-bit activations is weight-only quantisation")
	fs.Var(&o.act, "act", "data type of the activations and the compute (overrides --dtype)")
	fs.Var(&o.kv, "kv", "data type of the KV cache (overrides --dtype)")
	fs.IntVar(&o.seq, "seq", 2048, "sequence length (training)")
	fs.IntVar(&o.globalBatch, "global-batch", 0, "sequences per optimizer step, images for an image model (training; default batch × dp)")
	fs.StringVar(&o.recompute, "recompute", "none", "activation recomputation (training): none, selective or full")
	fs.StringVar(&o.optimizer, "optimizer", "adam", "optimizer (training): adam, adamw or sgd")
	fs.IntVar(&o.zero, "zero", 0, "ZeRO stage over the data-parallel replicas (training): 0 none, 1 optimizer state, 2 + gradients, 3 + weights")
	fs.Var(floatCount{&o.tokens}, "tokens", "training token budget for the time to train, e.g. 300e9 or 15T (images for an image model: 90 epochs of ImageNet-1k, 115.3M)")
	fs.Var(&o.reserve, "reserve", "framework memory reserve per device (default: the hardware file's)")
	fs.IntVar(&o.maxNumTokens, "max-num-tokens", sim.DefaultMaxNumTokens, "token budget of one iteration (inference): prefill runs in chunks of at most this many tokens, which bounds the activations (vLLM max_num_batched_tokens, TensorRT-LLM max_num_tokens; the default is theirs and SGLang's)")
	fs.BoolVar(&o.requireFit, "require-fit", false, "exit 1 when the run does not fit the device's usable memory (the output is still written)")
	fs.BoolVar(&o.breakdown, "breakdown", false, "per op class and top ops: time, share, bound, intensity")
	fs.IntVar(&o.top, "top", 10, "ops listed per phase with --breakdown")
	addFormatFlag(fs, &o.format)
	fs.BoolVar(&o.strict, "strict", false, "a data type the hardware has no peak for is an error, not a fallback")
	o.energy.AddFlags(fs)
	fs.BoolVar(&o.graphs, "cuda-graphs", true, "replay each decode step (inference) as a CUDA graph (launch overhead capped at 1 µs per kernel); --cuda-graphs=false launches kernels one by one")
	fs.BoolVar(&o.gemmAllReduce, "gemm-allreduce", false, "fuse each row-parallel GEMM with the TP all-reduce of its output, reduced tile by tile as the GEMM writes them (inference: TensorRT-LLM's gemm_allreduce_plugin; docs/mlperf.md)")
	fs.StringVar(&o.exec, "exec", "graph", "how the framework runs prefill and training passes: graph (kernels back to back), eager (each kernel dispatched by the host, as eager PyTorch; see --host-overhead) or fused (a TensorRT-style engine: a CNN's batch norms folded, activations fused)")
	fs.StringVar(&o.attention, "attention", "engine", "the fused attention kernel of prefills: engine (the device's calibrated kernel) or fa2 (FlashAttention-2 from its measured throughput, as eager PyTorch calls it; B200 and H100 SXM; docs/simulate.md)")
	fs.Var(&o.hostOverhead, "host-overhead", "host time per kernel with --exec eager, e.g. 30us (default 58 µs: eager PyTorch on a DGX-1, fitted; docs/simulate.md)")
	o.train.AddFlags(fs)
	fs.Float64Var(&o.loaderRate, "loader-rate", 0, "samples (images) per second the input pipeline sustains for the whole system: bounds a CNN's throughput and a training step (0: no bound)")
	fs.BoolVar(&o.amp, "amp", false, "automatic mixed precision as PyTorch's autocast: weights kept in --weights (fp32), a CNN's convolutions computed in --act with a weight cast per layer and pass")
}

// The flags of simulate that only one mode reads (sim reads the
// scenario fields they set only in that mode): given in the other mode,
// they are usage errors rather than silently ignored. --micro-batch sets
// the batch, but is named for training's micro-batch. --dp, --ep,
// --expert-imbalance, --exec, --loader-rate, --amp and the data types
// mean something in both.
var (
	trainingOnly  = []string{"seq", "global-batch", "recompute", "optimizer", "zero", "tokens", "cp", "sp", "schedule", "virtual-stages", "account-for-embedding-in-pipeline-split", "account-for-loss-in-pipeline-split", "micro-batch", "tp-overlap", "no-overlap", "grad-dtype", "dropout", "unfused-attention"}
	inferenceOnly = []string{"input", "output", "max-num-tokens", "cuda-graphs", "gemm-allreduce"}
)

// scenario builds the sim scenario from the flags.
func (o *simulateOptions) scenario(fs *pflag.FlagSet) (sim.Scenario, error) {
	sc := sim.Default()
	var errs []error
	mode, err := sim.ParseMode(o.mode)
	if err != nil {
		errs = append(errs, usagef("--mode: %v", err))
	}
	sc.Mode = mode
	// A flag of the other mode would be silently ignored: say so instead.
	if err == nil {
		only, other := inferenceOnly, "inference"
		if mode == sim.Inference {
			only, other = trainingOnly, "training"
		}
		for _, name := range only {
			if fs.Changed(name) {
				errs = append(errs, usagef("--%s: only for --mode %s; %s mode would ignore it", name, other, mode))
			}
		}
	}
	sc.Batch, sc.Input, sc.Output = o.batch, o.input, o.output
	sc.TP, sc.PP, sc.DP, sc.ZeRO = o.tp, o.pp, o.dp, o.zero
	sc.Seq, sc.GlobalBatch, sc.Tokens = o.seq, o.globalBatch, o.tokens
	sc.MaxNumTokens = o.maxNumTokens
	if rc, err := sim.ParseRecompute(o.recompute); err != nil {
		errs = append(errs, usagef("--recompute: %v", err))
	} else {
		sc.Recompute = rc
	}
	if opt, err := sim.ParseOptimizer(o.optimizer); err != nil {
		errs = append(errs, usagef("--optimizer: %v", err))
	} else {
		sc.Optimizer = opt
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"tp", o.tp}, {"pp", o.pp}, {"dp", o.dp}, {"top", o.top}, {"max-num-tokens", o.maxNumTokens}} {
		if f.v < 1 {
			errs = append(errs, usagef("--%s: must be at least 1, got %d", f.name, f.v))
		}
	}
	if !o.breakdown {
		// It had been ignored without a word.
		errs = append(errs, ignoredFlags(fs, "lists the top ops of --breakdown: give --breakdown too", "top")...)
	}
	if math.IsNaN(o.tokens) || math.IsInf(o.tokens, 0) || o.tokens < 0 {
		errs = append(errs, usagef("--tokens: must be a non-negative number, got %v", o.tokens))
	} else if o.tokens == 0 && fs.Changed("tokens") {
		// An explicit 0 had meant no budget without a word.
		errs = append(errs, usagef("--tokens: 0 is no token budget (leave the flag out for none)"))
	}
	pick := func(name string, v model.DType) model.DType {
		if fs.Changed(name) {
			return v
		}
		return o.dtype
	}
	sc.Weights, sc.Act, sc.KV = pick("weights", o.weights), pick("act", o.act), pick("kv", o.kv)
	sc.Comm = o.comm
	if fs.Changed("reserve") {
		if o.reserve < 0 {
			errs = append(errs, usagef("--reserve: must not be negative"))
		}
		r := o.reserve
		sc.Reserve = &r
	}
	sc.Strict = o.strict
	sc.NoGraphs = !o.graphs
	sc.GEMMAllReduce = o.gemmAllReduce
	sc.PowerCap = o.energy.powerCap
	if ex, err := sim.ParseExec(o.exec); err != nil {
		errs = append(errs, usagef("--exec: %v", err))
	} else {
		sc.Exec = ex
	}
	if k, err := sim.ParseAttentionKernel(o.attention); err != nil {
		errs = append(errs, usagef("--attention: %v", err))
	} else {
		sc.Attention = k
	}
	if o.hostOverhead < 0 || o.hostOverhead > 1 {
		errs = append(errs, usagef("--host-overhead: want a time between 0 and 1 s per kernel, got %v", o.hostOverhead))
	} else if fs.Changed("host-overhead") && sc.Exec != sim.ExecEager {
		errs = append(errs, usagef("--host-overhead: applies only with --exec eager"))
	}
	sc.HostOverhead = o.hostOverhead
	sc.Autocast = o.amp
	errs = append(errs, o.train.apply(&sc, fs))
	sc.LoaderRate = o.loaderRate
	return sc, errors.Join(errs...)
}

// systemFor returns a system of d big enough for n devices: one node
// when they fit in the device's intra-node domain, else full nodes.
func systemFor(d *hardware.Device, n int) (*hardware.System, error) {
	per := min(n, max(1, d.Intra.DevicesPerNode))
	nodes := (n + per - 1) / per
	return hardware.NewSystem(d, per, nodes)
}

// resolveDeviceOrSystem reads a --hw argument that may also be a system
// file (docs/hardware.md, "Systems": a TOML file whose top level names a
// device, with devices_per_node and nodes). For a system file it returns
// the system, whose size is fixed; otherwise the device, and simulate
// builds as many nodes of it as the scenario needs.
func resolveDeviceOrSystem(arg string) (*hardware.Device, *hardware.System, error) {
	if isSystemFile(arg) {
		sys, err := hardware.LoadSystemFile(arg)
		if err != nil {
			var pe *hardware.ParseError
			return nil, nil, inputError("--hw", err, errors.As(err, &pe))
		}
		hardware.KindDefaults(sys.Device)
		return sys.Device, sys, nil
	}
	d, err := resolveHardware(arg)
	return d, nil, err
}

// isSystemFile reports whether arg is a TOML file with a top-level
// "device" key, which only system files have (a device file rejects it).
func isSystemFile(arg string) bool {
	if !strings.HasSuffix(strings.ToLower(arg), ".toml") {
		return false
	}
	// Through the bounded reader: a file too large or not a file is left
	// to the device loader, which says so.
	data, err := fileio.ReadFile(arg, hardware.MaxFileSize, "hardware file")
	if err != nil {
		return false
	}
	var top map[string]toml.Primitive
	if _, err := toml.Decode(string(data), &top); err != nil {
		return false
	}
	_, ok := top["device"]
	return ok
}

// scenarioUsage turns a scenario's validation errors into a usage error.
func scenarioUsage(err error) error {
	var se *sim.ScenarioError
	if errors.As(err, &se) {
		return usageError{err}
	}
	return err
}

// dtypeFlagged names --dtype in err's scenario errors about the weights',
// activations' or KV cache's type where --dtype set it (the flag of the
// field, --weights, --act or --kv, was not given), so that the flag the
// user wrote is the one blamed; other errors are kept.
func dtypeFlagged(fs *pflag.FlagSet, err error) error {
	if err == nil {
		return nil
	}
	list := errlist.Flatten(err)
	out := make([]error, len(list))
	for i, e := range list {
		out[i] = e
		var se *sim.ScenarioError
		if !errors.As(e, &se) {
			continue
		}
		switch se.Field {
		case "weights", "act", "kv":
			if !fs.Changed(se.Field) {
				c := *se
				c.Field = "dtype"
				out[i] = scenarioUsage(&c)
			}
		}
	}
	if len(out) == 1 {
		return out[0]
	}
	return errors.Join(out...)
}

// archIgnored refuses the flags the model's architecture has no use
// for, which the run would ignore (issue 17 item 11's rule): a CNN or a
// ViT reads no prompt, generates nothing and trains on its images, not
// --seq; an encoder reads its --input in one pass, without a KV cache or
// a token budget; a CNN has no attention; a language model's inference
// has no input pipeline (--loader-rate).
func archIgnored(fs *pflag.FlagSet, model string, arch sim.Arch, sc sim.Scenario) error {
	var errs []error
	// A CNN's alone: autocast's weight casts, and a fused engine's
	// folded batch norms (in inference).
	if arch != sim.CNN {
		errs = append(errs, ignoredFlags(fs, fmt.Sprintf("casts a CNN's convolutions; %s is %s model", model, archArticle(arch)), "amp")...)
	}
	if sc.Exec == sim.ExecFused && (arch != sim.CNN || sc.Mode != sim.Inference) {
		errs = append(errs, usagef("--exec: fused folds a CNN's batch norms in inference; %s in %s would run as graph", model, sc.Mode))
	}
	if sc.Mode != sim.Inference {
		// An image model's training sequence is its image (a ViT's
		// tokens are its patches): --seq would be ignored.
		if arch == sim.CNN || arch == sim.Vision {
			errs = append(errs, ignoredFlags(fs, fmt.Sprintf("%s is %s model, which trains on its images' own size", model, archArticle(arch)), "seq")...)
		}
		return errors.Join(errs...)
	}
	var flags []string
	switch arch {
	case sim.CNN:
		flags = []string{"input", "output", "kv", "max-num-tokens", "attention"}
	case sim.Vision:
		flags = []string{"input", "output", "kv", "max-num-tokens"}
	case sim.Encoder:
		flags = []string{"output", "kv", "max-num-tokens"}
	}
	// The input pipeline bounds an image model's inference (and any
	// training step); a language model's inference does not read it.
	if arch != sim.CNN && arch != sim.Vision {
		errs = append(errs, ignoredFlags(fs, fmt.Sprintf("bounds an image model's inference or a training step; %s is %s model", model, archArticle(arch)), "loader-rate")...)
	}
	errs = append(errs, ignoredFlags(fs, fmt.Sprintf("%s is %s model, which has no use for it", model, archArticle(arch)), flags...)...)
	return errors.Join(errs...)
}

// archArticle names an architecture with its article: "a cnn", "an
// encoder".
func archArticle(a sim.Arch) string {
	if a == sim.Encoder {
		return "an encoder"
	}
	return "a " + a.String()
}

func runSimulateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o simulateOptions
	fs := newFlagSet("simulate", simulateSynopsis, simulateExamples, stderr)
	o.AddFlags(fs)
	if err := parseFlagsNoArgs(fs, args, "simulate"); err != nil {
		return err
	}
	f, err := parseFormat(o.format)
	if err != nil {
		return err
	}
	// Every problem at once: the flags, the hardware and the model are
	// checked before any of them stops the run.
	sc, scErr := o.scenario(fs)
	var (
		dev   *hardware.Device
		fixed *hardware.System
		hwErr error
	)
	if o.train.system == "" {
		dev, fixed, hwErr = resolveDeviceOrSystem(o.hw)
		switch {
		case hwErr == nil && fixed != nil:
			// A system file: --set changes its device, over the same
			// nodes and the file's network tiers (whatIfSystem).
			if fixed, hwErr = whatIfSystem(fixed, o.sets); hwErr == nil {
				dev = fixed.Device
			}
		case hwErr == nil:
			if dev, err = whatIf(dev, o.sets); err != nil {
				hwErr = err
			}
		}
	} else {
		if fs.Changed("hw") {
			hwErr = usagef("--system: give --system or --hw, not both")
		}
		// --set changes the system's device (whatIfSystem, once the
		// system is sized); checked here with every other problem.
		if s, err := hardware.LookupSystem(o.train.system, 1); err == nil && len(o.sets) > 0 {
			_, err = whatIfSystem(s, o.sets)
			hwErr = errors.Join(hwErr, err)
		}
	}
	var pricing *price.Pricing
	if hwErr == nil {
		if pricing, err = o.energy.pricing(fs, dev); err != nil {
			hwErr = err
		}
	}
	m, mErr := resolveModel(o.model)
	var vErr error
	switch {
	case m != nil && scErr == nil:
		shape := simWorkload{M: m}.Shape()
		vErr = errors.Join(dtypeFlagged(fs, scenarioUsage(sc.Validate(shape))), archIgnored(fs, m.Name(), shape.Arch, sc))
	default:
		// Without a model, or beside a flag already refused, the checks
		// that need none (--batch 0, ...), as for a decoder: --tp 0 had
		// hidden --batch 0. A flag reported already is not said again.
		vErr = dtypeFlagged(fs, scenarioUsage(sc.Validate(sim.Shape{Arch: sim.Decoder})))
		if scErr != nil {
			vErr = notFlagged(vErr, scErr)
		}
	}
	if dev != nil && sc.Reserve != nil && *sc.Reserve >= dev.Memory.Capacity {
		vErr = errors.Join(vErr, usagef("--reserve: %v leaves nothing of the %s's %v of memory", *sc.Reserve, dev.Name, dev.Memory.Capacity))
	}
	if err := errors.Join(scErr, hwErr, mErr, vErr); err != nil {
		return err
	}
	for _, wn := range m.Warnings() {
		fmt.Fprintf(stderr, "perfsim: warning: %v\n", wn)
	}
	w := simWorkload{M: m}
	n := max(sc.TP, 1) * max(sc.PP, 1) * max(sc.DP, 1) * max(sc.CP, 1)
	sys := fixed
	if o.train.system != "" {
		if sys, err = o.train.catalogSystem(fs, n); err != nil {
			return err
		}
		if sys, err = whatIfSystem(sys, o.sets); err != nil {
			return err
		}
	} else if sys == nil {
		sys, err = systemFor(dev, n)
		if err != nil {
			return usagef("--tp/--pp/--dp: %d devices: %v", n, err)
		}
	} else if sys.Devices() < n {
		return usagef("--tp/--pp/--dp: tp %d × pp %d × dp %d needs %d devices; the system in %s has %d", max(sc.TP, 1), max(sc.PP, 1), max(sc.DP, 1), n, o.hw, sys.Devices())
	}
	rep, err := sim.Run(sys, w, sc)
	if err != nil {
		return scenarioUsage(err)
	}
	lim := limits(sys, w, rep)
	for _, wn := range rep.Warnings {
		fmt.Fprintf(stderr, "perfsim: warning: %v\n", wn)
	}
	nofit := warnNotFit(stderr, sys, w, rep)
	ej := energyOf(rep, pricing)
	cj, err := costOf(rep, pricing)
	if err != nil {
		return err
	}
	switch f {
	case formatJSON:
		j := simulateJSON(rep, sys.Device.CalibrationLabel(), lim, o.breakdown)
		j.Energy, j.Cost = ej, cj
		err = writeJSON(stdout, j)
	case formatCSV:
		err = writeSimulateCSV(stdout, rep, sys.Device.CalibrationLabel(), lim, o.breakdown, energyCSVRows(ej, cj))
	default:
		err = writeSimulateTable(stdout, rep, sys.Device.CalibrationLabel(), lim, o.breakdown, o.top, nofit)
		if err == nil {
			err = writeEnergyTable(stdout, rep, ej, cj)
		}
	}
	if err == nil && nofit != "" && o.requireFit {
		err = errNotFit{nofit}
	}
	return err
}

// limitsResult holds the inverse queries simulate answers beside the run.
type limitsResult struct {
	MaxBatch, MaxContext int
	Trained              int  // the model's maximum context (max_position_embeddings), 0 if unknown
	Output               int  // the output tokens MaxContext holds fixed (inference)
	Searched             bool // the queries were answered (sweep leaves them out)
	HasContext           bool // the model has a context to search (not a CNN's or an encoder's inference)
}

// limits answers the inverse queries for the scenario: the largest batch
// at its lengths and the largest context at its batch. Failures leave 0.
func limits(sys *hardware.System, w sim.Workload, rep *sim.Report) limitsResult {
	l := limitsResult{Searched: true}
	if rep.Arch == sim.CNN || rep.Arch == sim.Vision || (rep.Arch != sim.Decoder && rep.Scenario.Mode == sim.Inference) {
		l.MaxBatch, _ = sim.MaxBatch(sys, w, rep.Scenario)
		return l
	}
	l.MaxBatch, _ = sim.MaxBatch(sys, w, rep.Scenario)
	l.MaxContext, _ = sim.MaxContext(sys, w, rep.Scenario)
	l.HasContext = true
	l.Trained = w.Shape().MaxContext
	if rep.Scenario.Mode == sim.Inference {
		l.Output = rep.Scenario.Output
	}
	return l
}

// intensity returns f/b for output: 0 when nothing moves.
func intensity(f model.FLOPs, b model.Bytes) float64 {
	if b <= 0 {
		return 0
	}
	return float64(f) / float64(b)
}

// fnum formats a float with 4 significant digits for tables.
// fnum formats a number for a human table: four significant digits and
// never an exponent (29850, not 2.985e+04): from a million up with an SI
// prefix (12.35 M, 300 G), below a thousandth as a plain decimal.
func fnum(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	a := math.Abs(v)
	for _, p := range []struct {
		s string
		m float64
	}{{"E", 1e18}, {"P", 1e15}, {"T", 1e12}, {"G", 1e9}, {"M", 1e6}} {
		if a >= p.m {
			return round4(v/p.m) + " " + p.s
		}
	}
	return round4(v)
}

// round4 rounds v to four significant digits and prints it without an
// exponent.
func round4(v float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// notFlagged returns the problems of err whose flag ("--tp: ...") no
// problem of already names.
func notFlagged(err, already error) error {
	named := map[string]bool{}
	for _, e := range errlist.Flatten(already) {
		if f, _, ok := strings.Cut(e.Error(), ":"); ok && strings.HasPrefix(f, "--") {
			named[f] = true
		}
	}
	var out []error
	for _, e := range errlist.Flatten(err) {
		if f, _, ok := strings.Cut(e.Error(), ":"); ok && named[f] {
			continue
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}
