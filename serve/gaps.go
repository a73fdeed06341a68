package serve

import (
	"cmp"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// gaps is a multiset of inter-token gaps, each distinct value with its
// count: every request decoded in an iteration has the same gap (the
// iteration), and the pricer's memo gives equal iterations equal times,
// so a run's record grows with its distinct iteration times rather than
// with its output tokens or its iterations (100,000 requests of 2,000
// tokens held 200 million floats as a list; 100,000 ShareGPT requests
// at 5 req/s on one H100 held 3.1 million run-length entries, and hold
// 150,000 values). The run of equal gaps being added is kept apart, so
// that a value's count is looked up once per run, not once per token.
type gaps struct {
	run gap                 // the values being added (n = 0: none)
	n   map[float64]float64 // count by value (whole numbers)
}

type gap struct {
	v float64
	n float64 // how many (a whole number)
}

// add records one gap of v.
func (g *gaps) add(v float64) {
	if g.run.n > 0 && g.run.v == v {
		g.run.n++
		return
	}
	g.flush()
	g.run = gap{v, 1}
}

// flush moves the run into the counts.
func (g *gaps) flush() {
	if g.run.n == 0 {
		return
	}
	if g.n == nil {
		g.n = map[float64]float64{}
	}
	g.n[g.run.v] += g.run.n
	g.run = gap{}
}

// merge adds h's gaps to g's.
func (g *gaps) merge(h *gaps) {
	g.flush()
	if h.run.n > 0 {
		g.run = h.run
		g.flush()
	}
	for v, n := range h.n {
		if g.n == nil {
			g.n = map[float64]float64{}
		}
		g.n[v] += n
	}
}

// stats summarises the gaps as statsOf does the list they encode: the
// empirical quantiles of the sorted values weighted by their counts are
// those of the expanded list (the counts are whole numbers, summed
// exactly).
func (g *gaps) stats() Stats {
	g.flush()
	if len(g.n) == 0 {
		return Stats{}
	}
	s := make([]gap, 0, len(g.n))
	for v, n := range g.n {
		s = append(s, gap{v, n})
	}
	slices.SortFunc(s, func(a, b gap) int { return cmp.Compare(a.v, b.v) })
	v, w := make([]float64, len(s)), make([]float64, len(s))
	var sum, cnt float64
	for i, x := range s {
		v[i], w[i] = x.v, x.n
		sum += x.v * x.n
		cnt += x.n
	}
	q := func(p float64) float64 { return stat.Quantile(p, stat.Empirical, v, w) }
	return Stats{Mean: sum / cnt, P50: q(0.5), P90: q(0.9), P95: q(0.95), P99: q(0.99), Max: v[len(v)-1]}
}
