package serve

import (
	"slices"

	"github.com/perfsim/perfsim/model"
)

// The scheduler: what the engine runs next, the KV blocks it takes and
// the requests it preempts when they run out.

// blocksFor returns the blocks r needs to hold tokens tokens (and its
// fixed state, if the model has one).
func (l *loop) blocksFor(tokens int) int { return l.kv.blocks(tokens) }

// grow makes r hold blocks for tokens tokens, if enough are free. The
// blocks of windowed layers behind the window (WindowGroups) go back to
// the pool first, even when r then cannot grow (vLLM V1's
// KVCacheManager.allocate_slots calls remove_skipped_blocks before it
// counts the blocks to allocate).
func (l *loop) grow(r *live, tokens int) bool {
	need := l.kv.need(r.computed, tokens) - r.blocks
	if need < 0 && l.kv.free {
		l.free -= need
		r.blocks += need
		return true
	}
	if need <= 0 {
		return true
	}
	if need > l.free {
		return false
	}
	l.free -= need
	r.blocks += need
	return true
}

// preempt frees the last running request's blocks and puts it back in
// the queue (requeue: at the front, or SGLang's back), to be prefilled
// again (prompt and output so far) when it next runs.
func (l *loop) preempt() *live {
	r := l.running[len(l.running)-1]
	l.evict(r)
	l.requeue(r)
	return r
}

// evict takes r out of the running batch and frees its blocks; its
// prompt and output so far are prefilled again when it next runs.
func (l *loop) evict(r *live) {
	l.running = slices.DeleteFunc(l.running, func(x *live) bool { return x == r })
	l.free += r.blocks
	r.blocks, r.computed = 0, r.cached
	if !r.requeued {
		r.requeued = true
		l.requeued++
	}
	r.m.Preemptions++
	l.res.Preemptions++
	l.shrunk = true
}

// admit tries to start the first waiting request with budget tokens
// left; it returns the tokens it schedules (0: not admitted).
func (l *loop) admit(budget int, alone bool) int {
	r := l.peek()
	k := r.need() - r.computed
	if l.e.Chunked {
		k = min(k, budget)
	} else if k > budget && !alone {
		return 0
	}
	if k <= 0 {
		return 0
	}
	if l.e.Admission == Reserve || l.e.Static {
		if !l.grow(r, r.input+r.output) {
			return 0
		}
	} else if !l.grow(r, r.computed+k) {
		return 0
	}
	l.waiting[0] = nil // not kept alive by the queue
	if len(l.waiting) == 1 {
		l.waiting = l.waiting[:0] // keeps its room
	} else {
		l.waiting = l.waiting[1:]
	}
	if r.requeued {
		r.requeued = false
		l.requeued--
	}
	if !r.started {
		r.started = true
		r.m.Start = model.Seconds(l.now)
	}
	l.running = append(l.running, r)
	l.sched = append(l.sched, step{r, k})
	return k
}

// schedule decides the next iteration into l.sched and returns how many
// decode steps it runs before the next decision.
func (l *loop) schedule() int {
	l.sched = l.sched[:0]
	e := &l.e
	switch {
	case e.Static:
		if len(l.running) == 0 {
			l.orderQueue()
			for l.nwait() > 0 && len(l.running) < e.MaxSeqs && l.admit(1<<40, true) > 0 {
			}
			return 1
		}
		l.decodeAll()
		return 1
	case e.Policy == PrefillFirst:
		budget := e.MaxTokens
		h := e.Headroom.Enabled
		if h {
			l.reserved = l.decodeReserve()
			if len(l.running) == 0 {
				l.full = false
			}
		}
		// A running request still in its prompt (chunked) goes first.
		for _, r := range l.running {
			if k := r.need() - r.computed; k > 1 || r.generated == 0 {
				k = min(k, budget)
				if k > 0 && l.grow(r, r.computed+k) {
					l.reserveFor(r, k)
					l.sched = append(l.sched, step{r, k})
					budget -= k
					l.full = false // a chunk's end lets prompts be tried again
				}
			}
		}
		if !l.full && len(l.running) < e.MaxSeqs {
			l.orderQueue()
		}
		for budget > 0 && l.nwait() > 0 && len(l.running) < e.MaxSeqs {
			if h && (l.full || !l.fits()) {
				l.full = true
				break
			}
			r := l.peek()
			k := l.admit(budget, len(l.sched) == 0)
			if k == 0 {
				l.full = h
				break
			}
			l.reserveFor(r, k)
			budget -= k
		}
		if len(l.sched) > 0 {
			return 1
		}
		if h {
			// update_running_batch: a batch that shrank lets prompts be
			// tried again; a step that does not fit retracts, else the
			// ratio decays.
			if l.shrunk {
				l.full = false
			}
			if !l.retract() {
				l.decayRatio()
			}
			l.shrunk = false
		}
		l.decodeAll()
		return max(e.SchedulerSteps, 1)
	default: // DecodeFirst
		budget := e.MaxTokens
		preempted := false
		for i := 0; i < len(l.running) && budget > 0; i++ {
			r := l.running[i]
			k := min(r.need()-r.computed, budget)
			for !l.grow(r, r.computed+k) {
				victim := l.preempt()
				preempted = true
				if victim == r {
					k = 0
					break
				}
			}
			if k > 0 {
				l.sched = append(l.sched, step{r, k})
				budget -= k
			}
		}
		if !preempted && budget > 0 && len(l.running) < e.MaxSeqs {
			l.orderQueue()
		}
		for !preempted && budget > 0 && l.nwait() > 0 && len(l.running) < e.MaxSeqs {
			k := l.admit(budget, len(l.sched) == 0)
			if k == 0 {
				break
			}
			budget -= k
		}
		return 1
	}
}

// decodeAll schedules a decode token for every running request,
// preempting the last admitted while blocks run out.
func (l *loop) decodeAll() {
	for i := 0; i < len(l.running); i++ {
		r := l.running[i]
		k := r.need() - r.computed
		for !l.grow(r, r.computed+k) {
			if l.preempt() == r {
				k = 0
				break
			}
		}
		if k > 0 {
			l.sched = append(l.sched, step{r, k})
		}
	}
}

// nextStep re-forms a multi-step decode batch for its next step: the
// scheduled requests that have not finished, one token each. It returns
// false when none is left or blocks run out.
func (l *loop) nextStep() bool {
	kept := l.sched[:0]
	for _, s := range l.sched {
		r := s.l
		if r.generated == r.output && !r.held || r.blocks == 0 { // finished, or preempted
			continue
		}
		if !l.grow(r, r.computed+1) {
			return false
		}
		kept = append(kept, step{r, 1})
	}
	l.sched = kept
	return len(kept) > 0
}

// release completes the requests held to the end of a multi-step decode
// batch at l.now and frees their blocks.
func (l *loop) release() {
	kept := l.running[:0]
	for _, r := range l.running {
		if r.held {
			l.shrunk = true
			l.emit(r, true)
			l.drop(r)
			continue
		}
		kept = append(kept, r)
	}
	clear(l.running[len(kept):])
	l.running = kept
}
