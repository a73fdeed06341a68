package sim

import (
	"errors"
	"fmt"
	"math"
	"runtime"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// A runner holds one Run's state.
type runner struct {
	sys   *hardware.System
	w     Workload
	sc    Scenario
	shape Shape
	c     *coster // eager launches: prefill, training
	dc    *coster // decode: CUDA graphs unless Scenario.NoGraphs; see decoder
	rep   *Report
	buf   []model.Op // scratch for a decomposition plus extra ops
	// chunkBuf is scratch for the ops of a chunked prefill, decodeBuf
	// for a decode's first decomposition (decode).
	chunkBuf, decodeBuf []model.Op

	diag    diag      // the costers' shared diagnostics
	costers [2]coster // c and, with CUDA graphs, dc
	// prices are the costers' prices kept from run to run
	// (pricecache.go), and decomps the workloads' decompositions
	// (opscache.go); nil for none.
	prices  *[2]priceCache
	decomps *opsCache
	chunks  *chunkCache // a chunked prefill's chunks (opscache.go); nil for none
	// stepOps are the prices of a decode step's unchanging ops
	// (decode.go); nil for none.
	stepOps *stepMemo
	// prefix is the running totals of the last chunked prefill priced
	// without rows (totals.go); nil for none.
	prefix *prefixCache
	// ctxWarning is room for the run's warning that the lengths exceed
	// the model's trained context (allocated with the report); nil for
	// none.
	ctxWarning *contextWarning
	// rowsHint and classesHint are the report rows the last run wanted.
	rowsHint, classesHint int
	// names are the labels of the ops' names and stages last priced.
	names labelMemo
}

// Run simulates one scenario of workload w on system sys and returns the
// report. It prints nothing and keeps no state, so sweeps may call it
// many times (and from several goroutines).
//
// Errors: an invalid scenario (every problem at once, each a
// *ScenarioError), a system with too few devices, a workload that cannot
// decompose the phase, or a data type the device cannot compute in (or,
// with Scenario.Strict, one it would fall back from). A scenario that
// does not fit in memory is not an error: Report.Memory says so, and by
// how much.
func Run(sys *hardware.System, w Workload, sc Scenario) (*Report, error) {
	return run(sys, w, sc, false)
}

// run is Run, or RunTotals when totals.
func run(sys *hardware.System, w Workload, sc Scenario, totals bool) (*Report, error) {
	if sys == nil || sys.Device == nil {
		return nil, errors.New("sim: no system")
	}
	if w == nil {
		return nil, errors.New("sim: no workload")
	}
	shape := w.Shape()
	sc = sc.forShape(shape)
	if err := sc.Validate(shape); err != nil {
		return nil, err
	}
	sc = sc.normalized()
	need := sc.TP * sc.PP * sc.DP * sc.CP
	if sys.Devices() < need {
		return nil, fmt.Errorf("sim: the scenario needs %d devices (tp %d × pp %d × dp %d × cp %d); the system has %d", need, sc.TP, sc.PP, sc.DP, sc.CP, sys.Devices())
	}
	p, err := processor(sys, w, sc, shape)
	if err != nil {
		return nil, err
	}
	r := getRunner()
	defer r.release()
	r.init(sys, w, sc, shape, p)
	// Rows are left out of an inference pass that does not need them:
	// the host pipeline of eager execution is timed from its rows.
	r.diag.noRows = totals && sc.Mode == Inference && sc.Exec != ExecEager
	// The report and its results, allocated together, and room for its
	// rows as many as the runner's last run wanted (a sweep's or a
	// serving loop's runs want alike): small objects, not one large
	// one that takes a fresh span of the heap at every run.
	out := &struct {
		rep   Report
		inf   InferenceResult
		dec   PhaseReport
		en    Energy
		ctx   contextWarning
		warns [1]error
	}{rep: Report{
		Model: w.Name(), Hardware: sys.Device.Name, Arch: shape.Arch, Scenario: sc, Devices: need, Unit: sampleUnit(shape),
		Params: w.Params(), ActiveParams: w.ActiveParams(), Interval: intervalName(&p.Eff),
	}}
	r.rep = &out.rep
	r.rep.Warnings, r.ctxWarning = out.warns[:0], &out.ctx
	if !r.diag.noRows {
		r.diag.freeRows, r.diag.freeClasses = make([]OpRow, r.rowsHint), make([]ClassRow, r.classesHint)
		defer func() { r.rowsHint, r.classesHint = r.diag.rowsWanted, r.diag.classesWanted }()
	}
	if sc.Mode == Training {
		err = r.training()
		if mc := shape.MaxContext; err == nil && mc > 0 && sc.Seq > mc && (shape.Arch == Decoder || shape.Arch == Encoder) {
			// As an inference past the context is warned about: gpt3-2.7b
			// (learned positions to 2048) had trained at --seq 4096
			// without a word.
			r.rep.Warnings = append(r.rep.Warnings, fmt.Errorf("sequences of %d tokens exceed %s's trained context of %d", sc.Seq, w.Name(), mc))
		}
		if err == nil && sc.ZeRO >= 2 && sc.PP > 1 {
			// Priced as asked; plan train does not search it.
			r.rep.Warnings = append(r.rep.Warnings, fmt.Errorf("ZeRO %d beside pipeline parallelism %d is priced, but no framework runs it (Megatron-LM's distributed optimizer is ZeRO 1; DeepSpeed's pipeline engine refuses ZeRO 2 and 3)", sc.ZeRO, sc.PP))
		}
	} else {
		err = r.inference(&out.inf, &out.dec)
	}
	if err == nil {
		err = r.c.err
	}
	if err != nil {
		return nil, err
	}
	r.energy(&out.en)
	if len(r.c.warnings) > 0 {
		r.rep.Warnings = append(r.c.warnings, r.rep.Warnings...)
	}
	if len(r.rep.Warnings) == 0 {
		r.rep.Warnings = nil
	}
	if err := r.rep.checkFinite(); err != nil {
		return nil, err
	}
	return r.rep, nil
}

// processor is the processor sc runs on: sys's device's, checked, under
// sc's power limit and clocks, pricing prefill attention with sc's
// kernel. Run and NewPricer both take it, so that a serving engine's
// iterations see what a run sees.
func processor(sys *hardware.System, w Workload, sc Scenario, shape Shape) (model.Processor, error) {
	p := sys.Device.Processor()
	if err := p.Validate(); err != nil {
		return p, err
	}
	if err := powerLimit(&p, sc); err != nil {
		return p, err
	}
	if sc.Mode == Training && shape.Arch != CNN {
		// A step's matrix kernels run at the sustained clock
		// (sustainedStretch), from which a limit lowers it further
		// only as far as its power needs (model.Processor.CappedMatrix).
		p.PowerModel.Held = p.PowerModel.SustainedShare()
	}
	if err := attentionKernel(&p, sys.Device, sc.Attention); err != nil {
		return p, err
	}
	if err := fa2MLA(&p, w, sc); err != nil {
		return p, err
	}
	return p, nil
}

func newRunner(sys *hardware.System, w Workload, sc Scenario, shape Shape) *runner {
	r := &runner{}
	p := sys.Device.Processor()
	p.PowerModel.Sustain = sc.Sustained && sc.Mode == Inference
	r.init(sys, w, sc, shape, p)
	return r
}

// init readies r, new or recycled, to run sc on sys, pricing on p (sys's
// processor).
func (r *runner) init(sys *hardware.System, w Workload, sc Scenario, shape Shape, p model.Processor) {
	r.sys, r.w, r.sc, r.shape, r.rep = sys, w, sc, shape, nil
	r.diag = diag{names: &r.names}
	r.costers[0].init(p, sys, sc.Strict, &r.diag)
	ar := engineAllReduce(sc, sys)
	r.costers[0].ar, r.costers[1].ar = ar, ar
	r.costers[0].pc, r.costers[1].pc = nil, nil
	if r.prices != nil {
		r.costers[0].pc = r.prices[0].use(&p)
	}
	r.c, r.dc = &r.costers[0], nil
	r.buf = r.buf[:0]
}

// runners keeps Run's idle runners: a runner holds two costers, their
// memos and its price caches, which a sweep or a serving loop would
// otherwise rebuild at every point. Nothing of a runner outlives its Run:
// reports copy what they keep. Unlike a sync.Pool, which the collector
// empties at every cycle, the list keeps the caches across collections
// (with a pool, the runners lost their caches every few hundred runs, the
// more often the more a report allocates, and re-priced every kernel).
// It keeps at most cap(runners) idle runners, so memory follows the
// concurrency, never the number of runs.
var runners = make(chan *runner, max(4, runtime.GOMAXPROCS(0)))

// noRunnerCaches makes getRunner return runners that keep no prices nor
// decompositions between runs, and release drop them (tests only).
var noRunnerCaches bool

// getRunner returns an idle runner, or a new one.
func getRunner() *runner {
	if noRunnerCaches {
		return new(runner)
	}
	select {
	case r := <-runners:
		return r
	default:
		return &runner{prices: new([2]priceCache), decomps: new(opsCache), chunks: new(chunkCache), prefix: new(prefixCache), stepOps: new(stepMemo)}
	}
}

// release returns r to runners, dropping what it references; a runner
// beyond the list's capacity is left to the collector.
func (r *runner) release() {
	r.sys, r.w, r.rep, r.ctxWarning = nil, nil, nil, nil
	r.diag = diag{}
	if noRunnerCaches {
		return
	}
	select {
	case runners <- r:
	default:
	}
}

// decoder returns the coster of decode steps, made on first use: with
// CUDA graphs (unless Scenario.NoGraphs), launch overheads are capped at
// GraphLaunch.
func (r *runner) decoder() *coster {
	if r.dc == nil {
		r.dc = r.c
		if !r.sc.NoGraphs {
			r.dc = &r.costers[1]
			if r.prices != nil {
				// The capped processor as it was last derived from this
				// one, when it is the same.
				var p model.Processor
				r.dc.pc = r.prices[1].derived(&r.prices[0], &p, func() {
					r.c.graphs(r.dc)
					p = r.dc.p
				})
				r.dc.init(p, r.c.sys, r.c.strict, r.c.diag)
			} else {
				r.c.graphs(r.dc)
			}
		}
	}
	return r.dc
}

// intervalName says whether the efficiencies carry held-out errors.
func intervalName(e *model.Efficiency) string {
	if e.Attention.ErrP90 > 0 || e.Memory.ErrP90 > 0 {
		return "p90"
	}
	for _, g := range e.GEMM {
		if g.ErrP90 > 0 {
			return "p90"
		}
	}
	return "none"
}

// phase returns the scenario's phase template.
func (r *runner) phase(k PhaseKind) Phase {
	ph := Phase{Kind: k, Batch: r.sc.Batch, Weights: r.sc.Weights, Act: r.sc.Act, KV: r.sc.KV, Comm: r.sc.CommType(), TP: r.sc.TP,
		FuseCNN: r.sc.Exec == ExecFused && k == Prefill, Autocast: r.sc.Autocast}
	if r.sc.Mode == Inference {
		ph.GEMMAllReduce = r.sc.GEMMAllReduce
		// The workload splits the experts itself in inference; training
		// at scale divides them over EP in train_parallel.go.
		ph.EP, ph.Imbalance = r.sc.EP, r.sc.ExpertImbalance
	}
	return ph
}

// ops decomposes ph and appends extra, in r's scratch buffer (valid until
// the next call).
func (r *runner) ops(ph Phase, extra []model.Op) ([]model.Op, error) {
	ops, err := r.decomps.decompose(r.w, ph)
	if err != nil {
		return nil, fmt.Errorf("sim: %s %s: %w", r.w.Name(), ph.Kind, err)
	}
	if len(extra) == 0 {
		return ops, nil
	}
	r.buf = append(append(r.buf[:0], ops...), extra...)
	return r.buf, nil
}

// tier returns the network tier that a group of n devices, placed
// consecutively after groups of inner devices, needs.
func (r *runner) tier(span int) model.Tier {
	if span > r.sys.DevicesPerNode {
		return model.InterNode
	}
	return model.IntraNode
}

// ppTransfer returns the point-to-point activation transfers between
// pipeline stages for tokens tokens, or nil without pipelining.
func (r *runner) ppTransfer(tokens int) []model.Op {
	if r.sc.PP <= 1 {
		return nil
	}
	size := r.sc.CommType().Bytes(float64(tokens) * float64(r.shape.DModel))
	return []model.Op{{
		Name: "pp.send_recv", Stage: "pipeline", Class: model.ClassComm, Count: r.sc.PP - 1,
		Kernel: model.Collective{Kind: model.SendRecv, Size: size, Ranks: 2, Tier: r.tier(r.sc.TP * r.sc.PP)},
	}}
}

// inference simulates prefill and decode (or one forward pass of a model
// without decode).
// res and dec are where the result and the decode phase go (allocated
// with the report).
func (r *runner) inference(res *InferenceResult, dec *PhaseReport) error {
	sc, rep := r.sc, r.rep
	rep.Inference = res

	var working model.Bytes
	if ok, err := r.prefillTotals(&res.Prefill, &working, r.ppTransfer(sc.Batch*sc.Input)); err != nil {
		return err
	} else if !ok {
		var ops []model.Op
		ops, working, err = r.prefillOps(r.ppTransfer(sc.Batch*sc.Input), true)
		if err != nil {
			return err
		}
		res.Prefill = r.c.passOnce(r.prefillName(), r.decomps.idOf(ops), ops)
		r.eager(&res.Prefill)
	}
	res.TTFT, res.TTFTLow, res.TTFTHigh = res.Prefill.Time, res.Prefill.Low, res.Prefill.High
	res.E2E, res.E2ELow, res.E2EHigh = res.TTFT, res.TTFTLow, res.TTFTHigh

	if r.shape.Arch == Decoder {
		if steps := sc.Output - 1; steps > 0 {
			d, err := r.decode(r.phase(Decode), sc.Input, steps, r.ppTransfer(sc.Batch), dec)
			if err != nil {
				return err
			}
			res.Decode = d
			n := model.Seconds(steps)
			res.TPOT, res.TPOTLow, res.TPOTHigh = d.Time/n, d.Low/n, d.High/n
			res.E2E += d.Time
			res.E2ELow += d.Low
			res.E2EHigh += d.High
		}
		if res.E2E > 0 {
			// DP replicas each serve a batch.
			res.OutputTokensPerSecond = float64(sc.DP) * float64(sc.Batch) * float64(sc.Output) / float64(res.E2E)
			res.OutputTokensPerSecondPerDevice = res.OutputTokensPerSecond / float64(rep.Devices)
		}
		if mc := r.shape.MaxContext; mc > 0 && sc.Input+sc.Output > mc {
			w := r.ctxWarning
			if w == nil {
				w = new(contextWarning)
			}
			*w = contextWarning{in: sc.Input, out: sc.Output, model: r.w.Name(), trained: mc}
			rep.Warnings = append(rep.Warnings, w)
		}
	} else if mc := r.shape.MaxContext; r.shape.Arch == Encoder && mc > 0 && sc.Input > mc {
		rep.Warnings = append(rep.Warnings, fmt.Errorf("%d tokens exceed %s's trained context of %d", sc.Input, r.w.Name(), mc))
	} else if res.TTFT > 0 && (r.shape.Arch == CNN || r.shape.Arch == Vision) {
		// DP replicas each serve a batch; the input pipeline's rate is
		// the whole system's (--loader-rate).
		res.ImagesPerSecond = float64(max(sc.DP, 1)) * float64(sc.Batch) / float64(res.TTFT)
		if lr := sc.LoaderRate; lr > 0 && res.ImagesPerSecond > lr {
			res.ImagesPerSecond, res.LoaderBound = lr, true
		}
	}
	if res.TTFT > 0 && r.shape.Arch != Decoder {
		res.SamplesPerSecond = float64(max(sc.DP, 1)) * float64(sc.Batch) / float64(res.TTFT)
		if res.ImagesPerSecond > 0 {
			res.SamplesPerSecond = res.ImagesPerSecond // the loader's bound applied
		}
	}
	rep.Memory = r.inferenceMemory(working)
	return nil
}

// workingSet returns the largest activation footprint of one launch: its
// activation inputs and outputs (a GEMM's weight operand excluded), what
// an allocator must hold at the peak of an inference pass besides the
// weights and the KV cache.
func workingSet(ops []model.Op) model.Bytes {
	var m model.Bytes
	for _, o := range ops {
		var b model.Bytes
		switch k := o.Kernel.(type) {
		case model.GEMM:
			n := float64(max(k.Batch, 1))
			b = model.Bytes(n * (k.AElements()*k.A.Size() + k.CElements()*k.C.Size()))
		case model.Collective:
			b = k.Size
		case nil:
		default:
			b = k.Bytes()
		}
		m = max(m, b)
	}
	return m
}

// reserve returns the framework reserve.
func (r *runner) reserve() model.Bytes {
	if r.sc.Reserve != nil {
		return *r.sc.Reserve
	}
	return r.sys.Device.Memory.Reserve
}

// stageShare returns the fraction of the layers on the most loaded
// pipeline stage.
func (r *runner) stageShare() float64 {
	L := r.shape.Layers
	if r.sc.PP <= 1 || L <= 0 {
		return 1
	}
	return math.Ceil(float64(L)/float64(r.sc.PP)) / float64(L)
}

// prefillName names an inference's first phase: a decoder's prefill, or
// the one forward pass of an encoder, a ViT or a CNN (which had been
// called a prefill in every table and JSON).
func (r *runner) prefillName() string {
	if r.shape.Arch == Decoder {
		return "prefill"
	}
	return "forward"
}

// inferenceMemory sizes one device: weights split by TP (and by PP, the
// first stage also holding the embedding), the KV cache of every sequence
// at its full length (Input + Output tokens) split by TP over KV heads and
// by PP over layers, the working set, and the reserve.
func (r *runner) inferenceMemory(working model.Bytes) Memory {
	sc := r.sc
	w := float64(r.w.WeightBytes(sc.Weights))
	if sc.PP > 1 {
		emb := float64(model.VocabType(sc.Weights).Bytes(float64(r.shape.Vocab) * float64(r.shape.DModel)))
		emb = math.Min(emb, w)
		w = (w-emb)*r.stageShare() + emb
	}
	m := Memory{Weights: model.Bytes(w / float64(sc.TP))}
	perTok := float64(r.w.KVBytesPerToken(sc.KV)) / float64(sc.TP) * r.stageShare()
	m.KVPerToken, m.KVGrowth = model.Bytes(perTok), model.Bytes(perTok)
	m.KVCache = model.Bytes(perTok * float64(sc.Batch) * float64(sc.Input+sc.Output))
	if sh, ok := r.w.(Sharder); ok {
		// The workload's own split: replaces the even division by TP
		// (the pipeline's embedding adjustment above is kept as a ratio).
		even := float64(r.w.WeightBytes(sc.Weights)) / float64(sc.TP)
		if even > 0 {
			m.Weights = model.Bytes(float64(m.Weights) / even * float64(sh.WeightBytesPerDevice(sc.Weights, sc.TP, sc.EP)))
		}
		tokens := sc.Input + sc.Output
		seq := float64(sh.KVBytes(tokens, sc.TP, sc.KV)) * r.stageShare()
		m.KVCache = model.Bytes(seq * float64(sc.Batch))
		m.KVState = model.Bytes(float64(sh.KVBytes(0, sc.TP, sc.KV)) * r.stageShare())
		if tokens > 0 {
			m.KVPerToken = model.Bytes(seq / float64(tokens))
			m.KVGrowth = model.Bytes(max(seq-float64(m.KVState), 0) / float64(tokens))
		}
		r.windowKV(&m, sh)
	}
	m.Activations = working
	m.Reserve = r.reserve()
	return r.fit(m)
}

// windowKV splits the KV cache of a model with sliding-window layers
// (Windowed) into its full-attention layers' growth per token
// (m.KVGrowth) and its windowed layers' per token within the window
// (m.KVWindowed), this device's share, from the cache of a sequence of
// one window (every attention layer holding every token) less its
// state: the average KVGrowth had been spread the windowed layers'
// capped cache over every token of the scenario's length. A model
// without windowed layers keeps m as it is.
func (r *runner) windowKV(m *Memory, sh Sharder) {
	wd, ok := r.w.(Windowed)
	if !ok {
		return
	}
	full, win, window := wd.KVLayers()
	if win <= 0 || window <= 0 || full+win <= 0 {
		return
	}
	sc := r.sc
	share := r.stageShare()
	attn := float64(sh.KVBytes(window, sc.TP, sc.KV)-sh.KVBytes(0, sc.TP, sc.KV)) * share / float64(window)
	layer := attn / float64(full+win)
	m.KVWindow = window
	m.KVWindowed = model.Bytes(layer * float64(win))
	m.KVGrowth = model.Bytes(layer * float64(full))
	m.KVFullLayers = int(math.Round(float64(full) * share))
	m.KVWindowLayers = max(int(math.Round(float64(win)*share)), 1)
}

// fit totals m against the memory a program can use on the device.
func (r *runner) fit(m Memory) Memory {
	m.Total = m.Weights + m.KVCache + m.Activations + m.Gradients + m.Optimizer + m.Reserve
	m.Capacity = r.sys.Device.Memory.Capacity
	m.Usable = r.sys.Device.Memory.Limit()
	m.Headroom = m.Usable - m.Total
	m.Fits = m.Total <= m.Usable
	return m
}

// checkFinite refuses a report with a NaN or an infinity in a total.
func (rep *Report) checkFinite() error {
	var buf [16]float64
	vals := append(buf[:0], float64(rep.Memory.Total), float64(rep.Memory.Headroom))
	if in := rep.Inference; in != nil {
		vals = append(vals, float64(in.TTFT), float64(in.TPOT), float64(in.E2E), float64(in.E2EHigh), in.OutputTokensPerSecond, in.ImagesPerSecond)
	}
	if tr := rep.Training; tr != nil {
		vals = append(vals, float64(tr.StepTime), float64(tr.StepTimeHigh), tr.TokensPerSecond, tr.MFU, tr.HFU, float64(tr.TimeToTrain), float64(tr.HardwareFLOPs))
	}
	for _, v := range vals {
		if !finite(v) {
			return fmt.Errorf("sim: %s on %s: the model produced a non-finite number (check the hardware file's peaks and bandwidth)", rep.Model, rep.Hardware)
		}
	}
	return nil
}

// A contextWarning says that a scenario's lengths exceed the model's
// trained context.
type contextWarning struct {
	in, out, trained int
	model            string
}

func (w *contextWarning) Error() string {
	return fmt.Sprintf("%d tokens in and %d out exceed %s's trained context of %d", w.in, w.out, w.model, w.trained)
}

// sampleUnit names one sample of a model without decode, plural: images
// for an image input of more than one pixel, else samples.
func sampleUnit(s Shape) string {
	if (s.Arch == CNN || s.Arch == Vision) && s.ImageSize > 1 {
		return "images"
	}
	return "samples"
}

// engineAllReduce returns the engine's all-reduce kernel sc names as
// measured on sys's device, or the zero kernel (the device's own
// collectives) when sc names none or it has not been measured there.
// Validate has checked the name.
func engineAllReduce(sc Scenario, sys *hardware.System) model.AllReduceKernel {
	if sc.AllReduce == "" {
		return model.AllReduceKernel{}
	}
	k, ok, err := hardware.EngineAllReduceOn(sc.AllReduce, sys.Device)
	if err != nil || !ok {
		return model.AllReduceKernel{}
	}
	return k
}
