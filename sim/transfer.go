package sim

import "github.com/perfsim/perfsim/model"

// KVBytes returns the KV cache of tokens tokens of one sequence on the
// whole replica: every layer and every KV head once, in the scenario's
// KV data type (what a disaggregated deployment moves from a prefill to
// a decode instance; heads replicated by TP beyond the KV heads are not
// counted twice).
func (p *Pricer) KVBytes(tokens int) model.Bytes {
	if tokens <= 0 {
		return 0
	}
	w, kv := p.r.w, p.r.sc.KV
	if sh, ok := w.(Sharder); ok {
		return sh.KVBytes(tokens, 1, kv)
	}
	return model.Bytes(float64(w.KVBytesPerToken(kv)) * float64(tokens))
}

// KVTransfer returns the time to move bytes of KV cache between two
// replicas when streams device pairs send their shares at once, each
// over its own link l (a device's NVLink within a node, its share of the
// node's NICs across nodes): a point-to-point send of bytes/streams,
// model.CollectiveTime's Base + Latency + size/(Bandwidth·efficiency).
func KVTransfer(bytes model.Bytes, streams int, l model.Link) model.Seconds {
	if bytes <= 0 {
		return 0
	}
	s := model.Bytes(float64(bytes) / float64(max(streams, 1)))
	return model.CollectiveTime(model.Collective{Kind: model.SendRecv, Size: s, Ranks: 2}, l)
}
