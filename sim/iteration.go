package sim

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// A Chunk is one request's share of a prefill in an engine iteration:
// Tokens new prompt tokens after Context tokens already in its KV cache
// (earlier chunks of the same prompt, or a cached prefix).
type Chunk struct{ Tokens, Context int }

// An Iteration is what one continuous-batching engine iteration holds on
// one replica: prefill chunks and decode tokens, each with its own
// context. Sampled is the sequences that produce a token this iteration
// (every decode token and every chunk that ends its prompt); the LM head
// runs on those rows only.
type Iteration struct {
	Prefill []Chunk
	// Decode holds the context of each decode token: the tokens in its
	// sequence's KV cache before it.
	Decode  []int
	Sampled int
}

// Tokens returns the tokens the iteration pushes through the model.
func (it *Iteration) Tokens() int {
	n := len(it.Decode)
	for _, c := range it.Prefill {
		n += c.Tokens
	}
	return n
}

// An IterationCost is the time of one iteration. Time is one pass through
// every pipeline stage (the latency a request sees); Stage is the busiest
// stage's share, the interval at which a pipeline with micro-batches in
// flight can start the next (Time when PP is 1).
type IterationCost struct {
	Time, Stage model.Seconds
}

// A Pricer prices the iterations of a serving engine on one replica (TP ×
// PP devices) of a workload. It is the only place where serving meets
// the cost model: the GEMMs, norms, activations and collectives see the
// iteration's total tokens; attention sees each request's own context
// (prefill chunks with equal lengths and contexts share one launch;
// decode tokens share one varlen launch at their mean context, which is
// how paged/flash decoding kernels run them and is exact for the
// memory-bound part, linear in context); the LM head sees the sampled
// rows. Iterations with a prefill run eagerly, decode-only ones as CUDA
// graphs (as Run prices prefill and decode).
//
// The parts that depend only on a token count are remembered in bounded
// maps (cleared when full), so that an event loop of millions of
// iterations prices each distinct count once. A Pricer is not safe for
// concurrent use.
type Pricer struct {
	r     *runner
	eager *coster
	graph *coster
	attn  model.Attention // template: heads, head dim, data types
	layer int             // attention launches per pass (layers)
	dense map[priceKey]float64
	head  map[priceKey]float64
	dec   map[decKey]float64
	pre   map[preKey]float64
	share float64 // the busiest stage's share of a pass
}

type priceKey struct {
	n     int
	graph bool
}

type preKey struct {
	n     int
	c     Chunk
	graph bool
}

type decKey struct {
	n, kv int
	graph bool
}

// memoLimit bounds each of a Pricer's maps.
const memoLimit = 1 << 15

// NewPricer returns a Pricer of workload w on sys under sc (its data
// types, TP and PP; batch and lengths are ignored). Errors: an invalid
// scenario, too few devices, a workload without decode, or a data type
// the device cannot compute in.
func NewPricer(sys *hardware.System, w Workload, sc Scenario) (*Pricer, error) {
	if sys == nil || sys.Device == nil || w == nil {
		return nil, errors.New("sim: no system or workload")
	}
	shape := w.Shape()
	if shape.Arch != Decoder {
		return nil, fmt.Errorf("sim: %s is a %s: serving needs a decoder", w.Name(), shape.Arch)
	}
	sc.Mode, sc.Batch, sc.Input, sc.Output, sc.DP = Inference, 1, 1, 1, 1
	if err := sc.Validate(shape); err != nil {
		return nil, err
	}
	sc = sc.normalized()
	if need := sc.TP * sc.PP; sys.Devices() < need {
		return nil, fmt.Errorf("sim: a replica needs %d devices (tp %d × pp %d); the system has %d", need, sc.TP, sc.PP, sys.Devices())
	}
	proc := sys.Device.Processor()
	if err := proc.Validate(); err != nil {
		return nil, err
	}
	p := &Pricer{r: newRunner(sys, w, sc, shape),
		dense: map[priceKey]float64{}, head: map[priceKey]float64{}, dec: map[decKey]float64{}, pre: map[preKey]float64{}}
	p.eager, p.graph = p.r.c, p.r.decoder()
	ops, err := p.r.ops(p.r.phase(Decode), nil)
	if err != nil {
		return nil, err
	}
	for _, o := range ops {
		if a, ok := o.Kernel.(model.Attention); ok {
			p.attn, p.layer = a, o.Count
		}
	}
	if p.layer == 0 {
		// A pure state-space model keeps a constant state per sequence,
		// not a KV cache that grows by the token, which is what the
		// serving engines' memory and scheduling are built on.
		return nil, fmt.Errorf("sim: %s has no attention layer: serving a pure state-space model is not modelled (its state per sequence is not a KV cache of tokens); simulate prices its prefill and decode", w.Name())
	}
	p.share = 1
	if sc.PP > 1 {
		p.share = p.r.stageShare()
	}
	// Price something now so that a data type the device cannot compute
	// in is an error here, not in the event loop.
	p.Price(&Iteration{Decode: []int{1}, Sampled: 1})
	if err := p.r.c.err; err != nil {
		return nil, err
	}
	return p, nil
}

// Warnings returns what pricing noticed (data-type fallbacks).
func (p *Pricer) Warnings() []error { return p.r.c.warnings }

// Scenario returns the pricer's normalised scenario.
func (p *Pricer) Scenario() Scenario { return p.r.sc }

// Price returns the time of one iteration. An empty iteration costs
// nothing.
func (p *Pricer) Price(it *Iteration) IterationCost {
	tokens := it.Tokens()
	if tokens == 0 {
		return IterationCost{}
	}
	graph := len(it.Prefill) == 0
	c := p.eager
	if graph {
		c = p.graph
	}
	t := p.denseTime(tokens, graph) + p.headTime(max(it.Sampled, 0), graph)
	// Prefill attention: chunks of equal length and context share one
	// launch (a static batch is one launch, as Run prices it).
	for i, ch := range it.Prefill {
		if ch.Tokens <= 0 || seen(it.Prefill[:i], ch) {
			continue
		}
		n := 0
		for _, o := range it.Prefill[i:] {
			if o == ch {
				n++
			}
		}
		t += p.prefillAttention(n, ch, c, graph)
	}
	if n := len(it.Decode); n > 0 {
		sum := 0
		for _, x := range it.Decode {
			sum += x
		}
		kv := int(math.Round(float64(sum)/float64(n))) + 1
		t += p.decodeAttention(n, kv, graph)
	}
	return IterationCost{Time: model.Seconds(t), Stage: model.Seconds(t * p.share)}
}

func seen(cs []Chunk, c Chunk) bool {
	for _, o := range cs {
		if o == c {
			return true
		}
	}
	return false
}

// The memos hold token counts and contexts on a grid: every integer up
// to 512, then steps of 2^(⌊log2 x⌋−9), under 0.2% of x apart; a value
// between two grid points is interpolated linearly between their prices.
// TestPricer_grid bounds the error this makes against exact pricing.
const gridExact = 512

// grid returns the grid points around x: lo ≤ x ≤ hi, equal when x is on
// the grid.
func grid(x int) (lo, hi int) {
	if x <= gridExact {
		return x, x
	}
	step := 1 << (bits.Len(uint(x)) - 1 - 9)
	lo = x / step * step
	if lo == x {
		return x, x
	}
	return lo, lo + step
}

// interpolate returns f(x) from f at x's grid points.
func interpolate(x int, f func(int) float64) float64 {
	lo, hi := grid(x)
	a := f(lo)
	if lo == hi {
		return a
	}
	b := f(hi)
	return a + (b-a)*float64(x-lo)/float64(hi-lo)
}

// denseTime prices every op of a pass at tokens tokens except the
// attention core and the LM head (and the pipeline transfers).
func (p *Pricer) denseTime(tokens int, graph bool) float64 {
	return interpolate(tokens, func(n int) float64 { return p.denseAt(n, graph) })
}

func (p *Pricer) denseAt(tokens int, graph bool) float64 {
	k := priceKey{tokens, graph}
	if t, ok := p.dense[k]; ok {
		return t
	}
	c := p.eager
	if graph {
		c = p.graph
	}
	ph := p.r.phase(Decode)
	ph.Batch = tokens
	ops, err := p.r.ops(ph, p.r.ppTransfer(tokens))
	if err != nil {
		p.fail(err)
		return 0
	}
	var t float64
	for _, o := range ops {
		if o.Count <= 0 || o.Kernel == nil || o.Class == model.ClassLogits {
			continue
		}
		if _, ok := o.Kernel.(model.Attention); ok {
			continue
		}
		co, _ := c.price(o.Kernel)
		t += float64(o.Count) * float64(co.Time)
	}
	remember(p.dense, k, t)
	return t
}

// headTime prices the LM head (and whatever else is of class logits) on
// rows rows.
func (p *Pricer) headTime(rows int, graph bool) float64 {
	if rows == 0 {
		return 0
	}
	k := priceKey{rows, graph}
	if t, ok := p.head[k]; ok {
		return t
	}
	c := p.eager
	if graph {
		c = p.graph
	}
	ph := p.r.phase(Decode)
	ph.Batch = rows
	ops, err := p.r.ops(ph, nil)
	if err != nil {
		p.fail(err)
		return 0
	}
	var t float64
	for _, o := range ops {
		if o.Count > 0 && o.Kernel != nil && o.Class == model.ClassLogits {
			co, _ := c.price(o.Kernel)
			t += float64(o.Count) * float64(co.Time)
		}
	}
	remember(p.head, k, t)
	return t
}

// prefillAttention prices n prefill chunks like ch in one launch on c,
// the context on the grid.
func (p *Pricer) prefillAttention(n int, ch Chunk, c *coster, graph bool) float64 {
	return interpolate(ch.Context, func(ctx int) float64 {
		return p.prefillAttentionAt(n, Chunk{ch.Tokens, ctx}, c, graph)
	})
}

func (p *Pricer) prefillAttentionAt(n int, ch Chunk, c *coster, graph bool) float64 {
	k := preKey{n, ch, graph}
	if t, ok := p.pre[k]; ok {
		return t
	}
	a := p.attn
	a.Batch, a.QLen, a.KVLen = n, ch.Tokens, ch.Context+ch.Tokens
	co, _ := c.price(a)
	t := float64(p.layer) * float64(co.Time)
	remember(p.pre, k, t)
	return t
}

// decodeAttention prices n decode tokens at a mean KV length kv, kv on
// the grid.
func (p *Pricer) decodeAttention(n, kv int, graph bool) float64 {
	return interpolate(kv, func(x int) float64 { return p.decodeAttentionAt(n, x, graph) })
}

func (p *Pricer) decodeAttentionAt(n, kv int, graph bool) float64 {
	k := decKey{n, kv, graph}
	if t, ok := p.dec[k]; ok {
		return t
	}
	c := p.eager
	if graph {
		c = p.graph
	}
	a := p.attn
	a.Batch, a.QLen, a.KVLen = n, 1, kv
	co, _ := c.price(a)
	t := float64(p.layer) * float64(co.Time)
	remember(p.dec, k, t)
	return t
}

func remember[K comparable](m map[K]float64, k K, t float64) {
	if len(m) >= memoLimit {
		clear(m)
	}
	m[k] = t
}

func (p *Pricer) fail(err error) {
	if p.r.c.err == nil {
		p.r.c.err = fmt.Errorf("sim: %s: %w", p.r.w.Name(), err)
	}
}

// Shape returns the model's shape as the pricer sees it.
func (p *Pricer) Shape() Shape { return p.r.shape }

// Err returns the first error pricing met (a decomposition that failed),
// nil when none did.
func (p *Pricer) Err() error { return p.r.c.err }

// Footprint returns the memory of one device of the replica, as Footprint
// does for a scenario, with the working set of a prefill of tokens
// tokens: what a serving engine sizes its KV cache against. Its Weights,
// KVPerToken, Activations and Reserve are what serving uses (its KVCache
// is that of one sequence of tokens+1 tokens).
func (p *Pricer) Footprint(tokens int) (Memory, error) {
	sc := p.r.sc
	sc.Batch, sc.Input, sc.Output = 1, max(tokens, 1), 1
	return Footprint(p.r.sys, p.r.w, sc)
}
