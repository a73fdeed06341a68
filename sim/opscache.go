package sim

import (
	"reflect"

	"github.com/perfsim/perfsim/model"
)

// A PureWorkload is a Workload whose Ops is a function of the phase
// alone, for as long as the workload is in use: the same phase gives the
// same ops (workloads.Model promises it: a model never changes once
// built). Run may then keep a decomposition from one run to the next (a
// serving loop or a sweep asks for the same phases again and again)
// rather than ask for it again. The marker method does nothing.
type PureWorkload interface {
	Workload
	PureOps()
}

// An OpsAppender is a Workload that can append a phase's ops to a slice
// it is given (Ops(ph) appended to dst): a runner keeps decompositions in
// buffers of its own, and so gets them without a slice made and copied
// for each.
type OpsAppender interface {
	AppendOps(dst []model.Op, ph Phase) ([]model.Op, error)
}

// opsSlots is how many decompositions a runner keeps: more than one run
// asks for (prefill and two decode contexts; forward and backward), so
// that a slice returned by decompose stays valid while the run uses it.
const opsSlots = 6

// An opsCache keeps the last decompositions of pure workloads.
type opsCache struct {
	next    int
	ver     uint64 // the fills so far
	entries [opsSlots]opsEntry
}

type opsEntry struct {
	w   Workload // nil: empty; held, so that its address is not reused
	ph  Phase
	ops []model.Op
	ver uint64 // the fill that put ops here: with the slot, their identity
	// ws is workingSet(ops) once wsSet (workingSetOf).
	ws    model.Bytes
	wsSet bool
}

// An opsID identifies a decomposition the opsCache holds, for as long as
// the runner lives: its slot and the fill that put it there. The zero
// opsID is none.
type opsID struct {
	slot int
	ver  uint64
}

// idOf returns the identity of ops when they are a decomposition oc
// holds (the slice decompose returned), else the zero opsID.
func (oc *opsCache) idOf(ops []model.Op) opsID {
	if oc == nil || len(ops) == 0 {
		return opsID{}
	}
	for i := range oc.entries {
		if e := &oc.entries[i]; e.ver != 0 && len(e.ops) == len(ops) && &e.ops[0] == &ops[0] {
			return opsID{i, e.ver}
		}
	}
	return opsID{}
}

// keeps reports whether the decomposition id stays valid over the next
// call of decompose: oc holds it, in a slot other than the one a new
// decomposition takes.
func (oc *opsCache) keeps(id opsID) bool {
	return oc != nil && id != (opsID{}) && id.slot != oc.next && oc.entries[id.slot].ver == id.ver
}

// decompose returns w's ops for ph, from oc when it has them and w is a
// PureWorkload of a comparable type (oc may be nil). The result must not
// be modified; it stays valid for opsSlots−1 further calls.
func (oc *opsCache) decompose(w Workload, ph Phase) ([]model.Op, error) {
	if oc == nil {
		return opsOf(w, ph)
	}
	if _, ok := w.(PureWorkload); !ok || !reflect.TypeOf(w).Comparable() {
		return opsOf(w, ph)
	}
	for i := range oc.entries {
		if e := &oc.entries[i]; e.w == w && e.ph == ph {
			return e.ops, nil
		}
	}
	e := &oc.entries[oc.next]
	ops, err := decomposeInto(e.ops[:0], w, ph)
	e.w, e.ph, e.ops, e.ver, e.wsSet = nil, Phase{}, ops[:0], 0, false // empty until it holds ops
	if err != nil {
		return nil, err
	}
	oc.next = (oc.next + 1) % opsSlots
	oc.ver++
	e.w, e.ph, e.ops, e.ver = w, ph, ops, oc.ver
	return e.ops, nil
}

// workingSetOf returns workingSet(ops), kept with the decomposition when
// ops are one oc holds: a recurring prefill's is not summed again.
func (oc *opsCache) workingSetOf(ops []model.Op) model.Bytes {
	id := oc.idOf(ops)
	if id == (opsID{}) {
		return workingSet(ops)
	}
	e := &oc.entries[id.slot]
	if !e.wsSet {
		e.ws, e.wsSet = workingSet(ops), true
	}
	return e.ws
}

// decomposeInto returns w's ops for ph in buf (its contents overwritten,
// its room reused).
func decomposeInto(buf []model.Op, w Workload, ph Phase) ([]model.Op, error) {
	var ops []model.Op
	var err error
	if a, ok := w.(OpsAppender); ok {
		ops, err = a.AppendOps(buf, ph)
	} else {
		var fresh []model.Op
		if fresh, err = w.Ops(ph); err != nil {
			return buf, err
		}
		ops = append(buf, fresh...)
	}
	if err == nil && ph.GEMMAllReduce {
		fuseGEMMAllReduce(ops)
	}
	return ops, err
}

// opsOf returns w's ops for ph without a cache: a copy of them, with the
// fused GEMM and all-reduce paired, when ph asks for it.
func opsOf(w Workload, ph Phase) ([]model.Op, error) {
	ops, err := w.Ops(ph)
	if err != nil || !ph.GEMMAllReduce {
		return ops, err
	}
	ops = append([]model.Op(nil), ops...)
	fuseGEMMAllReduce(ops)
	return ops, nil
}

// chunkSlots is how many chunk decompositions a runner remembers (a
// power of two).
const chunkSlots = 64

// A chunkCache remembers the decompositions of a chunked prefill's
// chunks, and their working sets (workingSet), for pure workloads. The
// chunks of one prompt are the token budget at contexts 0, budget,
// 2·budget, ... (and a last, shorter one), whatever the batch: the
// inverse searches (MaxContext, MaxBatch) size them at every step of a
// bisection, and a sweep over lengths runs them at every point.
type chunkCache struct {
	slots [chunkSlots]chunkEntry
}

type chunkEntry struct {
	w   Workload // nil: empty; held, so that its address is not reused
	ph  Phase
	ops []model.Op
	ws  model.Bytes
}

// get returns w's ops for ph and their working set, from cc when it has
// them and w is a PureWorkload of a comparable type (cc may be nil). The
// ops are valid until the next call, and must not be modified.
func (cc *chunkCache) get(w Workload, ph Phase) ([]model.Op, model.Bytes, error) {
	pure := false
	if _, ok := w.(PureWorkload); ok && cc != nil {
		pure = reflect.TypeOf(w).Comparable()
	}
	var e *chunkEntry
	if pure {
		h := mix(uint64(ph.Batch), uint64(ph.Seq), uint64(ph.Context), uint64(ph.Kind)|uint64(ph.TP)<<8|uint64(ph.EP)<<32, uint64(ph.Act)|uint64(ph.Weights)<<8|uint64(ph.KV)<<16)
		e = &cc.slots[h&(chunkSlots-1)]
		if e.w == w && e.ph == ph {
			return e.ops, e.ws, nil
		}
	}
	if e == nil {
		ops, err := opsOf(w, ph)
		if err != nil {
			return nil, 0, err
		}
		return ops, workingSet(ops), nil
	}
	ops, err := decomposeInto(e.ops[:0], w, ph)
	e.w, e.ph, e.ops = nil, Phase{}, ops[:0] // empty until it holds ops
	if err != nil {
		return nil, 0, err
	}
	ws := workingSet(ops)
	e.w, e.ph, e.ws, e.ops = w, ph, ws, ops
	return ops, ws, nil
}
