package sim

import (
	"maps"
	"math"
	"math/bits"
	"sync"

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
	gemmSlots   = 256 // each a power of two
	attnSlots   = 256
	ewSlots     = 128
	gatherSlots = 32
	collSlots   = 64
	groupSlots  = 64
	scanSlots   = 16
)

// A priceCache holds the prices of one processor's kernels, of every
// kind: a scenario that recurs (a serving loop, BenchmarkSimulate) prices
// nothing again, and one that changes only in its lengths (a sweep)
// prices only the kernels that change.
type priceCache struct {
	gen   uint64          // slots of another generation are empty
	proc  uint64          // the processor's identity shared by every runner (procIDs)
	from  uint64          // derived: the generation of the cache it was derived from
	key   procKey         // the processor the prices are for (or, derive, were derived from)
	owner model.Processor // the processor the prices are for, its maps copied
	gemm  [gemmSlots]slot[model.GEMM]
	attn  [attnSlots]slot[model.Attention]
	ew    [ewSlots]slot[model.Elementwise]
	gath  [gatherSlots]slot[model.Gather]
	coll  [collSlots]slot[collKey]
	group [groupSlots]slot[model.GroupedGEMM]
	scan  [scanSlots]slot[model.Scan]
	sums  [sumSlots]sumEntry
	// passes are phases priced from decompositions the runner holds
	// (passcache.go: passHit, passStore); next is the slot the next one takes.
	passes [passSlots]passEntry
	next   int
}

// sumSlots is how many summed generations of an attention kernel a
// price cache keeps (a power of two).
const sumSlots = 32

// A sumEntry is an attention kernel's cost summed over the decode steps
// of a generation (sumOver), from a0 at the first step to a1 at the last.
type sumEntry struct {
	gen    uint64
	a0, a1 model.Attention
	steps  int
	s      sum
}

// sumSlot returns the entry of the sum of a0 to a1 over steps in pc and
// whether it holds it.
func (pc *priceCache) sumSlot(a0, a1 model.Attention, steps int) (*sumEntry, bool) {
	h := mix(uint64(a0.Batch), uint64(a0.KVLen), uint64(a1.KVLen), uint64(steps), uint64(a0.Heads)<<32|uint64(a0.KVHeads))
	e := &pc.sums[h&(sumSlots-1)]
	return e, e.gen == pc.gen && e.steps == steps && e.a0 == a0 && e.a1 == a1
}

// A collKey is a collective and the link it crosses (the system's, which
// the processor does not say).
type collKey struct {
	k model.Collective
	l model.Link
}

// A slot is one remembered price.
type slot[K comparable] struct {
	gen uint64
	k   K
	c   model.Cost
	rel float64
}

// lookup returns the slot of k (hashed h) in slots and whether it holds
// k's price in generation gen.
func lookup[K comparable](slots []slot[K], h uint64, k K, gen uint64) (*slot[K], bool) {
	s := &slots[h&uint64(len(slots)-1)]
	return s, s.gen == gen && s.k == k
}

// use readies pc for processor p, keeping its prices when they are p's.
func (pc *priceCache) use(p *model.Processor) *priceCache {
	if pc.gen != 0 && pc.key.same(p) {
		return pc
	}
	pc.renew(p, p)
	return pc
}

// derived returns the processor that derive made from the processor of
// src the last time, and pc, its prices kept, when src still holds the
// prices of that processor (its generation is the same); else it derives
// it afresh into dst and starts pc anew. (The decode coster's processor,
// its launches capped for CUDA graphs, is derived from the run's
// processor at every run: checking the source's generation, which use
// has just confirmed, is cheaper than the derivation.)
func (pc *priceCache) derived(src *priceCache, dst *model.Processor, derive func()) *priceCache {
	if pc.gen != 0 && src.gen != 0 && pc.from == src.gen {
		*dst = pc.owner
		return pc
	}
	derive()
	pc.renew(dst, dst)
	pc.from = src.gen
	return pc
}

// renew starts a new generation for processor p, whose identity is key.
func (pc *priceCache) renew(key, p *model.Processor) {
	pc.gen++ // 64 bits: never wraps
	pc.key = keyOf(key)
	pc.proc = procIDs.of(key)
	pc.owner = *p
	pc.owner.Matrix, pc.owner.Vector = maps.Clone(p.Matrix), maps.Clone(p.Vector)
	pc.owner.Eff.GEMM = maps.Clone(p.Eff.GEMM)
}

// gemmSlot returns the slot of g in pc and whether it holds g's price.
func (pc *priceCache) gemmSlot(g model.GEMM) (*slot[model.GEMM], bool) {
	h := mix(uint64(g.M), uint64(g.K), uint64(g.N), uint64(g.Batch)^math.Float64bits(g.AElems)^math.Float64bits(g.CElems)<<1,
		uint64(g.A)|uint64(g.B)<<8|uint64(g.C)<<16)
	return lookup(pc.gemm[:], h, g, pc.gen)
}

// attnSlot returns the slot of a in pc and whether it holds a's price.
// The hash reads the dimensions; the comparison, every field.
func (pc *priceCache) attnSlot(a model.Attention) (*slot[model.Attention], bool) {
	// The window and the value width are hashed too: a sliding and a
	// full layer's decode kernels (gpt-oss, Gemma) differ only in the
	// window, and in one slot they would evict each other at every step.
	lat := uint64(0)
	if a.Latent {
		lat = 1
	}
	h := mix(uint64(a.Batch), uint64(a.Heads)<<32|uint64(a.KVHeads), uint64(a.QLen)|uint64(a.Window)<<32, uint64(a.KVLen),
		uint64(a.HeadDim)|uint64(a.VDim)<<16|uint64(a.DType)<<32|uint64(a.KVDType)<<40|lat<<48)
	return lookup(pc.attn[:], h, a, pc.gen)
}

// mix hashes five words (multiply and xor-shift, after splitmix64).
func mix(a, b, c, d, e uint64) uint64 {
	h := a*0x9e3779b97f4a7c15 ^ b*0xbf58476d1ce4e5b9 ^ c*0x94d049bb133111eb ^ d*0x2545f4914f6cdd1d ^ e*0xff51afd7ed558ccd
	h ^= h >> 31
	h *= 0xd6e8feb86659fd93
	return h ^ h>>32
}

func fbits(x float64) uint64 { return math.Float64bits(x) }

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

// cached is cost through c's price cache (c.pc not nil): each kind of
// kernel in its own table, the run's data-type checks made again on a
// hit (price makes them on a miss).
func (c *coster) cached(k model.Kernel) (model.Cost, float64) {
	pc := c.pc
	switch kk := k.(type) {
	case model.GEMM:
		return c.priceGEMM(kk)
	case model.Attention:
		return c.priceAttention(kk)
	case model.Elementwise:
		h := mix(fbits(kk.Elements), fbits(float64(kk.Work)), fbits(float64(kk.Read)), fbits(float64(kk.Written)), uint64(len(kk.Kind)))
		return cacheOr(c, pc.ew[:], h, kk, k, model.Invalid)
	case model.Gather:
		h := mix(uint64(kk.Rows), uint64(kk.Width), uint64(kk.DType), 0, 0)
		return cacheOr(c, pc.gath[:], h, kk, k, model.Invalid)
	case model.Collective:
		key := collKey{kk, c.link(kk)}
		h := mix(uint64(kk.Kind), fbits(float64(kk.Size)), uint64(kk.Ranks), uint64(kk.Tier), fbits(float64(key.l.Bandwidth)))
		return cacheOr(c, pc.coll[:], h, key, k, model.Invalid)
	case model.GroupedGEMM:
		h := mix(uint64(kk.Rows), uint64(kk.K), uint64(kk.N), fbits(kk.Experts), uint64(kk.A)|uint64(kk.B)<<8|uint64(kk.C)<<16)
		return cacheOr(c, pc.group[:], h, kk, k, kk.Compute())
	case model.Scan:
		h := mix(uint64(kk.Batch), uint64(kk.Tokens), uint64(kk.Heads)<<32|uint64(kk.HeadDim), uint64(kk.State)<<32|uint64(kk.Groups), uint64(kk.Chunk))
		return cacheOr(c, pc.scan[:], h, kk, k, kk.DType)
	}
	return c.price(k)
}

// cacheOr returns the price of k (key in slots, hashed h) from c's
// cache, pricing it on a miss. d is the data type price checks for the
// kernel's kind, Invalid for none.
func cacheOr[K comparable](c *coster, slots []slot[K], h uint64, key K, k model.Kernel, d model.DType) (model.Cost, float64) {
	s, ok := lookup(slots, h, key, c.pc.gen)
	if ok {
		if d != model.Invalid {
			c.check(d)
		}
		return s.c, s.rel
	}
	co, rel := c.price(k)
	*s = slot[K]{gen: c.pc.gen, k: key, c: co, rel: rel}
	return co, rel
}

// procIDs names the processors runners have priced on, the same number
// for processors that price alike (procKey.same) whatever the runner, so
// that what one runner priced can serve another (a chunked prefill's
// chunks: totals.go). It keeps the last procIDSlots; a processor dropped
// and seen again gets a new number (numbers are never reused), so a
// number always names one processor.
var procIDs procNames

// procIDSlots is how many processors procIDs keeps.
const procIDSlots = 16

type procNames struct {
	sync.Mutex
	keys [procIDSlots]procKey
	ids  [procIDSlots]uint64 // 0: empty
	last uint64              // the last number given
}

// of returns the number of processor p, giving it the next one when it is
// new (the residual tables a kept key holds by address stay alive, so
// their addresses cannot name another table).
func (n *procNames) of(p *model.Processor) uint64 {
	n.Lock()
	defer n.Unlock()
	for i := range n.keys {
		if n.ids[i] != 0 && n.keys[i].same(p) {
			return n.ids[i]
		}
	}
	n.last++
	i := n.last % procIDSlots
	n.keys[i], n.ids[i] = keyOf(p), n.last
	return n.last
}

// sameProcessor reports whether a and b price every kernel alike: equal
// scalars and parameters, residual tables at the same addresses.
// TestSameProcessor fails when model.Processor or model.Efficiency gains
// a field this does not compare.
func sameProcessor(a, b *model.Processor) bool {
	k := keyOf(a)
	return k.same(b)
}

// A procKey is what identifies a processor, in a form that compares
// without hashing: its scalars, and its tables by data type in arrays.
type procKey struct {
	p              model.Processor // the scalars; the maps nil
	matrix, vector flatMap[model.FLOPRate]
	gemm           flatMap[model.GEMMParams]
	ok             bool // every table fitted its array (a valid one does)
}

// keyOf returns p's key.
func keyOf(p *model.Processor) procKey {
	k := procKey{p: *p}
	k.p.Matrix, k.p.Vector, k.p.Eff.GEMM = nil, nil, nil
	ok1, ok2, ok3 := k.matrix.set(p.Matrix), k.vector.set(p.Vector), k.gemm.set(p.Eff.GEMM)
	k.ok = ok1 && ok2 && ok3
	return k
}

// same reports whether b is the processor k identifies.
func (k *procKey) same(b *model.Processor) bool {
	a := &k.p
	return k.ok && a.Name == b.Name && a.ComputeUnits == b.ComputeUnits && a.Bandwidth == b.Bandwidth && a.L2 == b.L2 &&
		a.Launch == b.Launch && a.SharedBandwidth == b.SharedBandwidth && a.CPU == b.CPU && a.Eff.Memory == b.Eff.Memory && a.Eff.Attention == b.Eff.Attention &&
		a.Eff.MLA == b.Eff.MLA && a.Eff.MoE == b.Eff.MoE &&
		a.Eff.Vector == b.Eff.Vector && a.PowerModel == b.PowerModel && a.Changed == b.Changed &&
		k.matrix.same(b.Matrix) && k.vector.same(b.Vector) && k.gemm.same(b.Eff.GEMM) && sameKept(a.Kept, b.Kept)
}

// sameKept reports whether two what-if processors' Kept processors
// (model.Processor.Kept) price alike: both nil, the same one, or equal
// (a run derives its processor from the device afresh, and with it a new
// Kept).
func sameKept(a, b *model.Processor) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil {
		return false
	}
	k := keyOf(a)
	return k.same(b)
}

// A flatMap is a map by data type as an array (data types are small
// integers): compared with a map by ranging over it, with no hashing.
type flatMap[V comparable] struct {
	n    int
	has  uint32
	vals [32]V
}

// set makes f hold m, reporting false when a key does not fit.
func (f *flatMap[V]) set(m map[model.DType]V) bool {
	*f = flatMap[V]{n: len(m)}
	for d, v := range m {
		if int(d) >= len(f.vals) {
			return false
		}
		f.has |= 1 << d
		f.vals[d] = v
	}
	return true
}

// same reports whether m holds what f holds: as many keys, and each of
// f's in m with its value. It looks f's keys up rather than ranging over
// m, whose iterator writes pointers (write barriers while the collector
// marks) at every step.
func (f *flatMap[V]) same(m map[model.DType]V) bool {
	if len(m) != f.n {
		return false
	}
	for has := f.has; has != 0; has &= has - 1 {
		d := model.DType(bits.TrailingZeros32(has))
		if v, ok := m[d]; !ok || v != f.vals[d] {
			return false
		}
	}
	return true
}
