package serve

import (
	"errors"
	"fmt"

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
}

func sliceSource(reqs []Request) source {
	return source{n: len(reqs), open: func() func() (Request, error) {
		i := 0
		return func() (Request, error) {
			i++
			return reqs[i-1], nil
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
// dp replicas, with the same results, but with one scheduler (dp 1, PP
// 1) draws them from w's generator as the engine reaches them instead of
// holding them: its memory does not grow with the requests but by their
// records (Result). With more schedulers it draws them first.
func RunWorkload(p *sim.Pricer, e Engine, w *Workload, dp int, o Options) (*Result, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	if dp != 1 || p.Scenario().PP > 1 {
		reqs, err := w.Requests()
		if err != nil {
			return nil, err
		}
		return RunReplicas(p, e, reqs, dp, o)
	}
	return run(p, e, source{n: w.N, open: w.cursor}, o)
}

// RunDeploymentWorkload serves w's requests on d as RunDeployment serves
// w.Requests(), with the same results; a deployment of replicas alone
// (aggregated, round-robin, open loop) draws them as RunWorkload does,
// any other holds them.
func RunDeploymentWorkload(d Deployment, w *Workload, o Options) (*Result, error) {
	if d.replicasOnly(o) {
		return RunWorkload(d.Serve.Pricer, d.Serve.Engine, w, d.Serve.Instances, o)
	}
	reqs, err := w.Requests()
	if err != nil {
		return nil, err
	}
	return RunDeployment(d, reqs, o)
}

// Check draws every request of w, keeping none, and reports the first
// problem (Validate's, or a request beyond MaxTime) as Requests would.
func (w *Workload) Check() error {
	if err := w.Validate(); err != nil {
		return err
	}
	next := w.cursor()
	for range w.N {
		if _, err := next(); err != nil {
			return err
		}
	}
	return nil
}

// check refuses requests that are unordered or can never run.
func check(reqs []Request, kv charge, blocks int, o Options) error {
	return checkSource(sliceSource(reqs), kv, blocks, o)
}

// checkSource refuses requests that are unordered or can never run.
func checkSource(src source, kv charge, blocks int, o Options) error {
	if src.n == 0 {
		return errors.New("serve: no requests")
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
		case kv.blocks(r.Input+r.Output) > blocks:
			errs = append(errs, fmt.Errorf("%w: request %d: %d + %d tokens%s exceed the KV cache of %d tokens", ErrOverflow, r.ID, r.Input, r.Output, kv.stateSaid(), blocks*kv.block))
		}
		prev = r
	}
	return errors.Join(errs...)
}
