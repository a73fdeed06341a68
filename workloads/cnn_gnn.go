package workloads

import (
	"fmt"

	"github.com/perfsim/perfsim/model"
)

// The layers of a graph network on a sampled subgraph (R-GAT): node
// features gathered from a feature store, and graph-attention
// convolutions over one relation each. A sample is one seed node with
// the subgraph sampled around it; a node set is a feature map of
// channels × nodes (h = nodes, w = 1), so that a per-node linear layer
// is a GEMM of M = nodes.

// gather reads the features of `lookups` nodes of one node type a
// sample from a feature store of rows × out (the dataset's node
// features, not parameters), stored in dtype (the weights' type when
// not given). The gather is memory-bound: lookups · out elements read at
// random rows, written in the activation type as a node map of out ×
// lookups.
func (pl *planner) gather(l *Layer, stage string, bad func(k, format string, args ...any)) chw {
	n := len(pl.errs)
	switch {
	case l.Rows < 0:
		bad("rows", "must be positive, got %d", l.Rows)
	case l.Rows == 0:
		bad("rows", "missing: a gather needs its store's rows (the nodes of the type)")
	}
	switch {
	case l.Lookups == 0:
		bad("lookups", "missing: a gather needs the rows a sample reads")
	case l.Lookups > l.Rows && l.Rows > 0:
		bad("lookups", "%d rows a sample from a store of %d rows", l.Lookups, l.Rows)
	}
	if l.Out == 0 {
		bad("out", "missing: a gather needs its row size (out)")
	}
	if l.Input != "" {
		bad("input", "a gather reads its store, not an earlier layer")
	}
	if l.Out > 0 && float64(l.Rows)*float64(l.Out) > maxElems {
		bad("rows", "%d rows of %d is over the limit of %d elements: %w", l.Rows, l.Out, int64(maxElems), ErrTooLarge)
	}
	var store model.DType
	if l.DType != "" {
		d, err := model.ParseDType(l.DType)
		if err != nil {
			bad("dtype", "%v", err)
		}
		store = d
	}
	if len(pl.errs) > n {
		return chw{max(l.Out, 1), 1, 1, 1}
	}
	elems := float64(l.Lookups) * float64(l.Out)
	pl.emit(cnnOp{name: l.Name, stage: stage, class: model.ClassEmbedding, kind: "gather", table: true,
		elems: elems, reads: 1, store: store})
	pl.p.stores = append(pl.p.stores, featureStore{elems: float64(l.Rows) * float64(l.Out), perSample: elems, dtype: store})
	return chw{l.Out, 1, l.Lookups, 1}
}

// gat is one relation's graph-attention convolution (DGL's GATConv, as
// R-GAT's HeteroGraphConv runs one per edge type): the input is the
// source nodes' map (c × sources); nodes destination nodes, of the
// relation's destination type, receive edges messages. The shared projection W
// (c → out, no bias; out = heads × head size) is a GEMM over the sources
// and another over the destinations (DGL projects both sides of a
// block; the destinations' rows are the first of their own type's map,
// of the same width c: the input's where the relation's ends are of one
// type, else the map named in from); then, memory-bound: each node's score per head (attn_l·Wh on
// the sources, attn_r·Wh on the destinations), per edge the leaky ReLU
// of the sum and the softmax over each destination's edges, and the sum
// of the edges' source rows weighted by them (each edge reads its
// source's out-wide row at random), plus the bias. Parameters: c·out +
// 3·out (W, attn_l, attn_r, bias). A relation with no edges in the block
// runs no kernel (HeteroGraphConv skips it) but keeps its weights: edges
// and nodes 0.
func (pl *planner) gat(l *Layer, in chw, stage string, bad func(k, format string, args ...any)) chw {
	n := len(pl.errs)
	if l.Out == 0 {
		bad("out", "missing: a gat needs its output features (heads × head size)")
	}
	if l.Heads == 0 {
		bad("heads", "missing: a gat needs its heads")
	} else if l.Heads > 0 && l.Out%l.Heads != 0 { // a negative count is reported with the sizes
		bad("heads", "%d output features do not split into %d heads", l.Out, l.Heads)
	}
	src := in.d * in.h * in.w
	// The destinations are among their own type's nodes: the input's, or,
	// where the relation joins two node types, the map named in from.
	dst, dstName := in, "the input"
	if l.From != "" {
		s, ok := pl.shapes[l.From]
		switch {
		case !ok:
			bad("from", "no earlier layer is named %q", l.From)
		case s.c != in.c:
			bad("from", "%q has %d features a node, the input %d: a gat projects both with one weight", l.From, s.c, in.c)
		default:
			dst, dstName = s, fmt.Sprintf("%q", l.From)
		}
	}
	switch {
	case l.Edges > 0 && l.Nodes == 0:
		bad("nodes", "missing: %d edges need their destination nodes", l.Edges)
	case l.Edges == 0 && l.Nodes > 0:
		bad("edges", "missing: %d destination nodes need the edges into them", l.Nodes)
	case l.Nodes > dst.d*dst.h*dst.w:
		bad("nodes", "%d destination nodes, but %s (%s) has %d (the destinations are among their own type's nodes)", l.Nodes, dstName, dst, dst.d*dst.h*dst.w)
	}
	if len(pl.errs) > n {
		return chw{max(l.Out, 1), 1, max(l.Nodes, 1), 1}
	}
	c, out := in.c, l.Out
	pl.p.params += float64(c)*float64(out) + 3*float64(out)
	if l.Edges == 0 {
		return chw{out, 1, 0, 1}
	}
	pl.emit(cnnOp{name: l.Name + ".proj_src", stage: stage, class: model.ClassQKV, gemm: true, m: src, k: c, n: out, groups: 1})
	pl.emit(cnnOp{name: l.Name + ".proj_dst", stage: stage, class: model.ClassQKV, gemm: true, m: l.Nodes, k: c, n: out, groups: 1})
	// Written: the destinations' rows. Read: the sources' and the
	// destinations' projected rows once for their scores, and each edge's
	// source row for the weighted sum; per edge a score per head
	// (2 for the leaky ReLU of the sum, 5 for the softmax's exponential,
	// sum and division) and 2 per element of the weighted sum; per node
	// 2 per element for its score.
	e, d, s := float64(l.Edges), float64(l.Nodes), float64(src)
	elems := d * float64(out)
	reads := (e + s + d) * float64(out) / elems
	work := e*(7*float64(l.Heads)+2*float64(out)) + 2*(s+d)*float64(out) + elems
	pl.emit(cnnOp{name: l.Name + ".attn", stage: stage, class: model.ClassAttention, kind: "gat",
		elems: elems, flopsPer: work / elems, reads: reads})
	return chw{out, 1, l.Nodes, 1}
}

// A featureStore is the node features one gather layer reads: the whole
// store, what a sample reads, and the stored type (Invalid: the
// weights').
type featureStore struct {
	elems, perSample float64
	dtype            model.DType
}

// FeatureBytes returns the feature stores a graph network gathers from
// (the dataset's node features, not parameters), in their stored types,
// weights in w where a store gives none; 0 for other models.
func (m *Model) FeatureBytes(w model.DType) model.Bytes {
	var b model.Bytes
	if m.cnn != nil {
		for _, s := range m.cnn.stores {
			b += storeType(s.dtype, w).Bytes(s.elems)
		}
	}
	return b
}

// GatheredBytes returns what a batch of samples reads from the feature
// stores, in their stored types (w where a store gives none).
func (m *Model) GatheredBytes(batch int, w model.DType) model.Bytes {
	var b model.Bytes
	if m.cnn != nil && batch > 0 {
		for _, s := range m.cnn.stores {
			b += storeType(s.dtype, w).Bytes(s.perSample * float64(batch))
		}
	}
	return b
}

func storeType(d, w model.DType) model.DType {
	if d == model.Invalid {
		return w
	}
	return d
}
