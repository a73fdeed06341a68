package sim

import (
	"math"
	"testing"
)

// TestInterval_multiplicative checks the band of a time t with relative
// error e: [t/(1+e), t·(1+e)], positive for any e ≥ 0 (issue 17: an
// err_p90 above 1 gave TTFT 41.97 ms with p90 -50.4 ms – 134.3 ms), and
// t·(1 ± e) to first order for small e.
func TestInterval_multiplicative(t *testing.T) {
	for _, tt := range []struct{ t, e, lo, hi float64 }{
		{0.04197, 0, 0.04197, 0.04197},
		{1, 1, 0.5, 2}, // hand: 1/2, 1·2
		{0.04197, 2.2, 0.04197 / 3.2, 0.04197 * 3.2},
		{1, 1e7, 1 / (1 + 1e7), 1 + 1e7},
	} {
		lo, hi := low(tt.t, tt.e), high(tt.t, tt.e)
		if lo <= 0 || lo > tt.t || hi < tt.t || math.Abs(lo-tt.lo) > 1e-12*tt.lo || math.Abs(hi-tt.hi) > 1e-12*tt.hi {
			t.Errorf("band(%v, %v) = [%v, %v], want [%v, %v]", tt.t, tt.e, lo, hi, tt.lo, tt.hi)
		}
	}
	if lo := low(1, 0.01); math.Abs(lo-0.99) > 1e-4 {
		t.Errorf("low(1, 0.01) = %v, want about 0.99", lo)
	}
}
