package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/spf13/pflag"

	"github.com/perfsim/perfsim/cmd/perfsim/internal/chart"
	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/internal/errlist"
	"github.com/perfsim/perfsim/internal/fileio"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

const serveSynopsis = "perfsim serve --hw NAME|FILE|--system NAME --model NAME|FILE [--tp N --pp N --dp N --ep N --dtype T] [--input S --output G | --workload sharegpt | --trace FILE] [--requests N] [--arrival poisson|gamma|constant|all] [--rate R] [--engine vllm|vllm-0.6|sglang|trtllm] [--seed K] [--ttft-slo T --tpot-slo T] [--format table|json|csv] [--requests-out FILE]"

const serveExamples = `  # Llama 3 70B on four H100s, 1000 Poisson requests at 8 req/s, vLLM's scheduler
  perfsim serve --hw h100 --model llama3-70b --tp 4 --input 1024 --output 256 --requests 1000 --rate 8

  # the ShareGPT mix on SGLang's defaults, as JSON, with SLOs for goodput
  perfsim serve --hw h100 --model llama3-8b --workload sharegpt --requests 2000 --rate 20 --engine sglang --ttft-slo 500ms --tpot-slo 50ms --format json

  # TensorRT-LLM at maximum load (every request queued at t=0), fp8
  perfsim serve --hw h100 --model llama3-8b --dtype fp8 --engine trtllm --arrival all --requests 3000 --input 128 --output 2048
`

// serveOptions are the flags of perfsim serve.
type serveOptions struct {
	hw, model, format       string
	sets                    []string
	tp, pp, dp, ep          int
	dtype, weights, act, kv model.DType
	comm                    model.DType
	input, output, workload string
	trace, requestsOut      string
	seriesPlot, seriesOut   string
	requests                int
	arrival                 string
	rate, cv                float64
	seed                    uint64
	engine                  string
	maxSeqs, maxTokens      int
	blockSize, kvTokens     int
	schedulerSteps          int
	maxSeqLen               int
	memFraction             float64
	chunked, static, graphs bool
	stepOverhead, reqOverhd model.Seconds
	ttftSLO, tpotSLO        model.Seconds
	host                    hostFlags     // engineflags.go
	energy                  energyOptions // serve_energy.go
	deploy                  deployOptions // serve_deploy.go
	dpAttn                  bool
	groups                  int // data-parallel attention groups of dp replicas (serve_dpattn.go); 1 otherwise
}

func (o *serveOptions) AddFlags(fs *pflag.FlagSet) {
	o.energy.AddFlags(fs)
	o.deploy.AddFlags(fs)
	fs.StringVar(&o.hw, "hw", "", hwFlagUsage)
	fs.StringArrayVar(&o.sets, "set", nil, setFlagUsage)
	fs.StringVar(&o.model, "model", "", "model: a catalog name (llama3-8b, llama3-70b, ...) or a model .toml, a HuggingFace config.json or a model directory holding one")
	fs.IntVar(&o.tp, "tp", 1, "tensor-parallel degree of a replica")
	fs.IntVar(&o.pp, "pp", 1, "pipeline-parallel degree of a replica")
	fs.IntVar(&o.dp, "dp", 1, "data-parallel replicas behind the router (--router); with --dp-attention, the replicas of one group (--ep / --tp when not given)")
	fs.IntVar(&o.ep, "ep", 1, "expert-parallel degree (MoE): each MoE layer's experts split over ep ranks of a replica's TP group, each expert over tp/ep (ep divides tp and the experts); with --dp-attention, ep = dp × tp, the experts over every replica's GPUs with the all-to-all dispatch and combine priced")
	fs.BoolVar(&o.dpAttn, "dp-attention", false, "data-parallel attention with expert-parallel MoE (DeepSeek's layout, SGLang's --enable-dp-attention): a group of --dp replicas of tp GPUs, each scheduling its own requests and KV cache, their iterations in lockstep with each MoE layer's experts over all dp × tp GPUs (--ep dp×tp); --gpus, a multiple of dp × tp, runs that many GPUs / (dp × tp) groups behind the round-robin router (docs/serving.md)")
	o.dtype, o.weights, o.act, o.kv = model.BF16, model.BF16, model.BF16, model.BF16
	fs.Var(&o.dtype, "dtype", "data type of the weights (the GEMMs' weight inputs), the activations (GEMM inputs, attention and the other compute) and the KV cache: fp32, bf16, fp16, fp8, int8, int4, fp4; under an 8- or 4-bit type the residual stream and its tensor-parallel, pipeline and expert-parallel collectives stay in bf16, as engines run them (see --comm), and so do a decoder's token embedding and LM head, as quantisers leave them")
	fs.Var(&o.comm, "comm", "data type the residual stream's collectives move: the tensor-parallel all-reduces, pipeline sends and MoE all-to-alls (default: bf16 when --act is 8 or 4 bits, as vLLM and TensorRT-LLM do; else --act)")
	fs.Var(&o.weights, "weights", "data type of the weights (overrides --dtype)")
	fs.Var(&o.act, "act", "data type of the activations and the compute (overrides --dtype)")
	fs.Var(&o.kv, "kv", "data type of the KV cache (overrides --dtype)")
	fs.StringVar(&o.input, "input", "1024", "prompt tokens: N, uniform:MIN:MAX, normal:MEAN:SD[:MIN:MAX], lognormal:MEAN:SD[:MIN:MAX], empirical:N1,N2,... or file:PATH (one count per line)")
	fs.StringVar(&o.output, "output", "256", "generated tokens, in the same forms as --input (EOS ignored)")
	fs.StringVar(&o.workload, "workload", "", "a named length mix instead of --input/--output: sharegpt (docs/serving.md)")
	fs.StringVar(&o.trace, "trace", "", "replay a trace: CSV (arrival_s,input_tokens,output_tokens[,prefix_id]) or JSON lines with those keys")
	fs.IntVar(&o.requests, "requests", 1000, "requests to simulate")
	fs.StringVar(&o.arrival, "arrival", "poisson", "arrival process: poisson, gamma (see --cv), constant or all (every request at t=0)")
	fs.Float64Var(&o.rate, "rate", 0, "arrival rate in requests per second (not with --arrival all)")
	fs.Float64Var(&o.cv, "cv", 2, "coefficient of variation of the gaps with --arrival gamma (1 is Poisson)")
	fs.Uint64Var(&o.seed, "seed", 1, "random seed: the same seed gives the same requests and results")
	fs.StringVar(&o.engine, "engine", "vllm", "engine preset: "+strings.Join(serve.Engines(), ", ")+" (docs/serving.md)")
	fs.IntVar(&o.maxSeqs, "max-seqs", 0, "cap on running requests (default: the engine's)")
	fs.IntVar(&o.maxTokens, "max-tokens", 0, "token budget of one iteration (default: the engine's)")
	fs.IntVar(&o.blockSize, "block-size", 0, "tokens per KV-cache block (default: the engine's)")
	fs.IntVar(&o.kvTokens, "kv-tokens", 0, "KV cache capacity per replica in tokens (default: from memory)")
	fs.Float64Var(&o.memFraction, "mem-fraction", 0, "the engine's memory fraction (gpu_memory_utilization, mem_fraction_static, kv_cache_free_gpu_mem_fraction)")
	fs.IntVar(&o.schedulerSteps, "scheduler-steps", 0, "decode steps per scheduling decision (vLLM's --num-scheduler-steps; default: the engine's)")
	fs.IntVar(&o.maxSeqLen, "max-seq-len", 0, "trtllm: max_seq_len the engine was built for, which sizes its runtime buffers and bounds a request's prompt and output (default: the model's context)")
	fs.BoolVar(&o.chunked, "chunked-prefill", true, "split prompts over iterations to fit the token budget (default: the engine's)")
	fs.BoolVar(&o.static, "static", false, "static batching: a batch of --max-seqs requests prefilled and decoded together (what simulate prices)")
	fs.BoolVar(&o.graphs, "cuda-graphs", true, "replay decode iterations as CUDA graphs (default: the engine's)")
	fs.Var(&o.stepOverhead, "step-overhead", "host time per iteration, e.g. 2ms (default 0)")
	o.host.AddFlags(fs)
	fs.Var(&o.reqOverhd, "request-overhead", "time per request outside the engine (API, tokenisation), added to TTFT and E2E, e.g. 5ms (default 0)")
	fs.Var(&o.ttftSLO, "ttft-slo", "TTFT objective for goodput, with a unit, e.g. 1s (default: none; no goodput without an objective)")
	fs.Var(&o.tpotSLO, "tpot-slo", "TPOT objective for goodput, with a unit, e.g. 50ms (default: none; no goodput without an objective)")
	addFormatFlag(fs, &o.format)
	fs.StringVar(&o.requestsOut, "requests-out", "", "write every request's metrics to this CSV file")
	fs.StringVar(&o.seriesPlot, "series-plot", "", "draw the queue, the running batch and the KV-cache occupancy over time (replica 0) to this SVG, PNG or PDF")
	fs.StringVar(&o.seriesOut, "series-out", "", "write the queue, the running batch and the KV-cache occupancy over time (replica 0) to this CSV file")
}

// serveSetup is what a serve run needs, built from the flags.
type serveSetup struct {
	dep    serve.Deployment
	opts   serve.Options
	pricer *sim.Pricer
	engine serve.Engine
	trace  *serve.Trace // nil: wl's requests, drawn as the run needs them
	wl     *serve.Workload
	dp     int // replicas, or a data-parallel attention group's replicas
	groups int // data-parallel attention groups (1 otherwise)
	gpus   int
	w      sim.Workload
	hw     string
	dev    *hardware.Device // the device as resolved (with --set applied)
}

// setup checks the flags and builds the run: every usage problem at once.
func (o *serveOptions) setup(fs *pflag.FlagSet) (*serveSetup, error) {
	var errs []error
	for _, f := range []struct {
		name string
		v    int
	}{{"tp", o.tp}, {"pp", o.pp}, {"dp", o.dp}, {"ep", o.ep}, {"requests", o.requests}} {
		if f.v < 1 {
			errs = append(errs, usagef("--%s: must be at least 1, got %d", f.name, f.v))
		}
	}
	if !o.dpAttn {
		if err := checkServeEP("ep", o.ep, "tp", o.tp); err != nil {
			errs = append(errs, err)
		}
	}
	// Leaving these out means the engine's own value; an explicit 0
	// would silently mean the same, so it is refused (negatives are
	// the engine's Validate's to name).
	for _, f := range []struct {
		name string
		v    int
	}{{"kv-tokens", o.kvTokens}, {"scheduler-steps", o.schedulerSteps}, {"max-seq-len", o.maxSeqLen}} {
		if fs.Changed(f.name) && f.v == 0 {
			errs = append(errs, usagef("--%s: must be at least 1, got 0 (leave the flag out for the engine's own value)", f.name))
		}
	}
	arr, arrErr := serve.ParseArrival(o.arrival)
	if arrErr != nil {
		errs = append(errs, usagef("--arrival: %v", arrErr))
	}
	if fs.Changed("rate") && !(o.rate > 0 && !math.IsInf(o.rate, 0)) {
		errs = append(errs, usagef("--rate: must be a positive number of requests per second, got %g", o.rate))
	} else if o.trace == "" && o.deploy.users == 0 && arr != serve.AllAtOnce && !fs.Changed("rate") {
		errs = append(errs, usagef("--rate: needed with --arrival %s (or use --arrival all)", arr))
	}
	for _, f := range []struct {
		name string
		v    model.Seconds
	}{{"ttft-slo", o.ttftSLO}, {"tpot-slo", o.tpotSLO}} {
		if fs.Changed(f.name) {
			if err := checkSLO(f.name, f.v); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, f := range []struct {
		name string
		v    model.Seconds
	}{{"step-overhead", o.stepOverhead}, {"request-overhead", o.reqOverhd}} {
		if f.v < 0 || math.IsInf(float64(f.v), 0) {
			errs = append(errs, usagef("--%s: must be a non-negative time, got %v", f.name, f.v))
		}
	}
	errs = append(errs, o.host.check(fs)...)
	// Flags the run's mode would ignore are refused (issue 17 item 11).
	switch {
	case o.trace != "":
		errs = append(errs, ignoredFlags(fs, "not with --trace, which gives each request's arrival and lengths",
			"input", "output", "workload", "requests", "arrival", "rate", "cv", "seed")...)
	case o.workload != "":
		errs = append(errs, ignoredFlags(fs, "not with --workload, which draws each request's lengths", "input", "output")...)
	}
	if arrErr == nil && o.trace == "" && o.deploy.users == 0 {
		if arr == serve.AllAtOnce {
			errs = append(errs, ignoredFlags(fs, "not with --arrival all, where every request arrives at t = 0", "rate")...)
		}
		if arr != serve.Gamma {
			errs = append(errs, ignoredFlags(fs, "only for --arrival gamma; --arrival "+arr.String()+" would ignore it", "cv")...)
		}
	}
	if o.static {
		errs = append(errs, ignoredFlags(fs, "not with --static, which prefills each batch whole and schedules once per step", "chunked-prefill", "scheduler-steps")...)
	}
	errs = append(errs, o.deploy.check(fs, o)...)
	errs = append(errs, o.checkDPAttention(fs)...)
	if o.deploy.users > 0 {
		arr = serve.AllAtOnce // the closed loop sets the arrivals
	}
	wl := serve.Workload{N: o.requests, Arrival: arr, Rate: o.rate, CV: o.cv, Seed: o.seed}
	switch strings.ToLower(o.workload) {
	case "":
		in, err := lengths("input", o.input)
		if err != nil {
			errs = append(errs, err)
		}
		out, err := lengths("output", o.output)
		if err != nil {
			errs = append(errs, err)
		}
		wl.Input, wl.Output = in, out
	case "sharegpt":
		wl.Joint = serve.ShareGPT{}
	default:
		errs = append(errs, usagef("--workload: unknown workload %q (want sharegpt)", o.workload))
	}
	pick := func(name string, v model.DType) model.DType {
		if fs.Changed(name) {
			return v
		}
		return o.dtype
	}
	errs = append(errs, checkOutputs(outputFile{"requests-out", o.requestsOut, false}, outputFile{"series-plot", o.seriesPlot, true}, outputFile{"series-out", o.seriesOut, false})...)
	// --hw, --model and --engine's name are read beside the flags'
	// checks, so that every problem is said at once.
	dev, hwErr := o.deploy.device(o.hw)
	if hwErr == nil {
		dev, hwErr = whatIf(dev, o.sets)
	}
	m, mErr := resolveModel(o.model)
	if _, err := serve.Preset(o.engine, 0); err != nil {
		errs = append(errs, usagef("--engine: %v", err))
	}
	if len(errs) > 0 && mErr == nil {
		// The layout's refusals by the model (heads, experts) are
		// otherwise said only once the flags are right.
		errs = append(errs, o.layoutErrors(simWorkload{M: m}.Shape())...)
	}
	if err := errors.Join(append(errs, hwErr, mErr)...); err != nil {
		return nil, err
	}
	w := simWorkload{M: m}
	e, err := serve.PresetFor(o.engine, dev.Memory.Limit(), o.tp)
	if o.dpAttn {
		// SGLang's own settings under --enable-dp-attention, its TP size
		// the world's.
		e, err = serve.DPAttentionPreset(o.engine, dev.Memory.Limit(), o.dp, o.tp)
	}
	if err != nil {
		return nil, usagef("--engine: %v", err)
	}
	o.override(fs, &e)
	ign := o.host.ignored(fs, &e)
	if fs.Changed("mem-fraction") && fs.Changed("kv-tokens") {
		ign = append(ign, usagef("--mem-fraction: not with --kv-tokens, which sizes the KV cache itself (the fraction would be ignored)"))
	}
	if err := errors.Join(ign...); err != nil {
		return nil, err
	}
	if err := e.Validate(); err != nil {
		return nil, usageError{err}
	}
	sc := sim.Default()
	sc.TP, sc.PP, sc.EP = o.tp, o.pp, o.ep
	if o.dpAttn {
		sc.DP = o.dp // one expert-parallel group over the replicas
		if e.SchedulerSteps > 1 {
			return nil, usagef("--dp-attention: --engine %s decodes %d steps per scheduling decision; data-parallel attention is modelled with one (SGLang's): give --scheduler-steps 1", o.engine, e.SchedulerSteps)
		}
	}
	sc.Weights, sc.Act, sc.KV = pick("weights", o.weights), pick("act", o.act), pick("kv", o.kv)
	sc.Comm = o.comm
	sc = e.Scenario(sc)
	per := o.tp * o.pp * sc.DP
	sys, err := systemFor(dev, per)
	if err != nil {
		return nil, usagef("--tp/--pp: %d devices: %v", per, err)
	}
	p, err := sim.NewPricer(sys, w, sc)
	if err != nil {
		return nil, scenarioUsage(err)
	}
	var trace *serve.Trace
	if o.trace != "" {
		f, err := fileio.Open(o.trace, serve.MaxTraceSize, "trace")
		if err != nil {
			return nil, usagef("--trace: %v", err)
		}
		defer f.Close()
		trace, err = serve.LoadTrace(f, o.trace, w.Shape().MaxContext)
		if err != nil {
			return nil, fileError{linesError{err}}
		}
	} else {
		// Drawn once here for its errors, and again by the run.
		if err := wl.Check(w.Shape().MaxContext); err != nil {
			return nil, usageError{err}
		}
	}
	dep, err := o.deploy.deployment(fs, o, dev, w, sc, p, e)
	if err != nil {
		return nil, err
	}
	opts := serve.Options{MaxContext: w.Shape().MaxContext, MaxSeqLen: e.MaxSeqLen, PrefixHit: o.deploy.prefixHit, Users: o.deploy.users, Think: o.deploy.think, ITL: true}
	if o.seriesPlot != "" || o.seriesOut != "" {
		opts.SeriesPoints = 150
	}
	if o.seriesOut != "" {
		opts.SeriesPoints = 1000
	}
	return &serveSetup{dep: dep, opts: opts, pricer: dep.Serve.Pricer, engine: e, trace: trace, wl: &wl, dp: o.dp, groups: max(o.groups, 1), gpus: dep.GPUs(), w: w, hw: dev.Name, dev: dev}, nil
}

// layoutErrors returns the model's refusals of the layout's degrees
// (--tp, --pp, and --ep within the TP group), as NewPricer would give
// them, so that they are said beside other flags' problems. A degree
// under 1, or an --ep the flags' own checks refuse (above --tp, or
// across replicas under --dp-attention), is left to its flag's error.
func (o *serveOptions) layoutErrors(s sim.Shape) []error {
	if o.tp < 1 || o.pp < 1 || o.ep < 1 {
		return nil
	}
	fields := map[string]bool{"tp": true, "pp": true, "ep": !o.dpAttn && o.ep <= o.tp}
	sc := sim.Default()
	sc.TP, sc.PP = o.tp, o.pp
	if fields["ep"] {
		sc.EP = o.ep
	}
	var out []error
	for _, e := range errlist.Flatten(sc.Validate(s)) {
		var se *sim.ScenarioError
		if errors.As(e, &se) && fields[se.Field] {
			out = append(out, usageError{e})
		}
	}
	return out
}

// checkServeEP refuses expert parallelism beyond the TP group without
// --dp-attention: independent replicas each hold their TP group's share
// of the experts; experts across replicas (ep a multiple of tp) couple
// their iterations, which is --dp-attention. The rest of the layout's
// checks (ep dividing tp and the experts, a model with experts) are the
// scenario's, as simulate's.
func checkServeEP(flag string, ep int, tpFlag string, tp int) error {
	if ep > 1 && tp >= 1 && ep > tp {
		return usagef("--%s: expert parallelism %d is more than --%s %d: a replica's experts are within its TP group (ep dividing tp); experts across replicas (ep a multiple of tp) need --dp-attention, with --ep = --dp × --tp", flag, ep, tpFlag, tp)
	}
	return nil
}

// override applies the engine flags the user set.
func (o *serveOptions) override(fs *pflag.FlagSet, e *serve.Engine) {
	if fs.Changed("max-seqs") {
		e.MaxSeqs = o.maxSeqs
	}
	if fs.Changed("max-tokens") {
		e.MaxTokens = o.maxTokens
	}
	if fs.Changed("block-size") {
		e.BlockSize = o.blockSize
	}
	if fs.Changed("kv-tokens") {
		e.KVTokens = o.kvTokens
	}
	if fs.Changed("mem-fraction") {
		e.MemFraction = o.memFraction
	}
	if fs.Changed("scheduler-steps") {
		e.SchedulerSteps = o.schedulerSteps
	}
	if fs.Changed("max-seq-len") {
		e.MaxSeqLen = o.maxSeqLen
	}
	if fs.Changed("chunked-prefill") {
		e.Chunked = o.chunked
	}
	if fs.Changed("cuda-graphs") {
		e.Graphs = o.graphs
	}
	if o.static {
		e.Static = true
	}
	e.StepOverhead, e.RequestOverhead = o.stepOverhead, o.reqOverhd
	o.host.apply(fs, e)
}

func runServeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o serveOptions
	fs := newFlagSet("serve", serveSynopsis, serveExamples, stderr)
	o.AddFlags(fs)
	if err := parseFlagsNoArgs(fs, args, "serve"); err != nil {
		return err
	}
	f, err := parseFormat(o.format)
	if err != nil {
		return err
	}
	s, err := o.setup(fs)
	if err != nil {
		return err
	}
	var rw *requestsWriter
	if o.requestsOut != "" {
		if rw, err = newRequestsWriter(o.requestsOut, s.dep.Disaggregated()); err != nil {
			return fmt.Errorf("--requests-out: %w", err)
		}
		defer rw.abort() // nothing after a failure; nothing once committed
		s.opts.OnFinish = rw.finish
	}
	res, err := s.run()
	if err != nil {
		if errors.Is(err, serve.ErrOverflow) {
			return usageError{linesError{err}}
		}
		return err
	}
	for _, wn := range res.Warnings {
		fmt.Fprintf(stderr, "perfsim: warning: %v\n", wn)
	}
	if res.Overloaded {
		fmt.Fprintf(stderr, "perfsim: %s\n", res.Verdict)
	}
	if res.Count < serve.MinJudged && o.deploy.users == 0 && (s.trace != nil || s.wl.Arrival != serve.AllAtOnce) {
		are := "are"
		if res.Count == 1 {
			are = "is"
		}
		fmt.Fprintf(stderr, "perfsim: warning: %s %s too few to judge whether the deployment keeps up with the arrivals (the overload verdict needs %d): the figures may be those of a load it cannot sustain\n",
			plural(res.Count, "request"), are, serve.MinJudged)
	}
	if rw != nil {
		if err := rw.commit(res); err != nil {
			return fmt.Errorf("--requests-out: %w", err)
		}
	}
	if o.seriesPlot != "" {
		what := fmt.Sprintf("%s on %s, %s, tp %d × pp %d × dp %d: replica 0", s.w.Name(), s.dev.Name, res.Engine.Name, o.tp, o.pp, s.dp)
		if s.groups > 1 {
			what = fmt.Sprintf("%s on %s, %s, %d groups of tp %d × pp %d × dp %d: group 0's replica 0", s.w.Name(), s.dev.Name, res.Engine.Name, s.groups, o.tp, o.pp, s.dp)
		}
		if o.deploy.disagg != "" {
			what = fmt.Sprintf("%s on %s, %s, %s on %d GPUs: the first decode scheduler", s.w.Name(), s.dev.Name, res.Engine.Name, o.deploy.disagg, s.gpus)
		}
		if err := saveSeriesPlot(o.seriesPlot, res, what, s.dev); err != nil {
			return fmt.Errorf("--series-plot: %w", err)
		}
	}
	if o.seriesOut != "" {
		var buf strings.Builder
		if err := writeSeriesCSV(&buf, res); err != nil {
			return err
		}
		if err := writeMeasurementsFile(o.seriesOut, []byte(buf.String())); err != nil {
			return fmt.Errorf("--series-out: %w", err)
		}
	}
	sum := serveSummaryOf(res, s, o.ttftSLO, o.tpotSLO)
	if sum.Energy, err = o.serveEnergy(fs, res, s); err != nil { // serve_energy.go
		return err
	}
	switch f {
	case formatJSON:
		return writeJSON(stdout, sum)
	case formatCSV:
		return writeServeCSV(stdout, sum)
	}
	if err := writeServeTable(stdout, sum); err != nil {
		return err
	}
	return writeServeEnergy(stdout, sum.Energy)
}

// saveSeriesPlot draws a run's time series: requests waiting, requests
// running, and the KV cache in use (percent), against time.
func saveSeriesPlot(path string, res *serve.Result, what string, dev *hardware.Device) error {
	if len(res.Series) == 0 {
		return errors.New("the run recorded no iterations")
	}
	lines := []chart.Line{{Name: "waiting (requests)"}, {Name: "running (requests)"}, {Name: "KV cache in use (%)"}}
	for _, s := range res.Series {
		t := float64(s.Time)
		lines[0].Points = append(lines[0].Points, chart.LinePoint{X: t, Y: float64(s.Waiting)})
		lines[1].Points = append(lines[1].Points, chart.LinePoint{X: t, Y: float64(s.Running)})
		lines[2].Points = append(lines[2].Points, chart.LinePoint{X: t, Y: 100 * s.KVUsed})
	}
	return saveChart(path, chart.Lines{Title: "Engine state over time\n" + what, XLabel: "time (s)", YLabel: "requests, or percent of the KV cache", Lines: lines}, dev)
}
