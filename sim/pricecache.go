package sim

import (
	"maps"

	"github.com/perfsim/perfsim/model"
)

// Prices remembered between runs. A sweep or a serving loop runs many
// scenarios on one device, and most of their GEMMs and attention kernels
// recur (a decode step's GEMMs depend on the batch, not on the lengths).
// Pricing one is the simulator's costliest step (the tile search of
// model.GEMMDetail, the soft maximum's powers), so each pooled runner
// keeps the prices it computed, by kernel, in fixed-size tables (no
// growth with the points run: a new kernel overwrites the one in its
// slot). The tables belong to one processor: a run on another processor
// (another device, another calibration, CUDA graphs or not) starts them
// afresh.
//
// What identifies a processor is its value: every scalar and parameter
// table (compared at each run: sameProcessor), and its residual tables by
// address (loaded tables are never changed in place; the cache holds the
// processor, so that an address cannot be reused by another table while
// its prices are kept).

const (
	gemmSlots = 256 // a power of two
	attnSlots = 256 // a power of two
)

// A priceCache holds the prices of one processor's kernels.
type priceCache struct {
	gen   uint32          // slots of another generation are empty
	owner model.Processor // the processor the prices are for, its maps copied
	gemm  [gemmSlots]slot[model.GEMM]
	attn  [attnSlots]slot[model.Attention]
}

// A slot is one remembered price.
type slot[K comparable] struct {
	gen uint32
	k   K
	c   model.Cost
	rel float64
}

// use readies pc for processor p, keeping its prices when they are p's.
func (pc *priceCache) use(p *model.Processor) *priceCache {
	if pc.gen != 0 && sameProcessor(&pc.owner, p) {
		return pc
	}
	pc.gen++
	if pc.gen == 0 { // wrapped: clear for real
		*pc = priceCache{gen: 1}
	}
	pc.owner = *p
	pc.owner.Matrix, pc.owner.Vector = maps.Clone(p.Matrix), maps.Clone(p.Vector)
	pc.owner.Eff.GEMM = maps.Clone(p.Eff.GEMM)
	return pc
}

// gemmSlot returns the slot of g in pc and whether it holds g's price.
func (pc *priceCache) gemmSlot(g model.GEMM) (*slot[model.GEMM], bool) {
	h := mix(uint64(g.M), uint64(g.K), uint64(g.N), uint64(g.Batch), uint64(g.A)|uint64(g.B)<<8|uint64(g.C)<<16)
	s := &pc.gemm[h&(gemmSlots-1)]
	return s, s.gen == pc.gen && s.k == g
}

// attnSlot returns the slot of a in pc and whether it holds a's price.
// The hash reads the dimensions; the comparison, every field.
func (pc *priceCache) attnSlot(a model.Attention) (*slot[model.Attention], bool) {
	h := mix(uint64(a.Batch), uint64(a.Heads)<<32|uint64(a.KVHeads), uint64(a.QLen), uint64(a.KVLen),
		uint64(a.HeadDim)|uint64(a.DType)<<32|uint64(a.KVDType)<<40)
	s := &pc.attn[h&(attnSlots-1)]
	return s, s.gen == pc.gen && s.k == a
}

// mix hashes five words (multiply and xor-shift, after splitmix64).
func mix(a, b, c, d, e uint64) uint64 {
	h := a*0x9e3779b97f4a7c15 ^ b*0xbf58476d1ce4e5b9 ^ c*0x94d049bb133111eb ^ d*0x2545f4914f6cdd1d ^ e*0xff51afd7ed558ccd
	h ^= h >> 31
	h *= 0xd6e8feb86659fd93
	return h ^ h>>32
}

// priceGEMM is price for a GEMM, through the cache when c has one.
func (c *coster) priceGEMM(g model.GEMM) (model.Cost, float64) {
	if c.pc == nil {
		return c.gemmCost(g)
	}
	s, ok := c.pc.gemmSlot(g)
	if ok {
		c.check(g.Compute()) // the run's own diagnostics
		return s.c, s.rel
	}
	co, rel := c.gemmCost(g)
	*s = slot[model.GEMM]{gen: c.pc.gen, k: g, c: co, rel: rel}
	return co, rel
}

// priceAttention is price for an attention kernel, through the cache when
// c has one.
func (c *coster) priceAttention(a model.Attention) (model.Cost, float64) {
	if c.pc == nil {
		return c.attentionCost(a)
	}
	s, ok := c.pc.attnSlot(a)
	if ok {
		c.check(a.DType)
		return s.c, s.rel
	}
	co, rel := c.attentionCost(a)
	*s = slot[model.Attention]{gen: c.pc.gen, k: a, c: co, rel: rel}
	return co, rel
}

// sameProcessor reports whether a and b price every kernel alike: equal
// scalars and parameters, residual tables at the same addresses.
// TestSameProcessor fails when model.Processor or model.Efficiency gains
// a field this does not compare.
func sameProcessor(a, b *model.Processor) bool {
	return a.Name == b.Name && a.ComputeUnits == b.ComputeUnits && a.Bandwidth == b.Bandwidth && a.L2 == b.L2 &&
		a.Launch == b.Launch && a.CPU == b.CPU && a.Eff.Memory == b.Eff.Memory && a.Eff.Attention == b.Eff.Attention &&
		a.Eff.MLA == b.Eff.MLA && a.Eff.MoE == b.Eff.MoE &&
		a.Eff.Vector == b.Eff.Vector && a.PowerModel == b.PowerModel && sameMap(a.Matrix, b.Matrix) && sameMap(a.Vector, b.Vector) && sameMap(a.Eff.GEMM, b.Eff.GEMM)
}

func sameMap[K, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
