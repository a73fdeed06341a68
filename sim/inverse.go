package sim

import (
	"errors"
	"fmt"
	"math"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// Footprint returns the memory of scenario sc on one device of sys
// without pricing any op (the inference working set needs the prefill's
// decomposition). The inverse queries call it.
func Footprint(sys *hardware.System, w Workload, sc Scenario) (Memory, error) {
	return footprint(sys, w, sc, false)
}

// footprint is Footprint; seed sizes a transformer's training step as
// MaxModel's seed assumptions do (trainingMemory: Korthikanti et al.'s
// activations with the attention scores kept, every layer on the device
// of its pipeline's share), not as Run does.
func footprint(sys *hardware.System, w Workload, sc Scenario, seed bool) (Memory, error) {
	if sys == nil || sys.Device == nil || w == nil {
		return Memory{}, errors.New("sim: no system or workload")
	}
	shape := w.Shape()
	sc = sc.forShape(shape)
	if err := sc.Validate(shape); err != nil {
		return Memory{}, err
	}
	sc = sc.normalized()
	r := getRunner()
	defer r.release()
	r.sys, r.w, r.sc, r.shape, r.rep, r.c, r.dc = sys, w, sc, shape, nil, nil, nil // no pricing here
	if sc.Mode == Training {
		if shape.Arch == CNN || seed {
			return r.trainingMemory(), nil
		}
		// As trainingScaled sizes it: the most loaded stage's model
		// states and the activations its schedule keeps in flight, with
		// FlashAttention's where the attention is fused.
		ph := r.phase(TrainForward)
		ph.Seq = sc.Seq / sc.CP
		fwd, err := r.ops(ph, nil)
		if err != nil {
			return Memory{}, err
		}
		fused := true
		for _, o := range fwd {
			if a, ok := o.Kernel.(model.Attention); ok && !a.Fused {
				fused = false
			}
		}
		return r.scaledMemory(fused, sc.GlobalBatch/(sc.Batch*sc.DP)), nil
	}
	_, working, err := r.prefillOps(nil, false)
	if err != nil {
		return Memory{}, err
	}
	return r.inferenceMemory(working), nil
}

// SearchLimit bounds the inverse searches over batch and context: a
// MaxBatch of SearchLimit, or a MaxContext of SearchLimit tokens (plus
// the output held fixed), means at least that many; memory allows more.
const SearchLimit = 1 << 24

// largest returns the largest n in [1, SearchLimit] for which fits(n),
// assuming fits is monotone (true up to some n, false after), or 0 when
// fits(1) is false.
func largest(fits func(n int) (bool, error)) (int, error) {
	ok, err := fits(1)
	if err != nil || !ok {
		return 0, err
	}
	lo, hi := 1, 2
	for {
		ok, err := fits(hi)
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		lo = hi
		if hi >= SearchLimit {
			return hi, nil
		}
		hi = min(2*hi, SearchLimit)
	}
	for hi-lo > 1 { // fits(lo), !fits(hi)
		mid := lo + (hi-lo)/2
		ok, err := fits(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// MaxBatch returns the largest batch of sc that fits one device of sys at
// sc's lengths (Input+Output tokens per sequence, or Seq in training),
// and 0 when not even one sequence fits.
func MaxBatch(sys *hardware.System, w Workload, sc Scenario) (int, error) {
	return largest(func(b int) (bool, error) {
		s := sc
		s.Batch = b
		if s.Mode == Training {
			// The same micro-batches a step, each of b sequences: a
			// pipeline schedule's count stays valid.
			s.GlobalBatch = b * max(sc.DP, 1) * microBatches(sc)
		}
		m, err := Footprint(sys, w, s)
		return m.Fits, err
	})
}

// MaxContext returns the largest context (Input+Output tokens per
// sequence, Output held fixed; in training, the sequence length) that
// fits one device of sys at sc's batch, and 0 when none does.
func MaxContext(sys *hardware.System, w Workload, sc Scenario) (int, error) {
	out := 0
	if sc.Mode == Inference {
		out = sc.Output
	}
	n, err := largest(func(n int) (bool, error) {
		s := sc
		if s.Mode == Training {
			s.Seq = n
		} else {
			s.Input = n
		}
		m, err := Footprint(sys, w, s)
		return m.Fits, err
	})
	if n == 0 {
		return 0, err
	}
	return n + out, err
}

// A Family builds the members of a model family by size: Member(x)
// returns the family's model scaled to about x parameters, widening and
// deepening it the way the family grows. Larger x must never give a
// smaller model.
type Family interface {
	Member(params float64) (Workload, error)
}

// A MaxModelResult is the largest member of a family that fits.
type MaxModelResult struct {
	Model  Workload // the largest member that fits; nil when none does
	Memory Memory   // its footprint on one device
	// Next is the smallest member found not to fit, for contrast; nil
	// when the search never found one.
	Next       Workload
	NextMemory Memory
}

// MaxModel searches family fam for the largest member that fits one
// device of sys in scenario sc (its batch, lengths, data types,
// recomputation, optimizer, and ZeRO sharding over DP devices), between
// lo and hi parameters, by bisection on the parameter count to 0.1%.
//
// The seed's figures (seed 002: about 3.5–4 B parameters trainable on one
// 80–96 GB H100, about 16 B on a node of four) follow from mixed-precision
// Adam's 16 bytes per parameter plus activations; see TestMaxModel_seed002
// for the scenario under which they hold. A training member is sized as
// those assumptions state (Korthikanti et al. 2022's activations with the
// attention scores kept unless recomputed), not as Run sizes a step,
// whose FlashAttention keeps no scores: simulate of the member found
// reports less memory than MaxModel's.
func MaxModel(sys *hardware.System, fam Family, sc Scenario, lo, hi float64) (*MaxModelResult, error) {
	if !(lo > 0 && hi > lo) {
		return nil, fmt.Errorf("sim: max model: bad search range [%g, %g]", lo, hi)
	}
	res := &MaxModelResult{}
	try := func(x float64) (bool, error) {
		w, err := fam.Member(x)
		if err != nil {
			return false, err
		}
		m, err := footprint(sys, w, sc, true)
		if err != nil {
			return false, err
		}
		if m.Fits {
			if res.Model == nil || w.Params() >= res.Model.Params() {
				res.Model, res.Memory = w, m
			}
		} else if res.Next == nil || w.Params() < res.Next.Params() {
			res.Next, res.NextMemory = w, m
		}
		return m.Fits, nil
	}
	// The smallest members may be too shallow for the layout (fewer
	// layers than pipeline stages, fewer heads than tensor-parallel
	// ranks): such a member is no answer, so start the search at the
	// first size that can hold the layout. A family grows in depth and
	// width with size, so every larger member can hold it too.
	ok, err := try(lo)
	for i := 0; err != nil && i < 64 && lo < hi; i++ {
		var se *ScenarioError
		if !errors.As(err, &se) {
			break
		}
		lo = math.Min(2*lo, hi)
		ok, err = try(lo)
	}
	if err != nil || !ok {
		return res, err
	}
	if ok, err := try(hi); err != nil || ok {
		return res, err
	}
	for i := 0; i < 60 && hi/lo > 1.001; i++ {
		mid := (lo + hi) / 2
		ok, err := try(mid)
		if err != nil {
			return nil, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return res, nil
}

// microBatches returns sc's micro-batches a step: GlobalBatch over
// Batch·DP, 1 when the global batch is unset.
func microBatches(sc Scenario) int {
	if sc.GlobalBatch <= 0 || sc.Batch <= 0 {
		return 1
	}
	return max(1, sc.GlobalBatch/(sc.Batch*max(sc.DP, 1)))
}
