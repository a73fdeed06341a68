package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/mlperf"
	"github.com/perfsim/perfsim/sim"
)

const mlperfSynopsis = "perfsim mlperf --system NAME | --hw NAME|FILE [--gpus N] [--benchmark NAME] [--scenario offline|server] [--seed K] [--format table|json|csv]"

const mlperfExamples = `  # every datacenter inference benchmark of MLPerf v5.0 on a DGX H100, both scenarios
  perfsim mlperf --system dgx-h100

  # the same on eight H100s given as a device and a count
  perfsim mlperf --hw h100 --gpus 8

  # ResNet-50's Server scenario (15 ms at the 99th percentile) on one A100, as JSON
  perfsim mlperf --hw a100 --benchmark resnet50 --scenario server --format json
`

type mlperfOptions struct {
	hw, system, bench, scenario string
	format                      string
	gpus, queries               int
	seed                        uint64
	input, output               map[string]int
	suite                       string
	globalBatch                 int
}

func (o *mlperfOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.hw, "hw", "", hwFlagUsage)
	fs.StringVar(&o.system, "system", "", "a catalog system ("+strings.Join(hardware.SystemNames(), ", ")+"): its device, and one node's GPUs unless --gpus says otherwise")
	fs.IntVar(&o.gpus, "gpus", 8, "accelerators in the system under test (each serves its own copy of a model that fits one)")
	fs.StringVar(&o.bench, "benchmark", "", "one benchmark (default: the whole datacenter suite); 'perfsim mlperf --benchmark list' names them")
	fs.StringVar(&o.suite, "suite", "inference", "inference (the datacenter suite's Offline and Server scenarios) or training (time to train)")
	fs.IntVar(&o.globalBatch, "global-batch", 0, "training: the global batch (default: each benchmark's reference point, resnet 3264, bert 448)")
	fs.StringVar(&o.scenario, "scenario", "", "offline or server (default: both)")
	fs.IntVar(&o.queries, "queries", 20000, "Server queries simulated per trial rate, at least 20 batches a GPU (the benchmarks other than the LLMs, which run LoadGen's counts)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the Server scenario's Poisson arrivals")
	fs.Var(nameCounts{&o.input}, "input", "an LLM benchmark's prompt tokens, NAME=TOKENS (repeatable; every request then has these and the mean output, fixed, in place of the dataset's samples; GPT-J, which has none, needs it)")
	fs.Var(nameCounts{&o.output}, "output", "an LLM benchmark's output tokens, NAME=TOKENS (every request then has these and the mean input, fixed, in place of the dataset's samples; GPT-J needs it)")
	addFormatFlag(fs, &o.format)
}

// mlperfJSON is one row of perfsim mlperf's JSON.
type mlperfJSON struct {
	Benchmark string   `json:"benchmark"`
	Round     string   `json:"round"`
	Scenario  string   `json:"scenario"`
	Model     string   `json:"model,omitempty"`
	Precision string   `json:"precision"`
	Value     *float64 `json:"value"`
	Low       *float64 `json:"value_low,omitempty"`
	High      *float64 `json:"value_high,omitempty"`
	Unit      string   `json:"unit"`
	Batch     int      `json:"batch_per_device,omitempty"`
	Bound     float64  `json:"latency_bound_s,omitempty"`
	TTFT      float64  `json:"ttft_bound_s,omitempty"`
	TPOT      float64  `json:"tpot_bound_s,omitempty"`
	P99       float64  `json:"p99_latency_s,omitempty"`
	P99TTFT   float64  `json:"p99_ttft_s,omitempty"`
	P99TPOT   float64  `json:"p99_tpot_s,omitempty"`
	TP        int      `json:"tp,omitempty"`
	Engine    string   `json:"engine,omitempty"`
	Samples   int      `json:"samples,omitempty"`
	Duration  float64  `json:"duration_s,omitempty"`
	Note      string   `json:"note,omitempty"`
}

type mlperfReport struct {
	Schema   string       `json:"schema"`
	System   string       `json:"system,omitempty"`
	Hardware string       `json:"hardware"`
	GPUs     int          `json:"gpus"`
	Source   []string     `json:"source"`
	Results  []mlperfJSON `json:"results"`
}

func runMLPerfCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o mlperfOptions
	fs := newFlagSet("mlperf", mlperfSynopsis, mlperfExamples, stderr)
	o.AddFlags(fs)
	if err := parseFlagsNoArgs(fs, args, "mlperf"); err != nil {
		return err
	}
	f, err := parseFormat(o.format)
	if err != nil {
		return err
	}
	if o.suite != "inference" && o.suite != "training" {
		return usagef("--suite: unknown suite %q (want inference or training)", o.suite)
	}
	suite := mlperf.Suite()
	if o.bench == "list" {
		if o.suite == "training" {
			for _, b := range mlperf.TrainingSuite() {
				fmt.Fprintf(stdout, "%-20s %s  %s\n", b.Name, b.Round, b.Task)
			}
			return nil
		}
		for _, b := range suite {
			fmt.Fprintf(stdout, "%-20s %s  %s\n", b.Name, b.Round, b.Task)
		}
		return nil
	}
	var errs []error
	// A flag of the other suite would be silently ignored (issue 17 item 11).
	if o.suite == "training" {
		errs = append(errs, ignoredFlags(fs, "only for --suite inference; the training suite would ignore it", "scenario", "queries", "seed", "input", "output")...)
		if fs.Changed("global-batch") && o.globalBatch < 1 {
			errs = append(errs, usagef("--global-batch: must be at least 1, got %d (leave it out for each benchmark's reference batch)", o.globalBatch))
		}
	} else {
		errs = append(errs, ignoredFlags(fs, "only for --suite training; the inference suite would ignore it", "global-batch")...)
	}
	if o.bench != "" && o.suite == "inference" {
		b, err := mlperf.Find(o.bench)
		if err != nil {
			errs = append(errs, usagef("--benchmark: %v", err))
		}
		suite = []mlperf.Benchmark{b}
	}
	scenarios := []mlperf.Scenario{mlperf.Offline, mlperf.Server}
	if o.scenario != "" {
		s, err := mlperf.ParseScenario(o.scenario)
		if err != nil {
			errs = append(errs, usagef("--scenario: %v", err))
		}
		scenarios = []mlperf.Scenario{s}
	}
	if o.gpus < 1 || o.gpus > 1<<20 {
		errs = append(errs, usagef("--gpus: want 1 to %d, got %d", 1<<20, o.gpus))
	}
	if o.queries < 100 || o.queries > 10_000_000 {
		errs = append(errs, usagef("--queries: want 100 to 10,000,000, got %d", o.queries))
	} else if fs.Changed("queries") && o.suite == "inference" && !runsQueries(suite, scenarios) {
		// Only a non-LLM benchmark's Server trials take it; the LLMs run
		// LoadGen's own query counts, and it had been ignored there
		// without a word.
		errs = append(errs, usagef("--queries: only the Server scenario of a benchmark other than the LLMs runs it (the LLM benchmarks run LoadGen's own query counts); this run would ignore it"))
	}
	for flag, m := range map[string]map[string]int{"input": o.input, "output": o.output} {
		for name, v := range m {
			b, err := mlperf.Find(name)
			switch {
			case err != nil:
				errs = append(errs, usagef("--%s: %v", flag, err))
			case b.Kind != mlperf.LLM:
				errs = append(errs, usagef("--%s: %s is not an LLM benchmark", flag, b.Name))
			case v < 1 || v > 1<<20:
				errs = append(errs, usagef("--%s: %s=%d: want 1 to %d tokens", flag, name, v, 1<<20))
			case o.bench != "" && o.suite == "inference" && len(suite) == 1 && suite[0].Name != "" && b.Name != suite[0].Name:
				// It would be ignored: --benchmark resnet50 --input
				// llama2-70b=100 had run resnet50 without a word.
				errs = append(errs, usagef("--%s: %s is not the benchmark run (--benchmark %s)", flag, b.Name, suite[0].Name))
			default:
				delete(m, name)
				m[b.Name] = v
			}
		}
	}
	if len(errs) > 0 {
		slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
		return errors.Join(errs...)
	}
	var sys *hardware.System
	switch {
	case o.system != "" && o.hw != "":
		return usagef("--system and --hw: give one")
	case o.system != "":
		gpus := o.gpus
		if !fs.Changed("gpus") {
			gpus = 0 // one node
		}
		sys, err = systemByName(o.system, gpus)
		if err != nil {
			return systemError(o.system, err, false)
		}
		if gpus != 0 && sys.Devices() != gpus {
			// The catalog's systems come in whole nodes.
			hw := fmt.Sprintf("%q", sys.Device.Name)
			if len(sys.Device.Aliases) > 0 {
				hw = sys.Device.Aliases[0]
			}
			return usagef("--gpus: %s has %d GPUs a node: give a multiple of %d, or --hw %s --gpus %d", o.system, sys.DevicesPerNode, sys.DevicesPerNode, hw, gpus)
		}
		o.gpus = sys.Devices()
	default:
		dev, err := resolveHardware(o.hw)
		if err != nil {
			return err
		}
		if sys, err = systemFor(dev, o.gpus); err != nil {
			return usagef("--gpus: %v", err)
		}
	}
	dev := sys.Device
	resolve := func(name string) (sim.Workload, error) {
		m, err := resolveModel(name)
		if err != nil {
			return nil, err
		}
		return simWorkload{M: m}, nil
	}
	if o.suite == "training" {
		return runMLPerfTraining(stdout, f, sys, o.bench, o.globalBatch, resolve)
	}
	rep := mlperfReport{Schema: "perfsim.mlperf/v1", System: sys.Name, Hardware: dev.Name, GPUs: o.gpus, Source: []string{mlperf.SourceSuite, mlperf.SourceLatency}}
	var results []mlperf.Result
	proc := dev.Processor()
	for _, b := range suite {
		if to, ok := proc.Supported(b.Precision); !ok && to.Valid() {
			fmt.Fprintf(stderr, "perfsim: warning: %s has no %s peak: %s is emulated, computed at the %s rate (%s runs in %s, as submissions do)\n",
				dev.Name, b.Precision, b.Precision, to, b.Name, b.Precision)
		}
		for _, s := range scenarios {
			if err := ctx.Err(); err != nil {
				return err
			}
			r := mlperf.Run(sys, b, s, resolve, mlperf.Options{Queries: o.queries, Seed: o.seed, Input: o.input, Output: o.output})
			results = append(results, r)
			rep.Results = append(rep.Results, mlperfRow(r))
		}
	}
	switch f {
	case formatJSON:
		return writeJSON(stdout, rep)
	case formatCSV:
		// Every key of the JSON's rows; a cell the JSON leaves out (no
		// calibration band, not an LLM) is empty.
		header := []string{"benchmark", "round", "scenario", "model", "precision", "value", "value_low", "value_high", "unit", "batch_per_device",
			"latency_bound_s", "ttft_bound_s", "tpot_bound_s", "p99_latency_s", "p99_ttft_s", "p99_tpot_s", "tp", "engine", "samples", "duration_s", "note"}
		var rows [][]string
		opt := func(v *float64) string {
			if v == nil {
				return ""
			}
			return num(*v)
		}
		nonzero := func(v float64) string {
			if v == 0 {
				return ""
			}
			return num(v)
		}
		for _, j := range rep.Results {
			rows = append(rows, []string{j.Benchmark, j.Round, j.Scenario, j.Model, j.Precision, opt(j.Value), opt(j.Low), opt(j.High), j.Unit, nonzero(float64(j.Batch)),
				nonzero(j.Bound), nonzero(j.TTFT), nonzero(j.TPOT), nonzero(j.P99), nonzero(j.P99TTFT), nonzero(j.P99TPOT), nonzero(float64(j.TP)), j.Engine,
				nonzero(float64(j.Samples)), nonzero(j.Duration), j.Note})
		}
		return writeCSV(stdout, header, rows)
	}
	on := fmt.Sprintf("%d × %s", o.gpus, dev.Name)
	if sys.Name != "" {
		on = sys.Name + ": " + on
	}
	fmt.Fprintf(stdout, "MLPerf Inference datacenter (v5.0; bert from v4.1) on %s\n\n", on)
	tw := newTable(stdout)
	fmt.Fprintln(tw, "BENCHMARK\tROUND\tSCENARIO\tRESULT\tBOUND (p99)\tBATCH/GPU (TP)\tNOTE")
	llm := false
	for _, r := range results {
		b := r.Benchmark
		llm = llm || (b.Kind == mlperf.LLM && r.OK())
		res := "-"
		if r.OK() {
			res = sig4(r.Value) + " " + r.Unit
			if r.High > 0 {
				res += " (" + sig4(r.Low) + "–" + sig4(r.High) + ")"
			}
		}
		bound := "-"
		switch {
		case r.Scenario == mlperf.Offline:
		case b.TTFT > 0:
			bound = fmt.Sprintf("TTFT %v, TPOT %v", b.TTFT, b.TPOT)
			if r.P99TTFT > 0 {
				bound += fmt.Sprintf(" (at %v, %v)", r.P99TTFT, r.P99TPOT)
			}
		case b.Latency > 0:
			bound = b.Latency.String()
			if r.P99 > 0 {
				bound += fmt.Sprintf(" (at %v)", r.P99)
			}
		}
		batch := "-"
		switch {
		case r.Batch > 0:
			batch = strconv.Itoa(r.Batch)
		case r.TP > 0:
			batch = fmt.Sprintf("tp %d", r.TP)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", b.Name, b.Round, r.Scenario, res, bound, batch, r.Note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	trial := fmt.Sprintf("seed %d", o.seed)
	if runsQueries(suite, scenarios) {
		trial = fmt.Sprintf("%d queries per trial, %s", o.queries, trial)
	}
	fmt.Fprintf(stdout, "\nServer: the highest Poisson rate whose p99 latency meets the bound (%s); Offline: the best batch per GPU × GPUs.\n", trial)
	if llm {
		fmt.Fprintln(stdout, "LLMs: Offline is LoadGen's one query of all its samples (at least the dataset, 600 s long), output tokens over its issue to its last completion; a Server trial is LoadGen's queries at the rate (whole copies of the dataset spanning 600 s).")
	}
	fmt.Fprintln(stdout, "Sources: "+mlperf.SourceSuite+"; "+mlperf.SourceLatency+".")
	return nil
}

// runsQueries reports whether any of the benchmarks runs a Server trial
// of --queries queries: a benchmark other than the LLMs with a Server
// scenario, in one of the scenarios run.
func runsQueries(suite []mlperf.Benchmark, scenarios []mlperf.Scenario) bool {
	if !slices.Contains(scenarios, mlperf.Server) {
		return false
	}
	for _, b := range suite {
		if b.Kind != mlperf.LLM && !b.OfflineOnly {
			return true
		}
	}
	return false
}

func mlperfRow(r mlperf.Result) mlperfJSON {
	b := r.Benchmark
	j := mlperfJSON{Benchmark: b.Name, Round: b.Round, Scenario: r.Scenario.String(), Model: b.Model, Precision: b.Precision.String(),
		Unit: r.Unit, Batch: r.Batch, Note: r.Note, P99: float64(r.P99),
		P99TTFT: float64(r.P99TTFT), P99TPOT: float64(r.P99TPOT), TP: r.TP, Engine: r.Engine,
		Samples: r.Samples, Duration: float64(r.Duration)}
	if r.Scenario == mlperf.Server {
		j.Bound, j.TTFT, j.TPOT = float64(b.Latency), float64(b.TTFT), float64(b.TPOT)
	}
	if r.OK() {
		v := r.Value
		j.Value = &v
		if r.High > 0 {
			lo, hi := r.Low, r.High
			j.Low, j.High = &lo, &hi
		}
	}
	return j
}

// sig4 writes v to four significant digits, with thousands separated by
// commas and no exponent: 494,800, 22.75.
func sig4(v float64) string {
	if v <= 0 || !finiteNum(v) {
		return "0"
	}
	digits := int(math.Floor(math.Log10(v))) + 1
	dec := max(0, 4-digits)
	r := strconv.FormatFloat(v, 'f', dec, 64)
	if digits > 4 {
		p := math.Pow(10, float64(digits-4))
		r = strconv.FormatFloat(math.Round(v/p)*p, 'f', 0, 64)
	}
	intPart, frac, _ := strings.Cut(r, ".")
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	return b.String()
}

// sig4Trim is sig4 without the trailing zeros of a fraction: 4 epochs,
// not 4.000 (2,120 keeps its zero, a digit of the whole part).
func sig4Trim(v float64) string {
	s := sig4(v)
	if strings.Contains(s, ".") {
		s = strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func finiteNum(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// systemByName returns the catalog system name with gpus devices, or one
// node's when gpus is 0.
func systemByName(name string, gpus int) (*hardware.System, error) {
	if gpus == 0 {
		s, err := hardware.LookupSystem(name, 1)
		if err != nil {
			return nil, err
		}
		gpus = s.DevicesPerNode
	}
	return hardware.LookupSystem(name, gpus)
}
