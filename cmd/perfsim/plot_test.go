package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestPlotFiles draws every chart in every format and checks the files.
func TestPlotFiles(t *testing.T) {
	dir := t.TempDir()
	charts := [][]string{
		{"roofline", "--hw", "h100", "--model", "llama3-8b", "--batch", "1,32"},
		{"breakdown", "--hw", "h100,a100", "--model", "llama3-8b", "--batch", "4"},
		{"memory", "--hw", "h100", "--model", "llama3-8b", "--batch", "1..64x4"},
		{"sweep", "--hw", "h100,a100", "--model", "llama3-8b", "--batch", "1..64x4"},
		{"sweep", "--speedup", "--hw", "h100,a100", "--model", "llama3-8b", "--batch", "1,8", "--input", "512,2048"},
		{"gemms", "--model", "gpt3-175b"},
	}
	for i, c := range charts {
		for _, f := range []string{"svg", "png", "pdf"} {
			path := filepath.Join(dir, c[0]+string(rune('a'+i))+"."+f)
			args := append(append([]string{"plot"}, c...), "-o", path)
			out, errs, code := perfsim(t, args...)
			if code != 0 || out != "" {
				t.Fatalf("perfsim %v: exit %d, stdout %q, stderr %s", args, code, out, errs)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			checkFile(t, path, f, data)
		}
	}
}

func checkFile(t *testing.T, name, f string, data []byte) {
	t.Helper()
	switch f {
	case "png":
		if _, err := png.Decode(bytes.NewReader(data)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	case "svg":
		d := xml.NewDecoder(bytes.NewReader(data))
		for {
			_, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Errorf("%s: %v", name, err)
				break
			}
		}
	case "pdf":
		if !bytes.HasPrefix(data, []byte("%PDF")) {
			t.Errorf("%s does not start with %%PDF", name)
		}
	}
}

func TestPlotCLI(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no chart", []string{"plot"}, 2, "no chart"},
		{"unknown chart", []string{"plot", "pie"}, 2, "unknown chart"},
		{"bad extension", []string{"plot", "roofline", "--hw", "h100", "--model", "llama3-8b", "-o", "x.jpg"}, 2, ".svg, .png or .pdf"},
		{"no extension", []string{"plot", "gemms", "--model", "gpt3-175b", "-o", "x"}, 2, ".svg, .png or .pdf"},
		{"two hw on a roofline", []string{"plot", "roofline", "--hw", "h100,a100", "--model", "llama3-8b", "-o", "-"}, 2, "one --hw"},
		{"speedup needs two", []string{"plot", "sweep", "--speedup", "--hw", "h100", "--model", "llama3-8b", "-o", "-"}, 2, "two --hw"},
		{"bad tp", []string{"plot", "breakdown", "--hw", "h100", "--model", "llama3-8b", "--tp", "3", "-o", "-"}, 2, "tp"},
		{"help", []string{"plot", "--help"}, 0, "Charts:"},
		{"chart help", []string{"plot", "memory", "--help"}, 0, "Examples:"},
	}
	for _, tt := range tests {
		_, errs, code := perfsim(t, tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.stderr) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", tt.name, code, errs, tt.code, tt.stderr)
		}
	}
}

// TestPlotStdout checks that -o - writes SVG to stdout, the same bytes
// each time, and notes on stderr what left the log axes.
func TestPlotStdout(t *testing.T) {
	args := []string{"plot", "roofline", "--hw", "h100", "--model", "llama3-8b", "--tp", "2", "-o", "-"}
	a, errs, code := perfsim(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, _, _ := perfsim(t, args...)
	if !strings.HasPrefix(a, "<?xml") || a != b {
		t.Errorf("stdout is not the same SVG twice (starts %q)", a[:min(len(a), 20)])
	}
	if !strings.Contains(errs, "embedding (prefill)") || !strings.Contains(errs, "communication") {
		t.Errorf("stderr %q does not name the ops left off the log axes", errs)
	}
}

// spec returns a small resolved sweep for the data tests.
func testResults(t *testing.T, hw, batch, input string) ([]sweepResult, *sweepSpec) {
	t.Helper()
	sc := plotScenario{hw: hw, model: "llama3-8b", batch: batch, input: input, output: 128, tp: 1, pp: 1, dtype: model.BF16}
	s, err := sc.spec()
	if err != nil {
		t.Fatal(err)
	}
	res, err := simulateAll(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	return res, s
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

func TestRooflineData(t *testing.T) {
	res, s := testResults(t, "h100", "1,16", "2048")
	r := rooflineData(s.HW[0], res)
	if r.Bandwidth != 3.35e12 {
		t.Errorf("bandwidth %v, want the H100's 3.35 TB/s", r.Bandwidth)
	}
	// bf16 GEMMs put the bf16 matrix peak first (989.5 TFLOP/s, H100 datasheet).
	if len(r.Peaks) == 0 || r.Peaks[0] != (struct {
		Name string
		Rate float64
	}{"bf16", 989.5e12}) {
		t.Errorf("peaks %v, want bf16 989.5e12 first", r.Peaks)
	}
	// The catalog H100 sets efficiencies (fitted: hardware/devices/fitted):
	// attainable = peak × the bf16 GEMM compute fraction, bandwidth × the
	// streaming memory fraction.
	eff := s.HW[0].Eff
	if len(r.Attainable) == 0 || !near(r.Attainable[0].Rate, 989.5e12*eff.GEMM[model.BF16].Compute) || !near(r.AttainableBandwidth, 3.35e12*eff.Memory.Efficiency) {
		t.Errorf("attainable %v at %v", r.Attainable, r.AttainableBandwidth)
	}
	// Each point is its class row: intensity FLOPs/bytes, rate FLOPs/time.
	n := 0
	for _, x := range res {
		for _, ph := range allPhases(x.Report) {
			for _, c := range ph.Classes {
				p := r.Points[n]
				n++
				if p.Label != c.Class.String() || p.Share != c.Share || !near(p.Intensity, intensity(c.FLOPs, c.Bytes)) {
					t.Errorf("point %v does not match class row %+v", p, c)
				}
				if c.Time > 0 && !near(p.Rate, float64(c.FLOPs)/float64(c.Time)) {
					t.Errorf("point %v rate, want %v", p, float64(c.FLOPs)/float64(c.Time))
				}
				if p.Rate > r.Peaks[0].Rate {
					t.Errorf("point %v attains more than the peak", p)
				}
			}
		}
	}
	if n != len(r.Points) || r.Points[0].Group != "prefill b=1" || r.Points[len(r.Points)-1].Group != "decode b=16" {
		t.Errorf("%d points (want %d), groups %q … %q", len(r.Points), n, r.Points[0].Group, r.Points[len(r.Points)-1].Group)
	}
}

func TestBreakdownData(t *testing.T) {
	res, _ := testResults(t, "h100,a100", "8", "2048")
	title, panels := breakdownBars(res)
	if !strings.Contains(title, "llama3-8b") || !strings.Contains(title, "batch 8") {
		t.Errorf("title %q", title)
	}
	if len(panels) != 2 || panels[0].Categories[0] != "H100 SXM" {
		t.Fatalf("panels %+v", panels)
	}
	// Each panel in the unit of its tallest bar: the A100's prefill takes
	// over a second (seconds, not "1.03k ms"), a decode step milliseconds.
	units := map[string]float64{"time (s)": 1, "time (ms)": 1e3, "time (µs)": 1e6}
	if panels[0].YLabel != "time (s)" || panels[1].YLabel != "time (ms)" {
		t.Errorf("axes %q and %q, want time (s) and time (ms)", panels[0].YLabel, panels[1].YLabel)
	}
	ps, ds := units[panels[0].YLabel], units[panels[1].YLabel]
	for i, r := range res {
		var pre, dec float64
		for _, s := range panels[0].Stacks {
			pre += s.Values[i]
		}
		for _, s := range panels[1].Stacks {
			dec += s.Values[i]
		}
		in := r.Report.Inference
		// The stacks add up to the phase: prefill to its time (TTFT), decode
		// to its time per step.
		if !near(pre, ps*float64(in.Prefill.Time)) {
			t.Errorf("%s: prefill stack %v, phase %v (%s)", r.Report.Hardware, pre, ps*float64(in.Prefill.Time), panels[0].YLabel)
		}
		if want := ds * float64(in.Decode.Time) / float64(in.Decode.Steps); math.Abs(dec-want) > 1e-9*want {
			t.Errorf("%s: decode stack %v ms, phase %v ms per step", r.Report.Hardware, dec, want)
		}
	}
}

func TestMemoryData(t *testing.T) {
	res, _ := testResults(t, "h100", "1,64,512", "4096")
	_, b := memoryBars(res)
	if strings.Join(b.Categories, " ") != "1 64 512" {
		t.Errorf("categories %v", b.Categories)
	}
	for i, r := range res {
		sum := 0.0
		for _, s := range b.Stacks {
			sum += s.Values[i]
		}
		if want := float64(r.Report.Memory.Total) / gib; math.Abs(sum-want) > 1e-9*want {
			t.Errorf("batch %d: stacks %v GiB, total %v GiB", r.Report.Scenario.Batch, sum, want)
		}
	}
	if len(b.Levels) != 1 || math.Abs(b.Levels[0].Value-79.11) > 1e-9 || !strings.Contains(b.Levels[0].Name, "79.11 GiB usable (80 GiB physical)") {
		t.Errorf("memory line %v, want the H100's 79.11 GiB usable of 80 GiB", b.Levels)
	}
	for _, s := range b.Stacks {
		if s.Name == "gradients" || s.Name == "optimizer state" {
			t.Errorf("inference shows %s", s.Name)
		}
	}
}

func TestSweepPlotData(t *testing.T) {
	res, s := testResults(t, "h100,a100", "1,8", "512,2048")
	h := speedupMap(s, res, "e2e", latencyMetrics["e2e"])
	if len(h.Values) != 2 || len(h.Values[0]) != 2 {
		t.Fatalf("grid %v", h.Values)
	}
	for _, r := range res {
		if r.Point.HW != 0 {
			continue
		}
		var other float64
		for _, x := range res {
			if x.Point.HW == 1 && x.Point.Batch == r.Point.Batch && x.Point.In == r.Point.In {
				other = float64(x.Report.Inference.E2E)
			}
		}
		row, col := indexInt(s.Input, r.Point.In), indexInt(s.Batch, r.Point.Batch)
		if want := other / float64(r.Report.Inference.E2E); !near(h.Values[row][col], want) {
			t.Errorf("speedup at batch %d, input %d = %v, want %v", r.Point.Batch, r.Point.In, h.Values[row][col], want)
		}
	}

	res, _ = testResults(t, "h100,a100", "1,8", "2048")
	l := throughputLines(res)
	if len(l.Lines) != 2 || l.Lines[1].Name != "A100 80GB SXM" || len(l.Lines[0].Points) != 2 {
		t.Fatalf("lines %+v", l.Lines)
	}
	p := l.Lines[0].Points[1]
	in := res[1].Report.Inference
	if p.X != 1e3*float64(in.TPOT) || p.Y != in.OutputTokensPerSecondPerDevice || p.Label != "8" {
		t.Errorf("point %+v, want TPOT %v ms, %v tokens/s", p, 1e3*float64(in.TPOT), in.OutputTokensPerSecondPerDevice)
	}
}

func indexInt(xs []int, v int) int {
	for i, x := range xs {
		if x == v {
			return i
		}
	}
	return -1
}

// TestGemmsData checks the bars against the seed's GPT-3 175B table
// (seed 003; ../shared/data/seed-gpt3-gemm-table.csv, column macs).
func TestGemmsData(t *testing.T) {
	rep, err := gemms(gemmsOptions{model: "gpt3-175b", phase: "prefill", batch: 1, seq: 2048, tp: 1, embedding: "onehot", logits: "all"})
	if err != nil {
		t.Fatal(err)
	}
	b := gemmsBars(rep)
	want := map[string]float64{
		"one-hot x embedding weights":               1.28849e12,
		"X*WQ=Q (per head)":                         3221225472,
		"QK*V (per head)":                           536870912,
		"linear transformation (output projection)": 3.09238e11,
		"linear + bias (up)":                        1.23695e12,
		"hidden x vocabulary (logits)":              1.28849e12,
	}
	found := 0
	for i, c := range b.Categories {
		for k, v := range want {
			if strings.HasPrefix(c, k+" [") {
				found++
				if got := b.Stacks[0].Values[i]; math.Abs(got-v) > 1e-5*v {
					t.Errorf("%s: %v MACs, seed %v", c, got, v)
				}
			}
		}
	}
	if found != len(want) {
		t.Errorf("found %d of the seed's rows among %v", found, b.Categories)
	}
}

// TestPlot_everyProblem: a chart's bad flags, hardware and model are
// reported at once: the first had hidden the rest.
func TestPlot_everyProblem(t *testing.T) {
	out := filepath.Join(t.TempDir(), "z.svg")
	_, stderr, code := perfsim(t, "plot", "breakdown", "--hw", "h999,h998", "--model", "nope", "--batch", "0", "-o", out)
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	for _, w := range []string{`--batch "0": 0 must be at least 1`, `--hw: hardware: unknown device "h999"`, `--hw: hardware: unknown device "h998"`, `--model: workloads: unknown model "nope"`} {
		if strings.Count(stderr, w) != 1 {
			t.Errorf("stderr lacks %q once:\n%s", w, stderr)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s written", out)
	}
}
