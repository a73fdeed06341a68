package sim

import "github.com/perfsim/perfsim/model"

// Phases remembered between runs. A scenario that recurs (a serving
// loop, BenchmarkSimulate) prices the same decompositions into the same
// rows at every run; the price cache keeps the last few phase reports
// with what identifies their inputs (the decompositions, by their
// identity in the runner's opsCache; the processor, by the cache's
// generation; the system's links, by value), and a run whose phase has
// them all copies the rows instead of pricing them again. The data-type
// checks the pricing made are made again, so that a run's warnings and
// errors are its own.

// passSlots is how many phase reports a price cache keeps.
const passSlots = 8

// A passEntry is one remembered phase report.
type passEntry struct {
	gen    uint64 // the price cache's generation; 0: empty
	key    passKey
	checks uint32 // the data types checked while pricing it, by bit
	ph     PhaseReport
	noRows bool // ph has its totals alone (RunTotals)
}

// A netKey is what a system contributes to prices: the links of its
// tiers and the devices of a node (coster.link).
type netKey struct {
	intra, inter model.Link
	perNode      int
}

func (c *coster) netKey() netKey {
	return netKey{c.intra(), c.sys.Link(model.InterNode), c.sys.DevicesPerNode}
}

// A passKey identifies a phase report's inputs besides the processor.
type passKey struct {
	id0, id1 opsID // the decompositions (id1 that of a decode's last step; zero for one pass)
	steps    int
	name     string
	net      netKey
}

// passKeyOf returns the key of a phase priced from id0 (and id1), and
// whether it can be remembered: c has a price cache and id0 is a
// decomposition the runner holds.
func (c *coster) passKeyOf(name string, id0, id1 opsID, steps int) (passKey, bool) {
	if c.pc == nil || id0 == (opsID{}) {
		return passKey{}, false
	}
	return passKey{id0: id0, id1: id1, steps: steps, name: name, net: c.netKey()}, true
}

// passHit returns the phase report of k from c's price cache, its rows
// in the run's room and its data-type checks made again, and whether it
// was there.
func (c *coster) passHit(k passKey) (PhaseReport, bool) {
	pc := c.pc
	for i := range pc.passes {
		e := &pc.passes[i]
		if e.gen != pc.gen || e.key != k || (e.noRows && !c.noRows) {
			continue
		}
		for d := model.DType(0); d < 32; d++ {
			if e.checks&(1<<d) != 0 {
				c.check(d)
			}
		}
		ph := e.ph
		if c.noRows {
			ph.Ops, ph.Classes = nil, nil
			return ph, true
		}
		ph.Ops = append(c.opRows(len(e.ph.Ops)), e.ph.Ops...)
		ph.Classes = append(c.classRows(len(e.ph.Classes)), e.ph.Classes...)
		return ph, true
	}
	return PhaseReport{}, false
}

// passStore remembers ph, priced from k's inputs since c.calls was last
// cleared, in c's price cache.
func (c *coster) passStore(k passKey, ph *PhaseReport) {
	pc := c.pc
	e := &pc.passes[pc.next]
	pc.next = (pc.next + 1) % passSlots
	ops, classes := append(e.ph.Ops[:0], ph.Ops...), append(e.ph.Classes[:0], ph.Classes...)
	*e = passEntry{gen: pc.gen, key: k, checks: c.calls, ph: *ph, noRows: c.noRows}
	e.ph.Ops, e.ph.Classes = ops, classes
}

// passOnce is pass through c's price cache when ops are a decomposition
// the runner holds (id, nonzero).
func (c *coster) passOnce(name string, id opsID, ops []model.Op) PhaseReport {
	k, ok := c.passKeyOf(name, id, opsID{}, 1)
	if !ok {
		return c.pass(name, ops)
	}
	if ph, hit := c.passHit(k); hit {
		return ph
	}
	c.calls = 0
	ph := c.pass(name, ops)
	c.passStore(k, &ph)
	return ph
}
