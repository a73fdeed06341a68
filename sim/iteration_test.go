package sim

import (
	"math"
	"testing"
)

// TestPricer_static checks that an iteration holding a static batch (B
// prompts of S tokens, then B decode tokens at each context) costs what
// Run's prefill and decode cost: the serving pricer and the static
// simulator price the same kernels.
func TestPricer_static(t *testing.T) {
	for _, tt := range []struct {
		name               string
		batch, in, out, tp int
	}{
		{"b1", 1, 512, 64, 1},
		{"b8", 8, 1024, 200, 1},
		{"b32-tp2", 32, 128, 300, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sys, w := testSystem(tt.tp), tinyLlama()
			sc := Default()
			sc.Batch, sc.Input, sc.Output, sc.TP = tt.batch, tt.in, tt.out, tt.tp
			rep := mustRun(t, sys, w, sc)
			p, err := NewPricer(sys, w, sc)
			if err != nil {
				t.Fatal(err)
			}
			it := Iteration{Sampled: tt.batch}
			for range tt.batch {
				it.Prefill = append(it.Prefill, Chunk{Tokens: tt.in})
			}
			got := float64(p.Price(&it).Time)
			if want := float64(rep.Inference.TTFT); math.Abs(got/want-1) > 1e-9 {
				t.Errorf("prefill iteration = %g s, Run's TTFT %g s", got, want)
			}
			var dec float64
			it = Iteration{Decode: make([]int, tt.batch), Sampled: tt.batch}
			for i := range tt.out - 1 {
				for j := range it.Decode {
					it.Decode[j] = tt.in + i
				}
				dec += float64(p.Price(&it).Time)
			}
			// Run sums decode steps by quadrature beyond 64 steps (0.1%).
			if want := float64(rep.Inference.Decode.Time); math.Abs(dec/want-1) > 1e-3 {
				t.Errorf("decode iterations = %g s, Run's decode %g s", dec, want)
			}
		})
	}
}

// TestPricer_monotone: more tokens, or longer contexts, never cost less;
// an empty iteration costs nothing.
func TestPricer_monotone(t *testing.T) {
	p, err := NewPricer(testSystem(1), tinyLlama(), Default())
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Price(&Iteration{}); c.Time != 0 {
		t.Errorf("empty iteration = %v", c.Time)
	}
	prev := 0.0
	for _, n := range []int{1, 2, 8, 64, 256} {
		it := Iteration{Decode: make([]int, n), Sampled: n}
		for i := range it.Decode {
			it.Decode[i] = 1000
		}
		got := float64(p.Price(&it).Time)
		if got < prev {
			t.Errorf("%d decode tokens cost %g s < %g s for fewer", n, got, prev)
		}
		prev = got
	}
	short := p.Price(&Iteration{Prefill: []Chunk{{Tokens: 256, Context: 0}}, Sampled: 1}).Time
	long := p.Price(&Iteration{Prefill: []Chunk{{Tokens: 256, Context: 4096}}, Sampled: 1}).Time
	if long <= short {
		t.Errorf("a chunk after 4096 cached tokens costs %v, no more than after none (%v)", long, short)
	}
}

// TestPricer_decodeMean checks the shared decode launch at the mean
// context against pricing each context group as its own launch (less the
// extra launches): within 0.5% for contexts spread 100–4000.
func TestPricer_decodeMean(t *testing.T) {
	p, err := NewPricer(testSystem(1), tinyLlama(), Default())
	if err != nil {
		t.Fatal(err)
	}
	ctx := []int{100, 400, 900, 1600, 2500, 4000, 3000, 50}
	var mean float64
	for _, x := range ctx {
		mean += float64(x)
	}
	got := p.decodeAttention(len(ctx), int(math.Round(mean/float64(len(ctx))))+1, true)
	var sum float64
	for _, x := range ctx {
		sum += p.decodeAttention(1, x+1, true) - float64(p.layer)*float64(GraphLaunch)
	}
	sum += float64(p.layer) * float64(GraphLaunch)
	if math.Abs(got/sum-1) > 0.005 {
		t.Errorf("mean-context launch %g s, per-context sum %g s (%.2f%%)", got, sum, 100*(got/sum-1))
	}
}

// TestPricer_grid bounds the error of the memo grid: iterations at token
// counts and contexts off the grid are within 0.5% of pricing them
// exactly.
func TestPricer_grid(t *testing.T) {
	p, err := NewPricer(testSystem(1), tinyLlama(), Default())
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for _, n := range []int{257, 300, 777, 1023, 1500, 3001, 5000, 8191} {
		got := p.denseTime(n, false, bothPhases)
		want := p.denseAt(n, false, bothPhases)
		worst = math.Max(worst, math.Abs(got/want-1))
		for _, kv := range []int{300, 1025, 4099} {
			got := p.decodeAttention(min(n, 64), kv, true)
			want := p.decodeAttentionAt(min(n, 64), kv, true)
			worst = math.Max(worst, math.Abs(got/want-1))
		}
	}
	t.Logf("worst grid error %.3f%%", 100*worst)
	if worst > 0.005 {
		t.Errorf("grid error %.3f%% > 0.5%%", 100*worst)
	}
}

// TestPricer_eager: a decode-only iteration marked Eager costs what a
// pricer without CUDA graphs charges for it, more than the graphed step,
// and a prefill is unaffected.
func TestPricer_eager(t *testing.T) {
	sys, w := testSystem(2), tinyLlama()
	sc := Default()
	sc.TP = 2
	graphed, err := NewPricer(sys, w, sc)
	if err != nil {
		t.Fatal(err)
	}
	sc.NoGraphs = true
	eager, err := NewPricer(sys, w, sc)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 161, 700} {
		it := Iteration{Decode: make([]int, n), Sampled: n}
		for i := range it.Decode {
			it.Decode[i] = 300 + i
		}
		g := graphed.Price(&it).Time
		it.Eager = true
		got, want := graphed.Price(&it).Time, eager.Price(&it).Time
		if got != want {
			t.Errorf("batch %d: Eager on a graphed pricer = %v, a pricer without graphs %v", n, got, want)
		}
		if !(got > g) {
			t.Errorf("batch %d: Eager = %v, not more than the graphed step %v", n, got, g)
		}
	}
	pre := Iteration{Prefill: []Chunk{{Tokens: 512}}, Sampled: 1}
	a := graphed.Price(&pre).Time
	pre.Eager = true
	if b := graphed.Price(&pre).Time; a != b {
		t.Errorf("a prefill marked Eager = %v, unmarked %v", b, a)
	}
}
