package calibrate

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"gonum.org/v1/gonum/optimize"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// Options control Fit.
type Options struct {
	// Folds is k of the k-fold cross-validation; 0 means 5, 1 or less
	// than 0 turns it off.
	Folds int
	// Seed makes the folds and subsamples deterministic; 0 means 1.
	Seed uint64
	// MaxPoints bounds the points the parameter search of one class sees
	// (a deterministic subsample); the residual table and the scores use
	// every point. 0 means 2000.
	MaxPoints int
	// NoResidual turns the GEMM residual table off.
	NoResidual bool
	// Source and Date are written as provenance.
	Source, Date string
}

func (o Options) withDefaults() Options {
	if o.Folds == 0 {
		o.Folds = 5
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.MaxPoints <= 0 {
		o.MaxPoints = 2000
	}
	return o
}

// Minimum points per class below which a class keeps its defaults.
const (
	minGEMMPoints      = 30
	minAttentionPoints = 20
	minStreamPoints    = 8
)

// Stats summarise absolute relative errors |predicted/measured − 1|.
type Stats struct {
	N                int
	Median, P90, Max float64
	Bias             float64 // median of predicted/measured − 1
}

// A Row is one measurement with its prediction.
type Row struct {
	M         Measurement
	Predicted model.Seconds
	Err       float64 // predicted/measured − 1
}

// A ClassFit is the fit of one kernel class: its points and its errors,
// in-sample and held out.
type ClassFit struct {
	Class    string      // gemm, attention_prefill, attention_decode, stream, collective
	DType    model.DType // for gemm; Invalid otherwise
	Points   int
	Dropped  int   // points left out as physically impossible (beatsDRAM), not in Points
	Fitted   bool  // false when the class kept its defaults
	InSample Stats // on the points it was fitted to
	HeldOut  Stats // k-fold cross-validated; N = 0 when not run
}

// Name returns "gemm/bf16" or the class.
func (c ClassFit) Name() string {
	if c.DType != model.Invalid {
		return c.Class + "/" + c.DType.String()
	}
	return c.Class
}

// A Result is a fitted device.
type Result struct {
	Device   *hardware.Device // the input device with the fitted efficiency
	Classes  []ClassFit       // sorted by Name
	Warnings []error
}

// newStats computes Stats from relative errors.
func newStats(errs []float64) Stats {
	s := Stats{N: len(errs)}
	if len(errs) == 0 {
		return s
	}
	abs := make([]float64, len(errs))
	for i, e := range errs {
		abs[i] = math.Abs(e)
	}
	sort.Float64s(abs)
	s.Median, s.P90, s.Max = quantile(abs, 0.5), quantile(abs, 0.9), abs[len(abs)-1]
	r := append([]float64(nil), errs...)
	sort.Float64s(r)
	s.Bias = quantile(r, 0.5)
	return s
}

// quantile of sorted xs by linear interpolation (type 7).
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	h := q * float64(len(xs)-1)
	i := int(h)
	if i >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	return xs[i] + (h-float64(i))*(xs[i+1]-xs[i])
}

// classOf names the kernel class of a measurement, "" for one the model
// does not price.
func classOf(m Measurement) string {
	switch m.Kernel {
	case KernelGEMM:
		return "gemm"
	case KernelAttentionPrefill, KernelAttentionDecode:
		// The model prices as decode an attention of at most
		// model.DecodeQueries queries against a longer KV cache (see
		// model.IsDecode); a short prompt runs the prefill kernel.
		if model.IsDecode(AttentionOf(m)) {
			return KernelAttentionDecode
		}
		return KernelAttentionPrefill
	case KernelRead, KernelWrite, KernelCopy, KernelTriad, "layernorm", "rmsnorm", "rope", "add", "activation", "embedding", "softmax", "gelu", "elementwise":
		return "stream"
	case KernelLaunch:
		return "launch"
	case KernelAllReduce, KernelAllGather, KernelReduceScatter, KernelAllToAll, KernelAllReduceOneShot:
		return "collective"
	case KernelMoE, KernelGroupedGEMM, KernelMLAPrefill, KernelMLADecode:
		return m.Kernel
	}
	return ""
}

// Predict returns the model's time for m on dev, and false when the model
// does not price its kernel.
func Predict(dev *hardware.Device, p *model.Processor, m Measurement) (model.Seconds, bool) {
	switch classOf(m) {
	case "gemm":
		return p.GEMMCost(GEMMOf(m)).Time, true
	case KernelAttentionPrefill, KernelAttentionDecode:
		return p.AttentionCost(AttentionOf(m)).Time, true
	case KernelMLAPrefill, KernelMLADecode:
		return p.AttentionCost(AttentionOf(m)).Time, true
	case KernelMoE:
		return model.Seconds(moeTime(p, moeKernelsOf(m))), true
	case KernelGroupedGEMM:
		return p.GroupedGEMMCost(GroupedGEMMOf(m)).Time, true
	case "stream":
		return p.StreamCost(m.FLOPs, m.Bytes, model.FP32).Time, true
	case "launch":
		return p.StreamCost(0, 0, model.FP32).Time, true
	case "collective":
		if dev.Intra.Bandwidth <= 0 {
			return 0, false
		}
		return collectiveTime(m, dev.Intra.Link()), true
	}
	return 0, false
}

// sigmoid maps the real line onto (0, 1), for fractions.
func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
func logit(p float64) float64   { return math.Log(p / (1 - p)) }

// softL1 is the robust loss of a log ratio r: quadratic near 0, linear
// beyond δ, so that a few odd measurements do not pull the fit.
func softL1(r float64) float64 {
	const d = 0.05
	x := r / d
	return d * d * (math.Sqrt(1+x*x) - 1)
}

// minimize runs Nelder–Mead from x0 on f and returns the best point. A
// second run restarts from the first's answer (Nelder–Mead's simplex
// collapses; a restart recovers).
func minimize(f func([]float64) float64, x0 []float64, evals int) []float64 {
	best := append([]float64(nil), x0...)
	bestF := f(best)
	for _, n := range []int{evals, evals / 2} {
		p := optimize.Problem{Func: func(x []float64) float64 {
			v := f(x)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return math.MaxFloat64
			}
			return v
		}}
		res, err := optimize.Minimize(p, best, &optimize.Settings{
			FuncEvaluations: n,
			Converger:       &optimize.FunctionConverge{Absolute: 1e-10, Relative: 1e-7, Iterations: 200},
		}, &optimize.NelderMead{})
		if res == nil || (err != nil && res.Location.X == nil) {
			break
		}
		if res.F < bestF {
			bestF = res.F
			copy(best, res.X)
		}
	}
	return best
}

// subsample returns at most n indexes of 0..len-1, deterministically.
func subsample(length, n int, rng *rand.Rand) []int {
	idx := rng.Perm(length)
	if len(idx) > n {
		idx = idx[:n]
	}
	sort.Ints(idx)
	return idx
}

// searchPoints returns idx, or a seeded subsample of n of its entries (in
// order) when it holds more: the points a parameter search sees.
func searchPoints(idx []int, n int, rng *rand.Rand) []int {
	if len(idx) <= n {
		return idx
	}
	sub := subsample(len(idx), n, rng)
	out := make([]int, len(sub))
	for i, j := range sub {
		out[i] = idx[j]
	}
	return out
}

// fitScored fits the parameters x of a class from x0 on every point of
// ms with train, then scores them: the in-sample errors, and, when
// opt.Folds > 1, the held-out errors of each fold refitted (from x) on the
// other folds. predict gives the modelled time of point i under x.
func fitScored(ms []Measurement, opt Options, rng *rand.Rand, x0 []float64,
	train func(idx []int, start []float64) []float64, predict func(x []float64, i int) float64) (x []float64, in, held Stats) {
	all := make([]int, len(ms))
	for i := range all {
		all[i] = i
	}
	x = train(all, x0)
	errs := make([]float64, len(ms))
	for _, i := range all {
		errs[i] = predict(x, i)/float64(ms[i].Time) - 1
	}
	in = newStats(errs)
	if opt.Folds > 1 {
		eachFold(len(ms), opt.Folds, rng, func(tr, te []int) {
			fx := train(tr, x)
			for _, i := range te {
				errs[i] = predict(fx, i)/float64(ms[i].Time) - 1
			}
		})
		held = newStats(errs)
	}
	return x, in, held
}

// meanLoss is the mean robust loss (softL1) of log(predicted/measured)
// over the points idx of ms.
func meanLoss(ms []Measurement, idx []int, predict func(i int) float64) float64 {
	s := 0.0
	for _, i := range idx {
		s += softL1(math.Log(predict(i) / float64(ms[i].Time)))
	}
	return s / float64(len(idx))
}

// eachFold splits n points into k folds (folds) and calls each with the
// training and the test points of every fold in turn: the k-fold
// cross-validation the fits share.
func eachFold(n, k int, rng *rand.Rand, each func(train, test []int)) {
	fold := folds(n, k, rng)
	for f := 0; f < k; f++ {
		var tr, te []int
		for i, fi := range fold {
			if fi == f {
				te = append(te, i)
			} else {
				tr = append(tr, i)
			}
		}
		each(tr, te)
	}
}

// folds assigns each of n points to one of k folds, deterministically.
func folds(n, k int, rng *rand.Rand) []int {
	f := make([]int, n)
	for i, j := range rng.Perm(n) {
		f[j] = i % k
	}
	return f
}

// Fit fits the efficiency parameters of dev to ms: per GEMM compute type
// the tile-aware roofline's eight parameters and a residual table; the
// attention prefill and decode parameters; the streaming bandwidth
// efficiency against size and the launch cost. A class with too few
// points keeps its defaults, with a warning. ms must be of dev (see
// ReadFile). The returned device is a copy of dev, and it validates: a
// time outside 1 ns to 1 h, a fitted parameter out of range, or a class
// whose p90 |error| is above hardware.MaxRelErr is an error.
func Fit(dev *hardware.Device, ms []Measurement, opt Options) (*Result, error) {
	opt = opt.withDefaults()
	if dev == nil {
		return nil, errors.New("calibrate: no device to fit")
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("calibrate: %w to fit", ErrNoRows)
	}
	if err := checkTimes(ms); err != nil {
		return nil, err
	}
	out := *dev
	out.Eff = copyEff(dev.Eff)
	res := &Result{Device: &out}
	groups := map[string][]Measurement{}
	var skipped int
	for _, m := range ms {
		c := classOf(m)
		switch c {
		case "":
			skipped++
			continue
		case "gemm":
			c += "/" + m.DType.Peak().String()
		}
		groups[c] = append(groups[c], m)
	}
	if skipped > 0 {
		res.Warnings = append(res.Warnings, fmt.Errorf("%d measurements of kernels the cost model does not price were ignored", skipped))
	}
	// A fit of the MLA or MoE classes replaces those tables whole (a
	// refit on top of an earlier one starts afresh).
	for name := range groups {
		switch name {
		case KernelMLAPrefill, KernelMLADecode:
			out.Eff.MLA = model.AttentionParams{}
		case KernelMoE, KernelGroupedGEMM:
			out.Eff.MoE = model.MoEParams{}
		}
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15))
	for _, name := range sortedKeys(groups) {
		g := groups[name]
		var cf ClassFit
		var warns []error
		switch {
		case strings.HasPrefix(name, "gemm/"):
			cf, warns = fitGEMM(&out, g, opt, rng)
		case name == KernelAttentionPrefill || name == KernelAttentionDecode || name == KernelMLAPrefill || name == KernelMLADecode:
			cf, warns = fitAttention(&out, name, g, opt, rng)
		case name == KernelMoE || name == KernelGroupedGEMM:
			cf, warns = fitMoE(&out, name, g, opt, rng)
		case name == "collective":
			cf, warns = fitCollectives(&out, g, opt, rng)
		case name == "stream" || name == "launch":
			cf, warns = fitStream(&out, name, g, opt, rng)
		default:
			cf = ClassFit{Class: name, Points: len(g)}
			warns = []error{fmt.Errorf("%s: %d points not fitted (this version fits GEMMs, attention and streaming kernels)", name, len(g))}
			cf.InSample = scoreClass(&out, g)
		}
		res.Classes = append(res.Classes, cf)
		res.Warnings = append(res.Warnings, warns...)
	}
	if err := checkFitted(&out, res.Classes); err != nil {
		return nil, err
	}
	return res, nil
}

// copyEff deep-copies the map of an Efficiency.
func copyEff(e model.Efficiency) model.Efficiency {
	g := make(map[model.DType]model.GEMMParams, len(e.GEMM))
	for k, v := range e.GEMM {
		g[k] = v
	}
	e.GEMM = g
	return e
}

// scoreClass returns the errors of dev's current parameters on ms.
func scoreClass(dev *hardware.Device, ms []Measurement) Stats {
	p := dev.Processor()
	var errs []float64
	for _, m := range ms {
		if t, ok := Predict(dev, &p, m); ok {
			errs = append(errs, float64(t)/float64(m.Time)-1)
		}
	}
	return newStats(errs)
}

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' || p[i] == '\\' {
			return p[i+1:]
		}
	}
	return p
}

func joinMax(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, ", ")
	}
	return strings.Join(xs[:n], ", ") + fmt.Sprintf(" and %d more", len(xs)-n)
}
