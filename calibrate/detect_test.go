package calibrate

import (
	"strings"
	"testing"
)

// TestRead_headerProblems checks what Read says of a file whose format
// it cannot tell by its header: an empty file says it is empty, and a
// perfsim header with a few misspelt or missing columns is read as
// perfsim's, so that each bad column is named at file:line. Both had
// been "header ... is none of perfsim, aiconfigurator, ...", naming no
// column.
func TestRead_headerProblems(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string // every one in the error
		none     string   // not in the error
	}{
		{"empty", "", []string{"m.csv: empty file: want a header line"}, "unknown measurements format"},
		{"comments only", "# nothing measured\n", []string{"m.csv: empty file"}, "unknown measurements format"},
		{"misspelt", "device,kernal,dtype,m,n,k,bytes,flops,time_ms\nH100,gemm,bf16,1,1,1,6,2,0.19\n",
			[]string{"m.csv:1: kernal: unknown column", "m.csv:1: time_ms: unknown column", "m.csv:1: kernel: missing column", "m.csv:1: time_s: missing column"},
			"unknown measurements format"},
		{"time without unit", "# a comment\ndevice,kernel,dtype,m,n,k,bytes,flops,time\nH100,gemm,bf16,1,1,1,6,2,0.19\n",
			[]string{"m.csv:2: time: unknown column", "m.csv:2: time_s: missing column"}, "unknown measurements format"},
		// A header sharing few of perfsim's columns is still of no known format.
		{"foreign", "gpu,shape,ms\nH100,1x1x1,0.2\n", []string{"m.csv:1: unknown measurements format"}, "unknown column"},
		// The header's own line, after comments (it had said line 1).
		{"foreign after comments", "# one\n# two\ngpu,shape,ms\nH100,1x1x1,0.2\n", []string{"m.csv:3: unknown measurements format"}, "unknown column"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, _, err := Read(strings.NewReader(tt.in), "m.csv", FormatAuto, "")
			if err == nil || ms != nil {
				t.Fatalf("Read = %d rows, %v; want an error", len(ms), err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\nlacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), tt.none) {
				t.Errorf("error\n%v\nholds %q", err, tt.none)
			}
		})
	}
	// The fallback reads perfsim's own header, not another format's.
	for _, h := range []string{"device,model,tp,num_tokens,op,time_ms_median", "gpu,op,time_ms,throughput_unit"} {
		if f := detect(strings.Split(h, ",")); f == FormatPerfsim {
			t.Errorf("detect(%q) = perfsim", h)
		}
	}
}
