package calibrate

import (
	"math"

	"github.com/perfsim/perfsim/model"
)

// The GEMM fit evaluates model.Processor.GEMMCost millions of times with
// changing parameters. gemmPoint holds what does not change with the
// parameters (the candidate tiles and splits, the traffic terms), so that
// an evaluation is a short loop; TestGEMMEval_matchesModel checks that it
// gives what model.GEMMCost gives.

// The candidate tiles and splits of model/gemm.go (unexported there;
// TestGEMMEval_matchesModel catches any drift).
var (
	fitTiles  = [...][2]float64{{64, 64}, {64, 128}, {128, 64}, {128, 128}, {128, 256}, {256, 128}}
	fitSplits = [...]int{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64}
)

const (
	fitMinSplitK    = 128
	fitPartialBytes = 4
)

// A cand is one tile and split: the per-K-element work of the tile in
// FLOPs (2·T'm·T'n), ⌈k/s⌉, the CTA count, the tile's edge T'm+T'n (the
// operand elements it loads per K element) and the split's index.
type cand struct {
	area2, kk, ctas, edge float64
	whole, frac           float64 // waves: ⌈CTAs/S⌉ and max(1, CTAs/S)
	si                    int
}

type gemmPoint struct {
	meas            float64 // measured seconds
	flops, bytes    float64
	wo, act, qelems float64 // weight+output bytes, activation bytes, activation elements (fp8 quantisation)
	partial         float64 // split-K partial traffic per unit of s: 2·4·batch·m·n
	fp8             bool
	cands           []cand
	blocks          []model.CPUBlockSet // the CPU rule's blocks, on a CPU (model/gemm.go cpuCompute)
	nblocks         float64
	m, n, k         float64
	flr             float64  // the plain roofline on the device, once set
	ri              [8]int32 // residual nodes and weights, when a table is set
	rw              [8]float64
}

// gemmTheta are the GEMM parameters in natural units.
type gemmTheta struct {
	etaC, etaM, t0, a, tau, tsplit, p, l2f, q float64
	edge                                      float64 // seconds per operand element a CTA loads (model.GEMMParams.OperandLoad)
	fractional                                bool
}

func (t gemmTheta) params() model.GEMMParams {
	g := model.GEMMParams{Compute: t.etaC, Memory: t.etaM, Launch: model.Seconds(t.t0), CTAOverhead: model.Seconds(t.a),
		StepFloor: model.Seconds(t.tau), SplitK: model.Seconds(t.tsplit), Overlap: t.p, L2Factor: t.l2f, QuantBytes: t.q,
		OperandLoad: model.Seconds(t.edge),
		Waves:       model.WavesWhole}
	if t.fractional {
		g.Waves = model.WavesFractional
	}
	return g
}

// gemmEnv is the device as the GEMM fit sees it.
type gemmEnv struct {
	peak, bw, l2, cus float64
	cpu               bool // model/gemm.go's CPU rule
}

func newGEMMPoint(m Measurement) gemmPoint {
	g := GEMMOf(m)
	mm, n, k, b := float64(g.M), float64(g.N), float64(g.K), float64(max(g.Batch, 1))
	p := gemmPoint{
		meas: float64(m.Time), flops: float64(g.FLOPs()), bytes: float64(g.Bytes()),
		wo:     b * (k*n*g.B.Size()*(1+g.B.ScaleOverhead()) + mm*n*g.C.Size()),
		act:    b * mm * k * g.A.Size(),
		qelems: b * mm * k, partial: 2 * fitPartialBytes * b * mm * n,
		fp8: g.A.Peak() == model.FP8, m: mm, n: n, k: k,
	}
	return p
}

// setCands lists the candidates on a device with cus compute units, or,
// with cpu, the blocks of the CPU rule.
func (p *gemmPoint) setCands(cus float64, batch float64, cpu bool) {
	p.cands, p.blocks, p.nblocks = p.cands[:0], p.blocks[:0], 0
	if cpu {
		for _, b := range model.CPUBlocks(p.m, p.n) {
			if b.Count > 0 {
				b.Count *= batch
				p.blocks = append(p.blocks, b)
				p.nblocks += b.Count
			}
		}
		return
	}
	for _, t := range fitTiles {
		tmc := math.Min(t[0], math.Ceil(p.m/16)*16)
		tnc := math.Min(t[1], math.Ceil(p.n/16)*16)
		nt := math.Ceil(p.m/t[0]) * math.Ceil(p.n/t[1]) * batch
		for si, sp := range fitSplits {
			fs := float64(sp)
			if sp > 1 && (nt*fs > 2*cus || p.k/fs < fitMinSplitK) {
				break
			}
			c := cand{area2: 2 * tmc * tnc, kk: math.Ceil(p.k / fs), ctas: nt * fs, si: si, edge: tmc + tnc,
				whole: math.Ceil(nt * fs / cus), frac: math.Max(1, nt*fs/cus)}
			// A candidate no better than another of the same split in
			// both tile work and CTA count never wins: drop it.
			dominated := false
			for j := 0; j < len(p.cands); j++ {
				o := p.cands[j]
				if o.si != si {
					continue
				}
				if o.area2 <= c.area2 && o.edge <= c.edge && o.ctas <= c.ctas {
					dominated = true
					break
				}
				if c.area2 <= o.area2 && c.edge <= o.edge && c.ctas <= o.ctas {
					p.cands = append(p.cands[:j], p.cands[j+1:]...)
					j--
				}
			}
			if !dominated {
				p.cands = append(p.cands, c)
			}
		}
	}
}

// eval returns the modelled time of p without the residual table.
func (p *gemmPoint) eval(e *gemmEnv, t *gemmTheta) float64 {
	bw := e.bw * t.etaM
	tm := p.wo / bw
	if t.l2f > 0 && p.act <= e.l2 {
		tm += p.act / (bw * t.l2f)
	} else {
		tm += p.act / bw
	}
	if t.q > 0 && p.fp8 {
		tm += t.q * p.qelems / bw
	}
	if e.cpu {
		return p.evalCPU(e, t, tm)
	}
	var best [len(fitSplits)]float64
	inf := math.Inf(1)
	for i := range best {
		best[i] = inf
	}
	perFLOP := e.cus / (e.peak * t.etaC)
	for i := range p.cands {
		c := &p.cands[i]
		step := c.area2 * perFLOP
		if ld := c.edge * t.edge; ld > step {
			step = ld
		}
		if t.tau > step {
			step = t.tau
		}
		w := c.whole
		if t.fractional {
			w = c.frac
		}
		if tc := w * (t.a + c.kk*step); tc < best[c.si] {
			best[c.si] = tc
		}
	}
	total := inf
	for si, tc := range best {
		if tc == inf {
			continue
		}
		x := t.t0
		if sp := float64(fitSplits[si]); sp > 1 {
			x += t.tsplit + sp*p.partial/bw
		}
		hi := tc
		if tm > hi {
			hi = tm
		}
		if x+hi >= total {
			continue
		}
		if x += model.SoftMax(tc, tm, t.p); x < total {
			total = x
		}
	}
	return total
}

// evalCPU is eval under the CPU rule, given the memory time tm.
func (p *gemmPoint) evalCPU(e *gemmEnv, t *gemmTheta, tm float64) float64 {
	perFLOP := e.cus / (e.peak * t.etaC)
	var total, longest float64
	for _, b := range p.blocks {
		x := t.a + p.k*math.Max(2*b.Rows*b.Cols*perFLOP+b.Rows*t.edge, t.tau)
		total += b.Count * x
		longest = math.Max(longest, x)
	}
	tc := total
	if p.nblocks >= model.CPUMinParallel {
		tc = math.Max(total/e.cus, longest)
	}
	return t.t0 + model.SoftMax(tc, tm, t.p)
}

// floor is the plain roofline a prediction never goes below (cached by
// setCands, which knows the device).
func (p *gemmPoint) floor(e *gemmEnv) float64 {
	if p.flr > 0 {
		return p.flr
	}
	return math.Max(p.flops/e.peak, p.bytes/e.bw)
}

// residualAt is the table's log correction at p (weights set by
// setResidual).
func (p *gemmPoint) residualAt(vals []float64) float64 {
	v := 0.0
	for c := range p.ri {
		v += p.rw[c] * vals[p.ri[c]]
	}
	return v
}

func (p *gemmPoint) setResidual(r *model.Residual) {
	idx, w := r.Weights(p.m, p.n, p.k)
	for c := range idx {
		p.ri[c], p.rw[c] = int32(idx[c]), w[c]
	}
}

// predict is the full model: the analytical time, the residual, the floor.
func (p *gemmPoint) predict(e *gemmEnv, t *gemmTheta, res []float64) float64 {
	v := p.eval(e, t)
	if res != nil {
		v *= math.Exp(p.residualAt(res))
	}
	return math.Max(v, p.floor(e))
}
