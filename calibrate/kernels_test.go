package calibrate

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
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
	for _, m := range []string{"llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b", "llama3-70b", "mixtral-8x7b", "gpt3-175b"} {
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
