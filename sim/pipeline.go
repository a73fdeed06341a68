package sim

import (
	"fmt"
	"strings"

	"github.com/perfsim/perfsim/model"
)

// Schedule is a pipeline-parallel schedule.
type Schedule uint8

// The schedules (Narayanan et al., "Efficient Large-Scale Language Model
// Training on GPU Clusters Using Megatron-LM", SC 2021, §2.2).
const (
	OneFOneB    Schedule = iota // one forward, one backward (PipeDream-Flush); holds at most p micro-batches
	GPipe                       // all forwards, then all backwards; holds all m micro-batches
	Interleaved                 // 1F1B over v model chunks per device: the bubble shrinks v times
)

func (s Schedule) String() string { return [...]string{"1f1b", "gpipe", "interleaved"}[s] }

// ParseSchedule parses 1f1b, gpipe or interleaved.
func ParseSchedule(s string) (Schedule, error) {
	for i, n := range [...]string{"1f1b", "gpipe", "interleaved"} {
		if strings.EqualFold(s, n) {
			return Schedule(i), nil
		}
	}
	return 0, fmt.Errorf("unknown pipeline schedule %q (want 1f1b, gpipe or interleaved)", s)
}

// PipelineTime returns the time m micro-batches take through a pipeline
// whose stage i needs t[i] per micro-batch (its forward, backward and
// recomputation, all of its v model chunks together), and the bubble:
// the part of it the slowest stage spends idle.
//
// With equal stages of time t, 1F1B and GPipe take (m + p − 1)·t and
// interleaved 1F1B over v chunks (m + (p − 1)/v)·t (Narayanan et al.
// 2021, §2.2.1–2.2.2): the bubble over the ideal compute m·t is (p−1)/m
// and (p−1)/(v·m), and as a share of the step (p−1)/(m+p−1) for v = 1.
// With unequal stages, the slowest sets the steady state and the others
// add their fill and drain: m·max(t) + (Σt − max(t))/v.
func PipelineTime(t []model.Seconds, m, v int, s Schedule) (total, bubble model.Seconds) {
	if len(t) == 0 || m <= 0 {
		return 0, 0
	}
	if s != Interleaved || v < 1 {
		v = 1
	}
	var sum, worst model.Seconds
	for _, x := range t {
		sum += x
		worst = max(worst, x)
	}
	bubble = (sum - worst) / model.Seconds(v)
	return model.Seconds(m)*worst + bubble, bubble
}

// InFlight returns the micro-batches whose activations the first stage
// holds at its peak, in units of one micro-batch through all of its
// layers: m for GPipe; min(p, m) for 1F1B; for interleaved 1F1B
// p·(1 + (p−1)/(p·v)) when m ≥ p (Korthikanti et al. 2022, §4.2.3:
// the first stage holds L·(1 + (p−1)/(p·v)) layers' worth at p stages).
func InFlight(p, m, v int, s Schedule) float64 {
	p, m = max(p, 1), max(m, 1)
	switch s {
	case GPipe:
		return float64(m)
	case Interleaved:
		if v > 1 && m >= p {
			return float64(p) * (1 + float64(p-1)/(float64(p)*float64(v)))
		}
	}
	return float64(min(p, m))
}

// ZeROStates returns the model states per rank of mixed-precision
// training (Rajbhandari et al., "ZeRO", SC 2020, §5 and Figure 1): params
// parameters on this rank before data-parallel sharding, 2-byte weights
// and gradients and k bytes of optimizer state per parameter, sharded
// over dp ranks as the stage says: 1 the optimizer state ((2+2)Ψ +
// KΨ/N), 2 also the gradients (2Ψ + (2+K)Ψ/N), 3 also the weights
// ((2+2+K)Ψ/N); 0 shards nothing ((2+2+K)Ψ).
func ZeROStates(params float64, dp, stage int, k float64) (weights, grads, opt model.Bytes) {
	n := float64(max(dp, 1))
	w, g, o := 2*params, 2*params, k*params
	if stage >= 1 {
		o /= n
	}
	if stage >= 2 {
		g /= n
	}
	if stage >= 3 {
		w /= n
	}
	return model.Bytes(w), model.Bytes(g), model.Bytes(o)
}
