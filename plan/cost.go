package plan

import (
	"fmt"
	"strings"

	"github.com/perfsim/perfsim/serve"
)

// An Objective picks the best of the deployments that meet the SLO.
type Objective uint8

const (
	// FewestGPUs: the fewest GPUs, then the most tokens per second per
	// GPU, then per user (deployments of as many GPUs that keep up carry
	// the same load: SteadyTokens).
	FewestGPUs Objective = iota
	// LowestCost: the lowest cost per hour at the target load (its
	// GPUs' price and the energy they draw at that load, as the Coster
	// prices them), then the fewest GPUs.
	LowestCost
)

func (o Objective) String() string { return [...]string{"gpus", "cost"}[o] }

// ParseObjective reads "gpus" or "cost".
func ParseObjective(s string) (Objective, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "gpus":
		return FewestGPUs, nil
	case "cost":
		return LowestCost, nil
	}
	return 0, fmt.Errorf("unknown objective %q (want gpus or cost)", s)
}

// A Coster prices a simulated deployment: what it costs per hour of
// serving at the load it was simulated at. cmd builds it from a price
// (per GPU-hour, or a total cost of ownership with its energy) and the
// power model.
type Coster func(c Candidate, res *serve.Result) (perHour float64, err error)

// better reports whether a is a better answer than b under o; both meet
// the SLO.
func (o Objective) better(a, b *Candidate) bool {
	if o == LowestCost && a.CostPerHour != b.CostPerHour {
		return a.CostPerHour < b.CostPerHour
	}
	if a.GPUs != b.GPUs {
		return a.GPUs < b.GPUs
	}
	if a.TokensPerSecondPerGPU != b.TokensPerSecondPerGPU {
		return a.TokensPerSecondPerGPU > b.TokensPerSecondPerGPU
	}
	return a.TokensPerSecondPerUser > b.TokensPerSecondPerUser
}

// price sets c's cost per hour and per million output tokens, when q
// has a Coster.
func (q *ServeQuery) price(c *Candidate, res *serve.Result) error {
	if q.Cost == nil {
		return nil
	}
	var err error
	if c.CostPerHour, err = q.Cost(*c, res); err != nil {
		return err
	}
	if c.TokensPerSecond > 0 {
		c.CostPerMillionTokens = c.CostPerHour / (3600 * c.TokensPerSecond) * 1e6
	}
	return nil
}
