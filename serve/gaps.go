package serve

import (
	"cmp"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// gaps is a multiset of inter-token gaps, run-length encoded: every
// request decoded in an iteration has the same gap (the iteration), so
// consecutive equal values share one entry, and a run's record grows
// with its iterations rather than with its output tokens (100,000
// requests of 2,000 tokens held 200 million floats).
type gaps []gap

type gap struct {
	v float64
	n float64 // how many (a whole number)
}

// add records one gap of v.
func (g *gaps) add(v float64) {
	if k := len(*g); k > 0 && (*g)[k-1].v == v {
		(*g)[k-1].n++
		return
	}
	*g = append(*g, gap{v, 1})
}

// stats summarises the gaps as statsOf does the list they encode: the
// empirical quantiles of the sorted values weighted by their counts are
// those of the expanded list (the counts are whole numbers, summed
// exactly).
func (g gaps) stats() Stats {
	if len(g) == 0 {
		return Stats{}
	}
	s := slices.Clone(g)
	slices.SortFunc(s, func(a, b gap) int { return cmp.Compare(a.v, b.v) })
	// Merge equal values.
	k := 0
	for _, x := range s[1:] {
		if x.v == s[k].v {
			s[k].n += x.n
			continue
		}
		k++
		s[k] = x
	}
	s = s[:k+1]
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
