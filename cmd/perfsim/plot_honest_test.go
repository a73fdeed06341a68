package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestRoofline_cnn checks that a CNN's roofline speaks of a forward pass
// at its batch, not of tokens in and out or a prefill.
func TestRoofline_cnn(t *testing.T) {
	sc := plotScenario{hw: "a100", model: "resnet50", batch: "64", input: "2048", output: 128, tp: 1, pp: 1, dtype: model.BF16}
	s, err := sc.spec()
	if err != nil {
		t.Fatal(err)
	}
	res, err := simulateAll(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	r := rooflineData(s.HW[0], res)
	if strings.Contains(r.Title, " in / ") || !strings.Contains(r.Title, "batch 64") {
		t.Errorf("title %q: want the batch and no tokens in / out", r.Title)
	}
	for _, p := range r.Points {
		if p.Group != "forward" {
			t.Errorf("point %s in group %q, want forward", p.Label, p.Group)
		}
	}
	title, panels := breakdownBars(res)
	if strings.Contains(title, " in / ") || panels[0].Title != "forward pass (latency)" || len(panels) != 1 {
		t.Errorf("breakdown %q, panels %d, first %q", title, len(panels), panels[0].Title)
	}
}

// TestPlotSweep_unfit checks that points that do not fit are marked in
// the throughput chart, and that a model that fits nowhere fails naming
// the model, the hardware and the tensor parallelism at which it fits.
func TestPlotSweep_unfit(t *testing.T) {
	sc := plotScenario{hw: "h100", model: "llama3-70b", batch: "1,512", input: "2048", output: 128, tp: 2, pp: 1, dtype: model.BF16}
	s, err := sc.spec()
	if err != nil {
		t.Fatal(err)
	}
	res, err := simulateAll(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	l := throughputLines(res)
	pts := l.Lines[0].Points
	if len(pts) != 2 || pts[0].Unfit || !pts[1].Unfit {
		t.Fatalf("points %+v: want batch 1 fitting and batch 512 marked as not fitting", pts)
	}
	c, err := l.Chart()
	if err != nil {
		t.Fatal(err)
	}
	if xy, ok := c.Series("H100 SXM (does not fit)"); !ok || len(xy) != 1 {
		t.Errorf("the chart's unfit series: %v, %v", xy, ok)
	}
	_, stderr, code := perfsim(t, "plot", "sweep", "--hw", "h100,a100", "--model", "llama3.1-405b", "--batch", "1..8x2", "-o", t.TempDir()+"/s.svg")
	for _, want := range []string{"llama3.1-405b fits on none of H100 SXM and A100 80GB SXM", "it fits at --tp 16"} {
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("plot sweep of a model that fits nowhere: exit %d, %q; want 1 and %q", code, stderr, want)
		}
	}
}

// TestGemms_biasAndEmbedding checks that the FFN is "linear + bias" only
// for models with biases, and that the embedding is a lookup by default
// except for GPT-3 (the seed's table), with the one-hot view on request.
func TestGemms_biasAndEmbedding(t *testing.T) {
	for _, tc := range []struct {
		model, embedding string
		wantEmbedding    string
		onehotRow, bias  bool
	}{
		{"llama3-8b", "auto", "gather", false, false},
		{"llama3-8b", "onehot", "one-hot-gemm", true, false},
		{"gpt3-175b", "auto", "one-hot-gemm", true, true},
		{"gpt3-175b", "gather", "gather", false, true},
		{"bert-large", "auto", "gather", false, true},
	} {
		rep, err := gemms(gemmsOptions{model: tc.model, phase: "prefill", batch: 1, seq: 512, tp: 1, embedding: tc.embedding, logits: "all"})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Embedding != tc.wantEmbedding {
			t.Errorf("%s --embedding %s: embedding %q, want %q", tc.model, tc.embedding, rep.Embedding, tc.wantEmbedding)
		}
		var onehot, up bool
		for _, g := range rep.GEMMs {
			onehot = onehot || g.Op == "embed.onehot"
			if g.Op == "ffn.up" {
				up = true
				if got := strings.Contains(g.Description, "bias"); got != tc.bias {
					t.Errorf("%s: ffn.up described %q; bias %v", tc.model, g.Description, tc.bias)
				}
			}
		}
		if onehot != tc.onehotRow || !up {
			t.Errorf("%s --embedding %s: one-hot row %v (want %v), ffn.up %v", tc.model, tc.embedding, onehot, tc.onehotRow, up)
		}
	}
}

// TestRoofline_sizeKey checks that the roofline's legend says what marker
// size means.
func TestRoofline_sizeKey(t *testing.T) {
	out, stderr, code := perfsim(t, "plot", "roofline", "--hw", "h100", "--model", "llama3-8b", "-o", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"marker area: share of its phase", "5%", "50%"} {
		if !strings.Contains(out, want) {
			t.Errorf("the roofline's SVG has no %q", want)
		}
	}
}

// TestPlotSweep_metricNeedsSpeedup: --metric picks the latency of the
// --speedup heat map; without --speedup it is a usage error naming it,
// where it had been dropped without a word (the chart plots TPOT
// whatever --metric says).
func TestPlotSweep_metricNeedsSpeedup(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s.svg")
	_, stderr, code := perfsim(t, "plot", "sweep", "--hw", "h100,a100", "--model", "llama3-8b", "--batch", "1,2", "--metric", "ttft", "-o", out)
	if code != 2 || !strings.Contains(stderr, "--metric") || !strings.Contains(stderr, "--speedup") {
		t.Errorf("exit %d, stderr %q: want a usage error naming --metric and --speedup", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a chart was written")
	}
}

// TestPlotEnergy_priceNeedsCost: the price flags (--price, --prices,
// --purchase, --years, --energy-price, --pue) reach only --cost's chart;
// without --cost each is a usage error naming it, where the tokens per
// joule chart had been drawn byte for byte the same with --pue 1.5.
func TestPlotEnergy_priceNeedsCost(t *testing.T) {
	for _, f := range [][]string{{"--pue", "1.5"}, {"--price", "2.5/h"}, {"--energy-price", "0.10/kWh"}} {
		out := filepath.Join(t.TempDir(), "e.svg")
		args := append([]string{"plot", "energy", "--hw", "h100", "--model", "llama3-8b", "-o", out}, f...)
		_, stderr, code := perfsim(t, args...)
		if code != 2 || !strings.Contains(stderr, f[0]) || !strings.Contains(stderr, "--cost") {
			t.Errorf("%s without --cost: exit %d, stderr %q: want a usage error naming both", f[0], code, stderr)
		}
	}
}

// TestPlotGemms_warnsAsGemms: plot gemms warns of a length past the
// model's trained context as gemms does (llama3-8b at --seq 100000 had
// been drawn without a word), and refuses gemms' table flags (--format,
// --all), which it hides and had dropped.
func TestPlotGemms_warnsAsGemms(t *testing.T) {
	dir := t.TempDir()
	_, stderr, code := perfsim(t, "plot", "gemms", "--model", "llama3-8b", "--seq", "100000", "-o", filepath.Join(dir, "g.svg"))
	if code != 0 || !strings.Contains(stderr, "warning: 100000 tokens exceed llama3-8b's trained context of 8192") {
		t.Errorf("exit %d, stderr %q: want the trained-context warning", code, stderr)
	}
	for _, f := range []string{"--format=json", "--all"} {
		_, stderr, code := perfsim(t, "plot", "gemms", "--model", "llama3-8b", f, "-o", filepath.Join(dir, "h.svg"))
		if code != 2 || !strings.Contains(stderr, strings.Split(f, "=")[0]) {
			t.Errorf("%s: exit %d, stderr %q: want a usage error naming it", f, code, stderr)
		}
	}
}
