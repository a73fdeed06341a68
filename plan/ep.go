package plan

import (
	"fmt"
	"strings"

	"github.com/perfsim/perfsim/sim"
)

// EPDegrees returns the expert-parallel degrees a serving search tries
// for a replica of tp GPUs per stage of a model of shape s: 1, and for
// an MoE model every ep > 1 that divides tp and the experts and leaves
// each expert split tp/ep ways along a width it divides (the layouts
// serve prices: experts split over ep ranks of the TP group, each over
// tp/ep of them, sim.Scenario's checks). A dense model gets 1 alone, so
// its search is unchanged. Data-parallel attention (ep a multiple of tp,
// the experts across a group of replicas in lockstep) is searched apart:
// DPAttentionDegrees.
func EPDegrees(s sim.Shape, tp int) []int {
	eps := []int{1}
	if s.Experts <= 1 {
		return eps
	}
	for ep := 2; ep <= tp; ep++ {
		if tp%ep == 0 && s.Experts%ep == 0 && (s.ExpertFFN == 0 || s.ExpertFFN%(tp/ep) == 0) {
			eps = append(eps, ep)
		}
	}
	return eps
}

// CheckEP reports why a pinned expert-parallel degree cannot serve a
// model of shape s named name, with the TP degrees tps searched: a
// dense model (for ep > 1), an ep that does not divide the experts, or
// one that no TP degree is a multiple of (serve's EP lies within TP).
// flag names the flag in the message ("ep").
func CheckEP(flag, name string, s sim.Shape, ep int, tps []int) error {
	switch {
	case ep < 1:
		return fmt.Errorf("--%s: %d is below 1", flag, ep)
	case ep == 1:
		return nil
	case s.Experts == 0:
		return fmt.Errorf("--%s: expert parallelism %d for %s, which has no experts (give 1, or leave --%s out)", flag, ep, name, flag)
	case s.Experts%ep != 0:
		return fmt.Errorf("--%s: expert parallelism %d does not divide %s's %d experts", flag, ep, name, s.Experts)
	}
	for _, tp := range tps {
		if tp%ep == 0 {
			return nil
		}
	}
	return fmt.Errorf("--%s: expert parallelism %d divides none of the TP degrees searched (%s): serve prices expert parallelism within a replica's TP group", flag, ep, strings.Trim(strings.Join(strings.Fields(fmt.Sprint(tps)), ","), "[]"))
}
