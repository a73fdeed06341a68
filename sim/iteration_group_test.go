package sim_test

import (
	"math"
	"testing"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// dpPricer returns a pricer of deepseek-v3 in fp8 on dp × tp H200s with
// the experts over all of them (data-parallel attention).
func dpPricer(t *testing.T, dp, tp int) *sim.Pricer {
	t.Helper()
	sys, w := load(t, "h200", "deepseek-v3", dp*tp)
	sc := sim.Default()
	sc.TP, sc.DP, sc.EP = tp, dp, dp*tp
	sc.Weights, sc.Act, sc.KV = model.FP8, model.BF16, model.BF16
	p, err := sim.NewPricer(sys, w, sc)
	if err != nil {
		t.Fatal(err)
	}
	if p.Replicas() != dp {
		t.Fatalf("Replicas() = %d, want %d", p.Replicas(), dp)
	}
	return p
}

// TestPriceGroup_alike: replicas with equal iterations cost what Price
// says of one (simulate's --dp --ep pricing, every replica alike), for a
// decode step, a prefill and a mixed iteration.
func TestPriceGroup_alike(t *testing.T) {
	p := dpPricer(t, 8, 1)
	for _, it := range []sim.Iteration{
		{Decode: []int{100}, Sampled: 1},
		{Decode: []int{900, 1200, 40, 7}, Sampled: 4},
		{Prefill: []sim.Chunk{{Tokens: 512}}, Sampled: 1},
		{Prefill: []sim.Chunk{{Tokens: 300, Context: 200}}, Decode: []int{50, 60}, Sampled: 2},
	} {
		its := make([]sim.Iteration, 8)
		for i := range its {
			its[i] = it
		}
		got, want := p.PriceGroup(its).Time, p.Price(&it).Time
		if math.Abs(float64(got/want)-1) > 1e-9 {
			t.Errorf("%d tokens: PriceGroup of 8 alike = %v, Price = %v", it.Tokens(), got, want)
		}
	}
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestPriceGroup_idle: a replica alone with work in its group still pays
// the MoE layers' all-to-alls and experts (the others run idle batches to
// join them): its time is its own part plus the group's MoE part at its
// tokens, the MoE part is not free, and the group costs more when the
// others have work too (the experts see their tokens) but never less
// than the busiest replica's own part. A prefill on one replica makes the
// others' decode steps eager.
func TestPriceGroup_idle(t *testing.T) {
	p := dpPricer(t, 8, 1)
	it := sim.Iteration{Decode: []int{500}, Sampled: 1}
	its := make([]sim.Iteration, 8)
	its[3] = it
	alone := p.PriceGroup(its).Time
	own, moe := p.GroupParts(&it)
	if !(moe > 0) || math.Abs(float64(alone)/(own+moe)-1) > 1e-12 {
		t.Errorf("one replica busy: %v, want its own %v + the MoE %v (> 0)", alone, model.Seconds(own), model.Seconds(moe))
	}
	if float64(alone) <= own {
		t.Errorf("one replica busy: %v, no more than its own part %v: the idle replicas made the MoE free", alone, model.Seconds(own))
	}
	for i := range its {
		its[i] = it
	}
	if all := p.PriceGroup(its).Time; all <= alone {
		t.Errorf("8 replicas busy: %v, not more than one alone %v", all, alone)
	}
	// A prefill on replica 0 launches replica 1's decode eagerly.
	mixed := []sim.Iteration{{Prefill: []sim.Chunk{{Tokens: 1}}, Sampled: 1}, it, {}, {}, {}, {}, {}, {}}
	eager := it
	eager.Eager = true
	ownEager, _ := p.GroupParts(&eager)
	if got := p.PriceGroup(mixed).Time; float64(got) <= ownEager {
		t.Errorf("prefill beside a decode: %v, not above the decode's eager part %v", got, model.Seconds(ownEager))
	}
	if got := p.PriceGroup(make([]sim.Iteration, 8)); got.Time != 0 {
		t.Errorf("an idle group costs %v, want 0", got.Time)
	}
}
