package calibrate

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
)

const header = "device,driver,clocks,source,kernel,dtype,m,n,k,batch,bytes,flops,time_s,time_min_s,time_max_s,reps,heads,kv_heads,head_dim,q_len,kv_len,ranks\n"

// A gemm row: 4096³ bf16, flops = 2·4096³ = 137438953472, bytes =
// 3·4096²·2 = 100663296.
const gemmRow = "NVIDIA H200,550.54.15,sm=1980MHz,perfsim-cuda,gemm,bf16,4096,4096,4096,1,100663296,137438953472,0.000190,0.000188,0.000195,20,0,0,0,0,0,0\n"

func TestReadCSV(t *testing.T) {
	ms, warns, err := ReadCSV(strings.NewReader(header+gemmRow+
		"NVIDIA H200,,,perfsim-cuda,copy,fp32,0,0,0,0,2097152,0,2.1e-06,,,50,0,0,0,0,0,0\n"+
		"NVIDIA H200,,,perfsim-cuda,launch,,0,0,0,0,0,0,2.5e-06,2.4e-06,3e-06,21,0,0,0,0,0,0\n"), "h200.csv")
	if err != nil || len(warns) > 0 {
		t.Fatalf("ReadCSV = %v, %v", warns, err)
	}
	want := []Measurement{{
		Device: "NVIDIA H200", Driver: "550.54.15", Clocks: "sm=1980MHz", Source: "perfsim-cuda",
		Kernel: "gemm", DType: model.BF16, M: 4096, N: 4096, K: 4096, Batch: 1,
		Bytes: 100663296, FLOPs: 137438953472, Time: 190e-6, TimeMin: 188e-6, TimeMax: 195e-6, Reps: 20,
		File: "h200.csv", Line: 2,
	}, {
		Device: "NVIDIA H200", Source: "perfsim-cuda", Kernel: "copy", DType: model.FP32,
		Bytes: 2097152, Time: 2.1e-6, Reps: 50, File: "h200.csv", Line: 3,
	}, {
		Device: "NVIDIA H200", Source: "perfsim-cuda", Kernel: "launch",
		Time: 2.5e-6, TimeMin: 2.4e-6, TimeMax: 3e-6, Reps: 21, File: "h200.csv", Line: 4,
	}}
	if !reflect.DeepEqual(ms, want) {
		t.Errorf("ReadCSV =\n%+v\nwant\n%+v", ms, want)
	}
}

func TestReadCSV_lenient(t *testing.T) {
	// Columns in another order, optional ones absent, a comment, a BOM,
	// spaces around cells, an integral float and a dtype alias.
	in := "\uFEFF# measured by hand\nkernel, dtype ,device,m,n,k,bytes,flops,time_s\n" +
		"gemm, bfloat16 , My GPU ,128.0,256,512,0, 33554432,1e-3\n"
	ms, warns, err := ReadCSV(strings.NewReader(in), "x.csv")
	if err != nil || len(warns) > 0 {
		t.Fatalf("ReadCSV = %v, %v", warns, err)
	}
	want := Measurement{Device: "My GPU", Kernel: "gemm", DType: model.BF16, M: 128, N: 256, K: 512,
		FLOPs: 33554432, Time: 1e-3, File: "x.csv", Line: 3}
	if len(ms) != 1 || ms[0] != want {
		t.Errorf("ReadCSV = %+v, want %+v", ms, want)
	}
}

func TestReadCSV_errors(t *testing.T) {
	row := func(kernel, dtype, m, time string) string {
		return "d,,,," + kernel + "," + dtype + "," + m + ",64,64,1,0,524288," + time + ",,,1,0,0,0,0,0,0\n"
	}
	tests := []struct {
		name string
		in   string
		want []string // substrings of the error, each required
		is   error
	}{
		{"empty", "", []string{"f.csv: empty file"}, nil},
		{"header only", header, []string{"f.csv: no measurements"}, ErrNoRows},
		{"missing column", "device,kernel,dtype,m,n,k,bytes,flops\nd,gemm,fp32,1,1,1,0,2\n",
			[]string{"f.csv:1: time_s: missing column"}, ErrMissingColumn},
		{"two missing", "device,kernel,m,n,k,bytes,flops\n", []string{"f.csv:1: dtype: missing column", "f.csv:1: time_s: missing column"}, ErrMissingColumn},
		{"unknown column", strings.TrimSuffix(header, "\n") + ",time_ms\n", []string{"f.csv:1: time_ms: unknown column"}, nil},
		{"repeated column", strings.TrimSuffix(header, "\n") + ",m\n", []string{"f.csv:1: m: column given twice"}, nil},
		{"short row", header + "d,gemm\n", []string{"f.csv:2: 2 cells, the header has 22"}, nil},
		{"non-numeric", header + row("gemm", "fp32", "abc", "1e-3"), []string{`f.csv:2: m: not an integer: "abc"`}, nil},
		{"non-numeric time", header + row("gemm", "fp32", "64", "fast"), []string{`f.csv:2: time_s: not a number: "fast"`}, nil},
		{"zero time", header + row("gemm", "fp32", "64", "0"), []string{"f.csv:2: time_s: time must be"}, ErrBadTime},
		{"negative time", header + row("gemm", "fp32", "64", "-1e-3"), []string{"f.csv:2: time_s:"}, ErrBadTime},
		{"NaN time", header + row("gemm", "fp32", "64", "NaN"), []string{"f.csv:2: time_s:"}, ErrBadTime},
		{"Inf time", header + row("gemm", "fp32", "64", "+Inf"), []string{"f.csv:2: time_s:"}, ErrBadTime},
		{"empty time", header + row("gemm", "fp32", "64", ""), []string{"f.csv:2: time_s: empty"}, ErrBadTime},
		{"unknown dtype", header + row("gemm", "fp12", "64", "1e-3"), []string{`f.csv:2: dtype: unknown data type "fp12"`}, nil},
		{"gemm without dtype", header + row("gemm", "", "64", "1e-3"), []string{"f.csv:2: dtype: a gemm needs a dtype"}, nil},
		{"gemm without m", header + row("gemm", "fp32", "0", "1e-3"), []string{"f.csv:2: m: a gemm needs m, n and k > 0"}, nil},
		{"negative m", header + row("gemm", "fp32", "-4", "1e-3"), []string{`f.csv:2: m: negative: "-4"`}, nil},
		{"bad kernel", header + row("GEMM-2", "fp32", "64", "1e-3"), []string{`f.csv:2: kernel: "gemm-2" is not a kernel name`}, nil},
		{"min above median", header + "d,,,,copy,fp32,0,0,0,0,8,0,1e-3,2e-3,,1,0,0,0,0,0,0\n", []string{"f.csv:2: time_min_s: 0.002 exceeds time_s 0.001"}, nil},
		{"max below median", header + "d,,,,copy,fp32,0,0,0,0,8,0,1e-3,,5e-4,1,0,0,0,0,0,0\n", []string{"f.csv:2: time_max_s:"}, nil},
		{"negative bytes", header + "d,,,,copy,fp32,0,0,0,0,-8,0,1e-3,,,1,0,0,0,0,0,0\n", []string{"f.csv:2: bytes: must be a finite number"}, nil},
		{"every bad row reported", header + row("gemm", "fp32", "x", "1e-3") + gemmRow + row("gemm", "fp32", "64", "0"),
			[]string{"f.csv:2: m:", "f.csv:4: time_s:"}, nil},
		{"quote error", header + "\"d,,,,copy\n", []string{"f.csv:"}, nil},
		{"comment device", header + "\"#d\",,,,copy,fp32,0,0,0,0,8,0,1e-3,,,1,0,0,0,0,0,0\n", []string{"f.csv:2: device: must not begin with '#'"}, nil},
		{"empty device", header + ",,,,copy,fp32,0,0,0,0,8,0,1e-3,,,1,0,0,0,0,0,0\n", []string{"f.csv:2: device: empty"}, nil},
		// A collective of fewer than two ranks moves nothing the model
		// prices (it had been read, and predicted to take 0 s).
		{"collective without ranks", header + "d,,,,all_reduce,bf16,0,0,0,0,1048576,0,1e-3,,,1,0,0,0,0,0,0\n", []string{"f.csv:2: ranks: all_reduce needs 2 ranks or more, got 0"}, nil},
		{"collective of one rank", header + "d,,,,all_gather,bf16,0,0,0,0,1048576,0,1e-3,,,1,0,0,0,0,0,1\n", []string{"f.csv:2: ranks: all_gather needs 2 ranks or more, got 1"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, _, err := ReadCSV(strings.NewReader(tt.in), "f.csv")
			if err == nil {
				t.Fatalf("ReadCSV = %d rows, nil error; want an error with %q", len(ms), tt.want)
			}
			if ms != nil {
				t.Errorf("ReadCSV returned %d rows with an error", len(ms))
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ReadCSV error =\n%v\nwant it to contain %q", err, w)
				}
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.is)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.File != "f.csv" {
				t.Errorf("error %v is not a *ParseError naming f.csv", err)
			}
		})
	}
}

func TestReadCSV_manyErrorsCapped(t *testing.T) {
	var b strings.Builder
	b.WriteString(header)
	for range 100 {
		b.WriteString("d,,,,copy,fp32,0,0,0,0,8,0,0,,,1,0,0,0,0,0,0\n")
	}
	_, _, err := ReadCSV(strings.NewReader(b.String()), "f.csv")
	if err == nil || !strings.Contains(err.Error(), "80 more errors not shown") {
		t.Errorf("ReadCSV error = %v, want 20 errors and a count of the rest", err)
	}
}

func TestReadCSV_duplicates(t *testing.T) {
	other := strings.Replace(gemmRow, "0.000190", "0.000191", 1) // same shape, another time: kept
	ms, warns, err := ReadCSV(strings.NewReader(header+gemmRow+other+gemmRow), "f.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Line != 2 || ms[1].Line != 3 {
		t.Errorf("ReadCSV rows = %+v, want lines 2 and 3", ms)
	}
	if len(warns) != 1 || !strings.Contains(warns[0].Error(), "f.csv:4: duplicate of line 2 (dropped)") {
		t.Errorf("ReadCSV warnings = %v, want one duplicate warning for line 4", warns)
	}
}

func TestReadCSV_flopsWarning(t *testing.T) {
	bad := strings.Replace(gemmRow, "137438953472", "68719476736", 1) // MACs given as FLOPs
	_, warns, err := ReadCSV(strings.NewReader(header+gemmRow+bad), "f.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || !strings.Contains(warns[0].Error(), "f.csv:3: flops: 1 gemm rows have flops other than 2·m·n·k·batch") {
		t.Errorf("ReadCSV warnings = %v", warns)
	}
}

func TestWriteCSV_roundTrip(t *testing.T) {
	in := []Measurement{
		{Device: "NVIDIA H200, SXM", Driver: `550 "open"`, Source: "perfsim-cuda", Kernel: "gemm", DType: model.FP8,
			M: 1, N: 57344, K: 8192, Batch: 1, Bytes: 1.0/3 + 1e9, FLOPs: 2 * 57344 * 8192,
			Time: 1.2345678901234567e-4, TimeMin: 1e-4, TimeMax: 2e-4, Reps: 7},
		{Device: "cpu", Kernel: "attention_decode", DType: model.FP8E5M2, Batch: 8, Time: 3e-3,
			Heads: 64, KVHeads: 8, HeadDim: 128, QLen: 1, KVLen: 4096},
		{Device: "cpu", Kernel: "all_reduce", DType: model.BF16, Bytes: 1 << 30, Time: 5e-3, Ranks: 8},
		{Device: "cpu", Kernel: "launch", Time: 5e-300},
	}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, in); err != nil {
		t.Fatal(err)
	}
	out, warns, err := ReadCSV(&buf, "")
	if err != nil || len(warns) > 0 {
		t.Fatalf("ReadCSV(WriteCSV) = %v, %v\n%s", warns, err, buf.String())
	}
	for i := range out {
		out[i].File, out[i].Line = "", 0
	}
	if !reflect.DeepEqual(out, in) {
		t.Errorf("round trip:\n got %+v\nwant %+v", out, in)
	}
}

func TestWriteCSV_rejects(t *testing.T) {
	tests := []struct {
		name string
		m    Measurement
		want string
	}{
		{"NaN time", Measurement{Device: "d", Kernel: "copy", Time: model.Seconds(math.NaN())}, "row 1: time_s"},
		{"zero time", Measurement{Device: "d", Kernel: "copy"}, "row 1: time_s"},
		{"Inf bytes", Measurement{Device: "d", Kernel: "copy", Time: 1, Bytes: model.Bytes(math.Inf(1))}, "row 1: bytes"},
		{"spaces", Measurement{Device: " d", Kernel: "copy", Time: 1}, "row 1: device"},
		{"newline", Measurement{Device: "d", Driver: "a\nb", Kernel: "copy", Time: 1}, "row 1: driver"},
		{"no kernel", Measurement{Device: "d", Time: 1}, "row 1: kernel"},
		{"positioned", Measurement{Device: "d", Kernel: "copy", File: "a.csv", Line: 9}, "a.csv:9: time_s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := WriteCSV(&buf, []Measurement{tt.m})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("WriteCSV(%+v) = %v, want an error with %q", tt.m, err, tt.want)
			}
			if buf.Len() != 0 {
				t.Errorf("WriteCSV wrote %q despite the error", buf.String())
			}
		})
	}
}

func TestCheckDevice(t *testing.T) {
	ms := []Measurement{
		{Device: "NVIDIA H200", File: "m.csv", Line: 2},
		{Device: "NVIDIA H200", File: "m.csv", Line: 3},
		{Device: "NVIDIA H100 80GB HBM3", File: "m.csv", Line: 4},
		{Device: "NVIDIA H100 80GB HBM3", File: "m.csv", Line: 5},
	}
	tests := []struct {
		want string
		errs []string
	}{
		{"h200", []string{`calibrate: m.csv:4: 2 rows measured on "NVIDIA H100 80GB HBM3", not "h200"`}},
		{"H100-80GB", []string{`calibrate: m.csv:2: 2 rows measured on "NVIDIA H200", not "H100-80GB"`}},
		{"", []string{`calibrate: m.csv:4: 2 rows measured on "NVIDIA H100 80GB HBM3", not "NVIDIA H200"`}},
		{"a100", []string{`m.csv:2: 2 rows measured on "NVIDIA H200"`, `m.csv:4: 2 rows measured on "NVIDIA H100 80GB HBM3"`}},
	}
	for _, tt := range tests {
		errs := CheckDevice(ms, tt.want)
		if len(errs) != len(tt.errs) {
			t.Errorf("CheckDevice(%q) = %v, want %d errors", tt.want, errs, len(tt.errs))
			continue
		}
		for i, e := range errs {
			if !strings.Contains(e.Error(), tt.errs[i]) {
				t.Errorf("CheckDevice(%q)[%d] = %v, want %q", tt.want, i, e, tt.errs[i])
			}
		}
	}
	if errs := CheckDevice(ms[:2], "nvidia-h200"); errs != nil {
		t.Errorf("CheckDevice(h200 rows, nvidia-h200) = %v, want none", errs)
	}
}

func FuzzReadCSV(f *testing.F) {
	f.Add(header + gemmRow)
	f.Add(header + gemmRow + gemmRow)
	f.Add("kernel,dtype,device,m,n,k,bytes,flops,time_s\ngemm,bf16,x,1,2,3,0,12,1e-9\n")
	f.Add(header + "\"a,b\",\"x\"\"y\",,,copy,,0,0,0,0,8,0,1e-3,,,1,0,0,0,0,0,0\n")
	if b, err := os.ReadFile("../kernels/testdata/sample.csv"); err == nil {
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, in string) {
		ms, _, err := ReadCSV(strings.NewReader(in), "fuzz.csv")
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteCSV(&buf, ms); err != nil {
			t.Fatalf("WriteCSV of parsed rows: %v", err)
		}
		again, _, err := ReadCSV(bytes.NewReader(buf.Bytes()), "fuzz.csv")
		if err != nil {
			t.Fatalf("ReadCSV(WriteCSV(rows)): %v\n%s", err, buf.String())
		}
		if len(again) != len(ms) {
			t.Fatalf("round trip: %d rows, want %d", len(again), len(ms))
		}
		for i := range ms {
			a, b := ms[i], again[i]
			a.Line, b.Line = 0, 0
			if a != b {
				t.Fatalf("round trip row %d:\n got %+v\nwant %+v", i, b, a)
			}
		}
	})
}

func ExampleReadCSV() {
	in := "device,kernel,dtype,m,n,k,bytes,flops,time_s\n" +
		"NVIDIA H200,gemm,bf16,4096,4096,4096,100663296,137438953472,0.00019\n"
	ms, warns, err := ReadCSV(strings.NewReader(in), "h200.csv")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range ms {
		fmt.Printf("%s:%d %s %s %dx%dx%d %v → %v\n", m.File, m.Line, m.Kernel, m.DType, m.M, m.N, m.K,
			m.Time, m.FLOPs.Rate(m.Time))
	}
	fmt.Println(len(warns), "warnings")
	// Output:
	// h200.csv:2 gemm bf16 4096x4096x4096 190 us → 723.4 TFLOP/s
	// 0 warnings
}

func TestFastestSample(t *testing.T) {
	ms := []Measurement{{Time: 3, TimeMin: 2, TimeMax: 4}, {Time: 5}}
	got := FastestSample(ms)
	if got[0].Time != 2 || got[1].Time != 5 || ms[0].Time != 3 {
		t.Errorf("FastestSample = %v, %v (input now %v); want 2 (the minimum), 5 (no minimum), input unchanged", got[0].Time, got[1].Time, ms[0].Time)
	}
}
