package mlperf

import (
	"math"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/hardware"
)

// TestLLMLengths: the suite's mean lengths are the cited figures. The
// inputs are the counted sums over the samples (suite.go gives where),
// which round to the means the sources imply; the outputs are MLCommons'
// tokens_per_sample. Where a source counted the reference outputs too,
// its mean reproduces MLCommons' published figure, which shows the
// counts are in the model's tokens.
func TestLLMLengths(t *testing.T) {
	for _, tt := range []struct {
		name          string
		input, output float64 // tokens, as the sources give them
		tol           float64 // the sources' rounding
	}{
		{"llama2-70b-99", 222.33, 294.45, 0.005},  // 5,463,976 / 24,576; README "Tokens per sample: 294.45"
		{"llama3.1-405b", 9428.64, 684.68, 0.005}, // 78,380,323 / 8,313; README tokens_per_sample 684.68
		{"mixtral-8x7b", 427.394, 144.84, 0.0005}, // 6,410,905 / 15,000; README tokens_per_sample 144.84
	} {
		b, err := Find(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(b.Input-tt.input) > tt.tol || b.Output != tt.output {
			t.Errorf("%s: input %.4f, output %.2f tokens; want %.4f (±%g), %.2f", tt.name, b.Input, b.Output, tt.input, tt.tol, tt.output)
		}
		if !strings.Contains(b.LengthSource, "input: ") || !strings.Contains(b.LengthSource, "README.md") {
			t.Errorf("%s: length source %q cites no input count or no README", tt.name, b.LengthSource)
		}
	}
	// The counted reference outputs against MLCommons' published means.
	for _, c := range []struct {
		name           string
		sum, n, readme float64
	}{
		{"llama3.1-405b", llama405RefTokens, llama405Samples, 684.68},
		{"mixtral-8x7b", mixtralRefTokens, mixtralSamples, 144.84},
	} {
		if got := c.sum / c.n; math.Abs(got-c.readme) > 0.005 {
			t.Errorf("%s: counted reference outputs %.3f a sample, MLCommons publishes %.2f", c.name, got, c.readme)
		}
	}
	gptj, err := Find("gptj")
	if err != nil {
		t.Fatal(err)
	}
	// GPT-J: the output is LoadGen's token_latency_scaling_factor, 69;
	// no count of the inputs in GPT-J's tokens was found, so none may be
	// set. NVIDIA's v4.1 DGX H100 Offline log infers its tokens/s with
	// the same factor: 19,739.8 tokens/s from 286.084 samples/s.
	if gptj.Input != 0 || gptj.Output != 69 || !strings.Contains(gptj.LengthSource, "token_latency_scaling_factor") {
		t.Errorf("gptj-99: lengths %v, %v (%q); want no input and LoadGen's 69 output tokens", gptj.Input, gptj.Output, gptj.LengthSource)
	}
	if got := 286.084 * gptj.Output; math.Abs(got-19739.8) > 0.05 {
		t.Errorf("gptj-99: 286.084 samples/s × %v = %.1f tokens/s, NVIDIA's log infers 19,739.8", gptj.Output, got)
	}
}

// TestRun_llmDefaults: the three LLM rows whose lengths are published
// price without --input, and --input still overrides; GPT-J, whose
// input length is not, asks for it alone and prices once given.
func TestRun_llmDefaults(t *testing.T) {
	dev, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	sys, err := hardware.NewSystem(dev, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	find := func(name string) Benchmark {
		b, err := Find(name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	o := Options{Seed: 1}
	for _, name := range []string{"llama2-70b-99", "mixtral-8x7b", "llama3.1-405b"} {
		for _, sc := range []Scenario{Offline, Server} {
			r := Run(sys, find(name), sc, resolveCatalog, o)
			if !r.OK() || math.IsNaN(r.Value) || math.IsInf(r.Value, 0) || r.Note != "" {
				t.Errorf("%s %v: %v tokens/s, note %q; want a figure and no note", name, sc, r.Value, r.Note)
			}
		}
	}
	llama := find("llama2-70b")
	def := Run(sys, llama, Offline, resolveCatalog, o)
	over := Run(sys, llama, Offline, resolveCatalog, Options{Seed: 1, Input: map[string]int{"llama2-70b-99": 1024}})
	if !(over.OK() && over.Value < def.Value) {
		t.Errorf("--input llama2-70b-99=1024: %v tokens/s, want fewer than at the mean of 222 (%v)", over.Value, def.Value)
	}
	g := Run(sys, find("gptj"), Offline, resolveCatalog, o)
	if g.OK() || !strings.Contains(g.Note, "give --input gptj-99=TOKENS") || strings.Contains(g.Note, "--output") {
		t.Errorf("gptj-99: %v, note %q; want no figure and a note asking for the input length alone", g.Value, g.Note)
	}
	if g := Run(sys, find("gptj"), Offline, resolveCatalog, Options{Seed: 1, Input: map[string]int{"gptj-99": 1000}}); !g.OK() || g.Note != "" {
		t.Errorf("gptj-99 --input 1000: %v tokens/s, note %q; want a figure at the suite's 69 output tokens", g.Value, g.Note)
	}
}

// TestRun_llmContext: lengths given beyond the model's context give no
// figure and a note saying so, naming the flags; llama2-70b-99 with
// --input 5000 (Llama 2: 4,096 tokens) had priced 2,407 tokens/s on
// eight H100s.
func TestRun_llmContext(t *testing.T) {
	dev, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	sys, err := hardware.NewSystem(dev, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Find("llama2-70b-99")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{{Input: map[string]int{b.Name: 5000}}, {Output: map[string]int{b.Name: 4000}}} {
		r := Run(sys, b, Offline, resolveCatalog, o)
		if r.OK() || !strings.Contains(r.Note, "exceed the model's context of 4096") || !strings.Contains(r.Note, "--input") {
			t.Errorf("%v: %v tokens/s, note %q", o, r.Value, r.Note)
		}
	}
}
