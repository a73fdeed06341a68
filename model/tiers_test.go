package model

import (
	"math"
	"testing"
)

var (
	nvlink = Link{Bandwidth: 450e9, Latency: 2e-6, Efficiency: 0.8}
	ndr    = Link{Bandwidth: 50e9, Latency: 5e-6, Efficiency: 0.85}
)

// Within one node the tiered time is the single-tier ring.
func TestTieredTime_oneNodeIsRing(t *testing.T) {
	for _, k := range []CollectiveKind{AllReduce, AllGather, ReduceScatter, AllToAll} {
		got, _ := TieredTime(k, 64e6, Group{Ranks: 8, PerNode: 8}, nvlink, ndr, Auto)
		want := CollectiveTime(Collective{Kind: k, Size: 64e6, Ranks: 8}, nvlink)
		if got != want {
			t.Errorf("TieredTime(%s, 8 in one node) = %v, want CollectiveTime %v", k, got, want)
		}
	}
}

// One rank per node: the ring's bandwidth term is the ring traffic over
// the scale-out link (hand calculation: 2·7/8·1 GB / (50 GB/s·0.85)).
func TestTieredTime_onePerNode(t *testing.T) {
	got, alg := TieredTime(AllReduce, 1e9, Group{Ranks: 8, PerNode: 1}, nvlink, ndr, Ring)
	want := 14*5e-6 + 2*7.0/8*1e9/(50e9*0.85)
	if alg != Ring || math.Abs(float64(got)-want) > 1e-12*want {
		t.Errorf("ring all-reduce of 1 GB over 8 nodes = %v (%s), want %v s", got, alg, want)
	}
}

// All members of a node drive their own NICs, so 8 per node cross the
// fabric 8 times faster than one per node, up to the NVLink bound.
func TestTieredTime_perNodeParallelNICs(t *testing.T) {
	one, _ := TieredTime(AllGather, 1e9, Group{Ranks: 64, PerNode: 1}, nvlink, ndr, Auto)
	eight, _ := TieredTime(AllGather, 1e9, Group{Ranks: 64, PerNode: 8}, nvlink, ndr, Auto)
	if r := float64(one) / float64(eight); r < 7 || r > 8.5 {
		t.Errorf("all-gather over 64 ranks: 1 per node %v, 8 per node %v: ratio %.2f, want about 8", one, eight, r)
	}
}

// NCCL's choice: the tree for small buffers at scale, the ring for
// large ones, and Auto never slower than either.
func TestTieredTime_algorithmChoice(t *testing.T) {
	for _, tt := range []struct {
		g    Group
		size Bytes
		want Algorithm
	}{{Group{1024, 8}, 64e3, Tree}, {Group{1024, 1}, 1e6, Tree}, {Group{64, 8}, 4e9, Ring}, {Group{16, 1}, 1e9, Ring}} {
		g := tt.g
		auto, alg := TieredTime(AllReduce, tt.size, g, nvlink, ndr, Auto)
		ring, _ := TieredTime(AllReduce, tt.size, g, nvlink, ndr, Ring)
		tree, _ := TieredTime(AllReduce, tt.size, g, nvlink, ndr, Tree)
		if alg != tt.want {
			t.Errorf("all-reduce of %v over %+v: picked %s (ring %v, tree %v), want %s", tt.size, g, alg, ring, tree, tt.want)
		}
		if auto > ring || auto > tree {
			t.Errorf("auto %v slower than ring %v or tree %v", auto, ring, tree)
		}
	}
}

// Raising either link's bandwidth never slows any collective.
func TestTieredTime_monotoneInBandwidth(t *testing.T) {
	kinds := []CollectiveKind{AllReduce, AllGather, ReduceScatter, AllToAll, SendRecv}
	groups := []Group{{8, 8}, {64, 8}, {64, 1}, {2, 1}, {16, 4}, {1024, 8}}
	for _, k := range kinds {
		for _, g := range groups {
			for _, a := range []Algorithm{Auto, Ring, Tree, Hierarchical} {
				for _, s := range []Bytes{1e3, 1e6, 1e9} {
					base, _ := TieredTime(k, s, g, nvlink, ndr, a)
					fi, fo := nvlink, ndr
					fi.Bandwidth *= 2
					fo.Bandwidth *= 2
					up1, _ := TieredTime(k, s, g, fi, ndr, a)
					up2, _ := TieredTime(k, s, g, nvlink, fo, a)
					if up1 > base || up2 > base {
						t.Errorf("%s %v over %+v (%s): %v; doubled intra %v, doubled inter %v", k, s, g, a, base, up1, up2)
					}
				}
			}
		}
	}
}

// Hierarchical all-reduce: the nodes exchange only one shard per member.
func TestTieredTime_hierarchical(t *testing.T) {
	g := Group{Ranks: 64, PerNode: 8}
	h, alg := TieredTime(AllReduce, 1e9, g, nvlink, ndr, Hierarchical)
	rs := CollectiveTime(Collective{Kind: ReduceScatter, Size: 1e9, Ranks: 8}, nvlink)
	ag := CollectiveTime(Collective{Kind: AllGather, Size: 1e9, Ranks: 8}, nvlink)
	x, _ := TieredTime(AllReduce, 1e9/8, Group{Ranks: 8, PerNode: 1}, nvlink, ndr, Auto)
	if alg != Hierarchical || h != rs+x+ag {
		t.Errorf("hierarchical = %v (%s), want RS %v + AR %v + AG %v", h, alg, rs, x, ag)
	}
}
