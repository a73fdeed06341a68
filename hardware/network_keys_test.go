package hardware

import (
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// A system file's [intra] and [inter] accept every key of a device's
// interconnect tier (networkKeys); each one given must reach the system,
// not be accepted and dropped.
func TestLoadSystem_overridesEveryNetworkKey(t *testing.T) {
	const src = `device = "h100"
source = "our cluster"

[intra]
base_latency = "6 us"
allreduce_latency = "4 us"
allreduce_efficiency = 0.5
efficiency_half_size = "2 MB"
efficiency_slope = 0.7
efficiency_rank_factor = 0.9

[inter]
name = "IB"
bandwidth = "50 GB/s"
efficiency_rank_factor = 0.25
`
	s, err := LoadSystem(strings.NewReader(src), "cluster.toml")
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		key       string
		got, want any
	}{
		{"intra.base_latency", s.Intra.Base, model.Seconds(6e-6)},
		{"intra.allreduce_latency", s.Intra.AllReduceLatency, model.Seconds(4e-6)},
		{"intra.allreduce_efficiency", s.Intra.AllReduceEfficiency, 0.5},
		{"intra.efficiency_half_size", s.Intra.EfficiencyHalf, model.Bytes(2e6)},
		{"intra.efficiency_slope", s.Intra.EfficiencySlope, 0.7},
		{"intra.efficiency_rank_factor", s.Intra.RankFactor, 0.9},
		{"inter.efficiency_rank_factor", s.Inter.RankFactor, 0.25},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.key, c.got, c.want)
		}
	}
}
