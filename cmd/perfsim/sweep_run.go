package main

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/price"
	"github.com/perfsim/perfsim/sim"
	"github.com/perfsim/perfsim/workloads"
)

// A sweepSpec is a design space: the cartesian product of its lists.
// Points are numbered in a fixed order, the first list outermost:
// hardware, model, dtype, tp, pp, batch, input, output. So row i of a
// sweep is always the same point, whatever the number of workers.
type sweepSpec struct {
	HW     []*hardware.Device
	Models []*workloads.Model
	DTypes []model.DType
	TP, PP []int
	Batch  []int
	Input  []int
	Output []int
	// Base is the scenario every point starts from (sim.Default when
	// zero); a point sets its batch, lengths, degrees and data types.
	Base sim.Scenario
	// Prices are the pricings of the hardware by index in HW (energy.go);
	// nil for none.
	Prices []*price.Pricing
}

// size returns the number of points, as a float64 so that a huge product
// does not overflow before it is refused.
func (s *sweepSpec) size() float64 {
	n := 1.0
	for _, l := range s.lens() {
		n *= float64(l)
	}
	return n
}

func (s *sweepSpec) lens() [8]int {
	return [8]int{len(s.HW), len(s.Models), len(s.DTypes), len(s.TP), len(s.PP), len(s.Batch), len(s.Input), len(s.Output)}
}

// A sweepPoint is one point of a sweep: indices into the spec's hardware
// and models, and the scenario values.
type sweepPoint struct {
	Index                     int
	HW, Model                 int
	DType                     model.DType
	TP, PP, Batch, In, Output int
}

// point decodes point i (mixed radix, the last list fastest).
func (s *sweepSpec) point(i int) sweepPoint {
	l := s.lens()
	var idx [8]int
	r := i
	for k := 7; k >= 0; k-- {
		idx[k] = r % l[k]
		r /= l[k]
	}
	return sweepPoint{Index: i, HW: idx[0], Model: idx[1], DType: s.DTypes[idx[2]], TP: s.TP[idx[3]], PP: s.PP[idx[4]],
		Batch: s.Batch[idx[5]], In: s.Input[idx[6]], Output: s.Output[idx[7]]}
}

// scenario returns the scenario of point p.
func (s *sweepSpec) scenario(p sweepPoint) sim.Scenario {
	sc := s.Base
	if sc.Batch == 0 {
		sc = sim.Default()
	}
	sc.Batch, sc.Input, sc.Output = p.Batch, p.In, p.Output
	sc.TP, sc.PP = p.TP, p.PP
	sc.Weights, sc.Act, sc.KV = p.DType, p.DType, p.DType
	return sc
}

// A sweepResult is one point's outcome: a report, or why it has none.
type sweepResult struct {
	Point  sweepPoint
	Report *sim.Report
	Err    error
	// Row is what a Keep rendered for the point (a line of output); its
	// buffer is reused from point to point in a stream.
	Row []byte
	// Warnings are the report's warnings, kept when a Keep drops it.
	Warnings []error
}

// sweepOptions tune runSweep and streamSweep.
type sweepOptions struct {
	Workers int // 0: GOMAXPROCS
	// Progress, when set, is called now and then from the workers with
	// the points done so far.
	Progress func(done, total int)
	// Keep is called in the worker for each result, in no particular
	// order; it may shrink the result (drop per-op rows) or render it
	// into Row before it is handed on. Nil keeps everything.
	Keep func(*sweepResult)
	// Totals: the reports have no per-op or per-class rows
	// (sim.RunTotals), for output that prints none.
	Totals bool
}

// minChunk is the fewest points a worker takes at a time: enough that
// the shared counter is not contended, few enough to balance the load.
// maxChunk bounds a chunk of whole runs of the innermost lists
// (chunkSize).
const (
	minChunk = 64
	maxChunk = 1024
)

// chunkSize returns the points a worker takes at a time: whole runs of
// the innermost lists (input and output lengths) when they are not too
// long, so that a worker runs every length of a batch and its runner
// keeps what the lengths share from batch to batch (a long prompt's
// chunked prefill: see sim.RunTotals); else minChunk.
func (s *sweepSpec) chunkSize() int {
	inner := len(s.Input) * len(s.Output)
	if inner <= 0 || inner > maxChunk {
		return minChunk
	}
	return inner * ((minChunk + inner - 1) / inner)
}

// windowPerWorker is how many chunks of minChunk points each worker may
// run ahead of the first chunk not yet emitted (two of longer chunks):
// the streaming sweep holds at most workers·2·maxChunk results, whatever
// the number of points.
const windowPerWorker = 4

// maxSweepIndex is the most points a sweep can number: point indices are
// ints computed from a float64 product, exact up to 2⁵³.
const maxSweepIndex = 1 << 53

// runSweep simulates every point of s and returns the results in point
// order: for callers that need them all at once (plots, whose points are
// bounded). A point that cannot run carries its error; runSweep itself
// fails only when ctx is cancelled. Memory grows with the points; use
// streamSweep for sweeps of any size.
func runSweep(ctx context.Context, s *sweepSpec, o sweepOptions) ([]sweepResult, error) {
	var out []sweepResult
	err := streamSweep(ctx, s, o, func(r *sweepResult) error {
		k := *r
		k.Row = append([]byte(nil), r.Row...)
		out = append(out, k)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// A sweepChunk is the results of chunk consecutive points, in a buffer
// that the stream recycles.
type sweepChunk struct {
	lo  int
	res []sweepResult // chunkSize long
	n   int
}

// streamSweep simulates every point of s on a pool of workers and calls
// emit with each result in point order, from the calling goroutine, as
// soon as the results before it are in. The result (its Row, its Report)
// is valid only during the call. Workers run at most a fixed window of
// chunks ahead of the emitted points, so memory does not grow with the
// number of points. A point that cannot run carries its error;
// streamSweep fails when ctx is cancelled or emit fails (and then stops
// the workers).
func streamSweep(ctx context.Context, s *sweepSpec, o sweepOptions, emit func(*sweepResult) error) error {
	size := s.size()
	if size > maxSweepIndex {
		return usagef("sweep: %.4g points is more than the %d a sweep can number", size, int64(maxSweepIndex))
	}
	total := int(size)
	if total == 0 {
		return nil
	}
	chunk := s.chunkSize()
	nchunks := (total + chunk - 1) / chunk
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, nchunks))
	// The window holds windowPerWorker chunks of minChunk points a
	// worker, or two chunks a worker when they are longer.
	window := min(max(workers*windowPerWorker*minChunk/chunk, 2*workers), nchunks)

	// Systems and workloads are built once, before the workers start,
	// and shared read-only: one system per hardware and device count.
	type sysKey struct{ hw, n int }
	type sysVal struct {
		sys *hardware.System
		err error
	}
	systems := map[sysKey]sysVal{}
	for hw, d := range s.HW {
		for _, tp := range s.TP {
			for _, pp := range s.PP {
				k := sysKey{hw, tp * pp}
				if _, ok := systems[k]; ok {
					continue
				}
				sys, err := systemFor(d, k.n)
				if err != nil {
					err = fmt.Errorf("%d devices of %s: %w", k.n, d.Name, err)
				}
				systems[k] = sysVal{sys, err}
			}
		}
	}
	wls := make([]simWorkload, len(s.Models))
	for i, m := range s.Models {
		wls[i] = simWorkload{M: m}
	}

	run := sim.Run
	if o.Totals {
		run = sim.RunTotals
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// tokens bounds the chunks claimed and not yet emitted to window; a
	// worker takes one before it claims a chunk, the emitter gives it back
	// after emitting the chunk. Chunk k, when done, goes to slots[k %
	// window]: at most one chunk of each slot is outstanding.
	tokens := make(chan struct{}, window)
	for range window {
		tokens <- struct{}{}
	}
	slots := make([]chan *sweepChunk, window)
	for i := range slots {
		slots[i] = make(chan *sweepChunk, 1)
	}
	free := make(chan *sweepChunk, window)
	for range window {
		free <- &sweepChunk{res: make([]sweepResult, chunk)}
	}
	var next, done atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tokens:
				}
				k := int(next.Add(1)) - 1
				if k >= nchunks {
					return
				}
				c := <-free // never blocks: a token guarantees a free chunk
				c.lo = k * chunk
				c.n = min(chunk, total-c.lo)
				for j := range c.n {
					r := &c.res[j]
					*r = sweepResult{Point: s.point(c.lo + j), Row: r.Row[:0]}
					sc := s.scenario(r.Point)
					sv := systems[sysKey{r.Point.HW, r.Point.TP * r.Point.PP}]
					err := sv.err
					if err == nil {
						r.Report, err = run(sv.sys, wls[r.Point.Model], sc)
					}
					r.Err = err
					if o.Keep != nil {
						o.Keep(r)
					}
				}
				d := done.Add(int64(c.n))
				if o.Progress != nil {
					o.Progress(int(d), total)
				}
				slots[k%window] <- c
			}
		}()
	}
	defer wg.Wait()
	for k := range nchunks {
		var c *sweepChunk
		select {
		case <-ctx.Done():
			return ctx.Err()
		case c = <-slots[k%window]:
		}
		for j := range c.n {
			if err := emit(&c.res[j]); err != nil {
				cancel()
				return err
			}
			c.res[j] = sweepResult{Row: c.res[j].Row[:0]}
		}
		free <- c
		tokens <- struct{}{}
	}
	return ctx.Err()
}
