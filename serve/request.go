package serve

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/perfsim/perfsim/model"
)

// MaxTime bounds, in seconds, the times a run takes from outside: the
// span of the arrivals a rate draws, a trace's arrival times, a closed
// loop's think time and the engine's overheads. 1e8 s is over three
// years; there a float64 clock still resolves 15 ns, a part in 10^5 of
// a decode step, whereas at 1e300 s a step rounds to nothing (a request
// arriving there had a TTFT of 0 and the run's energy was +Inf J).
const MaxTime = 1e8

// MaxRequests bounds the requests of one run: a finished request keeps
// 36 bytes (records.go), and a run that holds its requests (Run's slice,
// a trace) 56 more each (a million requests of 128 tokens in and 16 out,
// all at once, drawn as they run: 92 MB maximum RSS and 0.5 s; 428 MB
// when each held a few hundred bytes); 2^20 is five times the 200,000 a
// queueing test needs.
const MaxRequests = 1 << 20

// A Request is one prompt sent to the server.
type Request struct {
	ID      int
	Arrival model.Seconds // since the start of the run
	Input   int           // prompt tokens
	Output  int           // tokens to generate (EOS ignored)
	// Prefix is the shared-prefix id of a trace (0: none): requests
	// with the same id share the start of their prompts (PrefixCache).
	Prefix int
	// Cached is the prompt tokens whose KV cache the engine finds in its
	// prefix cache: they skip the prefill's compute but hold KV blocks.
	Cached int
	// Prefilled says the prompt's KV cache and the first token come
	// from elsewhere (a disaggregated prefill pool): the request arrives
	// to decode, needing blocks for its whole prompt.
	Prefilled bool
}

// Arrival names an arrival process.
type Arrival uint8

// The arrival processes.
const (
	Poisson   Arrival = iota // exponential gaps at the rate
	Gamma                    // gamma gaps at the rate with a coefficient of variation (burstiness)
	Constant                 // equal gaps of 1/rate
	AllAtOnce                // every request at t = 0 (offline, "max load")
)

var arrivalNames = [...]string{"poisson", "gamma", "constant", "all"}

func (a Arrival) String() string { return arrivalNames[a] }

// ParseArrival parses poisson, gamma, constant or all (also offline).
func ParseArrival(s string) (Arrival, error) {
	for i, n := range arrivalNames {
		if s == n {
			return Arrival(i), nil
		}
	}
	if s == "offline" {
		return AllAtOnce, nil
	}
	return 0, fmt.Errorf("unknown arrival process %q (want poisson, gamma, constant or all)", s)
}

// A Lengths draws token counts.
type Lengths interface {
	// Draw returns one length from r.
	Draw(r *rand.Rand) int
	// Mean is the distribution's mean (for reports and checks).
	Mean() float64
}

// Fixed is a constant length.
type Fixed int

func (f Fixed) Draw(*rand.Rand) int { return int(f) }
func (f Fixed) Mean() float64       { return float64(f) }

// Uniform draws uniformly from [Min, Max].
type Uniform struct{ Min, Max int }

func (u Uniform) Draw(r *rand.Rand) int { return u.Min + r.IntN(u.Max-u.Min+1) }
func (u Uniform) Mean() float64         { return float64(u.Min+u.Max) / 2 }

// Normal draws from a normal distribution of mean and sd, rounded and
// clipped to [Min, Max] (by redrawing, up to 64 times, then clipping).
type Normal struct {
	Mu, Sigma float64
	Min, Max  int
}

func (n Normal) Draw(r *rand.Rand) int {
	return bounded(func() float64 { return n.Mu + n.Sigma*r.NormFloat64() }, n.Min, n.Max)
}
func (n Normal) Mean() float64 { return n.Mu }

// LogNormal draws from the lognormal distribution with the given mean
// and standard deviation (of the lengths, not of their logarithms),
// rounded and kept within [Min, Max] by redrawing.
type LogNormal struct {
	Mu, Sigma float64 // of the lengths
	Min, Max  int
}

func (l LogNormal) params() (m, s float64) {
	v := math.Log(1 + (l.Sigma*l.Sigma)/(l.Mu*l.Mu))
	return math.Log(l.Mu) - v/2, math.Sqrt(v)
}

func (l LogNormal) Draw(r *rand.Rand) int {
	m, s := l.params()
	return bounded(func() float64 { return math.Exp(m + s*r.NormFloat64()) }, l.Min, l.Max)
}
func (l LogNormal) Mean() float64 { return l.Mu }

func bounded(draw func() float64, lo, hi int) int {
	lo = max(lo, 1)
	if hi < lo {
		hi = math.MaxInt32
	}
	var x float64
	for range 64 {
		x = math.Round(draw())
		if x >= float64(lo) && x <= float64(hi) {
			return int(x)
		}
	}
	return int(math.Min(math.Max(x, float64(lo)), float64(hi)))
}

// Empirical draws from a list of values with equal weight.
type Empirical []int

func (e Empirical) Draw(r *rand.Rand) int { return e[r.IntN(len(e))] }
func (e Empirical) Mean() float64 {
	var s float64
	for _, v := range e {
		s += float64(v)
	}
	return s / float64(len(e))
}

// A Workload describes a stream of requests.
type Workload struct {
	N       int     // requests
	Arrival Arrival // process
	Rate    float64 // requests per second (not for AllAtOnce)
	CV      float64 // coefficient of variation of the gaps (Gamma)
	Input   Lengths
	Output  Lengths
	// Pairs, when set, draws (input, output) together from a list (a
	// trace's lengths) instead of Input and Output separately; Joint
	// draws them together from a distribution (a named data set).
	Pairs [][2]int
	Joint PairLengths
	Seed  uint64
}

// Validate reports every problem at once, naming the CLI flags.
func (w *Workload) Validate() error {
	var errs []error
	if w.N <= 0 || w.N > MaxRequests {
		errs = append(errs, fmt.Errorf("--requests: want 1 to %d, got %d", MaxRequests, w.N))
	}
	switch {
	case w.Arrival == AllAtOnce:
	case !(w.Rate > 0 && !math.IsInf(w.Rate, 0)):
		errs = append(errs, fmt.Errorf("--rate: must be a positive number of requests per second with --arrival %s, got %g", w.Arrival, w.Rate))
	default:
		if err := CheckSpan(w.N, w.Rate); err != nil {
			errs = append(errs, err)
		}
	}
	if w.Arrival == Gamma {
		// The gaps are gamma with shape 1/cv², which must stay a
		// positive, finite float (1e300 gives 0 and NaN gaps; 1e-300, +Inf).
		if !(w.CV > 0 && !math.IsInf(w.CV, 0)) {
			errs = append(errs, fmt.Errorf("--cv: the gamma process needs a positive coefficient of variation, got %g", w.CV))
		} else if !(w.CV >= 1e-150 && w.CV <= 1e150) {
			errs = append(errs, fmt.Errorf("--cv: %g leaves the gamma's shape 1/cv² out of range: want 1e-150 to 1e150", w.CV))
		}
	}
	if w.Pairs == nil && w.Joint == nil && (w.Input == nil || w.Output == nil) {
		errs = append(errs, errors.New("serve: a workload needs input and output lengths"))
	}
	return errors.Join(errs...)
}

// CheckSpan reports, naming --rate, whether n requests at rate per
// second arrive over more than MaxTime.
func CheckSpan(n int, rate float64) error {
	if n > 0 && rate > 0 && float64(n)/rate > MaxTime {
		return fmt.Errorf("--rate: %d requests at %g per second arrive over %.3g s, beyond the %g s a run simulates (want at least %.3g requests per second)", n, rate, float64(n)/rate, MaxTime, float64(n)/MaxTime)
	}
	return nil
}

// Requests draws the workload's requests, in arrival order, from a
// source seeded with w.Seed: the same workload gives the same requests.
func (w *Workload) Requests() ([]Request, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	next := w.cursor()
	out := make([]Request, w.N)
	for i := range out {
		q, err := next()
		if err != nil {
			return nil, err
		}
		out[i] = q
	}
	return out, nil
}

// PinRate scales the arrival times of reqs, drawn by a Poisson or gamma
// process (Workload.Requests) at rate per second, so that the last
// arrives at len(reqs)/rate: the process conditioned on its realized
// rate being rate. For i.i.d. exponential or gamma gaps, the gaps over
// their sum are Dirichlet-distributed independently of the sum, so the
// scaled times are exactly those of the process given that its n-th
// arrival falls at n/rate. A run's realized rate otherwise strays by
// about 1/√n: seed 1's 400 Poisson arrivals at 20 req/s span 22.3 s,
// 17.9 req/s. A run with no arrival after time 0 is left alone.
func PinRate(reqs []Request, rate float64) {
	n := len(reqs)
	if n == 0 || !(rate > 0) {
		return
	}
	last := float64(reqs[n-1].Arrival)
	if !(last > 0) {
		return
	}
	k := float64(n) / rate / last
	for i := range reqs {
		reqs[i].Arrival = model.Seconds(float64(reqs[i].Arrival) * k)
	}
}

// cursor returns a function that draws the workload's requests one at
// a time, in order, from a source seeded with w.Seed (Validate first):
// every cursor of a workload gives the same requests.
func (w *Workload) cursor() func() (Request, error) {
	r := rand.New(rand.NewPCG(w.Seed, 0x5e7e))
	var t float64
	i := 0
	return func() (Request, error) {
		j := i
		i++
		switch w.Arrival {
		case Poisson:
			t += r.ExpFloat64() / w.Rate
		case Gamma:
			// Shape k = 1/cv², scale θ = cv²/rate: mean 1/rate.
			k := 1 / (w.CV * w.CV)
			t += gamma(r, k) / k / w.Rate
		case Constant:
			t = float64(j) / w.Rate
		}
		if !(t <= MaxTime) {
			// A bursty process's gaps can outrun their mean span.
			return Request{}, fmt.Errorf("--cv: request %d of %d arrives at %.3g s, beyond the %g s a run simulates (a smaller --cv or a higher --rate)", i+1, w.N, t, MaxTime)
		}
		q := Request{ID: j, Arrival: model.Seconds(t)}
		switch {
		case w.Joint != nil:
			q.Input, q.Output = w.Joint.DrawPair(r)
		case w.Pairs != nil:
			p := w.Pairs[r.IntN(len(w.Pairs))]
			q.Input, q.Output = p[0], p[1]
		default:
			q.Input, q.Output = w.Input.Draw(r), w.Output.Draw(r)
		}
		return q, nil
	}
}

// gamma draws from Gamma(k, 1) by Marsaglia and Tsang's method ("A
// Simple Method for Generating Gamma Variables", ACM TOMS 26(3), 2000),
// with the boost U^(1/k) for k < 1.
func gamma(r *rand.Rand, k float64) float64 {
	if k < 1 {
		return gamma(r, k+1) * math.Pow(r.Float64(), 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// A PairLengths draws a request's input and output lengths together
// (a data set whose filters bound their sum).
type PairLengths interface {
	DrawPair(r *rand.Rand) (in, out int)
}

// ShareGPT approximates the ShareGPT sample of the SGLang/vLLM
// benchmarks (sglang.bench_serving --dataset-name sharegpt, as
// ../shared/validation/e2e/README.md describes it): the prompt is the
// first human turn and the output the token count of the first reply,
// pairs dropped when either is under 4 tokens, the prompt over 1,024 or
// prompt + reply over 2,048 tokens. Both lengths are lognormal, right-
// skewed, with parameters chosen so that the filtered sample has the
// published statistics: mean output 194.3 tokens (throughput ÷ request
// rate of the offline rows of SGLang's benchmark_vllm_060 README), median
// output about 120, mean input about 220–230 (published totals of the
// same sampler). The filters are applied by redrawing, as the sampler
// drops pairs.
type ShareGPT struct{}

// The lognormal parameters (median e^μ, log-sd σ) of ShareGPT's lengths
// before the filters; see ShareGPT.
const (
	shareGPTInMedian, shareGPTInSigma   = 163.0, 1.0
	shareGPTOutMedian, shareGPTOutSigma = 122.0, 1.0
)

// DrawPair draws one filtered (prompt, reply) pair.
func (ShareGPT) DrawPair(r *rand.Rand) (in, out int) {
	for {
		in = int(math.Round(shareGPTInMedian * math.Exp(shareGPTInSigma*r.NormFloat64())))
		out = int(math.Round(shareGPTOutMedian * math.Exp(shareGPTOutSigma*r.NormFloat64())))
		if in >= 4 && out >= 4 && in <= 1024 && in+out <= 2048 {
			return in, out
		}
	}
}
