package serve

import (
	"math"
	"slices"
	"testing"

	"github.com/perfsim/perfsim/sim"
)

// decoding returns a running request of in prompt tokens and out output
// tokens that has produced gen of them: the KV of all but its last token
// computed and held in blocks of one token.
func decoding(in, out, gen int) *live {
	return &live{m: &Metrics{}, input: in, output: out, generated: gen, computed: in + gen - 1, blocks: in + gen - 1, started: true}
}

// headroomLoop returns a loop of blocks one-token blocks under the
// sglang preset's scheduler (budget tokens an iteration) with running
// holding its blocks, waiting queued, and the ratio at ratio.
func headroomLoop(h Headroom, budget, blocks int, ratio float64, running, waiting []*live) *loop {
	e := Engine{Name: "test", MaxSeqs: 4096, MaxTokens: budget, Chunked: true, BlockSize: 1, KVTokens: blocks,
		Policy: PrefillFirst, Admission: OnDemand, Headroom: h}
	l := newLoop(nil, e, Options{}, blocks, sim.Memory{})
	l.ratio = ratio
	l.running = running
	for _, r := range running {
		l.free -= r.blocks
	}
	l.waiting = waiting
	return l
}

// TestHeadroom_admission works PrefillAdder's arithmetic by hand. 10,000
// one-token blocks; running A (1,000 in, 3,000 out, 1,000 out so far:
// 2,000 left, 1,999 blocks held) and B (500 in, 6,000 out, 1,000 so far:
// 5,000 left, clipped to 4,096; 1,499 held), so 6,502 blocks free.
// Waiting C (1,000 in, 1,000 out), D (400, 1,000), E (10, 50).
//
// At ratio 0.5 the running reserve 2,000·0.5 + 4,096·0.5 = 3,048 leaves
// 3,454. C needs 1,000 + 1,000 = 2,000 < 3,454: admitted, taking its
// prompt's 1,000 blocks and reserving its 1,000 outputs, 1,454 left. D
// needs 1,400 < 1,454: admitted, 54 left. E needs 60 ≥ 54: refused, and
// the batch is full. At 0.7 the reserve is 1,400 + 2,867.2 = 4,267.2,
// 2,234.8 left: C fits (234.8 left), D does not. At ratio 0 all three
// fit (6,502 − 2,000 − 1,400 = 3,102 ≥ 60). With a budget of 1,200
// tokens at 0.5, D is admitted (1,400 < 1,454) as a chunk of 200 that
// reserves no output (_prefill_one_req is told 0): 1,254 left. Without
// the reserve (the preset before) C, D and E are admitted. A batch
// already full tries no prompt: A and B decode (a token each).
func TestHeadroom_admission(t *testing.T) {
	sg := SGLangHeadroom(1)
	for _, c := range []struct {
		name      string
		h         Headroom
		budget    int
		ratio     float64
		sched     []int // tokens scheduled: C's, D's and E's prompts
		waiting   int
		left      float64
		full      bool
		fullAlrdy bool
	}{
		{"ratio 0.5", sg, 8192, 0.5, []int{1000, 400}, 1, 54, true, false},
		{"ratio 0.7", sg, 8192, 0.7, []int{1000}, 2, 234.8, true, false},
		{"ratio 0", sg, 8192, 0, []int{1000, 400, 10}, 0, 3102 - 60, false, false},
		{"chunked, ratio 0.5", sg, 1200, 0.5, []int{1000, 200}, 1, 1254, false, false},
		{"full already", sg, 8192, 0.5, []int{1, 1}, 3, 3454 - 2, true, true},
		{"no reserve", Headroom{}, 8192, 0, []int{1000, 400, 10}, 0, 6502 - 1410, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := decoding(1000, 3000, 1000), decoding(500, 6000, 1000)
			w := []*live{{m: &Metrics{}, input: 1000, output: 1000}, {m: &Metrics{}, input: 400, output: 1000}, {m: &Metrics{}, input: 10, output: 50}}
			l := headroomLoop(c.h, c.budget, 10000, c.ratio, []*live{a, b}, slices.Clone(w))
			if l.free != 6502 {
				t.Fatalf("%d blocks free, want 6502", l.free)
			}
			l.full = c.fullAlrdy
			l.schedule()
			var got []int
			for _, s := range l.sched {
				got = append(got, s.k)
			}
			if !slices.Equal(got, c.sched) {
				t.Errorf("scheduled %v tokens, want %v", got, c.sched)
			}
			if c.h.Enabled {
				if left := l.roomLeft(); math.Abs(left-c.left) > 1e-9 {
					t.Errorf("%g tokens left, want %g", left, c.left)
				}
			} else if l.free != int(c.left) {
				t.Errorf("%d blocks free, want %g", l.free, c.left)
			}
			if l.full != c.full {
				t.Errorf("full %v, want %v", l.full, c.full)
			}
			if len(l.waiting) != c.waiting {
				t.Errorf("%d waiting, want %d", len(l.waiting), c.waiting)
			}
		})
	}
}

// TestHeadroom_retract works retract_decode by hand: running A (100 in,
// 1,000 out, 500 so far), B (200, 1,000, 100), C (300, 1,000, 100), D
// (50, 1,000, 800) hold 2,146 one-token blocks of 2,148, 2 free,
// so the next step's four tokens do not fit. Sorted by (tokens out,
// −prompt) descending, D, A, B, C: C goes first (the fewest out, the
// longer prompt of the two), freeing 399 blocks, 401 free. With
// retract_decode_steps 20 the three left need 60: done, and the ratio is
// (800 + 500 + 100 + 20·3)/3,000 = 0.48667. With 200 steps they need
// 600 > 401, so B goes too (299 blocks, 700 free ≥ 2·200), and the ratio
// is (1,300 + 400)/2,000 = 0.85.
func TestHeadroom_retract(t *testing.T) {
	for _, c := range []struct {
		steps   int
		victims []int // prompt lengths
		ratio   float64
	}{
		{20, []int{300}, 1460.0 / 3000},
		{200, []int{300, 200}, 0.85},
	} {
		h := SGLangHeadroom(1)
		h.RetractSteps = c.steps
		run := []*live{decoding(100, 1000, 500), decoding(200, 1000, 100), decoding(300, 1000, 100), decoding(50, 1000, 800)}
		held := 0
		for _, r := range run {
			held += r.blocks
		}
		l := headroomLoop(h, 8192, held+2, 0.3, slices.Clone(run), nil)
		if !l.retract() {
			t.Fatalf("%d steps: no retraction with %d blocks free for 4 tokens", c.steps, l.free)
		}
		var got []int
		for _, r := range l.waiting {
			got = append(got, r.input)
		}
		if !slices.Equal(got, c.victims) {
			t.Errorf("%d steps: retracted %v (prompts), want %v", c.steps, got, c.victims)
		}
		if math.Abs(l.ratio-c.ratio) > 1e-12 {
			t.Errorf("%d steps: ratio %g, want %g", c.steps, l.ratio, c.ratio)
		}
		if l.res.Preemptions != len(c.victims) || l.retract() {
			t.Errorf("%d steps: %d preemptions, want %d, and no second retraction", c.steps, l.res.Preemptions, len(c.victims))
		}
	}
}

// TestSGLangHeadroom: the constants as v0.4.0's Scheduler derives them.
func TestSGLangHeadroom(t *testing.T) {
	for _, c := range []struct {
		cons, init, floor float64
	}{{1, 0.7, 0.098}, {0.3, 0.21, 0.0294}, {2, 1, 0.14}, {0, 0, 0}} {
		h := SGLangHeadroom(c.cons)
		if math.Abs(h.Init-c.init) > 1e-12 || math.Abs(h.Min-c.floor) > 1e-12 || math.Abs(h.Decay-(c.init-c.floor)/600) > 1e-15 ||
			h.RetractSteps != 20 || h.Clip != 4096 || !h.Enabled {
			t.Errorf("conservativeness %g: %+v, want ratio %g to %g over 600 steps", c.cons, h, c.init, c.floor)
		}
	}
}
