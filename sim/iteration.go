package sim

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

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
	// Eager launches a decode-only iteration kernel by kernel, as an
	// engine does with a batch larger than those it captured CUDA graphs
	// for (SGLang's cuda_graph_max_bs); a prefill is launched so anyway,
	// unless Piecewise.
	Eager bool
	// Piecewise replays the iteration, prefill or decode, as piecewise
	// CUDA graphs: every op but the sequence mixers in the graphs (launch
	// overheads capped at GraphLaunch), the mixers launched by the host
	// between the pieces (vLLM V1's default: attention is the graphs'
	// splitting op). Eager overrides it.
	Piecewise bool
	// Pad is the rows a CUDA graph adds to reach the batch size it was
	// captured at (vLLM and SGLang pad a batch to the next captured
	// size): the ops other than the sequence mixers and the LM head run
	// at Tokens()+Pad tokens; the mixers see the real requests only (the
	// padding rows' one-token contexts cost nothing of note); the LM head
	// runs on them only if Head is HeadPadded. Pad is ignored in an
	// iteration that is launched eagerly.
	Pad int
	// Head says where the LM head (and the gather of its logits) runs
	// when the rest of the iteration is in a graph; an iteration launched
	// eagerly launches its head so too, whatever Head says.
	Head HeadLaunch
}

// A HeadLaunch says where a graphed iteration's LM head runs. The zero
// value, HeadInGraph, is the head in the graph on the sampled rows.
type HeadLaunch uint8

const (
	// HeadInGraph runs the LM head in the iteration's graph on the
	// sampled rows only.
	HeadInGraph HeadLaunch = iota
	// HeadPadded runs the LM head in the graph on the padding rows (Pad)
	// too: SGLang captures the logits in its graphs.
	HeadPadded
	// HeadEager launches the LM head kernel by kernel after the graph's
	// replay, on the sampled rows: vLLM computes the logits outside its
	// CUDA graphs (compute_logits after the replay, in V0 and V1).
	HeadEager
)

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
// iteration's total tokens; the sequence mixers (every attention op, a
// sliding window's beside a global one, and the state-space scans of
// Mamba and Gated DeltaNet layers) see each request's own tokens and
// context, as Run prices them: a prefill chunk's as a prefill's, a decode
// token's as a decode step's (prefill chunks with equal lengths and
// contexts share one launch; decode tokens share one varlen launch at
// their mean context, which is how paged/flash decoding kernels run them
// and is exact for the memory-bound part, linear in context); the ops
// only one phase has (MLA's decompression of the latent cache in a
// prefill, its absorbed projections in a decode step) see that phase's
// tokens; the LM head sees the sampled rows. Iterations with a prefill
// run eagerly, decode-only ones as CUDA graphs (as Run prices prefill and
// decode), unless the iteration says otherwise (Eager, Piecewise,
// Head, and the padding rows of a captured batch, Pad).
//
// The parts that depend only on a token count are remembered in bounded
// maps (cleared when full), so that an event loop of millions of
// iterations prices each distinct count once. A Pricer is not safe for
// concurrent use.
type Pricer struct {
	r     *runner
	eager *coster
	graph *coster
	// pre and dec are the sequence mixers of a prefill pass and of a
	// decode step: templates (heads, head dims, windows, data types) and
	// their launches per pass.
	pre, dec []mixer
	layer    int // decode mixer launches per pass
	// preOnly and decOnly name the ops only a prefill pass, or only a
	// decode step, has (besides the mixers): none but MLA's.
	preOnly, decOnly []string
	dense            map[priceKey]float64
	head             map[priceKey]float64
	decm             map[decKey]float64
	prem             map[preKey]float64
	share            float64 // the busiest stage's share of a pass
	// groupOps names the ops of a data-parallel attention group's MoE
	// layers that the whole expert-parallel group shares (PriceGroup);
	// groupm remembers their price by busiest and total tokens.
	groupOps []string
	groupm   map[groupKey]float64
}

type priceKey struct {
	n     int
	graph bool
	part  part
}

// A part is a subset of a pass's ops other than its mixers and LM head.
type part uint8

const (
	bothPhases part = iota // the ops a prefill and a decode step share, at every token
	decodeOnly             // the ops only a decode step has, at its tokens
	rankPart               // bothPhases less the expert-parallel group's (PriceGroup)
)

// A mixer is a sequence-mixing op of a pass: an attention or a scan,
// which sees each request's own tokens and context rather than the
// iteration's total. Its kernel is a template; count is its launches per
// pass.
type mixer struct {
	k     model.Kernel
	count int
}

// isMixer reports whether k is a sequence mixer.
func isMixer(k model.Kernel) bool {
	switch k.(type) {
	case model.Attention, model.Scan:
		return true
	}
	return false
}

// mixers returns the sequence mixers of ops.
func mixers(ops []model.Op) []mixer {
	var ms []mixer
	for _, o := range ops {
		if o.Count > 0 && o.Kernel != nil && isMixer(o.Kernel) {
			ms = append(ms, mixer{o.Kernel, o.Count})
		}
	}
	return ms
}

// onlyIn returns the names of the ops of a, other than mixers and the LM
// head, that b lacks.
func onlyIn(a, b []model.Op) []string {
	var out []string
	for _, o := range a {
		if o.Count <= 0 || o.Kernel == nil || isMixer(o.Kernel) || o.Class == model.ClassLogits {
			continue
		}
		if !slices.ContainsFunc(b, func(x model.Op) bool { return x.Name == o.Name }) {
			out = append(out, o.Name)
		}
	}
	return out
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
		return nil, fmt.Errorf("sim: %s is %s: serving needs a decoder", w.Name(), withArticle(shape.Arch.String()))
	}
	// DP is kept only for data-parallel attention (EP a multiple of TP,
	// beyond it): the replicas whose MoE layers run as one expert-parallel
	// group (PriceGroup).
	dp := 1
	if sc.EP > max(sc.TP, 1) {
		dp = max(sc.DP, 1)
	}
	sc.Mode, sc.Batch, sc.Input, sc.Output, sc.DP = Inference, 1, 1, 1, dp
	if err := sc.Validate(shape); err != nil {
		return nil, err
	}
	sc = sc.normalized()
	if need := sc.TP * sc.PP * sc.DP; sys.Devices() < need {
		if sc.DP > 1 {
			return nil, fmt.Errorf("sim: %d data-parallel attention replicas need %d devices (dp %d × tp %d × pp %d); the system has %d", sc.DP, need, sc.DP, sc.TP, sc.PP, sys.Devices())
		}
		return nil, fmt.Errorf("sim: a replica needs %d devices (tp %d × pp %d); the system has %d", need, sc.TP, sc.PP, sys.Devices())
	}
	// The processor as Run takes it: a power limit, the sustained
	// clocks and the prefill attention kernel had been dropped here
	// without a word.
	proc, err := processor(sys, w, sc, shape)
	if err != nil {
		return nil, err
	}
	r := &runner{}
	r.init(sys, w, sc, shape, proc)
	p := &Pricer{r: r,
		dense: map[priceKey]float64{}, head: map[priceKey]float64{}, decm: map[decKey]float64{}, prem: map[preKey]float64{}}
	p.eager, p.graph = p.r.c, p.r.decoder()
	// The ops of a decode step and of a two-token prefill (r's scratch
	// holds one decomposition at a time: the decode step's is copied).
	dops, err := p.r.ops(p.r.phase(Decode), nil)
	if err != nil {
		return nil, err
	}
	dops = slices.Clone(dops)
	ph := p.r.phase(Prefill)
	ph.Seq = 2
	pops, err := p.r.ops(ph, nil)
	if err != nil {
		return nil, err
	}
	p.dec, p.pre = mixers(dops), mixers(pops)
	attention := false
	for _, m := range p.dec {
		p.layer += m.count
		_, ok := m.k.(model.Attention)
		attention = attention || ok
	}
	if !attention {
		// A pure state-space model keeps a constant state per sequence,
		// not a KV cache that grows by the token, which is what the
		// serving engines' memory and scheduling are built on.
		return nil, fmt.Errorf("sim: %s has no attention layer: serving a pure state-space model is not modelled (its state per sequence is not a KV cache of tokens); simulate prices its prefill and decode", w.Name())
	}
	if len(p.pre) == 0 {
		return nil, fmt.Errorf("sim: %s: its prefill has no attention", w.Name())
	}
	p.preOnly, p.decOnly = onlyIn(pops, dops), onlyIn(dops, pops)
	if err := p.findGroupOps(dops); err != nil {
		return nil, err
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
	return p.price(it, bothPhases)
}

// price prices it with the ops of part pt (bothPhases, or rankPart
// leaving out the expert-parallel group's, PriceGroup) at its tokens.
func (p *Pricer) price(it *Iteration, pt part) IterationCost {
	tokens := it.Tokens()
	if tokens == 0 {
		return IterationCost{}
	}
	graph := !it.Eager && (len(it.Prefill) == 0 || it.Piecewise)
	// The mixers: in the graph unless it is piecewise.
	mixGraph := graph && !it.Piecewise
	c := p.eager
	if mixGraph {
		c = p.graph
	}
	pad, head := 0, max(it.Sampled, 0)
	if graph && it.Pad > 0 {
		pad = it.Pad
		if it.Head == HeadPadded {
			head += pad
		}
	}
	t := p.denseTime(tokens+pad, graph, pt) + p.headTime(head, graph && it.Head != HeadEager)
	if n := len(it.Decode); n > 0 && len(p.decOnly) > 0 {
		if len(it.Prefill) == 0 {
			n += pad // the padding rows are decode rows
		}
		t += p.denseTime(n, graph, decodeOnly)
	}
	// Prefill mixers: chunks of equal length and context share one
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
		t += p.prefillAttention(n, ch, c, mixGraph)
	}
	if n := len(it.Decode); n > 0 {
		sum := 0
		for _, x := range it.Decode {
			sum += x
		}
		kv := int(math.Round(float64(sum)/float64(n))) + 1
		t += p.decodeAttention(n, kv, mixGraph)
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

// denseTime prices the ops of part of a pass at tokens tokens: every op
// but the mixers and the LM head (with the pipeline transfers) for
// bothPhases, less those only one phase has; decodeOnly prices a decode
// step's own (a prefill's own are priced with its chunks' mixers, as they
// see a chunk's context: MLA decompresses the cached prefix).
func (p *Pricer) denseTime(tokens int, graph bool, pt part) float64 {
	return interpolate(tokens, func(n int) float64 { return p.denseAt(n, graph, pt) })
}

func (p *Pricer) denseAt(tokens int, graph bool, pt part) float64 {
	k := priceKey{tokens, graph, pt}
	if t, ok := p.dense[k]; ok {
		return t
	}
	ph := p.r.phase(Decode)
	ph.Batch = tokens
	var extra []model.Op
	switch pt {
	case bothPhases, rankPart:
		extra = p.r.ppTransfer(tokens)
	}
	t := p.opsTime(ph, extra, graph, func(o *model.Op) bool {
		if o.Class == model.ClassLogits || isMixer(o.Kernel) {
			return false
		}
		switch pt {
		case bothPhases:
			return !slices.Contains(p.decOnly, o.Name)
		case rankPart:
			return !slices.Contains(p.decOnly, o.Name) && !slices.Contains(p.groupOps, o.Name)
		case decodeOnly:
			return slices.Contains(p.decOnly, o.Name)
		}
		return true
	})
	remember(p.dense, k, t)
	return t
}

// opsTime prices the ops of phase ph (and extra) that keep selects, on
// the CUDA-graph coster or the eager one: what the dense, head and
// expert-parallel group parts of an iteration each sum. A decomposition
// that fails is the pricer's error (Err), and prices 0.
func (p *Pricer) opsTime(ph Phase, extra []model.Op, graph bool, keep func(*model.Op) bool) float64 {
	c := p.eager
	if graph {
		c = p.graph
	}
	ops, err := p.r.ops(ph, extra)
	if err != nil {
		p.fail(err)
		return 0
	}
	var t float64
	for i := range ops {
		o := &ops[i]
		if o.Count > 0 && o.Kernel != nil && keep(o) {
			co, _ := c.price(o.Kernel)
			t += float64(o.Count) * float64(co.Time)
		}
	}
	return t
}

// headTime prices the LM head (and whatever else is of class logits) on
// rows rows.
func (p *Pricer) headTime(rows int, graph bool) float64 {
	if rows == 0 {
		return 0
	}
	k := priceKey{rows, graph, bothPhases}
	if t, ok := p.head[k]; ok {
		return t
	}
	ph := p.r.phase(Decode)
	ph.Batch = rows
	t := p.opsTime(ph, nil, graph, func(o *model.Op) bool { return o.Class == model.ClassLogits })
	remember(p.head, k, t)
	return t
}

// prefillAttention prices n prefill chunks like ch on c: each mixer in
// one launch, and the ops only a prefill has; the context on the grid.
func (p *Pricer) prefillAttention(n int, ch Chunk, c *coster, graph bool) float64 {
	return interpolate(ch.Context, func(ctx int) float64 {
		return p.prefillAttentionAt(n, Chunk{ch.Tokens, ctx}, c, graph)
	})
}

func (p *Pricer) prefillAttentionAt(n int, ch Chunk, c *coster, graph bool) float64 {
	k := preKey{n, ch, graph}
	if t, ok := p.prem[k]; ok {
		return t
	}
	var t float64
	for _, m := range p.pre {
		kern := m.k
		switch x := kern.(type) {
		case model.Attention:
			x.Batch, x.QLen, x.KVLen = n, ch.Tokens, ch.Context+ch.Tokens
			kern = x
		case model.Scan:
			x.Batch, x.Tokens = n, ch.Tokens
			kern = x
		}
		co, _ := c.price(kern)
		t += float64(m.count) * float64(co.Time)
	}
	if len(p.preOnly) > 0 {
		// The prefill's own ops (MLA's decompression of the latent
		// cache, over the chunk's context and its new tokens).
		ph := p.r.phase(Prefill)
		ph.Batch, ph.Seq, ph.Context = n, ch.Tokens, ch.Context
		ops, err := p.r.ops(ph, nil)
		if err != nil {
			p.fail(err)
			return 0
		}
		for _, o := range ops {
			if o.Count > 0 && o.Kernel != nil && slices.Contains(p.preOnly, o.Name) {
				co, _ := c.price(o.Kernel)
				t += float64(o.Count) * float64(co.Time)
			}
		}
	}
	remember(p.prem, k, t)
	return t
}

// decodeAttention prices n decode tokens at a mean KV length kv, kv on
// the grid.
func (p *Pricer) decodeAttention(n, kv int, graph bool) float64 {
	return interpolate(kv, func(x int) float64 { return p.decodeAttentionAt(n, x, graph) })
}

func (p *Pricer) decodeAttentionAt(n, kv int, graph bool) float64 {
	k := decKey{n, kv, graph}
	if t, ok := p.decm[k]; ok {
		return t
	}
	c := p.eager
	if graph {
		c = p.graph
	}
	var t float64
	for _, m := range p.dec {
		kern := m.k
		switch x := kern.(type) {
		case model.Attention:
			x.Batch, x.QLen, x.KVLen = n, 1, kv
			kern = x
		case model.Scan:
			x.Batch, x.Tokens = n, 1
			kern = x
		}
		co, _ := c.price(kern)
		t += float64(m.count) * float64(co.Time)
	}
	remember(p.decm, k, t)
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

// withArticle puts "a" or "an" before a kind: "an encoder", "a cnn"
// ("bert-large is a encoder" had been said).
func withArticle(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}
