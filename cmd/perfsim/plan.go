package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/plan"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

const planSynopsis = "perfsim plan serve --hw NAME|FILE --model NAME|FILE --rate R --ttft-p99 T --tpot-p99 T [--input S --output G | --workload sharegpt] [--tp 1,2,4,8] [--pp 1,2] [--ep N,...] [--dp-attention auto|on|off] [--dtypes bf16,fp8] [--max-seqs 0,64,256] [--max-gpus N] [--engine E] [--disagg] [--router round-robin|least-outstanding] [--max-rate --dp N] [--format table|json|csv] [--front-plot FILE] [--load-plot FILE]"

const planExamples = `  # the fewest H100s serving 20 req/s of Llama 3 70B with p99 TTFT ≤ 1 s and p99 TPOT ≤ 50 ms
  perfsim plan serve --hw h100 --model llama3-70b --rate 20 --ttft-p99 1s --tpot-p99 50ms --input 1024 --output 256 --requests 600

  # the highest rate one deployment sustains under the SLOs, and latency against load
  perfsim plan serve --hw h100 --model llama3-8b --max-rate --tp 1 --dtypes bf16 --ttft-p99 500ms --tpot-p99 30ms --requests 600 --load-plot load.svg
`

// planOptions are the flags of perfsim plan serve.
type planOptions struct {
	hw, model, format, engine string
	sets                      []string
	input, output, workload   string
	requests, maxGPUs, dp     int
	rate                      float64
	seed                      uint64
	tp, pp, ep, maxSeqs       []int
	dtypes                    []string
	ttft, tpot                model.Seconds
	maxRate, disagg           bool
	router                    string
	frontPlot, loadPlot       string
	objective                 string
	currency, costInputs      string        // of a priced plan
	energy                    energyOptions // the price of a candidate (plan_cost.go)
	host                      hostFlags     // engineflags.go
	dpAttn                    string        // plan_dpattn.go
	dpAttnShown               bool          // data-parallel attention searched: the CSV has its column
	dpAttnNote                string        // why auto searches none for an MoE model
}

func (o *planOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.hw, "hw", "", hwFlagUsage)
	fs.StringArrayVar(&o.sets, "set", nil, setFlagUsage)
	fs.StringVar(&o.model, "model", "", "model: a catalog name or a model file")
	fs.StringVar(&o.objective, "objective", "gpus", "what the best deployment minimises: gpus (then the most tokens/s per GPU, then per user) or cost (per hour at the load, with --price, --prices or a TCO)")
	o.energy.AddFlags(fs)
	fs.Float64Var(&o.rate, "rate", 0, "target load in requests per second (Poisson arrivals, pinned so that --requests of them arrive at exactly this rate; docs/serving.md)")
	fs.Var(&o.ttft, "ttft-p99", "p99 TTFT objective, with a unit, e.g. 1s (default: none; give it or --tpot-p99)")
	fs.Var(&o.tpot, "tpot-p99", "p99 TPOT objective, with a unit, e.g. 50ms (default: none; give it or --ttft-p99)")
	fs.StringVar(&o.input, "input", "1024", "prompt tokens, as serve's --input")
	fs.StringVar(&o.output, "output", "256", "generated tokens, as serve's --output")
	fs.StringVar(&o.workload, "workload", "", "a named length mix instead of --input/--output: sharegpt")
	fs.IntVar(&o.requests, "requests", 1000, "requests simulated per candidate (at least 20, for the overload verdict to judge a run)")
	fs.Uint64Var(&o.seed, "seed", 1, "random seed")
	fs.StringVar(&o.engine, "engine", "vllm", "engine preset: "+strings.Join(serve.Engines(), ", "))
	fs.IntSliceVar(&o.tp, "tp", []int{1, 2, 4, 8}, "tensor-parallel degrees to search")
	fs.IntSliceVar(&o.pp, "pp", []int{1, 2}, "pipeline-parallel degrees to search")
	fs.IntSliceVar(&o.ep, "ep", []int{}, "expert-parallel degrees to search for an MoE model, within each --tp group as perfsim serve --ep prices them (default: every degree dividing the TP degree and the experts; 1 for a dense model)")
	fs.StringVar(&o.dpAttn, "dp-attention", "auto", "data-parallel attention with expert-parallel MoE (DeepSeek's layout, perfsim serve --dp-attention): auto searches it beside the other layouts for an MoE model (groups of 2 or more replicas of each --tp degree, one stage, EP = replicas × tp, the group replicated behind the round-robin router), on searches it alone, off not at all")
	fs.StringSliceVar(&o.dtypes, "dtypes", []string{"bf16", "fp8"}, "data types to search (weights, activations and KV cache)")
	o.host.AddFlags(fs)
	fs.IntSliceVar(&o.maxSeqs, "max-seqs", []int{0, 64, 256}, "caps on running requests to search (0: the engine's)")
	fs.IntVar(&o.maxGPUs, "max-gpus", 64, "GPUs at most")
	fs.BoolVar(&o.maxRate, "max-rate", false, "find the highest rate one deployment (one --tp, --pp, --dtypes and --max-seqs each, the first of a default list, --ep 1 unless given, and --dp) sustains under the SLOs, by bisection; for an MoE model an --ep that is a multiple of --tp, one stage, is a data-parallel attention group of ep/tp replicas (--dp of them)")
	fs.IntVar(&o.dp, "dp", 1, "replicas of the deployment with --max-rate (groups, for a data-parallel attention group)")
	fs.BoolVar(&o.disagg, "disagg", false, "also search disaggregated deployments: a prefill and a decode pool, each instance any of the --tp × --pp layouts, the same --dtypes, the engine's --max-seqs, and the fewest instances of each that meet the objectives")
	fs.StringVar(&o.router, "router", "round-robin", "how requests are spread over replicas and pool instances: round-robin or least-outstanding")
	addFormatFlag(fs, &o.format)
	fs.StringVar(&o.frontPlot, "front-plot", "", "draw the Pareto front (tokens/s per GPU against tokens/s per user) to this SVG, PNG or PDF")
	fs.StringVar(&o.loadPlot, "load-plot", "", "with --max-rate: draw p50 and p99 TTFT and TPOT against the rate, with the SLOs and the knee")
}

func runPlanCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "train" {
		return runPlanTrainCmd(ctx, args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "serve" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprintf(stderr, "Usage: %s\n       %s\n\nRun 'perfsim plan serve --help' or 'perfsim plan train --help' for the flags.\n", planSynopsis, planTrainSynopsis)
			return pflag.ErrHelp
		}
		return usagef("plan: want a plan kind: serve or train")
	}
	var o planOptions
	fs := newFlagSet("plan serve", planSynopsis, planExamples, stderr)
	o.AddFlags(fs)
	if err := parseFlagsNoArgs(fs, args[1:], "plan serve"); err != nil {
		return err
	}
	f, err := parseFormat(o.format)
	if err != nil {
		return err
	}
	q, dev, err := o.query(fs)
	if err != nil {
		return err
	}
	if o.maxRate {
		return o.runMaxRate(q, dev, f, stdout, stderr)
	}
	p, err := plan.Serve(*q)
	if err != nil {
		return err
	}
	for _, w := range p.Warnings {
		fmt.Fprintf(stderr, "perfsim: warning: %v\n", w)
	}
	if o.dpAttnNote != "" {
		fmt.Fprintf(stderr, "perfsim: %s\n", o.dpAttnNote)
	}
	fmt.Fprintf(stderr, "perfsim: %d layouts seen, %d pruned, %d simulations, %.1f s\n", p.Seen, p.Pruned, p.Simulated, p.Elapsed.Seconds())
	if err := planProblems(p); err != nil {
		return err
	}
	if len(p.Problems) > 0 {
		// Some layouts asked for could not run (a TP that does not divide
		// the heads, weights that leave no KV cache): they had been
		// dropped with only the pruned count on stderr.
		fmt.Fprintf(stderr, "perfsim: warning: %s\n", problemSummary(p.Problems, fmt.Sprintf("%d of %s could not run", len(p.Problems), plural(p.Seen, "layout"))))
	}
	// No layout meets the objectives: the report is written and the run
	// exits 3 (no answer). The front is drawn if any candidate kept up.
	var none error
	if p.Best == nil {
		none = noAnswerf("plan serve: no layout within %s meets the objectives", gpuCount(q.MaxGPUs))
	}
	if o.frontPlot != "" {
		if len(p.Front) == 0 {
			none = noAnswerf("%v; --front-plot not drawn: no candidate kept up with the load", none)
		} else if err := savePlanFront(o.frontPlot, p, o.chartTitle(q, dev), dev); err != nil {
			return fmt.Errorf("--front-plot: %w", err)
		}
	}
	switch f {
	case formatJSON:
		err = writeJSON(stdout, planJSON(p, &o))
	case formatCSV:
		err = writePlanCSV(stdout, p, &o)
	default:
		err = writePlanTable(stdout, p, q, &o)
	}
	if err != nil {
		return err
	}
	return none
}

// planProblems is an error, saying why, when no layout could run at all
// (each was counted as pruned): a pure state-space model had got "no
// layout within 64 GPUs meets the objectives" and exit status 0. The
// distinct reasons are given, the first three in full.
func planProblems(p *plan.ServePlan) error {
	if len(p.All) > 0 || len(p.Problems) == 0 {
		return nil
	}
	return fmt.Errorf("plan serve: %s", problemSummary(p.Problems, "no layout could run"))
}

// problemSummary says why layouts could not run: "6 layouts (tp1 pp1
// bf16, ...): reason; ...", each distinct reason once, the first three
// in full, after head.
func problemSummary(problems []error, head string) string {
	var reasons []string
	first := map[string]string{}
	count := map[string]int{}
	for _, e := range problems {
		cause := e
		if u := errors.Unwrap(e); u != nil {
			cause = u
		}
		r := cause.Error()
		if count[r] == 0 {
			reasons = append(reasons, r)
			first[r] = strings.TrimSuffix(e.Error(), ": "+r)
		}
		count[r]++
	}
	var lines []string
	for i, r := range reasons {
		if i == 3 {
			lines = append(lines, "and "+plural(len(reasons)-3, "other reason"))
			break
		}
		l := fmt.Sprintf("%s (%s", plural(count[r], "layout"), first[r])
		if count[r] > 1 {
			l += ", ..."
		}
		// A reason of many lines (every request that does not fit) is
		// given by its first.
		if one, _, more := strings.Cut(r, "\n"); more {
			r = one + " (the first of several)"
		}
		lines = append(lines, l+"): "+r)
	}
	return head + ": " + strings.Join(lines, "; ")
}

// query checks the flags and builds the search.
func (o *planOptions) query(fs *pflag.FlagSet) (*plan.ServeQuery, *hardware.Device, error) {
	var errs []error
	if !o.maxRate && !(o.rate > 0 && !math.IsInf(o.rate, 0)) {
		errs = append(errs, usagef("--rate: want a positive number of requests per second, got %g", o.rate))
	} else if err := serve.CheckSpan(o.requests, o.rate); !o.maxRate && err != nil {
		errs = append(errs, usageError{err})
	}
	errs = append(errs, checkOutputs(outputFile{"front-plot", o.frontPlot, true}, outputFile{"load-plot", o.loadPlot, true})...)
	// Flags the run's mode would ignore are refused (issue 17 item 11).
	if o.maxRate {
		errs = append(errs, ignoredFlags(fs, "not with --max-rate, which searches the rate for one deployment", "rate", "max-gpus", "front-plot")...)
		// One deployment: a list given had its items after the first
		// dropped without a word (--tp 1,2 priced tp 1 alone).
		for _, l := range []struct {
			name string
			n    int
		}{{"tp", len(o.tp)}, {"pp", len(o.pp)}, {"ep", len(o.ep)}, {"max-seqs", len(o.maxSeqs)}, {"dtypes", len(o.dtypes)}} {
			if fs.Changed(l.name) && l.n > 1 {
				errs = append(errs, usagef("--%s: %d values, but --max-rate prices one deployment: give one", l.name, l.n))
			}
		}
	} else {
		errs = append(errs, ignoredFlags(fs, "only with --max-rate; a layout search would ignore it", "dp", "load-plot")...)
	}
	if o.workload != "" {
		errs = append(errs, ignoredFlags(fs, "not with --workload, which draws each request's lengths", "input", "output")...)
	}
	if !fs.Changed("ttft-p99") && !fs.Changed("tpot-p99") {
		errs = append(errs, usagef("--ttft-p99, --tpot-p99: give at least one objective, with a unit (1s, 50ms)"))
	}
	for _, f := range []struct {
		name string
		v    model.Seconds
	}{{"ttft-p99", o.ttft}, {"tpot-p99", o.tpot}} {
		if fs.Changed(f.name) {
			if err := checkSLO(f.name, f.v); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, l := range []struct {
		name string
		v    []int
		min  int
	}{{"tp", o.tp, 1}, {"pp", o.pp, 1}, {"ep", o.ep, 1}, {"max-seqs", o.maxSeqs, 0}} {
		if len(l.v) == 0 && (l.name != "ep" || fs.Changed("ep")) {
			errs = append(errs, usagef("--%s: empty list", l.name))
		}
		if err := repeatedItems(l.name, l.v); err != nil {
			errs = append(errs, err)
		}
		for _, v := range l.v {
			if v < l.min {
				errs = append(errs, usagef("--%s: %d is below %d", l.name, v, l.min))
			}
		}
	}
	errs = append(errs, o.host.check(fs)...)
	router, err := serve.ParseRouter(o.router)
	if err != nil {
		errs = append(errs, usagef("--router: %v", err))
	}
	if o.disagg && o.maxRate {
		errs = append(errs, usagef("--disagg: not with --max-rate (a plan searches disaggregated deployments; --max-rate takes one aggregated deployment)"))
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"requests", o.requests}, {"max-gpus", o.maxGPUs}, {"dp", o.dp}} {
		if f.v < 1 {
			errs = append(errs, usagef("--%s: must be at least 1, got %d", f.name, f.v))
		}
	}
	if o.requests > serve.MaxRequests {
		errs = append(errs, usagef("--requests: want 1 to %d, got %d", serve.MaxRequests, o.requests))
	} else if o.requests >= 1 && o.requests < serve.MinJudged {
		errs = append(errs, usagef("--requests: a plan needs at least %d requests a run, got %d: with fewer, whether a deployment keeps up with the load cannot be judged", serve.MinJudged, o.requests))
	}
	var dts []model.DType
	dtsOK := true
	for _, s := range o.dtypes {
		d, err := model.ParseDType(s)
		if err != nil {
			errs = append(errs, usagef("--dtypes: %v", err))
			dtsOK = false
		}
		dts = append(dts, d)
	}
	if err := repeatedItems("dtypes", dts); err != nil && dtsOK {
		errs = append(errs, err)
	}
	wl := serve.Workload{N: o.requests, Arrival: serve.Poisson, Rate: o.rate, Seed: o.seed}
	if o.maxRate {
		wl.Rate = 1
	}
	switch strings.ToLower(o.workload) {
	case "":
		in, err := serve.ParseLengths(o.input)
		if err != nil {
			errs = append(errs, usagef("--input: %v", err))
		}
		out, err := serve.ParseLengths(o.output)
		if err != nil {
			errs = append(errs, usagef("--output: %v", err))
		}
		wl.Input, wl.Output = in, out
		if f, ok := out.(serve.Fixed); ok && f == 1 && fs.Changed("tpot-p99") {
			// A TPOT is the gap between tokens: the objective would be
			// met by every candidate, each at 0 tokens/s per user.
			errs = append(errs, usagef("--tpot-p99: every request generates one token (--output 1), so there is no TPOT to bound"))
		}
	case "sharegpt":
		wl.Joint = serve.ShareGPT{}
	default:
		errs = append(errs, usagef("--workload: unknown workload %q (want sharegpt)", o.workload))
	}
	// --hw and --model are read beside the flags' checks, so that
	// every problem is said at once.
	dev, hwErr := resolveHardware(o.hw)
	if hwErr == nil {
		dev, hwErr = whatIf(dev, o.sets)
	}
	m, mErr := resolveModel(o.model)
	mode, err := parseDPAttn(o.dpAttn)
	if err != nil {
		errs = append(errs, err)
	}
	var groups []dpAttnGroup
	if mErr == nil {
		s := simWorkload{M: m}.Shape()
		groups = o.dpAttnGroups(fs, mode, s, router)
		// An EP pinned must suit the model's experts: within a TP degree,
		// or as a data-parallel attention group's.
		for _, ep := range o.ep {
			if err := plan.CheckEP("ep", o.model, s, ep, o.tp); ep >= 1 && err != nil &&
				!slices.ContainsFunc(groups, func(g dpAttnGroup) bool { return g.d*g.tp == ep }) {
				errs = append(errs, usageError{err})
			}
		}
		var e *serve.Engine
		if hwErr == nil && s.Experts > 1 {
			if pe, err := serve.Preset(o.engine, dev.Memory.Limit()); err == nil {
				o.host.apply(fs, &pe)
				e = &pe
				o.dpAttnNote = dpAttnNote(mode, s, router, pe)
			}
		}
		errs = append(errs, o.dpAttnErrors(mode, s, router, e, groups)...)
		if e != nil && serve.CheckDPAttentionEngine(*e) != nil {
			groups = nil
		}
	}
	if err := errors.Join(append(errs, hwErr, mErr)...); err != nil {
		return nil, nil, err
	}
	w := simWorkload{M: m}
	if err := fitsContext(&wl, w.Shape().MaxContext); err != nil {
		return nil, nil, err
	}
	// eps are the expert-parallel degrees searched with a TP degree:
	// those pinned that divide it (CheckEP refused one that divides
	// none), else every one serve prices for the model.
	eps := func(tp int) []int {
		if !fs.Changed("ep") {
			return plan.EPDegrees(w.Shape(), tp)
		}
		var in []int
		for _, ep := range o.ep {
			if tp%ep == 0 {
				in = append(in, ep)
			}
		}
		return in
	}
	e, err := serve.Preset(o.engine, dev.Memory.Limit())
	if err != nil {
		return nil, nil, usagef("--engine: %v", err)
	}
	o.host.apply(fs, &e)
	if err := errors.Join(o.host.ignored(fs, &e)...); err != nil {
		return nil, nil, err
	}
	if err := e.Validate(); err != nil {
		return nil, nil, usageError{err}
	}
	deploy := func(l plan.Layout) (*sim.Pricer, serve.Engine, error) {
		if l.DPAttention > 1 {
			return o.deployDPAttn(fs, dev, w, l)
		}
		e, _ := serve.PresetFor(o.engine, dev.Memory.Limit(), l.TP)
		o.host.apply(fs, &e)
		if l.MaxSeqs > 0 {
			e.MaxSeqs = l.MaxSeqs
		}
		if l.EP > 1 && l.TP%l.EP != 0 {
			return nil, e, fmt.Errorf("expert parallelism %d does not divide tp %d: serve prices expert parallelism within a replica's TP group", l.EP, l.TP)
		}
		sys, err := systemFor(dev, l.TP*l.PP)
		if err != nil {
			return nil, e, err
		}
		sc := sim.Default()
		sc.TP, sc.PP, sc.EP, sc.Weights, sc.Act, sc.KV = l.TP, l.PP, l.EP, l.DType, l.DType, l.DType
		p, err := sim.NewPricer(sys, w, e.Scenario(sc))
		return p, e, err
	}
	q := &plan.ServeQuery{MaxGPUs: o.maxGPUs, Workload: wl, SLO: plan.SLO{TTFTP99: o.ttft, TPOTP99: o.tpot},
		Deploy: deploy, Workers: runtime.GOMAXPROCS(0), Router: router}
	if err := o.costing(fs, q, dev, w); err != nil {
		return nil, nil, err
	}
	if o.disagg {
		q.Link = func(gpus int) (*serve.KVLink, error) {
			sys, err := systemFor(dev, gpus)
			if err != nil {
				return nil, err
			}
			return &serve.KVLink{Intra: sys.Link(model.IntraNode), Inter: sys.Link(model.InterNode), PerNode: sys.DevicesPerNode}, nil
		}
		// Both pools take one EP (perfsim serve --disagg --ep): the
		// degrees searched with both TP degrees.
		for _, d := range dts {
			for _, ptp := range o.tp {
				for _, ppp := range o.pp {
					for _, dtp := range o.tp {
						for _, dpp := range o.pp {
							for _, ep := range eps(ptp) {
								if !slices.Contains(eps(dtp), ep) {
									continue
								}
								q.Pairs = append(q.Pairs, plan.Pair{Prefill: plan.Layout{TP: ptp, PP: ppp, EP: ep, DType: d}, Decode: plan.Layout{TP: dtp, PP: dpp, EP: ep, DType: d}})
							}
						}
					}
				}
			}
		}
	}
	for _, tp := range o.tp {
		for _, ep := range eps(tp) {
			for _, pp := range o.pp {
				for _, d := range dts {
					for _, ms := range o.maxSeqs {
						if mode != dpAttnOn {
							q.Layouts = append(q.Layouts, plan.Layout{TP: tp, PP: pp, EP: ep, DType: d, MaxSeqs: ms})
						}
					}
				}
			}
		}
	}
	q.Layouts = append(q.Layouts, dpAttnLayouts(groups, dts, o.maxSeqs)...)
	o.dpAttnShown = len(groups) > 0
	return q, dev, nil
}

// fitsContext refuses a workload whose requests exceed the model's
// context, naming the first (perfsim serve refuses them in its run; the
// plan's runs are not given the context).
func fitsContext(wl *serve.Workload, ctx int) error {
	if ctx <= 0 {
		return nil
	}
	if err := wl.Check(ctx); err != nil {
		return usageError{err}
	}
	return nil
}

// runMaxRate answers --max-rate for the first layout.
func (o *planOptions) runMaxRate(q *plan.ServeQuery, dev *hardware.Device, f format, stdout, stderr io.Writer) error {
	l := q.Layouts[0]
	p, e, err := q.Deploy(l)
	if err != nil {
		return scenarioUsage(err)
	}
	for _, w := range p.Warnings() {
		fmt.Fprintf(stderr, "perfsim: warning: %v\n", w)
	}
	r, res, err := plan.MaxRate(p, e, o.dp, q.Workload, q.SLO, 0.01)
	if err != nil {
		return err
	}
	// No rate meets the objectives: the report is written and the run
	// exits 3 (no answer); the load plot, which spans fractions of the
	// rate found, is not drawn.
	var none error
	if r <= 0 {
		none = noAnswerf("plan serve --max-rate: %s × dp %d meets the objectives at no rate", l, o.dp)
		if o.loadPlot != "" {
			none = noAnswerf("%v; --load-plot not drawn: no rate to draw around", none)
		}
	}
	if o.loadPlot != "" && none == nil {
		what := fmt.Sprintf("%s on %s, %s × dp %d (%s)", o.model, dev.Name, l, o.dp, e.Name)
		if err := saveLoadPlot(o.loadPlot, p, e, o.dp, q, r, what, dev); err != nil {
			return fmt.Errorf("--load-plot: %w", err)
		}
	}
	out := maxRateJSON{Schema: "perfsim.plan-rate/v1", Layout: l.String(), DP: o.dp, DPAttention: l.DPAttention, GPUs: o.dp * l.GPUs(), MaxRequestsPerS: r}
	cells := []string{"", "", ""}
	if res != nil {
		ttft, tpot, tok := float64(res.TTFT.P99), float64(res.TPOT.P99), plan.SteadyTokens(r, res)
		out.TTFTP99S, out.TPOTP99S, out.OutputTokensPerS = &ttft, &tpot, &tok
		cells = []string{num(ttft), num(tpot), num(tok)}
	}
	switch f {
	case formatJSON:
		err = writeJSON(stdout, out)
	case formatCSV:
		err = writeCSV(stdout, []string{"layout", "dp", "gpus", "max_requests_per_s", "ttft_p99_s", "tpot_p99_s", "output_tokens_per_s"},
			[][]string{append([]string{out.Layout, strconv.Itoa(out.DP), strconv.Itoa(out.GPUs), num(r)}, cells...)})
	default:
		tw := newTable(stdout)
		fmt.Fprintf(tw, "deployment\t%s × dp %d = %s (%s)\n", out.Layout, out.DP, gpuCount(out.GPUs), e.Name)
		fmt.Fprintf(tw, "max rate\t%s req/s under %s (0: none meets them)\n", fnum(r), objectives("p99 ", q.SLO.TTFTP99, q.SLO.TPOTP99))
		if res != nil {
			fmt.Fprintf(tw, "there\tTTFT p99 %v, TPOT p99 %v, %s output tokens/s\n", model.Seconds(res.TTFT.P99), model.Seconds(res.TPOT.P99), fnum(*out.OutputTokensPerS))
		}
		if l.DPAttention > 1 && res != nil {
			// The serve command that reruns the deployment at the rate
			// found, over as many requests as that rate was judged on
			// (more than --requests where its run had to settle).
			fmt.Fprintf(tw, "serve\tperfsim serve %s --rate %s --requests %d, with this plan's --hw, --model, --engine, engine and request flags\n",
				dpAttnServeFlags(&plan.Candidate{Layout: l, GPUs: out.GPUs}), rateFlag(r), res.Count)
		}
		err = tw.Flush()
	}
	if err != nil {
		return err
	}
	return none
}
