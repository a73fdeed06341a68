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

// opsSlots is how many decompositions a runner keeps: more than one run
// asks for (prefill and two decode contexts; forward and backward), so
// that a slice returned by decompose stays valid while the run uses it.
const opsSlots = 6

// An opsCache keeps the last decompositions of pure workloads.
type opsCache struct {
	next    int
	entries [opsSlots]opsEntry
}

type opsEntry struct {
	w   Workload // nil: empty; held, so that its address is not reused
	ph  Phase
	ops []model.Op
}

// decompose returns w's ops for ph, from oc when it has them and w is a
// PureWorkload of a comparable type (oc may be nil). The result must not
// be modified; it stays valid for opsSlots−1 further calls.
func (oc *opsCache) decompose(w Workload, ph Phase) ([]model.Op, error) {
	if oc == nil {
		return w.Ops(ph)
	}
	if _, ok := w.(PureWorkload); !ok || !reflect.TypeOf(w).Comparable() {
		return w.Ops(ph)
	}
	for i := range oc.entries {
		if e := &oc.entries[i]; e.w == w && e.ph == ph {
			return e.ops, nil
		}
	}
	ops, err := w.Ops(ph)
	if err != nil {
		return nil, err
	}
	e := &oc.entries[oc.next]
	oc.next = (oc.next + 1) % opsSlots
	e.w, e.ph, e.ops = w, ph, append(e.ops[:0], ops...)
	return e.ops, nil
}

// wsSlots is how many working sets a runner remembers (a power of two).
const wsSlots = 128

// A wsCache remembers the working sets (workingSet) of decompositions of
// pure workloads. The inverse searches (MaxContext, MaxBatch) size a
// chunked prefill at every step of a bisection, and the chunks of one
// step are mostly those of the last: the same token budget at the same
// contexts.
type wsCache struct {
	slots [wsSlots]wsEntry
}

type wsEntry struct {
	w  Workload // nil: empty; held, so that its address is not reused
	ph Phase
	ws model.Bytes
}

// workingSet returns workingSet of w's ops for ph, from wc when it has it
// and w is a PureWorkload of a comparable type (wc may be nil).
func (wc *wsCache) workingSet(w Workload, ph Phase) (model.Bytes, error) {
	pure := false
	if _, ok := w.(PureWorkload); ok && wc != nil {
		pure = reflect.TypeOf(w).Comparable()
	}
	var e *wsEntry
	if pure {
		h := mix(uint64(ph.Batch), uint64(ph.Seq), uint64(ph.Context), uint64(ph.Kind)|uint64(ph.TP)<<8|uint64(ph.EP)<<32, uint64(ph.Act)|uint64(ph.Weights)<<8|uint64(ph.KV)<<16)
		e = &wc.slots[h&(wsSlots-1)]
		if e.w == w && e.ph == ph {
			return e.ws, nil
		}
	}
	ops, err := w.Ops(ph)
	if err != nil {
		return 0, err
	}
	ws := workingSet(ops)
	if e != nil {
		*e = wsEntry{w: w, ph: ph, ws: ws}
	}
	return ws, nil
}
