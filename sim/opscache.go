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
