package serve

import "github.com/perfsim/perfsim/model"

// A deployment's requests are drawn from its source as the event loop
// reaches them and held only while they are in the system, as Run's are
// (source.go): an open loop's next arrival is drawn when the one before
// it is routed, a closed loop's when a user's previous request finishes.
// A request drawn and not yet routed is its Request (cluster.due);
// routed, it is only the 56-byte arrival its scheduler queues (loop.go),
// until the scheduler reaches it and builds its state, a flight again
// (cluster.build), which lives until it has finished end to end (and,
// disaggregated, its prefill blocks are freed). SGLang's bootstrap
// (Engine.ReserveFirst) keeps the flight from the routing on: the
// request waits for decode blocks before its prefill is scheduled. What
// the results need of a finished request is its record (records.go, 36
// bytes), its time in each pool's service, summed in request order as
// the summaries always were, and, disaggregated, its transfer time (8
// bytes: Result.Transfer's percentiles).

// flight is one request in a deployment, drawn and not finished end to
// end.
type flight struct {
	q      Request // as drawn: its whole output
	m0, m1 Metrics // its records in the serving (or prefill) and the decode pool
	x      handoff // its way between the pools (transfer.go)
	pre    arrival // ReserveFirst: routed, waiting for its decode blocks
	done   bool    // finished end to end
}

// build returns the record of a request whose state a scheduler builds
// (loop.wait): its flight's, the flight made again from its arrival if
// it was dropped when the request was routed.
func (c *cluster) build(a arrival) *Metrics {
	id := int(a.id)
	f := c.fl[id]
	if f == nil {
		f = c.flight(id, Request{ID: a.reqID, Input: int(a.input), Output: int(a.total)})
	}
	return &f.m0
}

// flight puts request id, q, in flight: in a flight of a request that
// has left (release), or a new one.
func (c *cluster) flight(id int, q Request) *flight {
	var f *flight
	if k := len(c.spare); k > 0 {
		f = c.spare[k-1]
		c.spare = c.spare[:k-1]
		*f = flight{q: q}
	} else {
		f = &flight{q: q}
	}
	c.fl[id] = f
	return f
}

// draw takes the next request of the source, to arrive (c.due), and
// returns its index.
func (c *cluster) draw() int {
	id := c.drawn
	c.drawn++
	c.due[id] = c.next()
	return id
}

// arrive draws the next request of an open loop and schedules its
// arrival. It takes its index as its place among events at the same
// time, ahead of every other kind (c.seq starts at the requests' count),
// as when every arrival was scheduled at the start.
func (c *cluster) arrive() {
	if c.drawn < c.src.n {
		id := c.draw()
		c.ev.push(event{t: float64(c.due[id].Arrival), seq: id, id: id})
	}
}

// span is a request's time in one pool's service: first scheduled to
// end, 0 if it never started there.
func span(start, end model.Seconds) float64 {
	if end > start {
		return float64(end - start)
	}
	return 0
}

// complete takes request id, finished end to end: its record (both
// pools' merged when disaggregated), its time in each pool's service and
// its transfer; it leaves flight once its prefill blocks are freed too.
func (c *cluster) complete(id int, f *flight) {
	c.merged = f.m0 // not on the heap for each request (OnFinish takes it)
	m := &c.merged
	var in [2]float64
	if c.d.Disaggregated() {
		// m0 holds the prefill alone.
		in[0] = span(f.m0.Start, f.m0.FirstToken)
		m.Output = f.q.Output
		if m.Output > 1 {
			d := &f.m1
			in[1] = span(d.Start, d.Finish)
			m.Transfer = d.Arrival - m.FirstToken
			m.Finish = d.Finish
			m.Preemptions += d.Preemptions
			c.xfer = append(c.xfer, float64(m.Transfer))
		}
	} else {
		in[0] = span(f.m0.Start, f.m0.Finish)
	}
	c.svc.add(id, in)
	c.recs.put(id, m)
	if c.all != nil {
		c.all[id] = *m
	}
	if c.o.OnFinish != nil {
		c.o.OnFinish(id, m)
	}
	f.done = true
	c.release(id, f)
}

// release drops request id's state once it has finished end to end and,
// when its KV cache went between the pools, its prefill blocks have been
// freed (cluster.arrived).
func (c *cluster) release(id int, f *flight) {
	if f.done && (!c.d.Disaggregated() || f.q.Output <= 1 || f.x.freed) {
		delete(c.fl, id)
		c.spare = append(c.spare, f)
	}
}

// inOrder sums each pool's time in service over the requests in their
// order, as they finish in any: a request's share waits until those
// before it are in, so that the float sums are those of a loop over the
// requests.
type inOrder struct {
	next int
	sum  [2]float64
	pend map[int][2]float64
}

func (s *inOrder) add(i int, v [2]float64) {
	if i != s.next {
		if s.pend == nil {
			s.pend = map[int][2]float64{}
		}
		s.pend[i] = v
		return
	}
	for {
		s.sum[0] += v[0]
		s.sum[1] += v[1]
		s.next++
		var ok bool
		if v, ok = s.pend[s.next]; !ok {
			return
		}
		delete(s.pend, s.next)
	}
}
