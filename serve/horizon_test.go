package serve_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// TestHorizon: times from outside (the span of the arrivals a rate
// gives, a trace's arrival, an engine's overheads) are bounded by
// serve.MaxTime. Beyond it float64 seconds lose the resolution a
// token's time needs (at 1e300 s a 6 ms step rounds to nothing: a
// request arriving there had TTFT 0 and the run's energy was +Inf
// joules), so such input is refused, naming its flag or file:line:key.
func TestHorizon(t *testing.T) {
	fixed := serve.Fixed(16)
	for _, tt := range []struct {
		name string
		w    serve.Workload
		want string
	}{
		{"poisson", serve.Workload{N: 10, Arrival: serve.Poisson, Rate: 1e-308, Input: fixed, Output: fixed}, "--rate"},
		{"constant", serve.Workload{N: 1000, Arrival: serve.Constant, Rate: 1e-6, Input: fixed, Output: fixed}, "--rate"},
		{"gamma", serve.Workload{N: 10, Arrival: serve.Gamma, CV: 2, Rate: 1e-300, Input: fixed, Output: fixed}, "--rate"},
	} {
		if _, err := tt.w.Requests(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one naming %s", tt.name, err, tt.want)
		}
	}
	// Within the horizon: 10 requests at one per day.
	w := serve.Workload{N: 10, Arrival: serve.Poisson, Rate: 1.0 / 86400, Input: fixed, Output: fixed}
	if _, err := w.Requests(); err != nil {
		t.Errorf("10 requests at one a day: %v", err)
	}
	// However wide the gamma process's gaps, no arrival beyond the horizon.
	w = serve.Workload{N: 1000, Arrival: serve.Gamma, CV: 1e6, Rate: 1, Input: fixed, Output: fixed}
	if reqs, err := w.Requests(); err == nil {
		for _, r := range reqs {
			if !(float64(r.Arrival) <= serve.MaxTime) {
				t.Fatalf("gamma cv 1e6: arrival %v beyond %g s", r.Arrival, serve.MaxTime)
			}
		}
	} else if !strings.Contains(err.Error(), "--cv") && !strings.Contains(err.Error(), "--rate") {
		t.Errorf("gamma cv 1e6: error %v names neither --cv nor --rate", err)
	}

	for _, text := range []string{
		"arrival_s,input_tokens,output_tokens\n0,10,5\n1e300,10,5\n",
		`{"arrival_s": 0, "input_tokens": 10, "output_tokens": 5}` + "\n" + `{"arrival_s": 1e308, "input_tokens": 10, "output_tokens": 5}` + "\n",
	} {
		if _, err := serve.ReadTrace(strings.NewReader(text), "t.csv", 0); err == nil || !strings.Contains(err.Error(), "t.csv:2: arrival_s") && !strings.Contains(err.Error(), "t.csv:3: arrival_s") {
			t.Errorf("trace arriving at 1e300 s: error %v", err)
		}
	}

	e, _ := serve.Preset("vllm", 80<<30)
	e.StepOverhead, e.RequestOverhead, e.SeqOverhead = 1e300, 1e300, 1e300
	err := e.Validate()
	for _, flag := range []string{"--step-overhead", "--request-overhead", "--seq-overhead"} {
		if err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("overheads of 1e300 s: error %v does not name %s", err, flag)
		}
	}
}

// TestHorizon_finiteOutput: a run at the horizon's edge (two requests
// MaxTime apart) still gives finite, positive latencies and a result
// that encodes as JSON.
func TestHorizon_finiteOutput(t *testing.T) {
	sys, w := setup(t, "h100", "llama3-8b", 1)
	e, err := serve.Preset("vllm", 80<<30)
	if err != nil {
		t.Fatal(err)
	}
	sc := sim.Default()
	p := pricer(t, sys, w, e.Scenario(sc))
	reqs := []serve.Request{{ID: 0, Arrival: 0, Input: 128, Output: 8}, {ID: 1, Arrival: model.Seconds(serve.MaxTime), Input: 128, Output: 8}}
	res, err := serve.Run(p, e, reqs, serve.Options{Records: true})
	if err != nil {
		t.Fatal(err)
	}
	first := res.Requests[0]
	for _, m := range res.Requests {
		// The late request's latencies are the first's to a part in 10^5.
		for _, v := range [][2]float64{{float64(m.TTFT()), float64(first.TTFT())}, {float64(m.E2E()), float64(first.E2E())}} {
			if !(v[0] > 0) || math.Abs(v[0]-v[1]) > 1e-5*v[1] {
				t.Errorf("request %d: %v, want %v", m.ID, v[0], v[1])
			}
		}
	}
	if _, err := json.Marshal(res); err != nil {
		t.Errorf("result does not encode: %v", err)
	}
}

// TestWorkload_maxRequests: a run's requests are bounded (MaxRequests,
// each a few hundred bytes with its metrics): serve --requests 1e11 had
// died of "fatal error: runtime: out of memory" allocating them, and
// 3e7 grew past 10 GB.
func TestWorkload_maxRequests(t *testing.T) {
	fixed := serve.Fixed(16)
	w := serve.Workload{N: serve.MaxRequests + 1, Arrival: serve.AllAtOnce, Input: fixed, Output: fixed}
	if err := w.Validate(); err == nil || !strings.Contains(err.Error(), "--requests") {
		t.Errorf("%d requests: error %v, want one naming --requests", w.N, err)
	}
	w.N = 100_000_000_000
	if _, err := w.Requests(); err == nil {
		t.Errorf("1e11 requests: no error")
	}
	w.N = serve.MaxRequests
	if err := w.Validate(); err != nil {
		t.Errorf("MaxRequests: %v", err)
	}
}

// TestEngine_overheadsPerIteration: the per-iteration host overheads are
// bounded by a second, as simulate's --host-overhead per kernel is: they
// add up over every iteration, and --step-overhead 1e7s over a thousand
// iterations ran the clock past serve.MaxTime.
func TestEngine_overheadsPerIteration(t *testing.T) {
	e, _ := serve.Preset("vllm", 80<<30)
	e.StepOverhead, e.SeqOverhead = 2, 2
	err := e.Validate()
	for _, flag := range []string{"--step-overhead", "--seq-overhead"} {
		if err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("2 s: error %v does not name %s", err, flag)
		}
	}
}
