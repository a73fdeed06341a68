package workloads

import (
	"reflect"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestOps_stackBuffer checks that every catalog transformer decomposes
// within the stack buffer of Ops (maxTransformerOps), with every view
// option, so that Ops allocates only the result and its kernels.
func TestOps_stackBuffer(t *testing.T) {
	ms, err := Catalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Kind() == CNN {
			continue
		}
		for _, k := range []PhaseKind{Prefill, Decode, TrainForward} {
			if k == Decode && m.Kind() != Decoder {
				continue
			}
			ph := Phase{Kind: k, Batch: 2, Seq: 16, Context: 8, PerHead: true, AllLogits: true, Embedding: EmbedOneHot, Unfused: true}
			if m.Shape().KVHeads%2 == 0 && m.Shape().Heads%2 == 0 {
				ph.TP = 2
			}
			ops, err := m.Ops(ph)
			if err != nil {
				continue // a TP the model cannot split; the plain phase is below
			}
			if len(ops) > maxTransformerOps {
				t.Errorf("%s %s: %d ops, more than maxTransformerOps = %d", m.Name(), k, len(ops), maxTransformerOps)
			}
		}
	}
}

// TestOps_allocs bounds the allocations of one decomposition: the op
// slice and one boxed kernel per distinct kernel (the norms, residual
// adds, all-reduces and the gate/up GEMMs share theirs). A regression
// here shows up in every simulation, which decomposes three times.
func TestOps_allocs(t *testing.T) {
	m := mustResolve(t, "llama3-70b")
	for _, tt := range []struct {
		ph   Phase
		want float64
	}{
		// slice, gather, norm, add, qkv, rotary, attention, out, gate=up, act, down, lm_head
		{Phase{Kind: Decode, Batch: 8, Context: 4096}, 12},
		{Phase{Kind: Prefill, Batch: 1, Seq: 2048, TP: 4}, 14}, // and one all-reduce, the logits gather
	} {
		got := testing.AllocsPerRun(50, func() {
			if _, err := m.Ops(tt.ph); err != nil {
				t.Fatal(err)
			}
		})
		if got > tt.want {
			t.Errorf("%s: %v allocations per Ops, want at most %v", tt.ph.Kind, got, tt.want)
		}
	}
}

// TestAppendOps checks that AppendOps appends what Ops returns, for every
// catalog model and phase kind, after what dst holds, and that a phase
// Ops refuses is refused with dst unchanged.
func TestAppendOps(t *testing.T) {
	ms, err := Catalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		for _, k := range []PhaseKind{Prefill, Decode, TrainForward, TrainBackward} {
			for _, tp := range []int{1, 2, 3} {
				ph := Phase{Kind: k, Batch: 2, Seq: 16, Context: 8, TP: tp}
				want, werr := m.Ops(ph)
				prefix := []model.Op{{Name: "before", Count: 1}}
				got, gerr := m.AppendOps(prefix, ph)
				if (werr != nil) != (gerr != nil) {
					t.Fatalf("%s %s tp %d: Ops error %v, AppendOps error %v", m.Name(), k, tp, werr, gerr)
				}
				if len(got) == 0 || got[0].Name != "before" {
					t.Fatalf("%s %s tp %d: AppendOps lost what dst held", m.Name(), k, tp)
				}
				if werr == nil && !reflect.DeepEqual(got[1:], want) {
					t.Errorf("%s %s tp %d: AppendOps differs from Ops", m.Name(), k, tp)
				}
			}
		}
	}
}
