package model

import (
	"math"
	"testing"
)

// TestCappedMatrix: a limit lowers the clock from the one the matrix
// units hold (PowerParams.Held), only as far as its power needs. The
// caller stretches a held kernel by 1/Held, so in all a compute-bound
// kernel takes compute/min(Held, r) where r is the limit's clock of the
// boost clock; a kernel whose traffic alone overdraws the limit takes
// max(dyn/avail, 1/Held) of its time.
func TestCappedMatrix(t *testing.T) {
	p := &Processor{Name: "x", Matrix: map[DType]FLOPRate{BF16: 1e15}, Bandwidth: 3e12,
		PowerModel: PowerParams{Idle: 100, Cap: 700, Static: 0.5, Compute: 1, Memory: 0.1}}
	// Compute-bound at full rate: draws the cap (activity clipped at 1).
	cb := Cost{FLOPs: 1e12, Bytes: 1e9, Compute: 1e-3, Memory: 1e9 / 3e12, Time: 1e-3, DType: BF16}
	// r for a limit: ((L − idle − mem)/(dyn − mem))^(1/3), mem the
	// traffic's share of the clipped draw.
	um := float64(cb.Bytes) / (3e12 * float64(cb.Time))
	act := 0.5 + 1 + 0.1*um
	mem := 600 * 0.1 * um / act
	r := func(lim float64) float64 { return math.Cbrt((lim - 100 - mem) / (600 - mem)) }
	for _, tc := range []struct {
		name       string
		limit      Watts
		held       float64
		wantInAll  float64 // the kernel's time after the caller's 1/held stretch
		wantCapped bool    // draws the limit
	}{
		{"no limit, boost", 0, 0, 1e-3, false},
		{"no limit, held", 0, 0.9, 1e-3 / 0.9, false},
		{"limit, boost", 400, 0, 1e-3 / r(400), true},
		{"limit below the held clock's power", 400, 0.9, 1e-3 / r(400), true},
		{"limit the held clock meets", 650, 0.9, 1e-3 / 0.9, true},
		{"limit, held 1", 400, 1, 1e-3 / r(400), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := *p
			q.PowerModel.Limit, q.PowerModel.Held = tc.limit, tc.held
			got := q.CappedMatrix(cb)
			all := float64(got.Time)
			if h := tc.held; h > 0 && h < 1 {
				all /= h
			}
			if math.Abs(all/tc.wantInAll-1) > 1e-12 {
				t.Errorf("in all %v, want %v", all, tc.wantInAll)
			}
			if (got.Power == tc.limit) != tc.wantCapped {
				t.Errorf("power %v under limit %v", got.Power, tc.limit)
			}
			if tc.held == 0 || tc.held == 1 {
				if c := q.Capped(cb); c != got {
					t.Errorf("held %v: CappedMatrix %+v, Capped %+v: want the same", tc.held, got, c)
				}
			}
		})
	}
	// A memory-bound kernel whose traffic alone overdraws the limit: the
	// whole kernel slows by dyn/avail, or by 1/held where that is more.
	mb := Cost{FLOPs: 1e9, Bytes: 3e9, Compute: 1e-6, Memory: 1e-3, Time: 1e-3, DType: BF16, Bound: MemoryBound}
	q := *p
	q.PowerModel.Static, q.PowerModel.Memory = 0, 1
	q.PowerModel.Limit = 400 // dyn 600, avail 300: ×2
	for _, held := range []float64{0, 0.9, 0.4} {
		q.PowerModel.Held = held
		all := float64(q.CappedMatrix(mb).Time)
		want := 2e-3
		if held > 0 {
			all /= held
			want = math.Max(2, 1/held) * 1e-3
		}
		if math.Abs(all/want-1) > 1e-12 {
			t.Errorf("traffic over the limit, held %v: in all %v, want %v", held, all, want)
		}
	}
}
