package chart

import (
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"
)

func breakdownData() (Bars, Bars) {
	cats := []string{"A100 SXM", "H100 SXM", "H200 SXM", "MI300X"}
	pre := Bars{Title: "prefill (TTFT)", XLabel: "hardware", YLabel: "time (ms)", Categories: cats, Totals: true,
		Stacks: []Stack{
			{"qkv_proj", []float64{60, 25, 24, 20}},
			{"attention", []float64{40, 18, 17, 15}},
			{"out_proj", []float64{50, 20, 20, 17}},
			{"ffn", []float64{300, 120, 118, 100}},
			{"elementwise", []float64{10, 5, 4, 4}},
		}}
	dec := Bars{Title: "decode (TPOT)", XLabel: "hardware", YLabel: "time (ms)", Categories: cats, Totals: true,
		Stacks: []Stack{
			{"qkv_proj", []float64{5, 3, 2, 1.8}},
			{"attention", []float64{2, 1.2, 0.9, 0.8}},
			{"out_proj", []float64{4, 2.4, 1.7, 1.5}},
			{"ffn", []float64{30, 18, 13, 11}},
			{"elementwise", []float64{1, 0.6, 0.5, 0.4}},
			{"communication", []float64{0, 0, 0, 0.2}},
		}}
	return pre, dec
}

func TestBarsReview(t *testing.T) {
	pre, dec := breakdownData()
	c, err := StackedBars("Time by op class — llama3-70b, batch 8, 2048 in / 128 out, bf16", pre, dec)
	if err != nil {
		t.Fatal(err)
	}
	dump(t, "breakdown", c)

	mem := Bars{XLabel: "batch size", YLabel: "memory (GiB)", Categories: []string{"1", "2", "4", "8", "16", "32", "64"}, Totals: true,
		Stacks: []Stack{
			{"weights", []float64{15, 15, 15, 15, 15, 15, 15}},
			{"KV cache", []float64{0.25, 0.5, 1, 2, 4, 8, 16}},
			{"activations", []float64{0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4}},
			{"reserve", []float64{2, 2, 2, 2, 2, 2, 2}},
		},
		Levels: []Level{{"capacity 80 GB", 74.5}}}
	c, err = StackedBars("Memory — H100 SXM, llama3-8b, 4096 context, bf16", mem)
	if err != nil {
		t.Fatal(err)
	}
	dump(t, "memory", c)

	g := Bars{XLabel: "GEMM", YLabel: "MACs", Log: true, Horizontal: true, Totals: true,
		Categories: []string{"embedding (one-hot)", "X·WQ (per head)", "X·WK (per head)", "X·WV (per head)", "Q·Kᵀ (all heads)", "QK·V (per head)", "output projection", "FFN up", "FFN down", "logits"},
		Stacks:     []Stack{{"MACs", []float64{1.28849e12, 3221225472, 3221225472, 3221225472, 51539607552, 536870912, 3.09238e11, 1.23695e12, 1.23695e12, 1.28849e12}}}}
	c, err = StackedBars("MACs per GEMM — gpt3-175b, sequence 2048", g)
	if err != nil {
		t.Fatal(err)
	}
	dump(t, "gemms", c)
}

func TestLinesReview(t *testing.T) {
	var ls []Line
	for i, hw := range []string{"A100 SXM", "H100 SXM", "H200 SXM"} {
		var pts []LinePoint
		for _, b := range []int{1, 2, 4, 8, 16, 32, 64, 128, 256} {
			tpot := (20 + 0.2*float64(b)) / float64(i+1) * 1e-3
			pts = append(pts, LinePoint{X: tpot * 1e3, Y: float64(b) / tpot / 8, Label: itoa(b)})
		}
		ls = append(ls, Line{Name: hw, Points: pts})
	}
	c, err := Lines{Title: "Throughput vs latency — llama3-70b, tp 8, 2048 in / 128 out", XLabel: "TPOT (ms)", YLabel: "output tokens/s per GPU", Lines: ls, LogY: true}.Chart()
	if err != nil {
		t.Fatal(err)
	}
	dump(t, "sweep", c)

	rows := []string{"512", "1k", "2k", "4k", "8k", "16k", "32k"}
	cols := []string{"1", "2", "4", "8", "16", "32", "64", "128", "256"}
	vals := make([][]float64, len(rows))
	for i := range rows {
		for j := range cols {
			v := 1.2 + 0.05*float64(i) + 0.04*float64(j)
			if i+j > 12 {
				v = math.NaN()
			}
			vals[i] = append(vals[i], v)
		}
	}
	c, err = Heatmap{Title: "Speedup of H200 over H100 — llama3-70b, tp 8", XLabel: "batch size", YLabel: "context (tokens)", Cols: cols, Rows: rows, Values: vals, Above: "H200 faster", Below: "H100 faster"}.Chart()
	if err != nil {
		t.Fatal(err)
	}
	dump(t, "heatmap", c)
}

func itoa(i int) string { return SI(float64(i)) }

func TestStackedBarsData(t *testing.T) {
	pre, dec := breakdownData()
	c, err := StackedBars("t", pre, dec)
	if err != nil {
		t.Fatal(err)
	}
	ffn, _ := c.Series("prefill (TTFT)/ffn")
	if len(ffn) != 4 || ffn[1] != (plotter.XY{X: 1, Y: 120}) {
		t.Errorf("prefill ffn = %v", ffn)
	}
	tot, _ := c.Series("decode (TPOT)/total")
	// A100 decode: 5 + 2 + 4 + 30 + 1 + 0 = 42 ms, by hand.
	if len(tot) != 4 || tot[0].Y != 42 {
		t.Errorf("decode totals = %v, want 42 first", tot)
	}
	if len(c.Panels) != 2 {
		t.Errorf("%d panels, want 2", len(c.Panels))
	}

	bad := []Bars{
		{Title: "short", Categories: []string{"a", "b"}, Stacks: []Stack{{"x", []float64{1}}}},
		{Title: "negative", Categories: []string{"a"}, Stacks: []Stack{{"x", []float64{-1}}}},
		{Title: "nan", Categories: []string{"a"}, Stacks: []Stack{{"x", []float64{math.NaN()}}}},
		{Title: "stacked log", Log: true, Categories: []string{"a"}, Stacks: []Stack{{"x", []float64{1}}, {"y", []float64{1}}}},
		{Title: "empty"},
	}
	for _, b := range bad {
		if _, err := StackedBars("t", b); err == nil {
			t.Errorf("StackedBars(%s) succeeded", b.Title)
		}
	}
	// A zero on a log axis is left out, not a panic.
	c, err = StackedBars("t", Bars{Log: true, Horizontal: true, Categories: []string{"a", "b"}, Stacks: []Stack{{"x", []float64{0, 1e9}}}, Totals: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Skipped) != 1 {
		t.Errorf("Skipped = %v, want the zero", c.Skipped)
	}
	if err := Write(io.Discard, c, DefaultWidth, DefaultHeight, "png"); err != nil {
		t.Error(err)
	}
}

func TestLinesData(t *testing.T) {
	l := Lines{Title: "t", XLabel: "x", YLabel: "y", LogY: true, Lines: []Line{
		{Name: "a", Points: []LinePoint{{X: 1, Y: 10, Label: "1"}, {X: 2, Y: math.NaN(), Label: "2"}, {X: 3, Y: 0, Label: "3"}, {X: 4, Y: 40, Label: "4"}}},
	}}
	c, err := l.Chart()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := c.Series("a")
	if len(a) != 2 || a[1] != (plotter.XY{X: 4, Y: 40}) {
		t.Errorf("series a = %v, want the two drawable points", a)
	}
	if len(c.Skipped) != 2 {
		t.Errorf("Skipped = %v", c.Skipped)
	}
	if _, err := (Lines{}).Chart(); err == nil {
		t.Error("Lines{}.Chart() succeeded")
	}
}

func TestHeatmapData(t *testing.T) {
	h := Heatmap{Cols: []string{"1", "2"}, Rows: []string{"a", "b"}, Values: [][]float64{{1, 2}, {math.NaN(), 0.5}}}
	c, err := h.Chart()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.Series("row b")
	if len(b) != 2 || !math.IsNaN(b[0].Y) || b[1].Y != 0.5 {
		t.Errorf("row b = %v", b)
	}
	if _, err := (Heatmap{Cols: []string{"1"}, Rows: []string{"a"}, Values: [][]float64{{1, 2}}}).Chart(); err == nil {
		t.Error("a row longer than the columns was accepted")
	}
	if err := Write(io.Discard, c, DefaultWidth, DefaultHeight, "svg"); err != nil {
		t.Error(err)
	}
}

func TestSI(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{{0, "0"}, {1, "1"}, {0.1, "0.1"}, {1e12, "1T"}, {989.4e12, "989T"}, {2.5e-3, "2.5m"}, {1500, "1.5k"}, {-2e9, "-2G"}, {4096, "4.1k"}}
	for _, tt := range tests {
		if got := SI(tt.v); got != tt.want {
			t.Errorf("SI(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
	if got := SIUnit(3.35e12, "B/s"); got != "3.35 TB/s" {
		t.Errorf("SIUnit = %q", got)
	}
}

func TestLogTicks(t *testing.T) {
	ts := logTicks{}.Ticks(-1, 3) // 0.1 to 1000
	var labels []string
	for _, tk := range ts {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "0.1 1 10 100 1k" {
		t.Errorf("labels = %q", got)
	}
	if n := len(ts); n != 4*9+1 {
		t.Errorf("%d ticks, want 37 (9 per decade and the last)", n)
	}
}

// TestLinesScatter: a Scatter line's points are marks alone, not joined
// in their (meaningless) order; a plain line's are joined.
func TestLinesScatter(t *testing.T) {
	pts := []LinePoint{{X: 3, Y: 1}, {X: 1, Y: 3}, {X: 2, Y: 2}}
	c, err := Lines{Title: "t", XLabel: "x", YLabel: "y", Lines: []Line{
		{Name: "front", Points: pts},
		{Name: "others", Points: pts, Scatter: true},
	}}.Chart()
	if err != nil {
		t.Fatal(err)
	}
	if !c.joined("front") || c.joined("others") {
		t.Errorf("joined: front %v, others %v; want true, false", c.joined("front"), c.joined("others"))
	}
	if xys, _ := c.Series("others"); len(xys) != 3 {
		t.Errorf("others: %v, want its 3 points", xys)
	}
}

// TestLinesDense: a line of many points (a run's time series, 150
// samples) is drawn as a line alone, its labelled points still marked,
// where a marker on every point had buried the lines under glyphs; a
// short line keeps a marker on each point.
func TestLinesDense(t *testing.T) {
	var dense, short []LinePoint
	for i := range 150 {
		p := LinePoint{X: float64(i), Y: float64(i % 7)}
		if i == 75 {
			p.Label = "knee"
		}
		dense = append(dense, p)
	}
	for i := range 8 {
		short = append(short, LinePoint{X: float64(i), Y: float64(i)})
	}
	c, err := Lines{Title: "t", XLabel: "x", YLabel: "y", Lines: []Line{{Name: "dense", Points: dense}, {Name: "short", Points: short}}}.Chart()
	if err != nil {
		t.Fatal(err)
	}
	if c.marked("dense") || !c.marked("short") {
		t.Errorf("marked: dense %v, short %v; want false, true", c.marked("dense"), c.marked("short"))
	}
	if xys, _ := c.Series("dense"); len(xys) != 150 || !c.joined("dense") {
		t.Errorf("dense: %d points, joined %v", len(xys), c.joined("dense"))
	}
}

// TestLinesXTicks: given ticks label the x axis at those values, on a log
// axis too (a scaling chart's 512, 1024 and 2048 GPUs had been labelled
// 500, 1k and 2k, none at a point).
func TestLinesXTicks(t *testing.T) {
	pts := []LinePoint{{X: 512, Y: 100}, {X: 1024, Y: 98}, {X: 2048, Y: 93}}
	c, err := Lines{Title: "t", XLabel: "GPUs", YLabel: "%", LogX: true, XTicks: []float64{512, 1024, 2048}, Lines: []Line{{Name: "a", Points: pts}}}.Chart()
	if err != nil {
		t.Fatal(err)
	}
	x := c.Panels[0].X
	var labels []string
	for _, tk := range x.Tick.Marker.Ticks(x.Min, x.Max) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if fmt.Sprint(labels) != "[512 1024 2048]" {
		t.Errorf("x tick labels %v, want [512 1024 2048]", labels)
	}
}

// TestLinesReference: a reference line (an SLO) is drawn without markers,
// so it does not read as two measured points.
func TestLinesReference(t *testing.T) {
	c, err := Lines{Title: "t", XLabel: "x", YLabel: "y", Lines: []Line{
		{Name: "p99", Points: []LinePoint{{X: 1, Y: 1}, {X: 2, Y: 3}}},
		{Name: "SLO", Points: []LinePoint{{X: 1, Y: 2}, {X: 2, Y: 2}}, Reference: true},
	}}.Chart()
	if err != nil {
		t.Fatal(err)
	}
	if !c.marked("p99") || c.marked("SLO") || !c.joined("SLO") {
		t.Errorf("marked: p99 %v, SLO %v; SLO joined %v; want true, false, true", c.marked("p99"), c.marked("SLO"), c.joined("SLO"))
	}
}
