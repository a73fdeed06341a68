package mlperf

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// The LLM benchmarks run on package serve as NVIDIA's submissions run
// them: TensorRT-LLM's in-flight batching (the trtllm preset, with
// max_batch_size and max_num_tokens as NVIDIA's submission sets them for
// the device and scenario, else as trtllm-bench derives them from
// memory and the mean lengths; max_seq_len the benchmark's longest
// request: engineLimits), every GPU group of TP devices one
// replica, the replicas sharing the load evenly. Requests are the
// dataset's samples, each with its own lengths, in LoadGen's order
// (llm_samples.go), where the per-sample counts are published, else the
// benchmark's mean lengths, fixed. Offline is LoadGen's one query of
// all its samples at once (llm_loadgen.go), in output tokens/s; Server
// is the highest Poisson rate at which the 99th-percentile TTFT and TPOT
// (GPT-J: the whole request) meet the bounds, in output tokens/s.

const (
	// llmBatches is a Server trial's least requests per replica, in
	// running batches (max_batch_size).
	llmBatches = 10
	// llmTrials is the bisection's steps over the Server rate.
	llmTrials = 12
)

// llmLengths returns the benchmark's mean input and output tokens, from
// the options where given, else the suite's.
func llmLengths(b Benchmark, o Options) (in, out int, note string) {
	fi, fo := b.Input, b.Output
	if v, ok := o.Input[b.Name]; ok {
		fi = float64(v)
	}
	if v, ok := o.Output[b.Name]; ok {
		fo = float64(v)
	}
	switch {
	case fi <= 0 && fo <= 0:
		return 0, 0, fmt.Sprintf("needs the dataset's mean input and output lengths in the model's tokens, which are not published: give --input %s=TOKENS --output %s=TOKENS", b.Name, b.Name)
	case fi <= 0:
		return 0, 0, fmt.Sprintf("needs the dataset's mean input length in the model's tokens, which is not published: give --input %s=TOKENS", b.Name)
	case fo <= 0:
		return 0, 0, fmt.Sprintf("needs the dataset's mean output length: give --output %s=TOKENS", b.Name)
	}
	return int(math.Round(fi)), int(math.Round(fo)), ""
}

// llmReplica is one serving replica of TP devices.
type llmReplica struct {
	tp  int
	p   *sim.Pricer
	e   serve.Engine
	lim llmLimits
	// samples, when not nil, are the dataset's, from which serveRun
	// draws its requests in LoadGen's order as the first of stride
	// replicas is handed them; nil: the mean lengths, fixed.
	samples []sampleLen
	stride  int
}

// outTokens returns the mean output tokens of a request: the samples'
// where their outputs are published, else out.
func (r *llmReplica) outTokens(out int) float64 {
	if m := meanOut(r.samples); m > 0 {
		return m
	}
	return float64(out)
}

// replica builds a replica of tp devices for scenario sc, or an error
// when the model does not fit them.
func replica(dev *hardware.Device, w sim.Workload, b Benchmark, sc Scenario, tp, in, out int) (*llmReplica, error) {
	sys, err := hardware.NewSystem(dev, tp, 1)
	if err != nil {
		return nil, err
	}
	ssc := sim.Default()
	ssc.TP = tp
	ssc.Weights, ssc.Act, ssc.KV = b.Precision, b.Precision, b.Precision
	ssc.Strict = false
	ssc.Sustained = true // LoadGen's 600 s at least: fixed.scenario
	e, err := serve.Preset("trtllm", dev.Memory.Capacity)
	if err != nil {
		return nil, err
	}
	// The engine is built for the benchmark's longest request; the
	// runtime's buffers are sized by it (serve.TRTLLMBuffers).
	lim := engineLimits(dev, w, b, sc, ssc.KV, tp, in, out)
	e.GEMMAllReduce = lim.GEMMAllReduce && tp > 1
	p, err := sim.NewPricer(sys, w, e.Scenario(ssc))
	if err != nil {
		return nil, err
	}
	e.MaxSeqs, e.MaxTokens, e.MaxSeqLen = lim.MaxSeqs, lim.MaxTokens, lim.MaxSeqLen
	if _, _, err := e.KVCapacity(p); err != nil {
		return nil, fitError{err}
	}
	return &llmReplica{tp: tp, p: p, e: e, lim: lim}, nil
}

// A fitError is a replica's model and engine not fitting its devices'
// memory, as against a device that cannot run the model at all (no peak
// for its precision).
type fitError struct{ err error }

func (e fitError) Error() string { return e.err.Error() }
func (e fitError) Unwrap() error { return e.err }

// serveRun serves n requests at rate (per replica; 0: all at once):
// the replica's share of LoadGen's samples where it has them, else in
// and out tokens each.
func (r *llmReplica) serveRun(n, in, out int, rate float64, seed uint64) (*serve.Result, error) {
	wl := serve.Workload{N: n, Arrival: serve.AllAtOnce, Input: serve.Fixed(in), Output: serve.Fixed(out), Seed: seed}
	if rate > 0 {
		wl.Arrival, wl.Rate = serve.Poisson, rate
	}
	reqs, err := wl.Requests()
	if err != nil {
		return nil, err
	}
	if r.samples != nil {
		for i, x := range loadgenOrder(r.samples, n, r.stride, out, seed) {
			reqs[i].Input, reqs[i].Output = x.In, x.Out
		}
	}
	return serve.Run(r.p, r.e, reqs, serve.Options{})
}

// runLLM runs an LLM benchmark on the tensor-parallel degree (a power of
// two dividing the GPUs) that does best in the scenario under its
// engine limits: in Offline the highest throughput on LoadGen's query;
// in Server the highest rate meeting the bounds, as a submitter lays
// out each scenario's engine for its own score (NVIDIA's Llama 3.1 405B
// engines on eight H200s are TP 4 × PP 2 Offline and TP 8 Server).
func runLLM(sys *hardware.System, w sim.Workload, b Benchmark, sc Scenario, o Options, res *Result) {
	in, out, note := llmLengths(b, o)
	if note != "" {
		res.Note = note
		return
	}
	samples, err := llmSamples(b, o)
	if err != nil {
		res.Note = err.Error()
		return
	}
	if ctx := w.Shape().MaxContext; samples == nil && ctx > 0 && in+out > ctx {
		// Lengths given (--input, --output) that no engine serving the
		// model takes: they had been priced.
		res.Note = fmt.Sprintf("%d + %d tokens a request (--input, --output) exceed the model's context of %d", in, out, ctx)
		return
	}
	gpus := sys.Devices()
	type candidate struct {
		r   *llmReplica
		run offlineRun
	}
	var cands []candidate
	var firstErr error
	for tp := 1; tp <= min(gpus, 8); tp *= 2 {
		if gpus%tp != 0 {
			continue
		}
		r, err := replica(sys.Device, w, b, sc, tp, in, out)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		r.samples, r.stride = samples, gpus/tp
		run, err := r.offline(b, gpus/tp, in, out, o.Seed, llmMaxPerReplica)
		if errors.Is(err, serve.ErrOverflow) {
			err = fitError{err} // a request the KV cache cannot hold
		}
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		cands = append(cands, candidate{r, run})
	}
	if len(cands) == 0 {
		res.Note = firstErr.Error()
		if errors.As(firstErr, new(fitError)) {
			res.Note = fmt.Sprintf("does not fit at tensor parallelism up to %d: %v", min(gpus, 8), firstErr)
		}
		return
	}
	// The highest Offline throughput first (the lower TP on a tie).
	slices.SortStableFunc(cands, func(x, y candidate) int { return cmp.Compare(y.run.TokensPerSecond, x.run.TokensPerSecond) })
	if sc == Offline {
		best := cands[0]
		res.TP, res.Engine = best.r.tp, best.r.lim.String()
		res.Value = best.run.TokensPerSecond
		res.Samples, res.Duration = best.run.Samples, best.run.Duration
		res.Note = best.run.Cut
		return
	}
	// Server: each layout's rate is at most its Offline throughput (the
	// bisection's upper end), so a layout whose Offline throughput is
	// no more than the best rate found cannot do better and is skipped.
	var best *serverTrial
	var bestR *llmReplica
	for _, c := range cands {
		if best != nil && c.run.TokensPerSecond <= best.value {
			continue
		}
		t := c.r.server(b, float64(gpus/c.r.tp), c.run.TokensPerSecond, in, out, o.Seed)
		if t.note != "" {
			if best == nil && res.Note == "" {
				res.Note = t.note
			}
			continue
		}
		if best == nil || t.value > best.value {
			best, bestR = &t, c.r
		}
	}
	if best == nil {
		// Every layout was tried and failed (none is skipped before one
		// succeeds): the first one's note says why.
		return
	}
	res.Note = ""
	res.TP, res.Engine = bestR.tp, bestR.lim.String()
	res.Value = best.value
	res.Samples, res.Duration = best.n*(gpus/bestR.tp), best.at.Duration
	res.P99TTFT, res.P99TPOT = model.Seconds(best.at.TTFT.P99), model.Seconds(best.at.TPOT.P99)
	res.P99 = model.Seconds(best.at.E2E.P99)
}

// A serverTrial is the highest Server rate found on one layout: value
// in output tokens/s of the system, at the trial that met the bounds at
// it (n requests a replica); note says why none did.
type serverTrial struct {
	value float64
	at    *serve.Result
	n     int
	note  string
}

// server bisects the request rate per replica between 0 and the Offline
// request rate (offline, the system's output tokens/s). A trial is
// LoadGen's Server run at the rate (serverQueries), spread evenly over
// the replicas, and at least ten running batches: an engine that admits
// a whole trial at once (max_batch_size 1,024 against 1,000 requests)
// keeps its queue empty at any rate, and the batch fills for the first
// few max_batch_size requests; the overload verdict reads the trial's
// second half.
func (r *llmReplica) server(b Benchmark, replicas, offline float64, in, out int, seed uint64) serverTrial {
	hi := offline / replicas / r.outTokens(out)
	lo := 0.0
	var t serverTrial
	for range llmTrials {
		mid := (lo + hi) / 2
		n := max(llmBatches*r.e.MaxSeqs, ceilDiv(serverQueries(b, mid*replicas), int(replicas)))
		n = min(n, llmMaxPerReplica)
		rr, err := r.serveRun(n, in, out, mid, seed)
		if err != nil && !errors.Is(err, serve.ErrOverflow) {
			return serverTrial{note: err.Error()}
		}
		if err == nil && llmMeets(b, rr) {
			lo, t.at, t.n = mid, rr, n
		} else {
			hi = mid
		}
	}
	if t.at == nil {
		return serverTrial{note: "no rate meets the bounds (a lone request misses them)"}
	}
	t.value = lo * replicas * r.outTokens(out)
	return t
}

// llmMeets reports whether a Server trial meets the benchmark's bounds
// at the 99th percentile without an overload.
func llmMeets(b Benchmark, r *serve.Result) bool {
	if r.Overloaded {
		return false
	}
	if b.TTFT > 0 {
		return r.TTFT.P99 <= float64(b.TTFT) && r.TPOT.P99 <= float64(b.TPOT)
	}
	return r.E2E.P99 <= float64(b.Latency)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
