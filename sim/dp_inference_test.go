package sim_test

import (
	"testing"

	"github.com/perfsim/perfsim/sim"
)

// TestInference_dpReplicas: DP replicas each serve a batch, so the
// system's throughput is DP times one replica's, for tokens, images and
// samples alike, and a figure per token or image is the same at any DP:
// the devices' energy grows with the replicas and so do the tokens.
// (Images and samples per second had stayed one replica's while tokens
// per second counted every replica, and the energy per token or image
// was over every replica's devices but one replica's tokens: DP times
// too high.)
func TestInference_dpReplicas(t *testing.T) {
	for _, tt := range []struct {
		mdl string
		dp  int
	}{
		{"llama3-8b", 2},
		{"llama3-8b", 8},
		{"resnet50", 8},
		{"bert-large", 4},
	} {
		run := func(dp int) *sim.Report {
			sys, w := load(t, "h100", tt.mdl, dp)
			sc := sim.Default()
			sc.DP, sc.Batch, sc.Input, sc.Output = dp, 4, 512, 16
			rep, err := sim.Run(sys, w, sc)
			if err != nil {
				t.Fatalf("%s dp %d: %v", tt.mdl, dp, err)
			}
			return rep
		}
		one, many := run(1), run(tt.dp)
		a, b := one.Inference, many.Inference
		n := float64(tt.dp)
		for _, x := range []struct {
			name      string
			one, many float64
		}{
			{"output tokens/s", a.OutputTokensPerSecond, b.OutputTokensPerSecond},
			{"images/s", a.ImagesPerSecond, b.ImagesPerSecond},
			{"samples/s", a.SamplesPerSecond, b.SamplesPerSecond},
		} {
			if !close(x.many, n*x.one) {
				t.Errorf("%s: %s at dp %d is %g, want %d × %g", tt.mdl, x.name, tt.dp, x.many, tt.dp, x.one)
			}
		}
		ea, eb := one.Energy, many.Energy
		for _, x := range []struct {
			name      string
			one, many float64
		}{
			{"prefill J per token", float64(ea.PrefillPerToken), float64(eb.PrefillPerToken)},
			{"decode J per token", float64(ea.DecodePerToken), float64(eb.DecodePerToken)},
			{"J per output token", float64(ea.PerOutputToken), float64(eb.PerOutputToken)},
			{"J per image", float64(ea.PerImage), float64(eb.PerImage)},
		} {
			if !close(x.many, x.one) {
				t.Errorf("%s: %s at dp %d is %g, at dp 1 %g: want the same", tt.mdl, x.name, tt.dp, x.many, x.one)
			}
		}
		if !close(float64(eb.GPU), n*float64(ea.GPU)) {
			t.Errorf("%s: the devices' energy at dp %d is %v, want %d × %v", tt.mdl, tt.dp, eb.GPU, tt.dp, ea.GPU)
		}
	}
}

// TestInference_loaderRateSystem: --loader-rate is the whole system's
// input pipeline, so it bounds the system's images per second, whatever
// the replicas (it had bounded one replica's throughput by the rate over
// the devices).
func TestInference_loaderRateSystem(t *testing.T) {
	sys, w := load(t, "h100", "resnet50", 8)
	sc := sim.Default()
	sc.DP, sc.Batch = 8, 64
	rep, err := sim.Run(sys, w, sc)
	if err != nil {
		t.Fatal(err)
	}
	free := rep.Inference.ImagesPerSecond
	sc.LoaderRate = free / 2
	rep, err = sim.Run(sys, w, sc)
	if err != nil {
		t.Fatal(err)
	}
	if in := rep.Inference; !in.LoaderBound || !close(in.ImagesPerSecond, free/2) {
		t.Errorf("loader at %g images/s for the system: %g images/s (bound %v), want the loader's rate", free/2, in.ImagesPerSecond, in.LoaderBound)
	}
	sc.LoaderRate = free * 2
	rep, err = sim.Run(sys, w, sc)
	if err != nil {
		t.Fatal(err)
	}
	if in := rep.Inference; in.LoaderBound || !close(in.ImagesPerSecond, free) {
		t.Errorf("loader at %g images/s for the system: %g images/s (bound %v), want the devices' %g", free*2, in.ImagesPerSecond, in.LoaderBound, free)
	}
}
