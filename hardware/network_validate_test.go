package hardware

import (
	"math"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// efficiency_rank_factor γ enters the ring efficiency as (1+γ)·f/(f+γ):
// infinite, it makes every collective's time NaN; negative, it is
// ignored or, at γ = −f, divides by zero. A device file must say so.
func TestValidate_rankFactor(t *testing.T) {
	for _, tt := range []struct {
		g    float64
		want string
	}{
		{math.Inf(1), "hardware: interconnect.intra.efficiency_rank_factor: must be a finite number, not +Inf"},
		{math.NaN(), "hardware: interconnect.intra.efficiency_rank_factor: must be a finite number, not NaN"},
		{-0.5, "hardware: interconnect.intra.efficiency_rank_factor: must not be negative, not -0.5"},
	} {
		d := &Device{Name: "g", Vendor: "v", Kind: "gpu", ComputeUnits: 1,
			Matrix: map[model.DType]model.FLOPRate{model.BF16: 1e12},
			Memory: Memory{Capacity: 1e9, Bandwidth: 1e9},
			Intra:  Network{Name: "link", Bandwidth: 1e9, Efficiency: 0.8, DevicesPerNode: 2, Topology: "switch", RankFactor: tt.g},
		}
		if err := d.Validate(); err == nil || err.Error() != tt.want {
			t.Errorf("γ %v: Validate() = %v, want %s", tt.g, err, tt.want)
		}
	}
	src := minimalIntra("topology = \"switch\"\nefficiency_rank_factor = -1\n")
	_, err := Load(strings.NewReader(src), "x.toml")
	if err == nil || !strings.Contains(err.Error(), "x.toml:16: interconnect.intra.efficiency_rank_factor: must not be negative") {
		t.Errorf("Load(efficiency_rank_factor = -1) = %v, want the key, its line and what is wrong", err)
	}
}
