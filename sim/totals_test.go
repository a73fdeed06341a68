package sim_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// withoutRows returns a copy of r with its phases' op and class rows
// dropped, as RunTotals leaves them out.
func withoutRows(r *sim.Report) *sim.Report {
	c := *r
	if in := r.Inference; in != nil {
		inf := *in
		inf.Prefill.Ops, inf.Prefill.Classes = nil, nil
		if in.Decode != nil {
			d := *in.Decode
			d.Ops, d.Classes = nil, nil
			inf.Decode = &d
		}
		c.Inference = &inf
	}
	return &c
}

// TestRunTotals checks that RunTotals gives Run's report, every total bit
// for bit, without the rows: over a sequence of prompt lengths and batches
// that a sweep runs (chunked prefills sharing their first chunks, growing,
// shrinking, at other batches), pipeline transfers, a data-type fallback
// (warnings replayed from the running totals), eager execution (which
// keeps its rows) and training; and that Run, after RunTotals has filled
// the caches, still gives its rows.
func TestRunTotals(t *testing.T) {
	type tc struct {
		hw, model string
		devices   int
		mutate    func(*sim.Scenario)
	}
	var cases []tc
	for _, b := range []int{1, 3, 64} {
		for _, in := range []int{100, 2048, 8000, 8192, 8193, 16384, 16500, 40000, 128000, 24576, 9000, 128000} {
			cases = append(cases, tc{"h100", "llama3-70b", 4, func(s *sim.Scenario) { s.TP, s.Batch, s.Input = 4, b, in }})
		}
	}
	cases = append(cases,
		tc{"mi300x", "llama3-70b", 8, func(s *sim.Scenario) { s.TP, s.Batch, s.Input = 8, 7, 30000 }},
		tc{"mi300x", "llama3-70b", 8, func(s *sim.Scenario) { s.TP, s.Batch, s.Input, s.Output = 8, 7, 30000, 2 }},
		tc{"h100", "gpt3-175b", 8, func(s *sim.Scenario) { s.TP, s.PP, s.Batch, s.Input = 4, 2, 5, 20000 }},
		tc{"h100", "gpt3-175b", 8, func(s *sim.Scenario) { s.TP, s.PP, s.Batch, s.Input = 4, 2, 5, 21000 }},
		tc{"t4", "llama3-8b", 1, func(s *sim.Scenario) { s.Batch, s.Input = 2, 9000 }},
		tc{"t4", "llama3-8b", 1, func(s *sim.Scenario) { s.Batch, s.Input = 2, 17000 }},
		tc{"t4", "llama3-8b", 1, func(s *sim.Scenario) {
			s.Batch, s.Input, s.Weights, s.Act, s.KV = 2, 17000, model.FP8, model.FP8, model.BF16
		}},
		tc{"t4", "llama3-8b", 1, func(s *sim.Scenario) {
			s.Batch, s.Input, s.Weights, s.Act, s.KV = 2, 18000, model.FP8, model.FP8, model.BF16
		}},
		tc{"h100", "llama3-70b", 4, func(s *sim.Scenario) { s.TP, s.Batch, s.Input = 4, 1, 20000 }},
		tc{"h100", "llama3-70b", 4, func(s *sim.Scenario) { s.TP, s.Batch, s.Input = 4, 2, 20000 }},
		// The same chunks on the same system at another TP, then in fp8.
		tc{"h100", "llama3-70b", 4, func(s *sim.Scenario) { s.TP, s.Batch, s.Input = 2, 2, 20000 }},
		tc{"h100", "llama3-70b", 4, func(s *sim.Scenario) {
			s.TP, s.Batch, s.Input, s.Weights, s.Act, s.KV = 2, 2, 20000, model.FP8, model.FP8, model.FP8
		}},
		tc{"h100", "llama3-8b", 1, func(s *sim.Scenario) { s.Batch, s.Input, s.MaxNumTokens = 4, 3000, 1024 }},
		tc{"h100", "llama3-8b", 1, func(s *sim.Scenario) { s.Batch, s.Input, s.Exec = 4, 9000, sim.ExecEager }},
		tc{"h100", "llama3-8b", 1, func(s *sim.Scenario) { s.NoGraphs, s.Batch, s.Input = true, 2, 12000 }},
		// The decode steps' prices with and without CUDA graphs in turn.
		tc{"h100", "llama3-8b", 1, func(s *sim.Scenario) { s.Batch, s.Input = 2, 12128 }},
		tc{"h100", "llama3-8b", 1, func(s *sim.Scenario) { s.NoGraphs, s.Batch, s.Input = true, 2, 12256 }},
		tc{"h200", "llama3-8b", 1, func(s *sim.Scenario) {
			s.Weights, s.Act, s.KV, s.Batch, s.Input = model.FP8, model.FP8, model.FP8, 3, 20000
		}},
		tc{"mi300x", "mixtral-8x7b", 2, func(s *sim.Scenario) { s.TP, s.Batch, s.Input = 2, 2, 10000 }},
		tc{"h100", "llama3-8b", 1, func(s *sim.Scenario) { s.Mode, s.Seq, s.GlobalBatch = sim.Training, 2048, 8 }},
	)
	type loaded struct {
		sys *hardware.System
		w   sim.Workload
		sc  sim.Scenario
	}
	var pts []loaded
	type sysKey struct {
		hw, model string
		devices   int
	}
	// One system and workload for the cases alike, as in a sweep: the
	// running totals are kept for one workload.
	systems := map[sysKey]loaded{}
	for _, c := range cases {
		k := sysKey{c.hw, c.model, c.devices}
		if _, ok := systems[k]; !ok {
			sys, w := load(t, c.hw, c.model, c.devices)
			systems[k] = loaded{sys: sys, w: w}
		}
		sys, w := systems[k].sys, systems[k].w
		sc := sim.Default()
		c.mutate(&sc)
		pts = append(pts, loaded{sys, w, sc})
	}
	var want []*sim.Report
	sim.WithoutCaches(func() {
		for _, p := range pts {
			r, err := sim.Run(p.sys, p.w, p.sc)
			if err != nil {
				t.Fatalf("%s %+v: %v", p.w.Name(), p.sc, err)
			}
			want = append(want, r)
		}
	})
	for pass := range 2 {
		for i, p := range pts {
			got, err := sim.RunTotals(p.sys, p.w, p.sc)
			if err != nil {
				t.Fatal(err)
			}
			w := want[i]
			if p.sc.Mode == sim.Inference && p.sc.Exec != sim.ExecEager {
				w = withoutRows(w)
			}
			if pass == 0 && len(got.Warnings) > 1 {
				t.Logf("%s on %s: warnings %v", cases[i].model, cases[i].hw, got.Warnings)
			}
			if !reflect.DeepEqual(got, w) {
				t.Errorf("pass %d, %s on %s, batch %d, input %d: RunTotals differs from Run (TTFT %v against %v, E2E %v against %v)",
					pass, cases[i].model, cases[i].hw, p.sc.Batch, p.sc.Input, got.Inference.TTFT, w.Inference.TTFT, got.Inference.E2E, w.Inference.E2E)
			}
			// Run after RunTotals: its rows, from caches RunTotals filled.
			full, err := sim.Run(p.sys, p.w, p.sc)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(full, want[i]) {
				t.Errorf("pass %d, %s on %s, batch %d, input %d: Run after RunTotals differs from Run", pass, cases[i].model, cases[i].hw, p.sc.Batch, p.sc.Input)
			}
		}
	}
}

// TestRunTotals_prefixChecks checks that a chunked prefill summed from
// the running totals of its chunks makes the data-type checks (the
// fallback warnings) that pricing them made.
func TestRunTotals_prefixChecks(t *testing.T) {
	sys, w := load(t, "t4", "llama3-8b", 1)
	sc := sim.Default()
	sc.Batch, sc.Input = 2, 20000
	first, again, err := sim.PrefillChecks(sys, w, sc)
	if err != nil {
		t.Fatal(err)
	}
	if first != again || !first[model.BF16] {
		t.Errorf("checked %v, then from the running totals %v; want the same, bf16 among them", first, again)
	}
}

// TestCappedAttentionCost checks that pricing an attention kernel with
// its peak looked up once (CappedAttentionCost, and CappedAttentionCosts
// at several KV lengths) gives, bit for bit, Capped(AttentionCost(a)) on
// every catalog device, its power limited and not, over decode and
// prefill kernels, MLA, sliding windows and types the device falls back
// from (or has no peak for).
func TestCappedAttentionCost(t *testing.T) {
	var kernels []model.Attention
	for _, d := range []model.DType{model.BF16, model.FP8, model.FP32, model.FP4, model.INT8} {
		for _, kv := range []int{1, 2, 130, 4097, 128000} {
			kernels = append(kernels,
				model.Attention{Batch: 7, Heads: 16, KVHeads: 2, QLen: 1, KVLen: kv, HeadDim: 128, Causal: true, Fused: true, DType: d, KVDType: d},
				model.Attention{Batch: 1, Heads: 64, KVHeads: 8, QLen: 1, KVLen: kv, HeadDim: 128, Causal: true, Fused: true, DType: d, KVDType: model.FP8, Window: 4096},
				model.Attention{Batch: 3, Heads: 128, KVHeads: 1, QLen: 1, KVLen: kv, HeadDim: 576, VDim: 512, Latent: true, Causal: true, Fused: true, DType: d, KVDType: d},
				model.Attention{Batch: 2, Heads: 32, KVHeads: 8, QLen: min(kv, 8192), KVLen: kv, HeadDim: 128, Causal: true, Fused: kv > 2, DType: d, KVDType: d},
			)
		}
	}
	n := 0
	for _, dev := range hardware.Catalog() {
		p := dev.Processor()
		limited := p
		if pm := &limited.PowerModel; pm.Valid() {
			pm.Limit = pm.Idle + (pm.Cap-pm.Idle)/3
		}
		for _, q := range []*model.Processor{&p, &limited} {
			for _, a := range kernels {
				want, got := q.Capped(q.AttentionCost(a)), q.CappedAttentionCost(a)
				if got != want {
					t.Errorf("%s, %+v: CappedAttentionCost %+v, Capped(AttentionCost) %+v", dev.Name, a, got, want)
				}
				// The same kernel at several KV lengths in one call.
				kv := []int{a.KVLen, a.KVLen + 1, 2*a.KVLen + 7}
				series := make([]model.Cost, len(kv))
				q.CappedAttentionCosts(a, kv, series)
				for i, l := range kv {
					b := a
					b.KVLen = l
					if w := q.Capped(q.AttentionCost(b)); series[i] != w {
						t.Errorf("%s, %+v: CappedAttentionCosts at KV length %d %+v, Capped(AttentionCost) %+v", dev.Name, a, l, series[i], w)
					}
				}
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no device in the catalog")
	}
}

// TestRunTotals_parallel runs the prompt lengths of a sweep at several
// batches from several goroutines at once, each in its own order, so that
// runners share the chunks' prices (and, under -race, that they share
// them safely): every report is Run's without its rows.
func TestRunTotals_parallel(t *testing.T) {
	sys, w := load(t, "h100", "llama3-70b", 4)
	var scs []sim.Scenario
	for _, b := range []int{1, 2, 5} {
		for _, in := range []int{9000, 17000, 17128, 40000, 100000} {
			sc := sim.Default()
			sc.TP, sc.Batch, sc.Input = 4, b, in
			scs = append(scs, sc)
		}
	}
	want := make([]*sim.Report, len(scs))
	sim.WithoutCaches(func() {
		for i, sc := range scs {
			r, err := sim.Run(sys, w, sc)
			if err != nil {
				t.Fatal(err)
			}
			want[i] = withoutRows(r)
		}
	})
	const goroutines = 4
	errs := make(chan error, goroutines)
	for g := range goroutines {
		go func() {
			for k := range scs {
				i := (k*(g+1) + g) % len(scs)
				got, err := sim.RunTotals(sys, w, scs[i])
				if err == nil && !reflect.DeepEqual(got, want[i]) {
					err = fmt.Errorf("goroutine %d, batch %d, input %d: RunTotals differs from Run", g, scs[i].Batch, scs[i].Input)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range goroutines {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
