package model

import "math"

// Algorithm is how a collective is carried out over a two-tier network.
type Algorithm uint8

// The algorithms. Auto picks what NCCL's tuner would: the cheapest of
// those it implements for the kind (ring and tree for an all-reduce,
// ring for the others), by the same alpha-beta estimates.
const (
	Auto         Algorithm = iota
	Ring                   // one ring through every rank; the crossings between nodes bound its bandwidth
	Tree                   // NCCL's double binary tree between nodes, a chain within each (all-reduce only)
	Hierarchical           // reduce-scatter in the node, all-reduce between nodes, all-gather in the node
	Direct                 // point to point: send/recv and all-to-all
)

func (a Algorithm) String() string {
	return [...]string{"auto", "ring", "tree", "hierarchical", "direct"}[a]
}

// A Group is where a collective's ranks sit: Ranks devices, PerNode of
// them in each node (scale-up domain), so ⌈Ranks/PerNode⌉ nodes.
type Group struct {
	Ranks, PerNode int
}

// nodes returns the nodes g spans.
func (g Group) nodes() int {
	k := max(1, min(g.PerNode, g.Ranks))
	return (g.Ranks + k - 1) / k
}

// TieredTime prices a collective of kind k over size bytes (the whole
// buffer, as NCCL counts it) among the ranks of g, whose members talk
// over intra within a node and over inter between nodes, by algorithm a
// (Auto: NCCL's choice). It returns the time and the algorithm used.
//
// Within one node it is CollectiveTime over intra. Across nodes, every
// member of a node drives its own NIC (inter is the scale-out bandwidth
// per device), so the PerNode members of a node cross the fabric in
// parallel:
//
//	ring:         Base + steps·(hop latency) + traffic / min(B_intra, PerNode·B_inter)
//	tree:         Base + 2·(⌈log₂ nodes⌉·l_inter + (PerNode−1)·l_intra) + 2·S / (0.92·min(B_intra, PerNode·B_inter))
//	hierarchical: RS(S, PerNode, intra) + AR(S/PerNode, nodes, inter) + AG(S, PerNode, intra)
//	all-to-all:   Base + l_inter + max((n−k)/n·S / B_inter, (k−1)/n·S / B_intra)
//	send/recv:    Base + l + S / B, over inter when the pair spans two nodes (Group{2, 1})
//
// with traffic the ring's bytes per rank (Collective.Traffic), steps its
// latency terms (Collective.Steps), each hop paying the latency of its
// tier in proportion (nodes of the n hops cross the fabric), and every
// bandwidth taken at the link's size-dependent efficiency. The tree's
// bandwidth term follows NCCL's: each rank sends and receives the buffer
// once up and once down the tree, about the ring's 2(n−1)/n·S, so the
// ring wins for large buffers and the tree, with its logarithmic
// latency, for small ones at scale (NCCL's tuning, ncclTopoTuneModel).
func TieredTime(k CollectiveKind, size Bytes, g Group, intra, inter Link, a Algorithm) (Seconds, Algorithm) {
	n := g.Ranks
	if size <= 0 || n <= 1 {
		return 0, Ring
	}
	per := max(1, min(g.PerNode, n))
	nodes := g.nodes()
	if k == SendRecv {
		l := intra
		if nodes > 1 {
			l = inter
		}
		return CollectiveTime(Collective{Kind: SendRecv, Size: size, Ranks: 2}, l), Direct
	}
	if nodes == 1 {
		return CollectiveTime(Collective{Kind: k, Size: size, Ranks: n}, intra), Ring
	}
	c := Collective{Kind: k, Size: size, Ranks: n}
	// Each link's rank factor at the ring's share of the message.
	share := float64(c.Traffic()) / float64(size)
	bIntra := float64(intra.Bandwidth) * intra.ringEfficiency(size, share)
	bInter := float64(inter.Bandwidth) * inter.ringEfficiency(size, share)
	// The bottleneck of a pipelined ring through the node and out of it.
	bw := float64(per) * bInter
	if per > 1 {
		bw = math.Min(bw, bIntra)
	}
	base := Seconds(math.Max(nonNeg(float64(intra.Base)), nonNeg(float64(inter.Base))))
	if k == AllToAll {
		nf, kf := float64(n), float64(per)
		t := float64((nf - kf) / nf * float64(size) / bInter)
		if per > 1 {
			t = math.Max(t, (kf-1)/nf*float64(size)/bIntra)
		}
		return base + inter.Latency + Seconds(t), Direct
	}
	hop := (float64(n-nodes)*float64(intra.Latency) + float64(nodes)*float64(inter.Latency)) / float64(n)
	ring := base + Seconds(float64(c.Steps())*hop+float64(c.Traffic())/bw)
	if k != AllReduce {
		return ring, Ring
	}
	depth := math.Ceil(math.Log2(float64(nodes)))
	tree := base + Seconds(2*(depth*float64(inter.Latency)+float64(per-1)*float64(intra.Latency))+2*float64(size)/(treeBandwidth*bw))
	switch a {
	case Ring:
		return ring, Ring
	case Tree:
		return tree, Tree
	case Hierarchical:
		return hierarchical(size, per, nodes, intra, inter), Hierarchical
	}
	if tree < ring {
		return tree, Tree
	}
	return ring, Ring
}

// treeBandwidth is the share of the ring's bus bandwidth NCCL's tuner
// credits a tree with (NCCL src/graph/tuning.cc: the tree's bus
// bandwidth times .92).
const treeBandwidth = 0.92

// hierarchical prices an all-reduce as a reduce-scatter among the per
// members of each node, an all-reduce of each member's shard among the
// nodes (the cheaper of ring and tree, every member on its own NIC), and
// an all-gather in the node; the three phases run one after the other.
func hierarchical(size Bytes, per, nodes int, intra, inter Link) Seconds {
	rs := CollectiveTime(Collective{Kind: ReduceScatter, Size: size, Ranks: per}, intra)
	ag := CollectiveTime(Collective{Kind: AllGather, Size: size, Ranks: per}, intra)
	x, _ := TieredTime(AllReduce, size/Bytes(per), Group{Ranks: nodes, PerNode: 1}, intra, inter, Auto)
	return rs + x + ag
}
