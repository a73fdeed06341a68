package sim_test

import (
	"errors"
	"math"
	"testing"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// TestPower_idleGEMMDecode: with nothing running an H100 draws its idle
// power; a long compute-bound GEMM draws close to its cap; a memory-bound
// decode step of Llama-3.1-8B draws in between, rising with the batch.
// ML.ENERGY v3 measured this model on an H100 (vLLM, lm-arena-chat,
// per-GPU power over the steady state; github ml-energy/leaderboard
// public/data/tasks/lm-arena-chat.json @ 0cd52da) at about 486 W at batch
// 8 and about 688 W at batch 192 and above: we require 15% of each (the
// fit's held-out median |error| on this source is 9.2%; at batch 192 the
// model is low by about 13%, see calibrate/power_test.go).
func TestPower_idleGEMMDecode(t *testing.T) {
	sys, w := load(t, "h100", "llama3-8b", 1)
	p := sys.Device.Processor()
	pm := sys.Device.Power
	if got := p.Power(model.Cost{}); got != pm.Idle {
		t.Errorf("zero load: %v, want idle %v", got, pm.Idle)
	}
	g, err := sim.Kernel(sys.Device, model.GEMM{M: 16384, N: 16384, K: 16384, A: model.BF16, B: model.BF16, C: model.BF16}, true)
	if err != nil {
		t.Fatal(err)
	}
	if g.Power < 0.95*pm.Cap || g.Power > pm.Cap {
		t.Errorf("16384³ bf16 GEMM (%v, %.0f%% of peak): %v, want within 5%% below the cap %v", g.Time, 100*g.Efficiency, g.Power, pm.Cap)
	}
	// A batch of requests of 512 tokens in and 600 out, prefill then
	// decode: the proportion of prefill to decode work in ML.ENERGY's
	// steady state, where as many requests start as finish (lm-arena-chat
	// outputs average about 600 tokens; its prompts are short, 512 is
	// our assumption).
	decode := func(b int) model.Watts {
		sc := sim.Default()
		sc.Batch, sc.Input, sc.Output = b, 512, 600
		rep, err := sim.Run(sys, w, sc)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Inference.Decode.Bound != model.MemoryBound {
			t.Errorf("batch %d: decode is %v-bound", b, rep.Inference.Decode.Bound)
		}
		return rep.Energy.AveragePower
	}
	prev := pm.Idle
	for _, tt := range []struct {
		batch    int
		measured model.Watts
	}{{8, 486}, {64, 610}, {192, 688}} {
		got := decode(tt.batch)
		t.Logf("Llama-3.1-8B decode on H100 at batch %d: %v (ML.ENERGY measured %v)", tt.batch, got, tt.measured)
		if got <= prev || got >= pm.Cap {
			t.Errorf("batch %d: %v, want above %v (idle or the smaller batch) and below the cap %v", tt.batch, got, prev, pm.Cap)
		}
		if e := math.Abs(float64(got/tt.measured) - 1); e > 0.15 {
			t.Errorf("batch %d: %v, %.0f%% from ML.ENERGY's %v", tt.batch, got, 100*e, tt.measured)
		}
		prev = got
	}
}

// TestEnergy_sumOfKernelsAndGaps: a run's energy is its kernels' power
// times their time on the devices that run them, plus idle power on the
// devices that wait, and nothing else. (A training step's energy is over
// the step: TestEnergy_trainingPipeline.)
func TestEnergy_sumOfKernelsAndGaps(t *testing.T) {
	for _, tt := range []struct {
		name          string
		hw, mdl       string
		devs, tp, pp  int
		training      bool
		exec          sim.Exec
		wantGapsShare float64 // of the device time, at least
	}{
		{"one GPU", "h100", "llama3-8b", 1, 1, 1, false, sim.ExecGraph, 0},
		{"tp 2", "h100", "llama3-8b", 2, 2, 1, false, sim.ExecGraph, 0},
		{"pp 2: half the devices wait", "h100", "llama3-8b", 2, 1, 2, false, sim.ExecGraph, 0.5},
		{"eager: the device waits on the host", "h100", "resnet50", 1, 1, 1, false, sim.ExecEager, 0.3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sys, w := load(t, tt.hw, tt.mdl, tt.devs)
			sc := sim.Default()
			sc.TP, sc.PP, sc.Batch, sc.Input, sc.Output, sc.Exec = tt.tp, tt.pp, 4, 512, 16, tt.exec
			if tt.training {
				sc.Mode, sc.Seq, sc.Batch = sim.Training, 1024, 1
			}
			rep, err := sim.Run(sys, w, sc)
			if err != nil {
				t.Fatal(err)
			}
			e := rep.Energy
			p := sys.Device.Processor()
			// Recompute from the op rows: each row's energy is its power
			// (re-derived from its utilisation) times its time.
			var kernels, busyTime, wait float64
			busy := float64(tt.devs / tt.pp)
			each := func(ph *sim.PhaseReport, times float64) {
				if ph == nil {
					return
				}
				busyTime += times * float64(ph.Time)
				wait += times * float64(ph.Wait)
				for _, r := range ph.Ops {
					// A row of a single pass repeats one launch, so its
					// totals have the launch's utilisation (decode rows
					// sum launches at different contexts).
					if co := p.Capped(model.Cost{FLOPs: r.FLOPs, Bytes: r.Bytes, Time: r.Time, DType: r.DType}); ph.Steps == 1 && ph.Wait == 0 && !close(float64(co.Energy()), float64(r.Energy)) {
						t.Errorf("%s %s: row energy %v, power × time %v", ph.Name, r.Name, r.Energy, co.Energy())
					}
					kernels += times * busy * float64(r.Energy)
				}
			}
			if in := rep.Inference; in != nil {
				each(&in.Prefill, 1)
				each(in.Decode, 1)
			}
			if tr := rep.Training; tr != nil {
				m := float64(tr.MicroBatches)
				each(&tr.Forward, m)
				each(&tr.Backward, m)
				each(tr.Recompute, m)
				each(tr.Gradients, 1)
				each(&tr.Optimizer, 1)
			}
			gaps := float64(e.Wait) * ((float64(tt.devs)-busy)*busyTime + busy*wait)
			if !close(float64(e.Kernels), kernels) || !close(float64(e.Gaps), gaps) || !close(float64(e.GPU), kernels+gaps) {
				t.Errorf("kernels %v gaps %v total %v; summed %v + %v", e.Kernels, e.Gaps, e.GPU, kernels, gaps)
			}
			if share := float64(e.Gaps) / float64(e.Devices) / float64(e.Wait) / float64(e.Wall); share < tt.wantGapsShare || (tt.wantGapsShare == 0) != (share == 0) || (tt.exec == sim.ExecGraph && !close(share, tt.wantGapsShare)) {
				t.Errorf("waiting share of device time %.3f, want %.3f", share, tt.wantGapsShare)
			}
			if !close(float64(e.Wall), busyTime) {
				t.Errorf("wall %v, kernels back to back %v", e.Wall, busyTime)
			}
			node := float64(e.GPU) + float64(sys.Device.NodePower)/8*float64(e.Devices)*float64(e.Wall) // 8 H100s per DGX H100
			if !close(float64(e.Node), node) {
				t.Errorf("node %v, want %v", e.Node, node)
			}
			if e.AveragePower <= e.Idle*model.Watts(1-tt.wantGapsShare) || e.AveragePower > e.Cap {
				t.Errorf("average power %v outside idle %v .. cap %v", e.AveragePower, e.Idle, e.Cap)
			}
		})
	}
}

func close(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// TestPowerCap: under a 500 W limit a compute-bound prefill slows down
// and draws 500 W; a memory-bound decode step, below the limit already,
// does not change. A limit at or below idle is refused, naming the flag.
func TestPowerCap(t *testing.T) {
	sys, w := load(t, "h100", "llama3-8b", 1)
	run := func(limit model.Watts) *sim.Report {
		sc := sim.Default()
		sc.Batch, sc.Input, sc.Output, sc.PowerCap = 8, 2048, 8, limit
		rep, err := sim.Run(sys, w, sc)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	full, capped := run(0), run(500)
	fp, cp := full.Inference.Prefill, capped.Inference.Prefill
	if !(cp.Time > 1.05*fp.Time) {
		t.Errorf("prefill under 500 W: %v, at 700 W %v: want slower", cp.Time, fp.Time)
	}
	if capped.Energy.PrefillPower > 500.001 {
		t.Errorf("prefill power under a 500 W limit: %v", capped.Energy.PrefillPower)
	}
	if d0, d1 := full.Inference.Decode.Time, capped.Inference.Decode.Time; d1 > 1.02*d0 {
		t.Errorf("memory-bound decode under 500 W: %v, at 700 W %v: want about the same", d1, d0)
	}
	t.Logf("prefill of 8×2048 tokens: %v at %v, %v at %v", fp.Time, full.Energy.PrefillPower, cp.Time, capped.Energy.PrefillPower)
	sc := sim.Default()
	sc.PowerCap = 50
	_, err := sim.Run(sys, w, sc)
	var se *sim.ScenarioError
	if !errors.As(err, &se) || se.Field != "power-cap" {
		t.Errorf("a 50 W limit: %v, want a --power-cap error", err)
	}
}

// TestEnergy_trainingPipeline: a pipelined training step keeps every
// stage busy at once (micro-batches in flight), so its energy is over the
// step time, on every device: its mean power lies between idle and the
// cap, and the wall is the step. Pricing the stages one after another (as
// an inference batch through PP runs) had given gpt3-1.3b at PP 4 a step
// energy whose mean over the step exceeded the cap while its printed
// average power was near the wait power.
func TestEnergy_trainingPipeline(t *testing.T) {
	for _, pp := range []int{1, 4} {
		sys, w := load(t, "h100", "gpt3-1.3b", 4)
		sc := sim.Default()
		sc.Mode, sc.Seq, sc.Batch, sc.PP, sc.DP, sc.GlobalBatch = sim.Training, 2048, 1, pp, 4/pp, 32
		rep, err := sim.Run(sys, w, sc)
		if err != nil {
			t.Fatal(err)
		}
		e, step := rep.Energy, rep.Training.StepTime
		if !close(float64(e.Wall), float64(step)) {
			t.Errorf("pp %d: energy over %v, the step is %v", pp, e.Wall, step)
		}
		mean := model.Watts(float64(e.GPU) / float64(e.Devices) / float64(step))
		if mean > e.Cap || mean < e.Idle || !close(float64(mean), float64(e.AveragePower)) {
			t.Errorf("pp %d: step energy %v over %d devices and %v is %v a device (printed average %v): want one figure between idle %v and cap %v", pp, e.GPU, e.Devices, step, mean, e.AveragePower, e.Idle, e.Cap)
		}
		// The pipeline's bubble and the exposed communication are waits
		// on every device (the overlap slowdown is compute:
		// TestEnergy_overlapIsBusy).
		b := rep.Training.Breakdown
		idle := b.Bubble + b.TPComm + b.CPComm + b.EPComm + b.PPComm + b.DPComm
		if least := float64(e.Wait) * float64(e.Devices) * float64(idle); float64(e.Gaps) < least*(1-1e-9) {
			t.Errorf("pp %d: gaps %v, want at least the wait power over the bubble and exposed communication on every device, %v", pp, e.Gaps, least)
		}
	}
	// One device, nothing exposed: the step is its kernels, stretched
	// (sustained clocks) at their own power, so the mean power is the
	// kernels' mean power and the step's energy is over the step.
	sys, w := load(t, "h100", "gpt3-1.3b", 1)
	sc := sim.Default()
	sc.Mode, sc.Seq, sc.Batch, sc.GlobalBatch = sim.Training, 1024, 1, 4
	rep, err := sim.Run(sys, w, sc)
	if err != nil {
		t.Fatal(err)
	}
	tr, e := rep.Training, rep.Energy
	energy, time := kernelSums(tr)
	if !(tr.StepTime > model.Seconds(time)) {
		t.Fatalf("step %v, kernels back to back %v: want the step longer (sustained clocks)", tr.StepTime, time)
	}
	if want := energy / time; !close(float64(e.AveragePower), want) || float64(e.Gaps) > 1e-9*float64(e.GPU) || !close(float64(e.Wall), float64(tr.StepTime)) {
		t.Errorf("one device: average %v, gaps %v, wall %v; want the kernels' mean power %v W, no gaps, the step %v", e.AveragePower, e.Gaps, e.Wall, want, tr.StepTime)
	}
}

// TestPowerCap_memoryTrafficKept: lowering the clocks saves the clocked
// share of a kernel's draw, not its memory traffic's, which is per byte
// moved: under a limit 1 W above idle, a decode step's dynamic energy
// (its draw above idle over its time) is at least what its traffic draws
// at full speed. It had streamed Llama-3 8B's weights at the unlimited
// speed "at 71 W" (batch 32: 14.9 ms a step, 9.8 ms without a limit;
// the traffic alone draws about 40 W above idle).
func TestPowerCap_memoryTrafficKept(t *testing.T) {
	sys, w := load(t, "h100", "llama3-8b", 1)
	p := sys.Device.Processor()
	pm := p.PowerModel
	run := func(limit model.Watts) *sim.Report {
		sc := sim.Default()
		sc.Batch, sc.Input, sc.Output, sc.PowerCap = 32, 2048, 8, limit
		rep, err := sim.Run(sys, w, sc)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	full, low := run(0), run(pm.Idle+1)
	d0, d1 := full.Inference.Decode, low.Inference.Decode
	// The traffic's draw above idle at full speed, and its energy.
	um := float64(d0.Bytes) / (float64(p.Bandwidth) * float64(d0.Time)) // over the phase's steps
	traffic := float64(pm.Cap-pm.Idle) * pm.Memory * math.Min(um, 1) * float64(d0.Time)
	if got := 1 * float64(d1.Time); got < 0.999*traffic {
		t.Errorf("decode 1 W above idle: %v (%.3g J above idle), its traffic alone takes %.3g J above idle (%v without a limit)", d1.Time, got, traffic, d0.Time)
	}
}

// TestPowerCap_waitsUnderTheLimit: a device under a power limit draws no
// more than the limit between kernels either, so no run's mean power
// exceeds it. Under 100 W (an H100 idles at 70 W and waits at 196 W) a
// pipelined Llama-3 70B step had printed "limited to 100 W, waiting
// between kernels 196 W" and a mean of 115.9 W a device; an eager
// decode's host gaps were priced at 196 W too.
func TestPowerCap_waitsUnderTheLimit(t *testing.T) {
	for _, tc := range []struct {
		name string
		sc   func() sim.Scenario
		devs int
	}{
		{"training pp 4", func() sim.Scenario {
			sc := sim.Default()
			sc.Mode, sc.Seq, sc.Batch, sc.PP, sc.DP, sc.GlobalBatch = sim.Training, 2048, 1, 4, 1, 8
			return sc
		}, 4},
		{"eager decode", func() sim.Scenario {
			sc := sim.Default()
			sc.Batch, sc.Input, sc.Output, sc.Exec = 1, 128, 16, sim.ExecEager
			return sc
		}, 1},
	} {
		sys, w := load(t, "h100", "gpt3-1.3b", tc.devs)
		sc := tc.sc()
		sc.PowerCap = 100
		rep, err := sim.Run(sys, w, sc)
		if err != nil {
			t.Fatal(err)
		}
		e := rep.Energy
		if e.Wait > sc.PowerCap {
			t.Errorf("%s: wait power %v under a %v limit", tc.name, e.Wait, sc.PowerCap)
		}
		if e.AveragePower > sc.PowerCap*(1+1e-9) {
			t.Errorf("%s: mean power %v a device under a %v limit", tc.name, e.AveragePower, sc.PowerCap)
		}
		if !(e.Gaps > 0) {
			t.Errorf("%s: no gaps (%v): the test needs a run that waits", tc.name, e.Gaps)
		}
	}
}

// TestScenario_sustained: an inference at the sustained clocks
// (Scenario.Sustained) runs its arithmetic at power.sustained of the
// tables' rate (0.912 on the H200): a compute-bound prefill slows by up to
// 1/0.912, a memory-bound decode hides it under its traffic, and a
// pricer for serving runs the same. A training step, which always runs
// at the sustained clocks, does not read the flag (no second stretch).
func TestScenario_sustained(t *testing.T) {
	sys, w := load(t, "h200", "llama3-8b", 1)
	s := sys.Device.Power.Sustained
	run := func(sustained bool, mode sim.Mode) *sim.Report {
		sc := sim.Default()
		sc.Mode, sc.Batch, sc.Input, sc.Output, sc.Sustained = mode, 8, 2048, 64, sustained
		if mode == sim.Training {
			sc.Seq, sc.Batch = 2048, 1
		}
		rep, err := sim.Run(sys, w, sc)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	burst, sus := run(false, sim.Inference), run(true, sim.Inference)
	p0, p1 := burst.Inference.Prefill.Time, sus.Inference.Prefill.Time
	if r := float64(p1 / p0); !(r > 1.03 && r <= 1/s+1e-9) {
		t.Errorf("prefill of 8×2048 tokens at the sustained clocks: ×%.4f its burst time, want above 1.03 and at most 1/%v", r, s)
	}
	d0, d1 := burst.Inference.Decode.Time, sus.Inference.Decode.Time
	if r := float64(d1 / d0); !(r >= 1 && r < 1.01) {
		t.Errorf("memory-bound decode at the sustained clocks: ×%.4f its burst time, want within 1%%", r)
	}
	t.Logf("prefill %v → %v, decode %v → %v (share %v)", p0, p1, d0, d1, s)

	tb, ts := run(false, sim.Training), run(true, sim.Training)
	if tb.Training.StepTime != ts.Training.StepTime {
		t.Errorf("a training step with Sustained set: %v, without %v: want the same", ts.Training.StepTime, tb.Training.StepTime)
	}

	var it [2]model.Seconds
	for i, sustained := range []bool{false, true} {
		sc := sim.Default()
		sc.Sustained = sustained
		p, err := sim.NewPricer(sys, w, sc)
		if err != nil {
			t.Fatal(err)
		}
		it[i] = p.Price(&sim.Iteration{Prefill: []sim.Chunk{{Tokens: 8192}}, Sampled: 1}).Time
	}
	if r := float64(it[1] / it[0]); !(r > 1.03 && r <= 1/s+1e-9) {
		t.Errorf("a serving iteration of an 8,192-token prefill at the sustained clocks: ×%.4f its burst time, want above 1.03 and at most 1/%v", r, s)
	}
}

// TestPowerCap_sustainedClock: a power limit lowers the clock only as far
// as its power needs, from the clock the device would otherwise hold. A
// training step's matrix kernels run at the sustained clock s (an H100's
// power.sustained, 0.963); a limit whose clock r is above s leaves them
// there, and one whose r is below s takes them to r, not to r·s. The two
// slowdowns had multiplied: under 350 W a Llama step on an H100 was 3.7%
// slower in its matrix kernels than the same device without a sustained
// share, under 690 W (which the sustained clock already meets) slower than
// without a limit.
func TestPowerCap_sustainedClock(t *testing.T) {
	sys, w := load(t, "h100", "gpt3-1.3b", 1)
	if s := sys.Device.Power.Sustained; !(s > 0 && s < 0.99) {
		t.Fatalf("the test needs a device with a sustained share below 1, h100 has %v", s)
	}
	step := func(sustained float64, limit model.Watts) model.Seconds {
		d := *sys.Device
		d.Power.Sustained = sustained
		s := *sys
		s.Device = &d
		sc := sim.Default()
		sc.Mode, sc.Seq, sc.Batch, sc.GlobalBatch, sc.PowerCap = sim.Training, 2048, 4, 8, limit
		rep, err := sim.Run(&s, w, sc)
		if err != nil {
			t.Fatal(err)
		}
		return rep.Training.StepTime
	}
	s := sys.Device.Power.Sustained
	free, meets := step(s, 0), step(s, 690)
	if meets != free {
		t.Errorf("under 690 W (clock r ≈ 0.99 above the sustained %v): step %v, unlimited %v: want the same", s, meets, free)
	}
	low, lowBoost := step(s, 350), step(1, 350)
	if !(low > free) {
		t.Errorf("under 350 W: step %v, unlimited %v: want slower", low, free)
	}
	// Both run their matrix kernels at r ≈ 0.76; what differs is only the
	// part of a kernel's time the clock does not set (its launch, the
	// share of its traffic the soft maximum adds), which the sustained
	// share stretches: well under a percent.
	if d := float64(low)/float64(lowBoost) - 1; math.Abs(d) > 0.005 {
		t.Errorf("under 350 W: step %v with a sustained share of %v, %v without: %+.2f%%, want within 0.5%% (the clock is the limit's either way)", low, s, lowBoost, 100*d)
	}
}

// TestEnergy_overlapIsBusy: the overlap slowdown is compute that runs
// slower beside a collective on the same GPU: its time draws the kernels'
// power, not the wait power of a device with nothing to run. It had been
// priced as a wait (llama3-8b at tp 8 with TP overlap on a DGX H100: its
// 4.3 ms of overlap a step at 196 W instead of about 600 W).
func TestEnergy_overlapIsBusy(t *testing.T) {
	sys, w := load(t, "h100", "llama3-8b", 16)
	sc := sim.Default()
	sc.Mode, sc.Seq, sc.Batch, sc.GlobalBatch = sim.Training, 4096, 1, 8
	sc.TP, sc.DP, sc.SP, sc.TPOverlap, sc.ZeRO = 8, 2, true, true, 1
	rep, err := sim.Run(sys, w, sc)
	if err != nil {
		t.Fatal(err)
	}
	tr, e := rep.Training, rep.Energy
	b := tr.Breakdown
	if !(b.Overlap > 0) {
		t.Fatalf("no overlap (%v): the test needs a run with some", b.Overlap)
	}
	energy, time := kernelSums(tr)
	mean := energy / time // the kernels' mean power on one device
	busy := float64(b.Compute + b.Optimizer + b.Overlap)
	if got, want := float64(e.Kernels)/float64(e.Devices), mean*busy; !close(got, want) {
		t.Errorf("kernels' energy a device %.6g J, want the kernels' mean power %.1f W over compute, optimizer and overlap %v: %.6g J (overlap %v)", got, mean, model.Seconds(busy), want, b.Overlap)
	}
}

// kernelSums is a training step's kernels back to back: the energy and
// time of its micro-batches' passes and its optimizer step.
func kernelSums(tr *sim.TrainingResult) (energy, time float64) {
	for _, x := range []struct {
		ph    *sim.PhaseReport
		times float64
	}{{&tr.Forward, float64(tr.MicroBatches)}, {&tr.Backward, float64(tr.MicroBatches)}, {tr.Recompute, float64(tr.MicroBatches)}, {&tr.Optimizer, 1}} {
		if x.ph != nil {
			energy += x.times * float64(x.ph.Energy)
			time += x.times * float64(x.ph.Time)
		}
	}
	return energy, time
}
