package serve

import (
	"slices"
	"testing"
)

// queued returns a waiting request of in prompt tokens and out output
// tokens, cached of them in the prefix cache, named id.
func queued(id, in, out, cached int) *live {
	return &live{m: &Metrics{}, id: id, input: in, output: out, cached: cached, computed: cached}
}

func ids(rs []*live) []int {
	var out []int
	for _, r := range rs {
		out = append(out, r.id)
	}
	return out
}

// TestSGLang_retractOrder: where a retracted request rejoins the queue,
// and what the next prefill then admits. 183 one-token blocks; running A
// (100 in, 60 out, 59 so far: 158 blocks) and B (20 in, 100 out, 5 so
// far: 24 blocks), one block free; C and D (20 + 20 each) waiting. The
// next decode step needs two blocks: B, with fewer tokens out, is
// retracted (its 24 blocks hold 20 steps of A), and the ratio becomes
// min((59 + 20)/60, 1) = 1. SGLang v0.4.0 appends it to the waiting queue
// (scheduler.py update_running_batch: waiting_queue.extend), behind C and
// D; vLLM's recompute puts a preempted request in front. A then finishes,
// freeing its blocks (183 free), and the next prefill, at the prompts'
// reserve (PrefillAdder): C needs 20 + 20 = 40 < 183 (143 left), D 40 <
// 143 (103 left), B its prompt and 5 outputs again plus 100 = 125 ≥ 103,
// refused: C and D run. With B in front: B 125 < 183 (58 left), C 40 <
// 58 (18 left), D 40 ≥ 18: B and C run.
func TestSGLang_retractOrder(t *testing.T) {
	for _, c := range []struct {
		back          bool
		queue, admits []int
	}{
		{true, []int{3, 4, 2}, []int{3, 4}},
		{false, []int{2, 3, 4}, []int{2, 3}},
	} {
		a, b := decoding(100, 60, 59), decoding(20, 100, 5)
		a.id, b.id = 1, 2
		l := headroomLoop(SGLangHeadroom(1), 8192, 183, 0.5, []*live{a, b}, []*live{queued(3, 20, 20, 0), queued(4, 20, 20, 0)})
		l.e.RequeueBack = c.back
		if !l.retract() {
			t.Fatalf("back %v: no retraction with %d blocks free for 2 tokens", c.back, l.free)
		}
		if got := ids(l.waiting); !slices.Equal(got, c.queue) {
			t.Errorf("back %v: queue %v after the retraction, want %v", c.back, got, c.queue)
		}
		if l.ratio != 1 || l.free != 25 || len(l.running) != 1 {
			t.Errorf("back %v: ratio %g, %d blocks free, %d running; want 1, 25, 1", c.back, l.ratio, l.free, len(l.running))
		}
		// A's last token: it finishes and frees its blocks.
		l.running, l.free = nil, l.free+a.blocks
		l.schedule()
		var got []int
		for _, s := range l.sched {
			got = append(got, s.l.id)
		}
		if !slices.Equal(got, c.admits) {
			t.Errorf("back %v: the next prefill admits %v, want %v", c.back, got, c.admits)
		}
	}
}

// TestSGLang_lpm: SGLang's default schedule policy, "lpm", orders the
// waiting queue by the prefix the cache holds for each request, longest
// first and stably, while at most 128 wait (schedule_policy.py
// calc_priority); a longer queue keeps its order (first come, first
// served), as does an engine without LPM. A retracted request's prompt
// is not credited (docs/serving.md): its match is its cached prefix
// alone.
func TestSGLang_lpm(t *testing.T) {
	cached := []int{0, 50, 0, 200, 50, 10}
	mk := func(n int) []*live {
		var q []*live
		for i := range n {
			q = append(q, queued(i, 300, 10, cached[i%len(cached)]))
		}
		return q
	}
	for _, c := range []struct {
		name string
		lpm  bool
		n    int
		want []int
	}{
		{"lpm", true, 6, []int{3, 1, 4, 5, 0, 2}},
		{"fcfs", false, 6, []int{0, 1, 2, 3, 4, 5}},
		{"lpm, 128 waiting", true, 128, nil},
		{"lpm, 129 waiting", true, 129, nil},
	} {
		l := headroomLoop(Headroom{}, 8192, 1<<20, 0, nil, mk(c.n))
		l.e.LPM = c.lpm
		l.orderQueue()
		got := ids(l.waiting)
		switch {
		case c.want != nil:
			if !slices.Equal(got, c.want) {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
			}
		case c.n <= LPMQueueLimit:
			for i := 1; i < len(l.waiting); i++ {
				x, y := l.waiting[i-1], l.waiting[i]
				if x.cached < y.cached || x.cached == y.cached && x.id > y.id {
					t.Fatalf("%s: %v not longest prefix first, stably", c.name, got)
				}
			}
		default:
			if !slices.IsSorted(got) {
				t.Errorf("%s: reordered %v", c.name, got)
			}
		}
	}
	// The order a short queue was sorted into stays when it grows past the
	// limit (Python's sort works on the list itself).
	l := headroomLoop(Headroom{}, 8192, 1<<20, 0, nil, mk(6))
	l.e.LPM = true
	l.orderQueue()
	for i := range 200 {
		l.waiting = append(l.waiting, queued(100+i, 300, 10, 500))
	}
	l.orderQueue()
	if got := ids(l.waiting[:6]); !slices.Equal(got, []int{3, 1, 4, 5, 0, 2}) {
		t.Errorf("206 waiting: the head became %v, want the earlier order %v", got, []int{3, 1, 4, 5, 0, 2})
	}
}
