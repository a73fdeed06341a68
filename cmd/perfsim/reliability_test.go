package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// reliabilityTable, when set, is where TestReliability writes its cases as
// a Markdown table (inputs, exit code, first message line, whether the
// existing output survived): the table of issue 17.
var reliabilityTable = flag.String("reliability-table", "", "write TestReliability's table of bad inputs to this file")

// minimalDevice is a device file with the least it needs.
const minimalDevice = `name = "Acme X1"
vendor = "Acme"
kind = "accelerator"
source = "Acme X1 datasheet, rev. 3"
compute_units = 64

[peak.matrix]
bf16 = "400 TFLOP/s"

[memory]
capacity = "64 GB"
bandwidth = "2 TB/s"
`

// gemmRows returns perfsim-schema measurements of n bf16 GEMMs on an H100,
// every time t seconds.
func gemmRows(n int, t string) string {
	var b strings.Builder
	b.WriteString("device,kernel,dtype,m,n,k,bytes,flops,time_s\n")
	for i := 1; i <= n; i++ {
		m := 64 * i
		fmt.Fprintf(&b, "NVIDIA H100 80GB HBM3,gemm,bf16,%d,4096,4096,%d,%d,%s\n", m, 2*(m*4096+4096*4096+m*4096), 2*m*4096*4096, t)
	}
	return b.String()
}

// A reliabilityCase is one bad or extreme input: files to create in a
// fresh directory, the arguments ({dir} stands for it), the exit code and
// a part of the message expected, and the output file (in dir) that holds
// "old output" before the run and must hold it after.
type reliabilityCase struct {
	item  string // the numbered item of issue 17
	name  string
	files map[string]string
	args  []string
	code  int
	want  string
	out   string
}

var reliabilityCases = []reliabilityCase{
	{item: "1", name: "calibrate fit on times of 1e300 s",
		files: map[string]string{"m.csv": gemmRows(40, "1e300")},
		args:  []string{"calibrate", "fit", "--hw", "h100", "--measurements", "{dir}/m.csv", "-o", "{dir}/fit.toml"},
		code:  1, want: "time 1e+300 s is outside 1 ns to 1 h", out: "fit.toml"},
	{item: "1", name: "calibrate fit on times of 1e-300 s",
		files: map[string]string{"m.csv": gemmRows(40, "1e-300")},
		args:  []string{"calibrate", "fit", "--hw", "h100", "--measurements", "{dir}/m.csv", "-o", "{dir}/fit.toml"},
		code:  1, want: "time 1e-300 s is outside 1 ns to 1 h", out: "fit.toml"},
	{item: "2", name: "hardware file with err_p90 = 3",
		files: map[string]string{"x1.toml": minimalDevice + "\n[efficiency.gemm.bf16]\ncompute = 0.8\nerr_p90 = 3\nsource = \"fitted\"\n"},
		args:  []string{"simulate", "--hw", "{dir}/x1.toml", "--model", "llama-3-8b"},
		code:  1, want: "x1.toml:16: efficiency.gemm.bf16.err_p90: is a relative error: 3 is above 1"},
}

func TestReliability(t *testing.T) {
	var table strings.Builder
	table.WriteString("| item | input | exit | message (first line) | existing output |\n|---|---|---|---|---|\n")
	for _, tt := range reliabilityCases {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			const old = "old output\n"
			if tt.out != "" {
				if err := os.WriteFile(filepath.Join(dir, tt.out), []byte(old), 0o640); err != nil {
					t.Fatal(err)
				}
			}
			before, _ := os.ReadDir(dir)
			args := make([]string, len(tt.args))
			for i, a := range tt.args {
				args[i] = strings.ReplaceAll(a, "{dir}", dir)
			}
			_, stderr, code := perfsim(t, args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("perfsim %s: exit %d, stderr:\n%s\nwant exit %d and %q", strings.Join(tt.args, " "), code, stderr, tt.code, tt.want)
			}
			kept := "-"
			if tt.out != "" {
				kept = "unchanged"
				data, err := os.ReadFile(filepath.Join(dir, tt.out))
				st, serr := os.Stat(filepath.Join(dir, tt.out))
				if err != nil || string(data) != old || serr != nil || st.Mode().Perm() != 0o640 {
					kept = "CHANGED"
					t.Errorf("the existing %s was changed: %q, %v", tt.out, data, err)
				}
			}
			if after, _ := os.ReadDir(dir); len(after) != len(before) {
				t.Errorf("the run left files behind: %v (before: %v)", after, before)
			}
			msg := strings.TrimPrefix(strings.SplitN(stderr, "\n", 2)[0], "perfsim: ")
			msg = strings.ReplaceAll(strings.ReplaceAll(msg, dir+"/", ""), "|", `\|`)
			fmt.Fprintf(&table, "| %s | %s | %d | %s | %s |\n", tt.item, tt.name, code, msg, kept)
		})
	}
	if *reliabilityTable != "" {
		if err := os.WriteFile(*reliabilityTable, []byte(table.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
