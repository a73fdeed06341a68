package sim

import (
	"reflect"
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// pureFake is fake promising pure decompositions, so that an opsCache
// keeps them.
type pureFake struct{ *fake }

func (pureFake) PureOps() {}

// TestOpsCache_keeps checks that keeps says which decompositions survive
// the next call of decompose: a hit in the slot the next miss takes does
// not (decode copies it), and every other one does, its ops unchanged.
func TestOpsCache_keeps(t *testing.T) {
	w := pureFake{tinyLlama()}
	oc := new(opsCache)
	ph := func(ctx int) Phase { return Phase{Kind: Decode, Batch: 1, Seq: 1, Context: ctx, TP: 1} }
	for ctx := range opsSlots {
		if _, err := oc.decompose(w, ph(100+ctx)); err != nil {
			t.Fatal(err)
		}
	}
	// Slots 0..5 hold contexts 100..105 and slot 0 is the next to go:
	// hit 103 (kept; the miss after it takes slot 0), then 101 (in slot
	// 1, the next to go: not kept), then 104 (kept).
	for i, ctx := range []int{3, 1, 4} {
		ops, err := oc.decompose(w, ph(100+ctx)) // a hit
		if err != nil {
			t.Fatal(err)
		}
		id := oc.idOf(ops)
		want := append([]any(nil), opsAsAny(ops)...)
		keeps := oc.keeps(id)
		if keeps != (id.slot != oc.next) || id == (opsID{}) {
			t.Fatalf("context %d in slot %d (next %d): keeps %v", 100+ctx, id.slot, oc.next, keeps)
		}
		if keeps != (i != 1) {
			t.Errorf("context %d: keeps %v", 100+ctx, keeps)
		}
		if _, err := oc.decompose(w, ph(1000+ctx)); err != nil { // a miss
			t.Fatal(err)
		}
		if keeps && !reflect.DeepEqual(opsAsAny(ops), want) {
			t.Errorf("context %d: kept ops changed by the next decomposition", 100+ctx)
		}
		if !keeps && oc.idOf(ops) == id {
			t.Errorf("context %d: not kept, yet its slot still holds it", 100+ctx)
		}
	}
}

func opsAsAny[T any](s []T) []any {
	out := make([]any, len(s))
	for i := range s {
		out[i] = s[i]
	}
	return out
}

// TestStepMemo_checks checks that a decode step's price reused from the
// runner's stepMemo makes the data-type check its pricing made: on a T4,
// which has no bf16 peak, the fallback warning of every run.
func TestStepMemo_checks(t *testing.T) {
	d, err := hardware.Resolve("t4")
	if err != nil {
		t.Fatal(err)
	}
	sys, err := hardware.NewSystem(d, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	pcs := new([2]priceCache)
	m := new(stepMemo)
	g := model.GEMM{M: 4, K: 4096, N: 4096, A: model.BF16, B: model.BF16, C: model.BF16}
	var first model.Cost
	for run := range 2 {
		var dg diag
		var c coster
		p := sys.Device.Processor()
		c.init(p, sys, false, &dg)
		c.pc = pcs[0].use(&p)
		co, _ := m.use(&c).cost(&c, 0, g)
		if run == 0 {
			first = co
		} else if co != first {
			t.Errorf("run %d: price %+v, first %+v", run, co, first)
		}
		if len(c.warnings) != 1 {
			t.Errorf("run %d: warnings %v, want the bf16 fallback", run, c.warnings)
		}
	}
	if m.k[0] != model.Kernel(g) {
		t.Errorf("the memo does not hold the GEMM")
	}
}
