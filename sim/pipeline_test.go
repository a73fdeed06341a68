package sim

import (
	"math"
	"testing"

	"github.com/perfsim/perfsim/model"
)

func closeTo(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func equalStages(p int, t model.Seconds) []model.Seconds {
	s := make([]model.Seconds, p)
	for i := range s {
		s[i] = t
	}
	return s
}

// The 1F1B bubble over the ideal compute time is (p−1)/m (Narayanan et
// al. 2021, §2.2.1).
func TestPipelineTime_1F1BBubbleOverIdeal(t *testing.T) {
	for _, c := range []struct{ p, m int }{{2, 8}, {4, 16}, {8, 8}, {16, 64}, {6, 24}} {
		tot, bub := PipelineTime(equalStages(c.p, 1e-3), c.m, 1, OneFOneB)
		ideal := float64(c.m) * 1e-3
		if got, want := float64(bub)/ideal, float64(c.p-1)/float64(c.m); !closeTo(got, want) {
			t.Errorf("p %d m %d: bubble/ideal = %v, want (p-1)/m = %v", c.p, c.m, got, want)
		}
		if !closeTo(float64(tot), ideal+float64(bub)) {
			t.Errorf("p %d m %d: total %v != ideal + bubble", c.p, c.m, tot)
		}
	}
}

// Interleaved 1F1B over v chunks: bubble over ideal (p−1)/(v·m)
// (Narayanan et al. 2021, §2.2.2).
func TestPipelineTime_interleavedBubbleOverIdeal(t *testing.T) {
	for _, c := range []struct{ p, m, v int }{{4, 16, 2}, {8, 32, 4}, {16, 64, 7}, {2, 8, 3}} {
		_, bub := PipelineTime(equalStages(c.p, 2e-3), c.m, c.v, Interleaved)
		ideal := float64(c.m) * 2e-3
		if got, want := float64(bub)/ideal, float64(c.p-1)/float64(c.v*c.m); !closeTo(got, want) {
			t.Errorf("p %d m %d v %d: bubble/ideal = %v, want (p-1)/(v·m) = %v", c.p, c.m, c.v, got, want)
		}
	}
}

// The bubble's share of the step is (p−1)/(m+p−1) for 1F1B and GPipe.
func TestPipelineTime_bubbleShareOfStep(t *testing.T) {
	for _, s := range []Schedule{OneFOneB, GPipe} {
		for _, c := range []struct{ p, m int }{{2, 4}, {4, 4}, {8, 128}} {
			tot, bub := PipelineTime(equalStages(c.p, 1), c.m, 1, s)
			if got, want := float64(bub/tot), float64(c.p-1)/float64(c.m+c.p-1); !closeTo(got, want) {
				t.Errorf("%s p %d m %d: share = %v, want (p-1)/(m+p-1) = %v", s, c.p, c.m, got, want)
			}
		}
	}
}

// More micro-batches never enlarge the bubble's share; more chunks never
// enlarge the bubble.
func TestPipelineTime_monotone(t *testing.T) {
	st := []model.Seconds{1.2e-3, 1e-3, 1e-3, 1.4e-3}
	prevShare := 2.0
	for m := 1; m <= 64; m++ {
		tot, bub := PipelineTime(st, m, 1, OneFOneB)
		share := float64(bub / tot)
		if share > prevShare+1e-15 {
			t.Errorf("m %d: bubble share %v grew from %v", m, share, prevShare)
		}
		prevShare = share
	}
	prev := model.Seconds(math.Inf(1))
	for v := 1; v <= 8; v++ {
		_, bub := PipelineTime(st, 16, v, Interleaved)
		if bub > prev {
			t.Errorf("v %d: bubble %v grew from %v", v, bub, prev)
		}
		prev = bub
	}
}

// ZeRO paper, Figure 1: 7.5 B parameters, 64-way data parallelism,
// mixed-precision Adam (K = 12): 120 GB, 31.4 GB, 16.6 GB and 1.875 GB
// (decimal GB; the figure rounds the last to 1.9).
func TestZeROStates_paperFigure1(t *testing.T) {
	want := []float64{120, 31.40625, 16.640625, 1.875}
	for stage, w := range want {
		a, b, c := ZeROStates(7.5e9, 64, stage, 12)
		if got := float64(a+b+c) / 1e9; !closeTo(got, w) {
			t.Errorf("ZeRO stage %d: %v GB per rank, want %v", stage, got, w)
		}
	}
}

func TestInFlight(t *testing.T) {
	tests := []struct {
		p, m, v int
		s       Schedule
		want    float64
	}{
		{4, 16, 1, OneFOneB, 4},
		{4, 2, 1, OneFOneB, 2},
		{4, 16, 1, GPipe, 16},
		{4, 16, 2, Interleaved, 4 * (1 + 3.0/8)},
		{1, 8, 1, OneFOneB, 1},
	}
	for _, tt := range tests {
		if got := InFlight(tt.p, tt.m, tt.v, tt.s); !closeTo(got, tt.want) {
			t.Errorf("InFlight(p %d, m %d, v %d, %s) = %v, want %v", tt.p, tt.m, tt.v, tt.s, got, tt.want)
		}
	}
}
