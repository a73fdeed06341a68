package serve_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/serve"
)

// TestShareGPT: the approximation has the published statistics of the
// filtered sample (e2e/README.md): mean output 194.3 tokens (±3%),
// median output about 120 (±10%), mean input 220–230 (±5% of 225), and
// every pair passes the filters.
func TestShareGPT(t *testing.T) {
	reqs, err := (&serve.Workload{N: 200000, Arrival: serve.AllAtOnce, Joint: serve.ShareGPT{}, Seed: 1}).Requests()
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	var si, so float64
	for _, r := range reqs {
		if r.Input < 4 || r.Output < 4 || r.Input > 1024 || r.Input+r.Output > 2048 {
			t.Fatalf("request %d: %d in, %d out fails the filters", r.ID, r.Input, r.Output)
		}
		out = append(out, float64(r.Output))
		si += float64(r.Input)
		so += float64(r.Output)
	}
	n := float64(len(reqs))
	slices.Sort(out)
	mi, mo, med := si/n, so/n, out[len(out)/2]
	t.Logf("ShareGPT approximation: mean input %.1f, mean output %.1f, median output %.0f", mi, mo, med)
	if math.Abs(mo/194.3-1) > 0.03 || math.Abs(med/120-1) > 0.10 || math.Abs(mi/225-1) > 0.05 {
		t.Errorf("mean input %.1f (want 225±5%%), mean output %.1f (194.3±3%%), median output %.0f (120±10%%)", mi, mo, med)
	}
}

// TestWorkload_bad names every bad flag at once.
func TestWorkload_bad(t *testing.T) {
	w := serve.Workload{N: 0, Arrival: serve.Gamma, Rate: -1, Input: serve.Fixed(1), Output: serve.Fixed(1)}
	_, err := w.Requests()
	if err == nil {
		t.Fatal("no error")
	}
	for _, flag := range []string{"--requests", "--rate", "--cv"} {
		if !strings.Contains(err.Error(), flag) {
			t.Errorf("error %q does not name %s", err, flag)
		}
	}
}

// TestWorkload_cvRange: a --cv whose gamma shape 1/cv² leaves the float
// range is refused naming --cv, before any request is drawn; 1e300 had
// drawn NaN gaps ("request 2 arrives at NaN s").
func TestWorkload_cvRange(t *testing.T) {
	for _, cv := range []float64{1e300, 1e-300} {
		w := serve.Workload{N: 100, Arrival: serve.Gamma, Rate: 5, CV: cv, Input: serve.Fixed(10), Output: serve.Fixed(10)}
		err := w.Validate()
		if err == nil || !strings.Contains(err.Error(), "--cv") || strings.Contains(err.Error(), "NaN") {
			t.Errorf("cv %g: %v", cv, err)
		}
	}
	w := serve.Workload{N: 100, Arrival: serve.Gamma, Rate: 5, CV: 1e10, Input: serve.Fixed(10), Output: serve.Fixed(10)}
	if err := w.Validate(); err != nil {
		t.Errorf("cv 1e10: %v", err)
	}
}

// TestPinRate: pinned, a Poisson or gamma draw's last request arrives at
// n/rate exactly (seed 1's 400 Poisson arrivals at 20 req/s had spanned
// 22.3 s, 17.9 req/s), in the same order and with the same gaps relative
// to each other; a draw of one time (all at once) is left alone.
func TestPinRate(t *testing.T) {
	for _, w := range []serve.Workload{
		{N: 400, Arrival: serve.Poisson, Rate: 20, Seed: 1, Input: serve.Fixed(10), Output: serve.Fixed(10)},
		{N: 1000, Arrival: serve.Gamma, CV: 3, Rate: 7, Seed: 5, Input: serve.Fixed(10), Output: serve.Fixed(10)},
		{N: 1, Arrival: serve.Poisson, Rate: 0.5, Seed: 2, Input: serve.Fixed(10), Output: serve.Fixed(10)},
	} {
		reqs, err := w.Requests()
		if err != nil {
			t.Fatal(err)
		}
		orig := slices.Clone(reqs)
		serve.PinRate(reqs, w.Rate)
		n := len(reqs)
		if got, want := float64(reqs[n-1].Arrival), float64(n)/w.Rate; math.Abs(got/want-1) > 1e-12 {
			t.Errorf("%v × %d at %g req/s: last arrival %g s, want %g", w.Arrival, n, w.Rate, got, want)
		}
		k := float64(reqs[n-1].Arrival / orig[n-1].Arrival)
		for i := range reqs {
			if math.Abs(float64(reqs[i].Arrival)-k*float64(orig[i].Arrival)) > 1e-9*float64(reqs[n-1].Arrival) || (i > 0 && reqs[i].Arrival < reqs[i-1].Arrival) {
				t.Fatalf("%v: request %d at %v, unpinned %v (scale %g)", w.Arrival, i, reqs[i].Arrival, orig[i].Arrival, k)
			}
		}
	}
	at0 := []serve.Request{{Arrival: 0}, {Arrival: 0}}
	serve.PinRate(at0, 3)
	if at0[1].Arrival != 0 {
		t.Errorf("requests at 0 moved to %v", at0[1].Arrival)
	}
}
