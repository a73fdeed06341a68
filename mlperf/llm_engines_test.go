package mlperf

import (
	"math"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// TestEngineLimits: a replica on an H100 SXM or H200 SXM takes NVIDIA's
// engine limits for the benchmark and scenario (the runtime's where it
// sets them below the build's); elsewhere, and for Llama 3.1 405B on the
// H100 (no such NVIDIA submission), trtllm-bench's heuristic. Every
// engine is built for the benchmark's longest request.
func TestEngineLimits(t *testing.T) {
	for _, tt := range []struct {
		hw, bench     string
		sc            Scenario
		tp            int
		batch, tokens int // 0: the heuristic's
		seqLen        int
	}{
		{"h100", "llama2-70b", Offline, 2, 1024, 1024, 2048},
		{"h100", "llama2-70b", Server, 2, 1024, 1024, 2048},
		{"h200", "llama2-70b", Offline, 1, 2048, 1536, 2048},
		{"h200", "llama2-70b", Server, 1, 2048, 1536, 2048},
		{"h100", "mixtral-8x7b", Offline, 1, 896, 8192, 3072},
		{"h100", "mixtral-8x7b", Server, 1, 896, 16384, 3072},
		{"h200", "mixtral-8x7b", Offline, 1, 3072, 9216, 3072},
		{"h200", "mixtral-8x7b", Server, 1, 3072, 8192, 3072},
		{"h200", "llama3.1-405b", Offline, 4, 512, 1536, 22000},
		{"h200", "llama3.1-405b", Server, 8, 64, 2560, 22000},
		{"h100", "llama3.1-405b", Offline, 8, 0, 0, 22000},
		{"h100", "gptj", Offline, 1, 192, 4096, 2047},
		{"h100", "gptj", Server, 1, 256, 4096, 2047},
		{"h200", "gptj", Server, 1, 396, 4096, 2047},
		{"a100", "llama2-70b", Offline, 4, 0, 0, 2048},
		{"b200", "mixtral-8x7b", Server, 1, 0, 0, 3072},
	} {
		dev, b, w := benchOn(t, tt.hw, tt.bench)
		in, out := 500, 300
		l := engineLimits(dev, w, b, tt.sc, b.Precision, tt.tp, in, out)
		batch, tokens, nvidia := tt.batch, tt.tokens, tt.batch > 0
		if !nvidia {
			batch, tokens = serve.TRTLLMBench(dev.Memory.Capacity, tt.tp, 1, w.Params(), b.Precision.Size(), w.KVBytesPerToken(b.Precision), in, out)
		}
		if l.MaxSeqs != batch || l.MaxTokens != tokens || l.MaxSeqLen != tt.seqLen || l.NVIDIA != nvidia {
			t.Errorf("%s %s %v tp %d: %+v; want batch %d, tokens %d, max_seq_len %d, NVIDIA's %v", tt.hw, tt.bench, tt.sc, tt.tp, l, batch, tokens, tt.seqLen, nvidia)
		}
	}
}

// TestEngineLimits_gemmAllReduce: NVIDIA's Llama 3.1 405B engines on the
// H200 are built with gemm_allreduce_plugin, in both scenarios, and the
// replica prices the fused kernel (at TP > 1); no other engine is.
func TestEngineLimits_gemmAllReduce(t *testing.T) {
	for _, tt := range []struct {
		hw, bench string
		sc        Scenario
		tp        int
		want      bool
	}{
		{"h200", "llama3.1-405b", Offline, 4, true},
		{"h200", "llama3.1-405b", Server, 8, true},
		{"h100", "llama3.1-405b", Server, 8, false},
		{"h200", "llama2-70b", Server, 2, false},
		{"h200", "mixtral-8x7b", Offline, 2, false},
	} {
		dev, b, w := benchOn(t, tt.hw, tt.bench)
		r, err := replica(dev, w, b, tt.sc, tt.tp, 1000, 300)
		if err != nil {
			t.Fatal(err)
		}
		if r.lim.GEMMAllReduce != tt.want || r.p.Scenario().GEMMAllReduce != tt.want {
			t.Errorf("%s %s %v tp %d: limits %v, pricer %v; want gemm_allreduce_plugin %v", tt.hw, tt.bench, tt.sc, tt.tp, r.lim.GEMMAllReduce, r.p.Scenario().GEMMAllReduce, tt.want)
		}
		if s := r.lim.String(); strings.Contains(s, "gemm_allreduce_plugin") != tt.want {
			t.Errorf("%s %s %v: %q", tt.hw, tt.bench, tt.sc, s)
		}
	}
}

// TestEngineLimits_table: every entry names an LLM benchmark of the suite
// and a catalog device, with positive limits; every LLM benchmark's
// longest request is at least its mean input + output.
func TestEngineLimits_table(t *testing.T) {
	devices := map[string]bool{}
	for _, hw := range []string{"h100", "h200"} {
		d, err := hardware.Lookup(hw)
		if err != nil {
			t.Fatal(err)
		}
		devices[d.Name] = true
	}
	kinds := map[string]Kind{}
	for _, b := range Suite() {
		kinds[b.Name] = b.Kind
		if b.Kind != LLM {
			continue
		}
		if b.MaxSeqLen <= 0 || b.SeqLenSource == "" || float64(b.MaxSeqLen) < b.Input+b.Output {
			t.Errorf("%s: max_seq_len %d (%q); want a sourced length of at least the mean %.0f + %.0f", b.Name, b.MaxSeqLen, b.SeqLenSource, b.Input, b.Output)
		}
	}
	for name, byDev := range nvidiaEngines {
		if k, ok := kinds[name]; !ok || k != LLM {
			t.Errorf("nvidiaEngines: %q is not an LLM benchmark of the suite", name)
		}
		for dev, e := range byDev {
			if !devices[dev] {
				t.Errorf("nvidiaEngines[%s]: %q is not the name of the catalog's H100 or H200", name, dev)
			}
			for sc, x := range e {
				if x.Batch < 1 || x.Tokens < 1 || x.TP < 1 || x.PP < 1 {
					t.Errorf("nvidiaEngines[%s][%s] %v: %+v", name, dev, Scenario(sc), x)
				}
			}
		}
	}
}

// TestLLM_vsNVIDIA prices the LLM rows docs/mlperf.md compares with
// NVIDIA's v5.0 results (output tokens/s; MLCommons results 5.0-0057 and
// 5.0-0060) and reports each error. Nothing is fitted to them. As a
// regression guard the test holds each row within 3 points of its error
// when last written (2026-11-26, LoadGen's Offline query and Server run;
// docs/mlperf.md): a change that moves a row further must say why and
// rewrite the row. Until then every row was held within 35%, which the
// 405B Server row, at -39.4% on LoadGen's 8,313 queries where its
// 1,000-request trials had given -32.9%, no longer meets; the drain's
// bias (Offline on 1,000 requests a replica) would move the DGX H100
// Llama 2 70B rows by 4.8 and 4.7 points and Mixtral's by 11. The
// dataset's samples in place of the mean lengths (2026-11-26) moved
// Mixtral by -10.5 and -8.4 points, and the 405B Server row by -21.5:
// its prompts run to 19,988 tokens, whose prefill alone takes 4.8 s of
// the 6 s TTFT bound on a TP 4 replica. The Server then came to pick its
// own layout (NVIDIA's Server engine is TP 8): TP 8, -60.9% -> -48.0%.
// The runs then came to run at the sustained clocks (power.sustained, as
// MLPerf Training's rows had): every row fell, by 4.9 to 7.4 points on
// the H200 (share 0.912) and 1.8 and 1.9 on the H100 (0.963). NVIDIA's
// Llama 3.1 405B engines on the H200 fuse each row-parallel GEMM with
// its all-reduce (gemm_allreduce_plugin in their builds; 2026-11-26):
// priced so, the 405B rows moved from -11.7% to -1.8% (Offline, TP 4)
// and from -53.9% to -30.1% (Server, TP 8).
func TestLLM_vsNVIDIA(t *testing.T) {
	if testing.Short() {
		t.Skip("prices six LLM rows")
	}
	for _, tt := range []struct {
		system, bench   string
		offline, server float64 // NVIDIA's
		errOff, errSrv  float64 // perfsim's error when written, %
		tpOff, tpSrv    int     // the layouts perfsim picks
	}{
		{"dgx-h100", "llama2-70b", 31306.8, 31106.28, -17.6, -17.7, 2, 2},
		{"hgx-h200", "llama2-70b", 34988.2, 33071.46, -4.7, 0.5, 1, 1},
		{"hgx-h200", "mixtral-8x7b", 62629.6, 61802, 11.5, 13.5, 1, 1},
		{"hgx-h200", "llama3.1-405b", 560.65, 291.37, -1.8, -30.1, 4, 8},
	} {
		sys, err := hardware.LookupSystem(tt.system, 8)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Find(tt.bench)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			sc        Scenario
			want, was float64
			tp        int
		}{{Offline, tt.offline, tt.errOff, tt.tpOff}, {Server, tt.server, tt.errSrv, tt.tpSrv}} {
			r := Run(sys, b, c.sc, resolveCatalog, Options{Seed: 1})
			if !r.OK() {
				t.Errorf("%s %s %v: no figure: %s", tt.system, b.Name, c.sc, r.Note)
				continue
			}
			e := 100 * (r.Value/c.want - 1)
			t.Logf("%s %s %v: %.1f tokens/s, NVIDIA %.1f: %+.1f%% (tp %d; %s)", tt.system, b.Name, c.sc, r.Value, c.want, e, r.TP, r.Engine)
			if r.TP != c.tp {
				t.Errorf("%s %s %v: TP %d, want %d", tt.system, b.Name, c.sc, r.TP, c.tp)
			}
			if math.Abs(e-c.was) > 3 {
				t.Errorf("%s %s %v: %.1f tokens/s is %+.1f%% from NVIDIA's %.1f, %+.1f points from the %+.1f%% written", tt.system, b.Name, c.sc, r.Value, e, c.want, e-c.was, c.was)
			}
		}
	}
}

// benchOn returns the catalog device hw, the benchmark bench and its
// model from the catalog.
func benchOn(t *testing.T, hw, bench string) (*hardware.Device, Benchmark, sim.Workload) {
	t.Helper()
	dev, err := hardware.Lookup(hw)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Find(bench)
	if err != nil {
		t.Fatal(err)
	}
	w, err := resolveCatalog(b.Model)
	if err != nil {
		t.Fatal(err)
	}
	return dev, b, w
}
