package serve

// A disaggregated deployment's KV cache changes hands between two
// schedulers (cluster.go, transfer.go); these are the scheduler's side
// of it. A prefill scheduler keeps a finished prefill's blocks (held)
// until its KV cache has left over the link; a decode scheduler sets
// blocks aside (reserved) for a KV cache before it is sent, and the
// request arrives holding them.

// drop frees a finished request's blocks or, when it is a prefill whose
// KV cache is still to leave (keep), holds them until unhold.
func (l *loop) drop(r *live) {
	if r.keep {
		l.held += r.blocks
		r.heldAt = l.now
		return
	}
	l.free += r.blocks
	r.blocks = 0
}

// unhold frees blocks held by a prefill whose KV cache left at t; a
// scheduler waiting for them resumes at t.
func (l *loop) unhold(blocks int, t float64) {
	l.free += blocks
	l.held -= blocks
	l.resume(t)
}

// reserve sets aside the blocks of tokens tokens for a KV cache to be
// sent here and returns them, or returns 0 when they are not free or a
// preempted request waits for blocks (it comes first: vLLM puts it back
// at the front of its FCFS waiting queue, and SGLang's decode scheduler
// counts retracted requests' tokens out of what it can pre-allocate).
func (l *loop) reserve(tokens int) int {
	need := l.blocksFor(tokens)
	if l.requeued > 0 || need > l.free {
		return 0
	}
	l.free -= need
	l.inbound += need
	return need
}

// promote moves the first waiting request that holds blocks (its KV
// cache arrived into blocks reserved for it) to the front of the queue,
// when the scheduler could schedule nothing: a preempted request ahead
// of it may need blocks that only such requests, once decoded, free.
func (l *loop) promote() bool {
	if len(l.running) > 0 {
		return false
	}
	for i, r := range l.waiting {
		if r.blocks > 0 {
			if i == 0 {
				return false
			}
			copy(l.waiting[1:i+1], l.waiting[:i])
			l.waiting[0] = r
			return true
		}
	}
	return false
}

// block stops the scheduler until held or reserved blocks come free (or
// a KV cache arrives): it delivers the outputs of its last iteration,
// since none follows to overlap them.
func (l *loop) block() {
	l.deliver()
	l.blocked = true
}

// resume restarts a blocked scheduler at t.
func (l *loop) resume(t float64) {
	if l.blocked {
		l.now = max(l.now, t)
		l.blocked = false
	}
}

// accounted returns the blocks the loop knows where: free, held for a
// transfer, reserved for one, and held by the requests running and
// waiting. It is l.blocks at every step (TestDisagg_kvAccounting).
func (l *loop) accounted() int {
	n := l.free + l.held + l.inbound
	for _, r := range l.running {
		n += r.blocks
	}
	for _, r := range l.waiting {
		n += r.blocks
	}
	return n
}
