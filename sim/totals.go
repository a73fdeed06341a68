package sim

import (
	"fmt"
	"reflect"

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
		n := float64(cnt)
		t := model.Seconds(n * float64(co.Time))
		row := OpRow{
			FLOPs: model.FLOPs(n * float64(co.FLOPs)), Bytes: model.Bytes(n * float64(co.Bytes)),
			Time: t, Low: model.Seconds(low(float64(t), rel)), High: model.Seconds(high(float64(t), rel)),
			Bound: co.Bound, Energy: model.Joules(n * float64(co.Energy())),
		}
		a.addRow(&row)
	}
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
// cache's generation), one system's links, one workload.
type prefixCache struct {
	gen    uint64
	net    netKey
	w      Workload
	n      int // chunks held
	chunks [prefixChunks]Phase
	repeat [prefixChunks]int
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
		if net := c.netKey(); pc.gen != c.pc.gen || pc.w != r.w || pc.net != net {
			*pc = prefixCache{gen: c.pc.gen, net: net, w: r.w}
		}
		for k < pc.n && k < len(chunks) && pc.repeat[k] == chunks[k].Repeat && pc.chunks[k] == r.chunkPhase(chunks[k]) {
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
		ops, ws, err := r.chunks.get(r.w, cp)
		if err != nil {
			return false, fmt.Errorf("sim: %s %s: %w", r.w.Name(), cp.Kind, err)
		}
		st.ws = max(st.ws, ws)
		c.calls = 0
		c.accumulate(&st.acc, ops, chunks[i].Repeat)
		st.checks |= c.calls
		if pc != nil && i < prefixChunks {
			pc.chunks[i], pc.repeat[i], pc.after[i] = cp, chunks[i].Repeat, st
			pc.n = i + 1
		}
	}
	acc := st.acc
	c.accumulate(&acc, extra, 1)
	*ph = PhaseReport{Name: "prefill", Steps: 1}
	acc.into(ph)
	*working = st.ws
	return true, nil
}

// chunkPhase returns the prefill phase of one chunk.
func (r *runner) chunkPhase(ch PrefillChunk) Phase {
	ph := r.phase(Prefill)
	ph.Batch, ph.Seq, ph.Context = ch.Batch, ch.Tokens, ch.Context
	return ph
}
