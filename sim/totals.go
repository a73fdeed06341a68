package sim

import (
	"fmt"
	"reflect"
	"sync/atomic"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// Totals without rows. A sweep prints a scenario's totals (TTFT, TPOT,
// the bounds, the energy, the memory) and none of its per-op or
// per-class rows; a long prompt's chunked prefill alone has a row per op
// of each of its chunks (240 for 128k tokens in 8192-token chunks).
// RunTotals prices the same kernels and sums them in the same order,
// into the same totals, bit for bit, without building the rows; and it
// sums a chunked prefill from the running totals of the chunks it shares
// with the last one the runner priced (a sweep over prompt lengths adds
// one chunk at a time).

// RunTotals is Run without the phases' per-op and per-class rows of an
// inference scenario: PhaseReport.Ops and Classes are nil, and every
// other field is what Run gives, bit for bit (TestRunTotals). Eager
// execution (Exec ExecEager), which times a pass from its rows, and
// training have their rows as with Run.
func RunTotals(sys *hardware.System, w Workload, sc Scenario) (*Report, error) {
	return run(sys, w, sc, true)
}

// A phaseAcc sums a phase's rows into its totals as PhaseReport.total
// does, in the same order and the same arithmetic, without keeping them.
type phaseAcc struct {
	time, low, high model.Seconds
	flops           model.FLOPs
	bytes           model.Bytes
	energy          model.Joules
	byBound         [4]model.Seconds
}

// addRow adds one row (as total does).
func (a *phaseAcc) addRow(r *OpRow) {
	a.time += r.Time
	a.low += r.Low
	a.high += r.High
	a.flops += r.FLOPs
	a.bytes += r.Bytes
	a.energy += r.Energy
	if int(r.Bound) < len(a.byBound) {
		a.byBound[r.Bound] += r.Time
	}
}

// into sets ph's totals and bound from a (its rows and classes none).
func (a *phaseAcc) into(ph *PhaseReport) {
	ph.Time, ph.Low, ph.High, ph.FLOPs, ph.Bytes, ph.Energy = a.time, a.low, a.high, a.flops, a.bytes, a.energy
	ph.Bound = argmaxBound(a.byBound)
	ph.Ops, ph.Classes = nil, nil
}

// accumulate prices ops, each op's Count multiplied by repeat, into a:
// the rows pass would build, summed as total sums them.
func (c *coster) accumulate(a *phaseAcc, ops []model.Op, repeat int) {
	for i := range ops {
		o := &ops[i]
		cnt := o.Count * repeat
		if cnt <= 0 || o.Kernel == nil {
			continue
		}
		co, rel := c.cost(o.Kernel)
		a.addPriced(float64(cnt), co, rel)
	}
}

// addPriced adds the row of n launches of a kernel priced co with
// relative error rel (as pass builds it).
func (a *phaseAcc) addPriced(n float64, co model.Cost, rel float64) {
	a.add(n, &opPrice{time: co.Time, flops: co.FLOPs, bytes: co.Bytes, energy: co.Energy(), rel: rel, bound: co.Bound})
}

// add adds the row of n launches of the kernel priced o.
func (a *phaseAcc) add(n float64, o *opPrice) {
	t := model.Seconds(n * float64(o.time))
	row := OpRow{
		FLOPs: model.FLOPs(n * float64(o.flops)), Bytes: model.Bytes(n * float64(o.bytes)),
		Time: t, Low: model.Seconds(low(float64(t), o.rel)), High: model.Seconds(high(float64(t), o.rel)),
		Bound: o.bound, Energy: model.Joules(n * float64(o.energy)),
	}
	a.addRow(&row)
}

// chunkPriceSlots is how many priced chunks are kept (a power of two):
// more than the distinct last chunks of a sweep over a thousand prompt
// lengths.
const chunkPriceSlots = 4096

// sharedChunks keeps the prices of chunked prefills' chunks, op by op,
// for every runner: a chunk recurs at every batch of a sweep over lengths
// (a long prompt's chunks are one sequence each, run Repeat times), and
// its ops, priced once by whichever runner met it first, are only
// multiplied again. An entry, once published, is never changed (a new
// chunk replaces it whole), so runners read them without a lock.
var sharedChunks [chunkPriceSlots]atomic.Pointer[pricedChunk]

// A pricedChunk is one chunk's ops priced on one processor (procIDs'
// number for it) and system (its links): for each op with a kernel, its
// launches per pass, price and relative error; and the chunk's working
// set and the data types its pricing checked (by bit).
type pricedChunk struct {
	proc    uint64
	net     netKey
	w       Workload
	ph      Phase
	partial bool // priced without its LM head (PrefillChunk.Partial)
	ws      model.Bytes
	checks  uint32
	ops     []opPrice
}

// chunkSlot returns the slot of chunk ph (partial or not) priced on
// processor proc.
func chunkSlot(proc uint64, ph *Phase, partial bool) *atomic.Pointer[pricedChunk] {
	p := uint64(0)
	if partial {
		p = 1
	}
	h := mix(uint64(ph.Batch), uint64(ph.Seq), uint64(ph.Context)<<1|p, uint64(ph.TP)|uint64(ph.EP)<<32, proc)
	return &sharedChunks[h&(chunkPriceSlots-1)]
}

// holds reports whether e holds the prices of chunk ph (partial or not)
// of w on processor proc over links net.
func (e *pricedChunk) holds(proc uint64, net *netKey, w Workload, ph *Phase, partial bool) bool {
	return e != nil && e.proc == proc && e.net == *net && e.w == w && e.ph == *ph && e.partial == partial
}

// An opPrice is one launch of an op's kernel: what addPriced reads of
// its price.
type opPrice struct {
	time   model.Seconds
	flops  model.FLOPs
	bytes  model.Bytes
	energy model.Joules
	rel    float64
	count  int32
	bound  model.Bound
}

// prefixChunks is how many chunks of a chunked prefill a prefixCache
// keeps the running totals of (a longer prefill sums its further chunks
// afresh at every run).
const prefixChunks = 64

// A prefixCache keeps, for the last chunked prefill a runner priced
// without rows, the running totals after each of its chunks: the next
// one, when its first chunks are the same (a sweep's next prompt length,
// or the same prompt at the next point), starts from the totals after
// them. The totals are those of one processor's prices (the price
// cache's generation), one system's links, one workload and one prefill
// phase but for its chunks' shapes (tmpl).
type prefixCache struct {
	gen    uint64
	net    netKey
	w      Workload
	tmpl   Phase
	n      int // chunks held
	chunks [prefixChunks]PrefillChunk
	after  [prefixChunks]prefixState
}

// A prefixState is a chunked prefill's running totals after a chunk: its
// sums, the largest working set so far and the data types checked (by
// bit, replayed as passHit does).
type prefixState struct {
	acc    phaseAcc
	ws     model.Bytes
	checks uint32
}

// pureWorkload reports whether w's decompositions may be kept between
// runs and compared by w's value.
func pureWorkload(w Workload) bool {
	_, ok := w.(PureWorkload)
	return ok && reflect.TypeOf(w).Comparable()
}

// prefillTotals prices a decoder's chunked prefill without rows into ph
// and its largest chunk's working set into working, with extra (pipeline
// transfers) after the chunks, the sums in the order prefillOps and pass
// give them. It reports false, having done nothing, when the run keeps
// its rows or the prefill is one pass (which the pass cache serves).
func (r *runner) prefillTotals(ph *PhaseReport, working *model.Bytes, extra []model.Op) (bool, error) {
	sc := r.sc
	if !r.diag.noRows || r.shape.Arch != Decoder {
		return false, nil
	}
	var buf [16]PrefillChunk
	chunks := appendPrefillChunks(buf[:0], sc.Batch, sc.Input, sc.MaxNumTokens)
	if len(chunks) == 1 && chunks[0].Repeat == 1 {
		return false, nil
	}
	c := r.c
	pc := r.prefix
	if pc != nil && (c.pc == nil || !pureWorkload(r.w)) {
		pc = nil
	}
	k := 0
	if pc != nil {
		tmpl := r.phase(Prefill)
		if net := c.netKey(); pc.gen != c.pc.gen || pc.w != r.w || pc.net != net || pc.tmpl != tmpl {
			pc.gen, pc.net, pc.w, pc.tmpl, pc.n = c.pc.gen, net, r.w, tmpl, 0
		}
		for k < pc.n && k < len(chunks) && pc.chunks[k] == chunks[k] {
			k++
		}
		pc.n = k
	}
	var st prefixState
	if k > 0 {
		st = pc.after[k-1]
		for d := model.DType(0); d < 32; d++ {
			if st.checks&(1<<d) != 0 {
				c.check(d)
			}
		}
	}
	for i := k; i < len(chunks); i++ {
		cp := r.chunkPhase(chunks[i])
		if err := r.addChunk(&st, cp, chunks[i].Repeat, chunks[i].Partial); err != nil {
			return false, err
		}
		if pc != nil && i < prefixChunks {
			pc.chunks[i], pc.after[i] = chunks[i], st
			pc.n = i + 1
		}
	}
	acc := st.acc
	c.accumulate(&acc, extra, 1)
	*ph = PhaseReport{Name: r.prefillName(), Steps: 1}
	acc.into(ph)
	*working = st.ws
	return true, nil
}

// addChunk adds repeat runs of chunk ph to st, without its LM head when
// partial (PrefillChunk.Partial): from the chunk's prices when they are
// kept (sharedChunks), else priced (and kept).
func (r *runner) addChunk(st *prefixState, ph Phase, repeat int, partial bool) error {
	c := r.c
	var slot *atomic.Pointer[pricedChunk]
	var net netKey
	if c.pc != nil && pureWorkload(r.w) {
		net = c.netKey()
		slot = chunkSlot(c.pc.proc, &ph, partial)
		if e := slot.Load(); e.holds(c.pc.proc, &net, r.w, &ph, partial) {
			for d := model.DType(0); d < 32; d++ {
				if e.checks&(1<<d) != 0 {
					c.check(d)
				}
			}
			for j := range e.ops {
				o := &e.ops[j]
				if cnt := int(o.count) * repeat; cnt > 0 {
					st.acc.add(float64(cnt), o)
				}
			}
			st.ws = max(st.ws, e.ws)
			st.checks |= e.checks
			return nil
		}
	}
	ops, ws, err := r.chunks.get(r.w, ph)
	if err != nil {
		return fmt.Errorf("sim: %s %s: %w", r.w.Name(), ph.Kind, err)
	}
	st.ws = max(st.ws, ws)
	var e *pricedChunk
	if slot != nil {
		e = &pricedChunk{proc: c.pc.proc, net: net, w: r.w, ph: ph, partial: partial, ws: ws, ops: make([]opPrice, 0, len(ops))}
	}
	c.calls = 0
	for i := range ops {
		o := &ops[i]
		cnt := o.Count * repeat
		if o.Count <= 0 || cnt <= 0 || o.Kernel == nil {
			continue // not priced, as pass does not price it
		}
		if partial && o.Class == model.ClassLogits {
			continue // nothing sampled
		}
		co, rel := c.cost(o.Kernel)
		op := opPrice{time: co.Time, flops: co.FLOPs, bytes: co.Bytes, energy: co.Energy(), rel: rel, bound: co.Bound, count: int32(o.Count)}
		st.acc.add(float64(cnt), &op)
		if e != nil && int(op.count) != o.Count {
			e = nil // a count past 32 bits: not kept
		}
		if e != nil {
			e.ops = append(e.ops, op)
		}
	}
	st.checks |= c.calls
	if e != nil {
		e.checks = c.calls
		slot.Store(e)
	}
	return nil
}

// chunkPhase returns the prefill phase of one chunk: r.phase(Prefill)
// at the chunk's shape.
func (r *runner) chunkPhase(ch PrefillChunk) Phase {
	ph := r.phase(Prefill)
	ph.Batch, ph.Seq, ph.Context = ch.Batch, ch.Tokens, ch.Context
	return ph
}
