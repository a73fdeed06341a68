package serve

import (
	"errors"
	"fmt"
	"math"

	"github.com/perfsim/perfsim/sim"
)

// A source is a run's requests, n of them in arrival order, read by
// cursors: each cursor open returns gives them from the first, the same
// every time. Run's come from the caller's slice; RunWorkload's are
// drawn from the workload's seeded generator as the engine reaches them,
// and never held. A run reads its source three times: once to check
// every request, and twice as it runs (as requests arrive, and as the
// scheduler reaches them in the queue).
type source struct {
	n    int
	open func() func() (Request, error)
	// at, when set, returns request i (a slice's, a trace's): a
	// replica's share is then read without reading the others'.
	at func(i int) Request
}

func sliceSource(reqs []Request) source {
	return indexSource(len(reqs), func(i int) Request { return reqs[i] })
}

// indexSource returns the n requests at gives.
func indexSource(n int, at func(int) Request) source {
	return source{n: n, at: at, open: func() func() (Request, error) {
		i := 0
		return func() (Request, error) {
			i++
			return at(i - 1), nil
		}
	}}
}

// stride returns requests k, k+dp, k+2dp, ... of src (replica k of dp
// behind a round-robin router). Without at, each cursor reads the
// requests between them too, and none past its last.
func (src source) stride(k, dp int) source {
	n := max(0, (src.n-k+dp-1)/dp)
	if at := src.at; at != nil {
		return indexSource(n, func(i int) Request { return at(k + i*dp) })
	}
	open := src.open
	return source{n: n, open: func() func() (Request, error) {
		next, skip := open(), k
		return func() (Request, error) {
			for ; skip > 0; skip-- {
				if _, err := next(); err != nil {
					return Request{}, err
				}
			}
			skip = dp - 1
			return next()
		}
	}}
}

// cached returns src with each request's prompt tokens found in the
// prefix cache (Options.PrefixHit; cachedTokens, in order on one
// scheduler).
func (src source) cached(hit float64, block int) source {
	if !(hit > 0) {
		return src
	}
	open := src.open
	return source{n: src.n, open: func() func() (Request, error) {
		next, seen := open(), map[int]int{}
		return func() (Request, error) {
			q, err := next()
			q.Cached = cachedTokens(q, hit, block, seen)
			return q, err
		}
	}}
}

// cursor opens a cursor of a source the run's check has read in full
// without an error.
func (src source) cursor() func() Request {
	next := src.open()
	return func() Request {
		q, _ := next()
		return q
	}
}

// RunWorkload serves w's requests as RunReplicas serves w.Requests() on
// dp replicas, with the same results, but draws them from w's generator
// as each scheduler's engine reaches them instead of holding them: its
// memory does not grow with the requests but by their records (Result).
// With several schedulers (dp or PP above 1) each draws the whole
// workload, keeping its own share.
func RunWorkload(p *sim.Pricer, e Engine, w *Workload, dp int, o Options) (*Result, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	return runReplicas(p, e, source{n: w.N, open: w.cursor}, dp, o, false)
}

// RunDeploymentWorkload serves w's requests on d as RunDeployment serves
// w.Requests(), with the same results; a deployment of replicas alone
// (aggregated, round-robin, open loop) draws them as RunWorkload does,
// and any other, run as one event loop, draws each as the loop reaches
// it (flight.go).
func RunDeploymentWorkload(d Deployment, w *Workload, o Options) (*Result, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	if d.replicasOnly(o) {
		return runReplicas(d.Serve.Pricer, d.Serve.Engine, source{n: w.N, open: w.cursor}, d.Serve.Instances, o, d.DPAttention)
	}
	if err := d.checkDPAttention(o); err != nil {
		return nil, err
	}
	return runDeployment(d, source{n: w.N, open: w.cursor}, o, nil)
}

// Check draws every request of w, keeping none, and reports the first
// problem (Validate's, or a request beyond MaxTime) as Requests would,
// or, when maxContext > 0, the first request whose prompt and output
// exceed it, naming --input and --output (a drawn workload's lengths).
func (w *Workload) Check(maxContext int) error {
	if err := w.Validate(); err != nil {
		return err
	}
	next := w.cursor()
	for range w.N {
		r, err := next()
		if err != nil {
			return err
		}
		if maxContext > 0 && r.Input+r.Output > maxContext {
			return fmt.Errorf("--input, --output: request %d: %d + %d tokens exceed the model's context of %d", r.ID, r.Input, r.Output, maxContext)
		}
	}
	return nil
}

// maxTokens bounds a request's prompt and output (as ParseLengths and
// a trace do).
const maxTokens = 1 << 30

// checkSource refuses requests that are unordered or can never run.
func checkSource(src source, kv charge, blocks int, o Options) error {
	if src.n == 0 {
		return errors.New("serve: no requests")
	}
	if src.n > math.MaxInt32 {
		return fmt.Errorf("serve: %d requests, over the %d a run can index", src.n, math.MaxInt32)
	}
	var errs []error
	var prev Request
	next := src.open()
	for i := range src.n {
		if len(errs) >= 10 {
			errs = append(errs, errors.New("serve: (more problems not shown)"))
			break
		}
		r, err := next()
		if err != nil {
			return err
		}
		switch {
		case r.Input < 1 || r.Output < 1:
			errs = append(errs, fmt.Errorf("serve: request %d: %d tokens in, %d out: both must be at least 1", r.ID, r.Input, r.Output))
		case r.Input > maxTokens || r.Output > maxTokens:
			// A request in flight keeps them in an int32 (arrival).
			errs = append(errs, fmt.Errorf("serve: request %d: %d tokens in, %d out: each at most 2^30", r.ID, r.Input, r.Output))
		case !(r.Arrival >= 0):
			errs = append(errs, fmt.Errorf("serve: request %d arrives at %v, before the start", r.ID, r.Arrival))
		case i > 0 && r.Arrival < prev.Arrival:
			errs = append(errs, fmt.Errorf("serve: request %d arrives at %v, before request %d (%v): requests must be in arrival order", r.ID, r.Arrival, prev.ID, prev.Arrival))
		case o.MaxContext > 0 && r.Input+r.Output > o.MaxContext:
			errs = append(errs, fmt.Errorf("%w: request %d: %d + %d tokens exceed the model's context of %d", ErrOverflow, r.ID, r.Input, r.Output, o.MaxContext))
		case o.MaxSeqLen > 0 && r.Input+r.Output > o.MaxSeqLen:
			errs = append(errs, fmt.Errorf("%w: request %d: %d + %d tokens exceed the engine's max_seq_len of %d (--max-seq-len)", ErrOverflow, r.ID, r.Input, r.Output, o.MaxSeqLen))
		case r.Cached < 0 || r.Cached >= r.Input:
			errs = append(errs, fmt.Errorf("serve: request %d: %d cached prompt tokens of %d: want 0 up to the prompt less one", r.ID, r.Cached, r.Input))
		case r.Prefilled && r.Output < 2:
			errs = append(errs, fmt.Errorf("serve: request %d: prefilled elsewhere with %d output tokens: nothing left to decode", r.ID, r.Output))
		case kv.most(r.Input+r.Output) > blocks:
			errs = append(errs, fmt.Errorf("%w: request %d: %d + %d tokens%s exceed the KV cache of %d tokens", ErrOverflow, r.ID, r.Input, r.Output, kv.stateSaid(), kv.tokens(blocks)))
		}
		prev = r
	}
	return errors.Join(errs...)
}
