package calibrate

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
)

// The token→expert distributions of aiconfigurator's MoE tables
// (collector/helper.py at ai-dynamo/aiconfigurator@095f58a5, SOURCES.md),
// rebuilt here so that a measured MoE module can be priced with the loads
// its rank actually ran:
//
//   - "balanced" (balanced_logits): with stride s = ⌈E/k⌉, token t picks
//     experts (t + j·s) mod E for j < k when T ≥ s, else
//     ⌊t·s/T + j·s⌋ mod E; every expert gets about T·k/E rows.
//   - "power_law_<α>" (power_law_logits_v3 without EPLB): E per-expert
//     loads drawn from a power law of exponent α on [1, 0.8·T] (on
//     [0.01, 2] when T·k ≤ E) by the inverse CDF, scaled to T·k rows and
//     rounded, each capped at T (a token picks an expert once) with the
//     excess and the rounding handed out one row at a time, rank by rank
//     in turn, to the least loaded expert of the rank (the most loaded,
//     taking away); the EP rank with the most rows is the one measured.
//     The collector averages 5 draws; so does the prediction (powerDraws),
//     from seeded draws of its own (the distribution, not torch's stream).
const powerDraws = 5

// routeKey identifies one routing: tokens, experts, top-k, EP ranks, the
// distribution and the draw.
type routeKey struct {
	t, e, k, ep int
	dist        string
	draw        int
}

var routeMemo sync.Map // routeKey → []int

// rankLoads returns the rows each local expert of the measured EP rank
// gets (the rank's E/EP experts), for draw d of the distribution dist;
// nil for an unknown distribution.
func rankLoads(t, e, k, ep int, dist string, d int) []int {
	if t <= 0 || e <= 0 || k <= 0 || ep <= 0 || e%ep != 0 {
		return nil
	}
	key := routeKey{t, e, k, ep, dist, d}
	if v, ok := routeMemo.Load(key); ok {
		return v.([]int)
	}
	var all []int
	switch {
	case dist == "balanced":
		all = balancedLoads(t, e, k)
	case strings.HasPrefix(dist, "power_law_"):
		a, err := strconv.ParseFloat(strings.TrimPrefix(dist, "power_law_"), 64)
		if err != nil || !(a > 1) {
			return nil
		}
		all = powerLawLoads(t, e, k, ep, a, d)
	default:
		return nil
	}
	per := e / ep
	best, bi := -1, 0
	for r := 0; r < ep; r++ {
		s := 0
		for _, x := range all[r*per : (r+1)*per] {
			s += x
		}
		if s > best {
			best, bi = s, r
		}
	}
	out := append([]int(nil), all[bi*per:(bi+1)*per]...)
	routeMemo.Store(key, out)
	return out
}

// balancedLoads returns the rows per expert of balanced_logits.
func balancedLoads(t, e, k int) []int {
	s := (e + k - 1) / k
	loads := make([]int, e)
	for i := 0; i < t; i++ {
		seen := map[int]bool{}
		for j := 0; j < k; j++ {
			var x int
			if t >= s {
				x = (i + j*s) % e
			} else {
				x = int(math.Mod(float64(i)*float64(s)/float64(t)+float64(j*s), float64(e)))
			}
			if !seen[x] { // a repeated pick is one expert (a one-hot sum)
				seen[x] = true
				loads[x]++
			}
		}
	}
	return loads
}

// powerLawLoads returns the rows per expert of one draw of
// _generate_power_law_distribution (see the package comment above).
func powerLawLoads(t, e, k, ep int, alpha float64, draw int) []int {
	rng := rand.New(rand.NewPCG(uint64(draw)+1, 0x5eed))
	lo, hi := 1.0, 0.8*float64(t)
	if t*k <= e {
		lo, hi = 0.01, 2
	}
	x := make([]float64, e)
	sum := 0.0
	for i := range x {
		u := rng.Float64()
		x[i] = math.Pow((math.Pow(hi, 1-alpha)-math.Pow(lo, 1-alpha))*u+math.Pow(lo, 1-alpha), 1/(1-alpha))
		sum += x[i]
	}
	target := t * k
	loads := make([]int, e)
	over := 0
	for i := range x {
		loads[i] = int(math.RoundToEven(x[i] / sum * float64(target)))
		if loads[i] > t {
			over += loads[i] - t
			loads[i] = t
		}
	}
	per := e / ep
	// adjust hands out n rows (step +1) or takes them away (step −1), one
	// per rank in turn, to the least (most) loaded valid expert.
	adjust := func(n, step int) {
		for n > 0 {
			moved := false
			for r := 0; r < ep && n > 0; r++ {
				bi := -1
				for i := r * per; i < (r+1)*per; i++ {
					if step > 0 && loads[i] >= t || step < 0 && loads[i] <= 0 {
						continue
					}
					if bi < 0 || step > 0 && loads[i] < loads[bi] || step < 0 && loads[i] > loads[bi] {
						bi = i
					}
				}
				if bi < 0 {
					continue
				}
				loads[bi] += step
				n--
				moved = true
			}
			if !moved {
				return
			}
		}
	}
	adjust(over, 1)
	cur := 0
	for _, l := range loads {
		cur += l
	}
	if d := target - cur; d > 0 {
		adjust(d, 1)
	} else if d < 0 {
		adjust(-d, -1)
	}
	return loads
}
