package sim

import (
	"github.com/perfsim/perfsim/hardware"
	"math"
	"testing"

	"github.com/perfsim/perfsim/model"
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
	graphed, eager := tp2Pricer(t, false), tp2Pricer(t, true)
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

// TestPricer_pad: a graphed decode batch padded to a captured size costs
// what the padded batch costs in every op but the mixers (which see the
// real requests) and the LM head (unless Head is HeadPadded): more than the
// unpadded batch by the dense ops' difference exactly, less than the
// padded batch of real requests, and with HeadPadded the head's difference
// more (nothing where the head's GEMM tiles are the same). Padding is ignored when the
// iteration is launched eagerly, and costs nothing at 0.
func TestPricer_pad(t *testing.T) {
	p := tp2Pricer(t, false)
	batch := func(n int) Iteration {
		it := Iteration{Decode: make([]int, n), Sampled: n}
		for i := range it.Decode {
			it.Decode[i] = 1000 // one context: the mean is the same padded or not
		}
		return it
	}
	for _, c := range []struct{ n, to int }{{3, 4}, {13, 16}, {161, 168}, {250, 256}} {
		it := batch(c.n)
		plain := p.Price(&it).Time
		it.Pad = c.to - c.n
		padded := p.Price(&it).Time
		it.Head = HeadPadded
		head := p.Price(&it).Time
		full := batch(c.to)
		real := p.Price(&full).Time
		if !(plain < padded && padded <= head && head < real) {
			t.Errorf("%d padded to %d: unpadded %v, padded %v, with the head %v, %d real requests %v; want increasing", c.n, c.to, plain, padded, head, c.to, real)
		}
		// Exactly the dense ops' and the head's difference.
		dense := p.denseTime(c.to, true, bothPhases) - p.denseTime(c.n, true, bothPhases)
		rows := p.headTime(c.to, true) - p.headTime(c.n, true)
		if d := float64(padded - plain); math.Abs(d-dense) > 1e-12 {
			t.Errorf("%d padded to %d: padding costs %g s, the dense ops at %d less at %d %g s", c.n, c.to, d, c.to, c.n, dense)
		}
		if d := float64(head - padded); math.Abs(d-rows) > 1e-12 {
			t.Errorf("%d padded to %d: the head on the padding costs %g s, the head at %d less at %d %g s", c.n, c.to, d, c.to, c.n, rows)
		}
		it.Eager = true
		eager := p.Price(&it).Time
		it.Pad, it.Head = 0, HeadInGraph
		if e := p.Price(&it).Time; e != eager {
			t.Errorf("%d padded to %d, launched eagerly: %v, unpadded %v; want equal", c.n, c.to, eager, e)
		}
	}
	it := batch(8)
	a := p.Price(&it).Time
	it.Head = HeadPadded
	if b := p.Price(&it).Time; a != b {
		t.Errorf("batch 8 with HeadPadded and no padding: %v, without %v", b, a)
	}
}

// TestPricer_piecewise: in piecewise CUDA graphs (vLLM V1) a decode
// step's mixers are launched by the host, so it costs more than the step
// in one graph and less than the eager step; a prefill's other ops are
// in the graphs, so it costs less than the eager prefill; the difference
// of a decode step's two launches is the mixers' alone, the same at any
// context; Eager overrides Piecewise.
func TestPricer_piecewise(t *testing.T) {
	p := tp2Pricer(t, false)
	price := func(it Iteration, piecewise, eager bool) model.Seconds {
		it.Piecewise, it.Eager = piecewise, eager
		return p.Price(&it).Time
	}
	var diff model.Seconds
	for i, ctx := range []int{100, 1000, 4000} {
		dec := Iteration{Decode: []int{ctx, ctx, ctx}, Sampled: 3}
		g, pw, e := price(dec, false, false), price(dec, true, false), price(dec, false, true)
		if !(g < pw && pw < e) {
			t.Errorf("decode at %d: one graph %v, piecewise %v, eager %v; want increasing", ctx, g, pw, e)
		}
		if d := pw - g; i == 0 {
			diff = d
		} else if math.Abs(float64(d-diff)) > 1e-12 {
			t.Errorf("decode at %d: piecewise costs %v more than one graph, at 100 %v; want the same", ctx, d, diff)
		}
		if pe := price(dec, true, true); pe != e {
			t.Errorf("decode at %d: piecewise and eager %v, eager %v", ctx, pe, e)
		}
	}
	mixed := Iteration{Prefill: []Chunk{{Tokens: 200, Context: 0}}, Decode: []int{500, 600}, Sampled: 3}
	if pw, e := price(mixed, true, false), price(mixed, false, false); !(pw < e) {
		t.Errorf("a mixed iteration in piecewise graphs %v, eager %v; want less", pw, e)
	}
}

// TestPricer_headEager: a graphed decode step whose LM head is launched
// outside the graph (vLLM) costs more, by the same at any context; an
// eager step is unchanged.
func TestPricer_headEager(t *testing.T) {
	p := tp2Pricer(t, false)
	want := p.headTime(3, false) - p.headTime(3, true)
	for _, ctx := range []int{100, 4000} {
		it := Iteration{Decode: []int{ctx, ctx, ctx}, Sampled: 3}
		g := p.Price(&it).Time
		it.Head = HeadEager
		h := p.Price(&it).Time
		if d := float64(h - g); !(d > 0) || math.Abs(d-want) > 1e-12 {
			t.Errorf("context %d: the head outside the graph adds %g s, want %g s (> 0)", ctx, d, want)
		}
		it.Eager = true
		e := p.Price(&it).Time
		it.Head = HeadInGraph
		if e2 := p.Price(&it).Time; e2 != e {
			t.Errorf("context %d: an eager step with HeadEager %v, without %v", ctx, e, e2)
		}
	}
}

// tp2Pricer returns a pricer of the tiny Llama at TP 2 on two test
// devices, with CUDA graphs or (noGraphs) without.
func tp2Pricer(t *testing.T, noGraphs bool) *Pricer {
	t.Helper()
	sc := Default()
	sc.TP, sc.NoGraphs = 2, noGraphs
	p, err := NewPricer(testSystem(2), tinyLlama(), sc)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPricer_processorAsRun: a power limit and the prefill attention
// kernel reach the pricer as they reach Run (NewPricer had dropped both
// without a word, pricing a capped or FlashAttention-2 prefill at the
// defaults), and a limit Run refuses, NewPricer refuses.
func TestPricer_processorAsRun(t *testing.T) {
	d, err := hardware.Resolve("h100")
	if err != nil {
		t.Fatal(err)
	}
	sys, err := hardware.NewSystem(d, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	w := tinyLlama()
	base := Default()
	base.Batch, base.Input, base.Output = 8, 2048, 16
	var basePrice, baseTTFT float64
	for _, tt := range []struct {
		name string
		set  func(*Scenario)
	}{
		{"default", func(*Scenario) {}},
		{"power cap 300 W", func(sc *Scenario) { sc.PowerCap = 300 }},
		{"fa2", func(sc *Scenario) { sc.Attention = AttentionFA2 }},
	} {
		sc := base
		tt.set(&sc)
		rep := mustRun(t, sys, w, sc)
		p, err := NewPricer(sys, w, sc)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		it := Iteration{Sampled: sc.Batch}
		for range sc.Batch {
			it.Prefill = append(it.Prefill, Chunk{Tokens: sc.Input})
		}
		got, ttft := float64(p.Price(&it).Time), float64(rep.Inference.TTFT)
		if tt.name == "default" {
			basePrice, baseTTFT = got, ttft
			continue
		}
		// The setting moves the pricer's prefill as it moves Run's TTFT
		// (within 1.5%: the TTFT holds more than the prefill pass; the
		// pricer without the setting moves ×1, 2.3% off under fa2).
		if pr, rr := got/basePrice, ttft/baseTTFT; math.Abs(pr/rr-1) > 0.015 {
			t.Errorf("%s: the pricer's prefill moves ×%.4f, Run's TTFT ×%.4f", tt.name, pr, rr)
		}
	}
	sc := base
	sc.PowerCap = 5000
	if _, err := NewPricer(sys, w, sc); err == nil {
		t.Errorf("a 5 kW limit on an H100 (above its cap): no error")
	}
}
