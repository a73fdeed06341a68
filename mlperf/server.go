package mlperf

import (
	"math"
	"math/rand/v2"

	"github.com/perfsim/perfsim/model"
)

// The Server scenario of a fixed-size benchmark, as a batching server:
// LoadGen sends single-sample queries with exponential gaps (a Poisson
// process) to the system's queue; each device, when idle, takes every
// queued sample up to its batch limit and runs them as one batch, and
// when the queue is empty waits for the next query and starts it alone
// (a greedy batcher: a harness that waits to fill batches trades latency
// for throughput differently). A query's latency is from its arrival to
// the end of its batch.
//
// Near capacity a greedy batcher reaches its steady batch slowly, so a
// short run flatters it: each trial runs at least minBatches batches'
// worth of queries per device, and the first tenth of the queries (the
// warm-up) is left out of the percentile. A backlog that passes
// maxBacklog queries is an overload, and fails the bound.
//
// A batch of n between two powers of two is priced by linear
// interpolation between them, which sim prices exactly: a device's batch
// time is close to linear in the batch between neighbouring powers.

const (
	// serverTrials is the bisection's number of steps over the rate:
	// 2^-20 of the Offline throughput.
	serverTrials = 20
	// minBatches is the full batches per device a trial runs at least.
	minBatches = 20
	// maxBacklog bounds the queued queries (and the memory) of a trial.
	maxBacklog = 1 << 20
	// maxQueries bounds a trial's length.
	maxQueries = 1 << 24
)

// server returns the highest Poisson rate (samples/s over the system)
// whose 99th-percentile latency meets the benchmark's bound, with that
// latency; 0 when even a lone query misses it.
func (f *fixed) server(devices int, best point, o Options) (float64, model.Seconds, error) {
	bound := f.b.Latency
	if best.single > bound {
		return 0, 0, nil
	}
	q := newQueue(f, devices, best.batch, trialQueries(o, best.batch, devices), o.Seed)
	lo, hi := 0.0, best.rate*float64(devices)
	var loP99 model.Seconds
	for range serverTrials {
		mid := (lo + hi) / 2
		p99, err := q.run(mid)
		if err != nil {
			return 0, 0, err
		}
		if p99 <= bound {
			lo, loP99 = mid, p99
		} else {
			hi = mid
		}
	}
	return lo, loP99, nil
}

// trialQueries is the queries a Server trial runs: o.Queries (20,000
// when 0), at least minBatches full batches of batch per device, at most
// maxQueries.
func trialQueries(o Options, batch, devices int) int {
	n := o.Queries
	if n <= 0 {
		n = 20000
	}
	return min(max(n, minBatches*batch*devices), maxQueries)
}

// queue simulates the batching server at one rate.
type queue struct {
	f              *fixed
	devices, limit int
	n              int    // queries per trial
	seed           uint64 // the same arrivals, scaled, at every rate
	free           []float64
	waiting        []float64 // arrival times of queued queries (a FIFO)
	hist           histogram
	mean           float64 // mean latency of the counted queries
}

func newQueue(f *fixed, devices, limit, n int, seed uint64) *queue {
	return &queue{f: f, devices: devices, limit: limit, n: n, seed: seed, free: make([]float64, devices)}
}

// run simulates q.n queries at rate (samples/s) and returns the 99th
// percentile of their latency after the warm-up; +Inf on an overload.
func (q *queue) run(rate float64) (model.Seconds, error) {
	rng := rand.New(rand.NewPCG(q.seed, 0x6d6c70657266))
	clear(q.free)
	q.waiting = q.waiting[:0]
	q.hist.reset()
	q.mean = 0
	warm := q.n / 10
	var t float64 // the latest arrival generated
	issued, done, counted := 0, 0, 0
	next := func() {
		t += rng.ExpFloat64() / rate
		q.waiting = append(q.waiting, t)
		issued++
	}
	head := 0 // q.waiting[head:] is the queue
	for done < q.n {
		d := 0
		for j := range q.free {
			if q.free[j] < q.free[d] {
				d = j
			}
		}
		if head == len(q.waiting) {
			next()
		}
		start := math.Max(q.free[d], q.waiting[head])
		for issued < q.n {
			if t > start {
				break
			}
			next()
		}
		// q.waiting may hold one arrival after start (the lookahead).
		k := 0
		for head+k < len(q.waiting) && k < q.limit && q.waiting[head+k] <= start {
			k++
		}
		bt, err := q.batchTime(k)
		if err != nil {
			return 0, err
		}
		end := start + bt
		for j := head; j < head+k; j++ {
			if done >= warm {
				l := end - q.waiting[j]
				q.hist.add(l)
				counted++
				q.mean += (l - q.mean) / float64(counted)
			}
			done++
		}
		head += k
		q.free[d] = end
		if len(q.waiting)-head > maxBacklog {
			return model.Seconds(math.Inf(1)), nil
		}
		if head > 4096 && head*2 > len(q.waiting) { // drop the served
			q.waiting = append(q.waiting[:0], q.waiting[head:]...)
			head = 0
		}
	}
	return model.Seconds(q.hist.quantile(0.99)), nil
}

// batchTime prices a batch of k: exactly at a power of two, linearly
// between the powers of two around it otherwise.
func (q *queue) batchTime(k int) (float64, error) {
	lo := 1
	for lo*2 <= k {
		lo *= 2
	}
	tl, err := q.f.latency(lo)
	if err != nil || lo == k {
		return float64(tl), err
	}
	th, err := q.f.latency(lo * 2)
	if err != nil {
		return 0, err
	}
	return float64(tl) + float64(k-lo)/float64(lo)*float64(th-tl), nil
}

// A histogram counts latencies in logarithmic bins 0.1% wide from 1 ns
// to about 10^5 s, so that a percentile of any number of queries takes
// bounded memory and is exact to 0.1%.
type histogram struct {
	bins  []uint32
	total int
}

const (
	histMin   = 1e-9
	histRatio = 1.001
	histBins  = 32000 // ln(1e14)/ln(1.001)
)

func (h *histogram) reset() {
	if h.bins == nil {
		h.bins = make([]uint32, histBins)
	}
	clear(h.bins)
	h.total = 0
}

func (h *histogram) add(x float64) {
	i := 0
	if x > histMin {
		i = min(int(math.Log(x/histMin)/math.Log(histRatio)), histBins-1)
	}
	h.bins[i]++
	h.total++
}

// quantile returns the upper edge of the bin holding the p-quantile.
func (h *histogram) quantile(p float64) float64 {
	need := int(math.Ceil(p * float64(h.total)))
	c := 0
	for i, b := range h.bins {
		c += int(b)
		if c >= need && b > 0 {
			return histMin * math.Pow(histRatio, float64(i+1))
		}
	}
	return math.Inf(1)
}
