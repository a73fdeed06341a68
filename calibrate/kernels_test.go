package calibrate

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/workloads"
)

// The CUDA suite in ../kernels cannot be built or run here (no GPU in
// go test); these tests check that what it prints is what ReadCSV reads.

// TestKernelsHeader checks that the CSV_HEADER macro of kernels/common.h,
// which every CUDA program prints, is the header WriteCSV writes, and that
// print_row's format has one conversion per column.
func TestKernelsHeader(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "kernels", "common.h"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	def := regexp.MustCompile(`(?s)#define CSV_HEADER((?:[^\n]*\\\n)*[^\n]*)`).FindStringSubmatch(text)
	if def == nil {
		t.Fatal("kernels/common.h: no #define CSV_HEADER")
	}
	var header strings.Builder
	for _, lit := range regexp.MustCompile(`"([^"]*)"`).FindAllStringSubmatch(def[1], -1) {
		header.WriteString(lit[1])
	}
	if got, want := header.String(), strings.Join(CSVHeader(), ","); got != want {
		t.Errorf("kernels/common.h CSV_HEADER =\n%s\nwant (calibrate.CSVHeader)\n%s", got, want)
	}

	// print_row's printf: "%s,%s,...\n" with one conversion per column.
	format := regexp.MustCompile(`std::printf\("(%s,%s,%s,perfsim-cuda,[^"]*)\\n"`).FindStringSubmatch(text)
	if format == nil {
		t.Fatal("kernels/common.h: print_row's printf format not found")
	}
	cells := strings.Split(format[1], ",")
	if len(cells) != len(CSVHeader()) {
		t.Errorf("print_row prints %d cells, the header has %d", len(cells), len(CSVHeader()))
	}
	for i, c := range cells {
		if c != "perfsim-cuda" && !regexp.MustCompile(`^%(s|d|lld|\.\d+g)$`).MatchString(c) {
			t.Errorf("print_row cell %d (%s) = %q, want one conversion", i, CSVHeader()[i], c)
		}
	}
}

// TestKernelsSample checks that the hand-written sample of the suite's
// output parses cleanly, and that it says it is not measurements.
func TestKernelsSample(t *testing.T) {
	path := filepath.Join("..", "kernels", "testdata", "sample.csv")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ms, warns, err := ReadCSV(f, path)
	if err != nil || len(warns) > 0 {
		t.Fatalf("ReadCSV(%s) = %v, %v", path, warns, err)
	}
	kinds := map[string]bool{}
	for _, m := range ms {
		kinds[m.Kernel] = true
		if m.Source != "perfsim-cuda" {
			t.Errorf("%s:%d: source %q, want perfsim-cuda", path, m.Line, m.Source)
		}
	}
	for _, k := range []string{KernelGEMM, KernelRead, KernelTriad, KernelLaunch, KernelLaunchSync, KernelAllReduce} {
		if !kinds[k] {
			t.Errorf("%s: no %s row", path, k)
		}
	}
	if errs := CheckDevice(ms, "h200"); errs != nil {
		t.Errorf("CheckDevice = %v", errs)
	}
	raw, _ := os.ReadFile(path)
	if !strings.Contains(string(raw), "ILLUSTRATIVE SAMPLE, NOT MEASUREMENTS") {
		t.Errorf("%s must say it is an illustrative sample, not measurements", path)
	}
}

// TestKernelsShapes checks kernels/shapes.txt the way gemm.cu reads it:
// "model layer n k both|decode", with each model's source cited.
func TestKernelsShapes(t *testing.T) {
	path := filepath.Join("..", "kernels", "shapes.txt")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var comments strings.Builder
	models := map[string]bool{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text, comment, _ := strings.Cut(sc.Text(), "#")
		comments.WriteString(comment + "\n")
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 5 {
			t.Errorf("%s:%d: %d fields, want model layer n k phases", path, line, len(fields))
			continue
		}
		for _, s := range fields[2:4] {
			if v, err := strconv.Atoi(s); err != nil || v <= 0 {
				t.Errorf("%s:%d: %q is not a positive integer", path, line, s)
			}
		}
		if p := fields[4]; p != "both" && p != "decode" {
			t.Errorf("%s:%d: phases %q, want both or decode", path, line, p)
		}
		models[fields[0]] = true
	}
	for _, m := range []string{"llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b", "llama3-70b", "mixtral-8x7b", "gpt3-175b", "llama2-70b-tp8", "llama3-70b-tp8", "gpt3-175b-tp8"} {
		if !models[m] {
			t.Errorf("%s: no shapes of %s", path, m)
		}
	}
	for _, src := range []string{"meta-llama/Llama-2", "meta-llama/Meta-Llama-3", "mistralai/Mixtral-8x7B", "Language Models are Few-Shot Learners"} {
		if !strings.Contains(comments.String(), src) {
			t.Errorf("%s: no source %q", path, src)
		}
	}
}

// TestKernelsSample_printRow checks that kernels/testdata/sample.csv is
// what the CUDA programs print, byte for byte: each row, read by ReadCSV,
// is formatted again with print_row's printf format taken from
// kernels/common.h (C's %.17g and %.6g are Go's; text cells quoted as
// csv_text quotes them) and must give the line back. A column ReadCSV
// misreads, or a sample line the programs could not print (a time with
// more than six digits, a byte count with an exponent), fails. The rows
// then round-trip through WriteCSV and ReadCSV unchanged.
func TestKernelsSample_printRow(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "kernels", "common.h"))
	if err != nil {
		t.Fatal(err)
	}
	format := regexp.MustCompile(`std::printf\("(%s,%s,%s,perfsim-cuda,[^"]*)\\n"`).FindStringSubmatch(string(src))
	if format == nil {
		t.Fatal("kernels/common.h: print_row's printf format not found")
	}
	convs := strings.Split(format[1], ",")
	path := filepath.Join("..", "kernels", "testdata", "sample.csv")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	ms, warns, err := ReadCSV(strings.NewReader(string(raw)), path)
	if err != nil || len(warns) > 0 {
		t.Fatalf("ReadCSV(%s) = %v, %v", path, warns, err)
	}
	// csvText is common.h's csv_text.
	csvText := func(s string) string {
		if !strings.ContainsAny(s, ",\"\r\n") {
			return s
		}
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	for _, m := range ms {
		dt := ""
		if m.DType != model.Invalid {
			dt = m.DType.String()
		}
		// print_row's arguments, in its order (common.h).
		args := []any{csvText(m.Device), csvText(m.Driver), csvText(m.Clocks), "perfsim-cuda", m.Kernel, dt,
			m.M, m.N, m.K, m.Batch, float64(m.Bytes), float64(m.FLOPs),
			float64(m.Time), float64(m.TimeMin), float64(m.TimeMax), m.Reps,
			m.Heads, m.KVHeads, m.HeadDim, m.QLen, m.KVLen, m.Ranks}
		if len(args) != len(convs) {
			t.Fatalf("print_row has %d conversions, the test %d arguments", len(convs), len(args))
		}
		cells := make([]string, len(convs))
		for i, c := range convs {
			switch {
			case c == "perfsim-cuda":
				cells[i] = c
			case c == "%s":
				cells[i] = args[i].(string)
			case c == "%d" || c == "%lld":
				cells[i] = strconv.Itoa(args[i].(int))
			case strings.HasSuffix(c, "g"):
				cells[i] = fmt.Sprintf(c, args[i].(float64))
			default:
				t.Fatalf("print_row conversion %q not handled", c)
			}
		}
		if got, want := strings.Join(cells, ","), lines[m.Line-1]; got != want {
			t.Errorf("%s:%d: print_row would print\n%s\nthe sample has\n%s", path, m.Line, got, want)
		}
	}

	var b strings.Builder
	if err := WriteCSV(&b, ms); err != nil {
		t.Fatal(err)
	}
	back, warns, err := ReadCSV(strings.NewReader(b.String()), "written")
	if err != nil || len(warns) > 0 || len(back) != len(ms) {
		t.Fatalf("ReadCSV(WriteCSV(sample)) = %d rows, %v, %v; want %d rows", len(back), warns, err, len(ms))
	}
	for i := range ms {
		a, w := ms[i], back[i]
		a.File, a.Line, w.File, w.Line = "", 0, "", 0
		if a != w {
			t.Errorf("row %d changed in the round trip:\n%+v\n%+v", i+1, ms[i], back[i])
		}
	}
}

// TestKernelsShapes_costModel checks that kernels/shapes.txt holds, for
// each of its models, every dense GEMM shape (n, k) that perfsim's cost
// model prices for it in a decode step: workloads' ops at the model's
// tensor-parallel degree ("-tp8" in its name; 1 otherwise), fused QKV as
// it runs. Grouped (MoE expert) GEMMs are not this suite's. It had held
// the fused gate_up shape (n = 2·ffn) alone, where the model prices the
// gate and up GEMMs apart (n = ffn), and no tensor-parallel shard.
func TestKernelsShapes_costModel(t *testing.T) {
	path := filepath.Join("..", "kernels", "shapes.txt")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type nk struct{ n, k int }
	shapes := map[string]map[nk]bool{}
	var order []string
	for _, line := range strings.Split(string(raw), "\n") {
		text, _, _ := strings.Cut(line, "#")
		f := strings.Fields(text)
		if len(f) != 5 {
			continue
		}
		n, _ := strconv.Atoi(f[2])
		k, _ := strconv.Atoi(f[3])
		if shapes[f[0]] == nil {
			shapes[f[0]] = map[nk]bool{}
			order = append(order, f[0])
		}
		shapes[f[0]][nk{n, k}] = true
	}
	for _, name := range order {
		base, tp := name, 1
		if b, ok := strings.CutSuffix(name, "-tp8"); ok {
			base, tp = b, 8
		}
		m, err := workloads.Resolve(base)
		if err != nil {
			t.Errorf("%s: model %s: %v", path, base, err)
			continue
		}
		ops, err := m.Ops(workloads.Phase{Kind: workloads.Decode, Batch: 1, Context: 2048, TP: tp})
		if err != nil {
			t.Errorf("%s: %s at tp %d: %v", path, base, tp, err)
			continue
		}
		for _, op := range ops {
			g, ok := op.Kernel.(model.GEMM)
			if !ok || g.Batch > 1 {
				continue
			}
			if !shapes[name][nk{g.N, g.K}] {
				t.Errorf("%s: %s has no line for %s (n %d, k %d), which the cost model prices at tp %d", path, name, op.Name, g.N, g.K, tp)
			}
		}
	}
}
