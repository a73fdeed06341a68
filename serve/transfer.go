package serve

import (
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// A disaggregated request's KV cache is held by exactly one pool at any
// time except while it moves, when both hold it, as the engines do:
//
//   - The prefill instance keeps the blocks of a finished prefill until
//     its KV cache has been sent. SGLang's prefill scheduler moves a
//     prefilled request to its inflight queue and releases its KV cache
//     only when the sender polls KVPoll.Success
//     (sgl-project/sglang@000c2b942308ea5502978be73542016c230dba02:
//     python/sglang/srt/disaggregation/prefill.py,
//     process_disagg_prefill_inflight_queue); vLLM's NIXL connector
//     returns delay_free_blocks for a finished prefill, whose blocks "will
//     be read from D upon completion"
//     (vllm-project/vllm@002a1057e9ae674d7bdc9c4be95bc29d65d2e808:
//     vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py,
//     NixlConnectorScheduler.request_finished); DistServe's decoding
//     instances fetch KV caches "as needed", using the prefill
//     instances' memory as a queuing buffer (Zhong et al., OSDI 2024,
//     §4.3).
//   - The decode instance allocates the blocks before the transfer
//     starts, and a request waits until it can: SGLang's decode
//     PreallocQueue pre-allocates a request's KV "once there is available
//     kv" (its prompt's tokens) and only then hands it to the
//     TransferQueue (sgl-project/sglang@278e503a5e16252fb4ff513018b6a73e30976f63:
//     python/sglang/srt/disaggregation/decode.py, _pre_alloc); vLLM's
//     scheduler allocates the prompt's blocks of a remote prefill
//     (get_num_new_matched_tokens: the whole prompt, loaded
//     asynchronously) before the connector reads into them
//     (update_state_after_alloc, same file).
//
// So a prefilled request goes to a decode scheduler's transfer queue
// (first come, first served); when the scheduler can set aside blocks
// for its prompt and first output token (its whole output with Reserve
// admission) the transfer starts on the prefill instance's link (one at
// a time, first come, first served), and when it ends the prefill
// blocks are freed and the request arrives at the decode scheduler
// holding its blocks. A decode pool that is full thus keeps KV caches in
// the prefill pool, whose schedulers then admit fewer prompts
// (back-pressure). SGLang reserves the decode blocks earlier still, at
// the bootstrap before the prefill (prefill.py: its bootstrap queue
// holds requests whose "handshake and preallocation" has not finished;
// decode.py: the PreallocQueue's request "handshakes first, and
// pre-allocate kv once there is available kv"): with Engine.ReserveFirst
// (the sglang preset) the decode scheduler is chosen when the request
// arrives, the request waits in its queue, and the prefill scheduler
// gets it only once its blocks are set aside; its KV cache leaves when
// the prefill ends. A full decode pool then holds requests back before
// their prefill rather than after.

// handoff is one request's way from the prefill to the decode pool.
type handoff struct {
	src       int     // its prefill scheduler
	blocks    int     // the blocks it holds there
	dst       int     // ReserveFirst: its decode scheduler
	inbound   int     // ReserveFirst: the blocks set aside there
	held      float64 // from when (its last prefill iteration's end)
	prefilled float64 // its prefill's completion delivered
	reserved  float64 // decode blocks set aside
	start     float64 // its transfer starts
	ready     float64 // and ends: the prefill blocks are freed
	freed     bool
}

// transfer routes a prefilled request to a decode scheduler's transfer
// queue, or (ReserveFirst) sends its KV cache to the decode scheduler
// that set blocks aside for it before its prefill.
func (c *cluster) transfer(e event) {
	if c.pools[1].e.ReserveFirst {
		x := &c.fl[e.id].x
		c.start(c.pools[1].nodes[x.dst], e.id, e.t, x.inbound)
		return
	}
	nd := c.pools[1].pick(e.t)
	nd.routed++
	nd.xq = append(nd.xq, e.id)
	c.send(nd, e.t)
}

// bootstrap routes a request that arrived at t, and whose prefill
// scheduler nd is chosen, to a decode scheduler, whose queue it waits
// in until that scheduler sets blocks aside for it; then nd gets it
// (ReserveFirst).
func (c *cluster) bootstrap(nd *node, f *flight, a arrival, t float64) {
	dn := c.pools[1].pick(t)
	dn.routed++
	f.pre = a
	f.x.src, f.x.dst = nd.idx, dn.idx
	dn.xq = append(dn.xq, int(a.id))
	c.send(dn, t)
}

// sendable reports whether nd can set aside blocks for the head of its
// transfer queue now.
func (c *cluster) sendable(nd *node) bool {
	if len(nd.xq) == 0 || nd.l.requeued > 0 {
		return false
	}
	return nd.l.blocksFor(c.inbound(nd, nd.xq[0])) <= nd.l.free
}

// inbound returns the tokens whose blocks decode scheduler nd sets
// aside for request id: its prompt and first output token, whose KV the
// first decode step computes (its whole output with Reserve admission).
func (c *cluster) inbound(nd *node, id int) int {
	q := &c.fl[id].q
	if nd.l.e.Admission == Reserve {
		return q.Input + q.Output
	}
	return q.Input + 1
}

// send sets aside, at t, blocks of nd for the requests at the head of
// its queue while they fit, and starts their transfers (or, with
// ReserveFirst, their prefills).
func (c *cluster) send(nd *node, t float64) {
	for len(nd.xq) > 0 {
		id := nd.xq[0]
		b := nd.l.reserve(c.inbound(nd, id))
		if b == 0 {
			return
		}
		nd.xq = nd.xq[1:]
		if nd.l.e.ReserveFirst {
			c.prefill(id, t, b)
			continue
		}
		c.start(nd, id, t, b)
	}
}

// prefill hands request id to its prefill scheduler once its decode
// blocks are set aside at t (ReserveFirst): the engine sees it then, or
// when its request overhead is paid, whichever is later; its time
// waiting for the blocks counts between the pools.
func (c *cluster) prefill(id int, t float64, blocks int) {
	f := c.fl[id]
	x, a := &f.x, f.pre
	f.pre = arrival{}
	x.inbound, x.reserved = blocks, t
	pl := c.pools[0]
	arr := float64(a.at)
	a.at = model.Seconds(max(arr, t-float64(pl.e.RequestOverhead)))
	c.xferArea += float64(a.at) - arr
	pl.nodes[x.src].l.push(a)
}

// start sends request id's KV cache from its prefill scheduler to
// decode scheduler nd, which has set blocks aside for it, from t on.
func (c *cluster) start(nd *node, id int, t float64, b int) {
	f := c.fl[id]
	q := f.q
	x := &f.x
	src := c.pools[0].nodes[x.src].inst
	start := max(t, c.linkFree[src])
	ready := start + float64(c.kvTime(src, nd.inst, q.Input))
	c.linkFree[src] = ready
	c.xferArea += ready - x.prefilled
	c.xferBusy += ready - start
	if !nd.l.e.ReserveFirst {
		x.reserved = t
	}
	x.start, x.ready = start, ready
	q.Arrival, q.Cached, q.Prefilled = model.Seconds(ready), 0, true
	f.m1 = Metrics{ID: q.ID, Arrival: q.Arrival, Input: q.Input, Output: q.Output, FirstToken: f.m0.FirstToken}
	a := arrivalOf(&q, id)
	a.m, a.blocks = &f.m1, int32(b)
	nd.l.push(a)
	c.push(event{t: ready, id: id, kind: arrived})
}

// arrived frees the prefill blocks of a request whose KV cache has
// arrived at its decode scheduler.
func (c *cluster) arrived(e event) {
	f := c.fl[e.id]
	x := &f.x
	c.pools[0].nodes[x.src].l.unhold(x.blocks, e.t)
	x.freed = true
	c.heldArea += float64(x.blocks) * (e.t - x.held)
	c.release(e.id, f)
}

// kvTime prices the move of tokens tokens of KV cache from prefill
// instance i to decode instance j: the bytes of the prompt's KV cache
// (all layers and heads, once), split over min(prefill devices, decode
// devices) pairs sending at once, each over its own link
// (sim.KVTransfer).
func (c *cluster) kvTime(i, j, tokens int) model.Seconds {
	k := c.d.Link
	if k == nil {
		return 0
	}
	gp, gd := c.d.Serve.GPUs(), c.d.Decode.GPUs()
	link := k.Inter
	if pn := k.PerNode; pn > 0 {
		a0, a1 := i*gp, (i+1)*gp-1
		off := c.d.Serve.Instances * gp
		b0, b1 := off+j*gd, off+(j+1)*gd-1
		if a0/pn == a1/pn && a0/pn == b0/pn && b0/pn == b1/pn {
			link = k.Intra
		}
	}
	return sim.KVTransfer(model.Bytes(float64(c.bytesPer)*float64(tokens)), min(gp, gd), link)
}
