package sim

import (
	"fmt"

	"github.com/perfsim/perfsim/model"
)

// Energy is a run's energy and power, at two boundaries: the devices
// alone (GPU: what NVML or a board sensor measures) and the node (the
// devices plus their share of the rest of the node, CPUs, memory, NICs,
// fans, as the hardware file's power.node gives it for a node of
// interconnect.intra.devices_per_node devices, drawn all the run). The facility
// boundary multiplies the node's by a PUE, which is the caller's input.
//
// Every kernel draws its power (model.Processor.Power) for its time; a
// device in use waiting between kernels (a pipeline stage another stage is
// busy in, the host's dispatch under eager execution) draws the wait power,
// model.PowerParams.WaitPower. So GPU = Kernels + Gaps exactly, and a run's energy is the
// sum over its kernels and its gaps.
type Energy struct {
	// The device's power model in force: idle, the cap the peaks were
	// measured under, and the limit applied (the cap, or Scenario.PowerCap).
	Idle, Cap, Limit model.Watts
	// Wait is what a device in use draws between kernels
	// (model.PowerParams.WaitPower): the power of Gaps.
	Wait           model.Watts
	Devices, Nodes int
	// NodeShare is each device's share of its node's power besides the
	// devices (power.node over the node's devices); 0 when not given.
	NodeShare model.Watts

	// Wall is the run's duration: E2E for inference, one step for training.
	Wall model.Seconds
	// Kernels is the kernels' energy on all devices; Gaps the devices'
	// waits between kernels at the wait power; GPU their sum. Node adds NodePower over
	// NodeShare over Wall for every device.
	Kernels, Gaps, GPU, Node model.Joules
	// AveragePower is GPU/(Devices·Wall): one device's mean draw.
	AveragePower model.Watts

	// Inference (GPU boundary, all devices): the prefill's energy per
	// prompt token, the decode's per output token after the first, and
	// the whole run's per output token. Zero where the phase is absent.
	PrefillPerToken, DecodePerToken, PerOutputToken model.Joules
	// PrefillPower and DecodePower are one device's mean draw in each.
	PrefillPower, DecodePower model.Watts
	// PerImage is the GPU energy per image of a CNN or vision
	// transformer's inference batch.
	PerImage model.Joules

	// Training: ToTrain is the GPU energy of the token budget
	// (TimeToTrain at the step's mean power), ToTrainNode the node's.
	ToTrain, ToTrainNode model.Joules
	// PerTrainedToken is a training step's GPU energy over the tokens it
	// trains on (an image model's goes to PerImage, over its images).
	PerTrainedToken model.Joules
}

// powerLimit applies the scenario's power cap and, for an inference,
// its sustained clocks (Scenario.Sustained) to p, refusing a cap at or
// below the device's idle power.
func powerLimit(p *model.Processor, sc Scenario) error {
	p.PowerModel.Sustain = sc.Sustained && sc.Mode == Inference
	if sc.PowerCap == 0 {
		return nil
	}
	pm := &p.PowerModel
	switch {
	case !(sc.PowerCap > 0):
		return &ScenarioError{"power-cap", fmt.Errorf("must be a positive power, got %s", sc.PowerCap)}
	case !pm.Valid():
		return &ScenarioError{"power-cap", fmt.Errorf("%s has no power model (no tdp or [power] in its hardware file)", p.Name)}
	case sc.PowerCap <= pm.Idle:
		return &ScenarioError{"power-cap", fmt.Errorf("%s is at or below %s's idle power, %s", sc.PowerCap, p.Name, pm.Idle)}
	case sc.PowerCap > pm.Cap:
		return &ScenarioError{"power-cap", fmt.Errorf("%s is above %s's cap, %s, under which its peaks hold: a limit can only lower the clocks", sc.PowerCap, p.Name, pm.Cap)}
	}
	pm.Limit = sc.PowerCap
	return nil
}

// phaseEnergy returns the energy of a phase run once on devs devices of
// which busy run its kernels and the rest wait: kernels on the busy, the
// wait power on the others and on the busy while they wait within the
// phase (ph.Wait, the host's dispatch under eager execution).
func phaseEnergy(ph *PhaseReport, busy, devs float64, wait model.Watts) (kernels, gaps model.Joules) {
	kernels = model.Joules(busy * float64(ph.Energy))
	gaps = wait.Over(model.Seconds((devs-busy)*float64(ph.Time) + busy*float64(ph.Wait)))
	return kernels, gaps
}

// energy fills r.rep.Energy (at e, allocated with the report) from the
// phases priced, when the device has a power model.
func (r *runner) energy(e *Energy) {
	pm := r.c.p.PowerModel
	if !pm.Valid() {
		return
	}
	rep := r.rep
	devs := float64(rep.Devices)
	// Each pipeline stage's devices are busy for their stage only: of the
	// devices, Devices/PP run each kernel (a TP group per replica) and the
	// rest wait.
	busy := devs / float64(max(r.sc.PP, 1))
	// An inference run's DP replicas each serve a batch: the energy per
	// token or image is over all of theirs.
	reps := float64(max(r.sc.DP, 1))
	*e = Energy{Idle: pm.Idle, Cap: pm.Cap, Limit: pm.LimitOrCap(), Wait: pm.WaitPower(), Devices: rep.Devices}
	per := max(r.sys.DevicesPerNode, 1)
	e.Nodes = (rep.Devices + per - 1) / per
	e.NodeShare = r.sys.Device.NodeShare(r.sys.Device.Intra.DevicesPerNode)
	add := func(ph *PhaseReport, times float64) (model.Joules, model.Seconds) {
		if ph == nil {
			return 0, 0
		}
		k, g := phaseEnergy(ph, busy, devs, e.Wait)
		k, g = model.Joules(times*float64(k)), model.Joules(times*float64(g))
		e.Kernels += k
		e.Gaps += g
		return k + g, model.Seconds(times * float64(ph.Time))
	}
	if in := rep.Inference; in != nil {
		ep, tp := add(&in.Prefill, 1)
		e.PrefillPower = ep.Per(tp) / model.Watts(devs)
		// The devices' energy is every DP replica's, each serving a batch.
		if toks := reps * float64(r.sc.Batch) * float64(r.sc.Input); toks > 0 && (r.shape.Arch == Decoder || r.shape.Arch == Encoder) {
			e.PrefillPerToken = model.Joules(float64(ep) / toks)
		}
		e.Wall = tp
		if d := in.Decode; d != nil {
			ed, td := add(d, 1)
			e.DecodePower = ed.Per(td) / model.Watts(devs)
			if toks := reps * float64(r.sc.Batch) * float64(d.Steps); toks > 0 {
				e.DecodePerToken = model.Joules(float64(ed) / toks)
			}
			e.Wall += td
		}
	}
	if tr := rep.Training; tr != nil {
		// A training step keeps its pipeline's stages busy at once
		// (micro-batches in flight), so its energy is over the step, on
		// every device; the stages are not priced one after another as
		// an inference batch through PP is. A device runs its kernels
		// for the step's compute and optimizer (Breakdown: the phases'
		// kernels stretched by the sustained clocks and the
		// attention backward's rate, at the kernels' power), and for the
		// overlap slowdown (its compute running slower beside a
		// collective: busy, at the kernels' power too), and waits, at
		// the wait power, for the rest: exposed communication, the
		// pipeline's bubble, the loader.
		micro := float64(tr.MicroBatches)
		var kernels, waits, busyTime float64
		for _, x := range []struct {
			ph    *PhaseReport
			times float64
		}{{&tr.Forward, micro}, {&tr.Backward, micro}, {tr.Recompute, micro}, {tr.Gradients, 1}, {&tr.Optimizer, 1}} {
			if x.ph == nil {
				continue
			}
			kernels += x.times * busy * float64(x.ph.Energy)
			waits += x.times * busy * float64(x.ph.Wait)
			busyTime += x.times * busy * float64(x.ph.Time)
		}
		perDevice := busyTime / devs // the phases' time on one device
		active := perDevice
		if b := tr.Breakdown; b != nil {
			active = float64(b.Compute + b.Optimizer + b.Overlap)
		}
		active = min(active, float64(tr.StepTime))
		stretch := 1.0
		if perDevice > 0 {
			stretch = active / perDevice
		}
		e.Wall = tr.StepTime
		e.Kernels = model.Joules(stretch * kernels)
		rest := float64(tr.StepTime) - active
		if rest <= 1e-9*float64(tr.StepTime) {
			rest = 0 // the step is its compute and optimizer, to rounding
		}
		e.Gaps = e.Wait.Over(model.Seconds(stretch*waits + devs*rest))
	}
	e.GPU = e.Kernels + e.Gaps
	e.Node = e.GPU + (e.NodeShare * model.Watts(e.Devices)).Over(e.Wall)
	e.AveragePower = e.GPU.Per(e.Wall) / model.Watts(devs)
	if in := rep.Inference; in != nil && r.shape.Arch == Decoder {
		if toks := reps * float64(r.sc.Batch) * float64(r.sc.Output); toks > 0 {
			e.PerOutputToken = model.Joules(float64(e.GPU) / toks)
		}
	}
	if in := rep.Inference; in != nil && (r.shape.Arch == CNN || r.shape.Arch == Vision) && r.sc.Batch > 0 {
		e.PerImage = model.Joules(float64(e.GPU) / (reps * float64(r.sc.Batch)))
	}
	if tr := rep.Training; tr != nil && tr.TokensPerSecond > 0 && e.Wall > 0 {
		// TokensPerSecond counts an image model's images.
		per := model.Joules(float64(e.GPU) / (tr.TokensPerSecond * float64(e.Wall)))
		if r.shape.Arch == CNN || r.shape.Arch == Vision {
			e.PerImage = per
		} else {
			e.PerTrainedToken = per
		}
	}
	if tr := rep.Training; tr != nil && tr.TimeToTrain > 0 && e.Wall > 0 {
		steps := float64(tr.TimeToTrain) / float64(e.Wall)
		e.ToTrain = model.Joules(steps * float64(e.GPU))
		e.ToTrainNode = model.Joules(steps * float64(e.Node))
	}
	rep.Energy = e
}
