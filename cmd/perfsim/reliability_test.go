//go:build unix

package main

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
	// setup prepares what files cannot say (links, pipes, sizes); check
	// tests what a successful run must leave.
	setup func(dir string) error
	check func(t *testing.T, dir string)
	slow  time.Duration // the most the run may take; 0 means 10 s
}

var reliabilityCases = []reliabilityCase{
	{item: "1", name: "calibrate fit on times of 1e300 s",
		files: map[string]string{"m.csv": gemmRows(40, "1e300")},
		args:  []string{"calibrate", "fit", "--hw", "h100", "--measurements", "{dir}/m.csv", "-o", "{dir}/fit.toml"},
		code:  2, want: "time 1e+300 s is outside 1 ns to 1 h", out: "fit.toml"},
	{item: "1", name: "calibrate fit on times of 1e-300 s",
		files: map[string]string{"m.csv": gemmRows(40, "1e-300")},
		args:  []string{"calibrate", "fit", "--hw", "h100", "--measurements", "{dir}/m.csv", "-o", "{dir}/fit.toml"},
		code:  2, want: "time 1e-300 s is outside 1 ns to 1 h", out: "fit.toml"},
	{item: "2", name: "hardware file with err_p90 = 3",
		files: map[string]string{"x1.toml": minimalDevice + "\n[efficiency.gemm.bf16]\ncompute = 0.8\nerr_p90 = 3\nsource = \"fitted\"\n"},
		args:  []string{"simulate", "--hw", "{dir}/x1.toml", "--model", "llama3-8b"},
		code:  2, want: "x1.toml:16: efficiency.gemm.bf16.err_p90: is a relative error: 3 is above 1"},
	{item: "2", name: "hardware file: a residual table one value short, and waves = \"Fractional\"",
		files: map[string]string{"x1.toml": minimalDevice + "\n[efficiency.gemm.bf16]\ncompute = 0.8\nsource = \"s\"\n[efficiency.gemm.bf16.residual]\nlog2_m = [0.0]\nlog2_n = [0.0]\nlog2_k = [0.0, 1.0]\nvalues = [0.1]\n[efficiency.attention]\nwaves = \"Fractional\"\nsource = \"s\"\n"},
		args:  []string{"simulate", "--hw", "{dir}/x1.toml", "--model", "llama3-8b"},
		code:  2, want: "x1.toml:21: efficiency.gemm.bf16.residual.values: residual: 1 values for 1×1×2 nodes, want 2\nperfsim: hardware: {dir}/x1.toml:23: efficiency.attention.waves: \"Fractional\" is not a wave model (want \"whole\" or \"fractional\")"},
	{item: "3", name: "sweep --yes over 10^12 × 10^5 points",
		args: []string{"sweep", "--yes", "--hw", "h100", "--model", "llama3-8b", "--batch", "1..1000000", "--input", "1..1000000", "--output", "1..100000"},
		code: 2, want: "more than the"},
	{item: "4", name: "simulate --hw a .toml linked to /dev/zero",
		setup: func(dir string) error { return os.Symlink("/dev/zero", filepath.Join(dir, "zero.toml")) },
		args:  []string{"simulate", "--hw", "{dir}/zero.toml", "--model", "llama3-8b"},
		code:  2, want: "zero.toml: is a character device, not a hardware file", slow: time.Second},
	{item: "4", name: "simulate --hw a 200 MB hardware file",
		setup: func(dir string) error { return os.Truncate(mustCreate(dir, "big.toml"), 200<<20) },
		args:  []string{"simulate", "--hw", "{dir}/big.toml", "--model", "llama3-8b"},
		code:  2, want: "big.toml: 209715200 bytes, over the 1 MiB limit for a hardware file", slow: time.Second},
	{item: "4", name: "simulate --hw a named pipe",
		setup: func(dir string) error { return syscall.Mkfifo(filepath.Join(dir, "pipe.toml"), 0o644) },
		args:  []string{"simulate", "--hw", "{dir}/pipe.toml", "--model", "llama3-8b"},
		code:  2, want: "pipe.toml: is a named pipe, not a hardware file", slow: time.Second},
	{item: "4", name: "simulate --model a 200 MB config.json",
		setup: func(dir string) error { return os.Truncate(mustCreate(dir, "config.json"), 200<<20) },
		args:  []string{"simulate", "--hw", "h100", "--model", "{dir}/config.json"},
		code:  2, want: "over the 4 MiB limit for a model file", slow: time.Second},
	{item: "4", name: "calibrate fit --measurements /dev/zero",
		args: []string{"calibrate", "fit", "--hw", "h100", "--measurements", "/dev/zero", "-o", "{dir}/fit.toml"},
		code: 2, want: "/dev/zero: is a character device, not a measurements file", out: "fit.toml", slow: time.Second},
	{item: "5", name: "plot roofline --batch 1..1000000+1",
		args: []string{"plot", "roofline", "--hw", "h100", "--model", "llama3-8b", "--batch", "1..1000000+1", "-o", "{dir}/r.svg"},
		code: 2, want: "1000000 scenarios (1 hardware × 1000000 batch sizes × 1 prompt lengths) is more than the 256 a chart can show", out: "r.svg", slow: 5 * time.Second},
	{item: "6", name: "plot beside a stale temporary file of a killed run",
		files: map[string]string{".r.svg.perfsim-999999999-1.tmp": "<svg partial"},
		args:  []string{"plot", "memory", "--hw", "h100", "--model", "llama3-8b", "-o", "{dir}/r.svg"},
		check: func(t *testing.T, dir string) {
			if _, err := os.Stat(filepath.Join(dir, ".r.svg.perfsim-999999999-1.tmp")); err == nil {
				t.Error("the stale temporary file is still there")
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "r.svg")); !strings.Contains(string(b), "<svg") {
				t.Error("no chart written")
			}
		}},
	{item: "7", name: "plot -o a symlink to a chart",
		setup: func(dir string) error {
			if err := os.WriteFile(filepath.Join(dir, "real.svg"), []byte("old"), 0o600); err != nil {
				return err
			}
			return os.Symlink("real.svg", filepath.Join(dir, "link.svg"))
		},
		args: []string{"plot", "memory", "--hw", "h100", "--model", "llama3-8b", "-o", "{dir}/link.svg"},
		check: func(t *testing.T, dir string) {
			st, err := os.Lstat(filepath.Join(dir, "link.svg"))
			b, _ := os.ReadFile(filepath.Join(dir, "real.svg"))
			rst, _ := os.Stat(filepath.Join(dir, "real.svg"))
			if err != nil || st.Mode()&os.ModeSymlink == 0 || !strings.Contains(string(b), "<svg") || rst.Mode().Perm() != 0o600 {
				t.Errorf("after plot -o link.svg: link %v, target %.20q mode %v; want the link kept, the target written with its mode 0600", st.Mode(), b, rst.Mode().Perm())
			}
		}},
	{item: "7", name: "plot -o a named pipe",
		setup: func(dir string) error {
			p := filepath.Join(dir, "pipe.svg")
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				return err
			}
			go os.ReadFile(p) // a reader, as a shell's "perfsim ... -o >(cat)" has
			return nil
		},
		args: []string{"plot", "memory", "--hw", "h100", "--model", "llama3-8b", "-o", "{dir}/pipe.svg"},
		check: func(t *testing.T, dir string) {
			if st, err := os.Lstat(filepath.Join(dir, "pipe.svg")); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
				t.Errorf("the pipe was replaced: %v", st.Mode())
			}
		}},
	{item: "7", name: "calibrate fit -o a directory",
		files: map[string]string{"m.csv": gemmRows(40, "1e-3"), "out.toml/keep": "x"},
		args:  []string{"calibrate", "fit", "--hw", "h100", "--measurements", "{dir}/m.csv", "-o", "{dir}/out.toml"},
		code:  1, want: "out.toml: is a directory (give a file name)", slow: time.Second},
	{item: "8", name: "simulate --output 9223372036854775807",
		args: []string{"simulate", "--hw", "h100", "--model", "llama3-8b", "--output", "9223372036854775807"},
		code: 2, want: `"9223372036854775807" is over the largest count perfsim reads exactly, 2^53 = 9007199254740992`},
	{item: "8", name: "simulate --output 2^50",
		args: []string{"simulate", "--hw", "h100", "--model", "llama3-8b", "--output", "1125899906842624"},
		code: 2, want: "--output: 1125899906842624 is over the limit of 1099511627776 tokens"},
	{item: "8", name: "sweep --batch 1..99999999999999999999",
		args: []string{"sweep", "--hw", "h100", "--model", "llama3-8b", "--batch", "1..99999999999999999999"},
		code: 2, want: "99999999999999999999 is over the largest integer, 9223372036854775807"},
	{item: "8", name: "simulate --input 2^40 (one sequence too long)",
		args: []string{"simulate", "--hw", "h100", "--model", "llama3-8b", "--input", "1099511627776"},
		code: 2, want: "--input: batch 1 × 1099511627904 tokens per sequence is over the limit"},
	{item: "8", name: "simulate --mode training --seq 9223372036854775807",
		args: []string{"simulate", "--hw", "h100", "--model", "llama3-8b", "--mode", "training", "--seq", "9223372036854775807"},
		code: 2, want: "--seq: 9223372036854775807 is over the limit"},
	{item: "8", name: "simulate --mode training --batch 2^32 --dp 2^32",
		args: []string{"simulate", "--hw", "h100", "--model", "llama3-8b", "--mode", "training", "--batch", "4294967296", "--dp", "4294967296", "--seq", "1"},
		code: 2, want: "--dp: tp 1 × pp 1 × dp 4294967296 × cp 1 is 4.295e+09 devices, over the limit of 16777216"},
	{item: "9", name: "a bad hardware file, a bad model file and --batch 0 together",
		files: map[string]string{"hw.toml": "name = \"x\"\nbogus = 1\n", "m.toml": "name = \"m\"\nkind = \"decoder\"\nlayers = -1\nbogus_key = 3\n"},
		args:  []string{"simulate", "--hw", "{dir}/hw.toml", "--model", "{dir}/m.toml", "--batch", "0"},
		code:  2, want: "hw.toml:2: unknown key \"bogus\"\nperfsim: workloads: {dir}/m.toml: d_model: missing"},
	{item: "9", name: "a model file with an unknown key and a bad value",
		files: map[string]string{"m.toml": "name = \"m\"\nkind = \"decoder\"\nlayers = -1\nbogus_key = 3\n"},
		args:  []string{"simulate", "--hw", "h100", "--model", "{dir}/m.toml"},
		code:  2, want: "m.toml:3: layers: must be positive, got -1\nperfsim: workloads: {dir}/m.toml:4: bogus_key: unknown key"},
	{item: "10", name: "config.json with hidden_size 1000000000000",
		files: map[string]string{"c/config.json": `{"architectures": ["LlamaForCausalLM"], "hidden_size": 1000000000000, "num_hidden_layers": 2, "num_attention_heads": 8, "intermediate_size": 100, "vocab_size": 1000, "max_position_embeddings": 100}`},
		args:  []string{"simulate", "--hw", "h100", "--model", "{dir}/c/config.json"},
		code:  2, want: "hidden_size: 1000000000000 is over the limit of 1073741824"},
	{item: "10", name: "config.json with architectures a string",
		files: map[string]string{"c/config.json": `{"architectures": "LlamaForCausalLM"}`},
		args:  []string{"simulate", "--hw", "h100", "--model", "{dir}/c/config.json"},
		code:  2, want: `architectures: want a list of names such as ["LlamaForCausalLM"], got LlamaForCausalLM`},
	{item: "10", name: "config.json with a UTF-8 byte-order mark",
		files: map[string]string{"c/config.json": "\uFEFF" + `{"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8, "intermediate_size": 128, "vocab_size": 1000, "max_position_embeddings": 4096}`},
		args:  []string{"simulate", "--hw", "h100", "--model", "{dir}/c/config.json", "--input", "16", "--output", "2"},
		code:  0},
	{item: "10", name: "calibrate fit --measurements a directory",
		files: map[string]string{"dir.csv/x": "x"},
		args:  []string{"calibrate", "fit", "--hw", "h100", "--measurements", "{dir}/dir.csv", "-o", "{dir}/fit.toml"},
		code:  2, want: "dir.csv: is a directory, not a measurements file", out: "fit.toml"},
	{item: "10", name: "plot -o a directory",
		files: map[string]string{"d.svg/x": "x"},
		args:  []string{"plot", "memory", "--hw", "h100", "--model", "llama3-8b", "-o", "{dir}/d.svg"},
		code:  1, want: "--out: {dir}/d.svg: is a directory (give a file name)"},
	{item: "11", name: "calibrate fit --folds 0",
		files: map[string]string{"m.csv": gemmRows(40, "1e-3")},
		args:  []string{"calibrate", "fit", "--hw", "h100", "--measurements", "{dir}/m.csv", "--folds", "0", "-o", "{dir}/fit.toml"},
		code:  2, want: "--folds", out: "fit.toml"},
	{item: "11", name: "calibrate fit --folds -3",
		files: map[string]string{"m.csv": gemmRows(40, "1e-3")},
		args:  []string{"calibrate", "fit", "--hw", "h100", "--measurements", "{dir}/m.csv", "--folds", "-3", "-o", "{dir}/fit.toml"},
		code:  2, want: "--folds", out: "fit.toml"},
	{item: "11", name: "calibrate fit --date \"not a date\"",
		files: map[string]string{"m.csv": gemmRows(40, "1e-3")},
		args:  []string{"calibrate", "fit", "--hw", "h100", "--measurements", "{dir}/m.csv", "--date", "not a date", "-o", "{dir}/fit.toml"},
		code:  2, want: "--date", out: "fit.toml"},
	{item: "11", name: "simulate --reserve 1e30GB",
		args: []string{"simulate", "--hw", "h100", "--model", "llama3-8b", "--reserve", "1e30GB"},
		code: 2, want: "--reserve: 1e+21 EB leaves nothing of the H100 SXM's"},
	{item: "11", name: "config.json with a key given twice",
		files: map[string]string{"c/config.json": `{"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "num_hidden_layers": 2, "num_hidden_layers": 3, "num_attention_heads": 8, "intermediate_size": 128, "vocab_size": 1000, "max_position_embeddings": 4096}`},
		args:  []string{"simulate", "--hw", "h100", "--model", "{dir}/c/config.json"},
		code:  2, want: "num_hidden_layers: given twice"},
	{item: "11", name: "simulate --seq 512 (a training flag) in inference mode",
		args: []string{"simulate", "--hw", "h100", "--model", "llama3-8b", "--seq", "512", "--recompute", "full"},
		code: 2, want: "--seq: only for --mode training; inference mode would ignore it\nperfsim: --recompute: only for --mode training"},
	{item: "11", name: "simulate --mode training --input 512 (an inference flag)",
		args: []string{"simulate", "--hw", "h100", "--model", "llama3-8b", "--mode", "training", "--input", "512"},
		code: 2, want: "--input: only for --mode inference; training mode would ignore it"},
	{item: "11", name: "simulate: the training-at-scale flags in inference mode",
		args: []string{"simulate", "--hw", "h100", "--model", "llama3-8b", "--cp", "2", "--sp", "--schedule", "gpipe", "--virtual-stages", "2", "--micro-batch", "4", "--tp-overlap", "--no-overlap"},
		code: 2, want: "--cp: only for --mode training; inference mode would ignore it\nperfsim: --sp: only for --mode training; inference mode would ignore it\nperfsim: --schedule: only for --mode training; inference mode would ignore it\nperfsim: --virtual-stages: only for --mode training; inference mode would ignore it\nperfsim: --micro-batch: only for --mode training; inference mode would ignore it\nperfsim: --tp-overlap: only for --mode training; inference mode would ignore it\nperfsim: --no-overlap: only for --mode training"},
	{item: "11", name: "simulate --mode training --max-num-tokens 4096 --cuda-graphs=false (inference flags)",
		args: []string{"simulate", "--hw", "h100", "--model", "llama3-8b", "--mode", "training", "--max-num-tokens", "4096", "--cuda-graphs=false"},
		code: 2, want: "--max-num-tokens: only for --mode inference; training mode would ignore it\nperfsim: --cuda-graphs: only for --mode inference"},
	{item: "11", name: "maxmodel --mode inference --seq 512 --zero 1 (training flags)",
		args: []string{"maxmodel", "--hw", "h100", "--mode", "inference", "--seq", "512", "--zero", "1"},
		code: 2, want: "--seq: only for --mode training; inference mode would ignore it\nperfsim: --zero: only for --mode training"},
	{item: "11", name: "serve --trace with --rate, --input and --seed",
		files: map[string]string{"t.csv": "arrival_s,input_tokens,output_tokens\n0,10,5\n"},
		args:  []string{"serve", "--hw", "h100", "--model", "llama3-8b", "--trace", "{dir}/t.csv", "--rate", "3", "--input", "512", "--seed", "2"},
		code:  2, want: "--input: not with --trace, which gives each request's arrival and lengths\nperfsim: --rate: not with --trace, which gives each request's arrival and lengths\nperfsim: --seed: not with --trace"},
	{item: "11", name: "serve --workload sharegpt --input 512",
		args: []string{"serve", "--hw", "h100", "--model", "llama3-8b", "--workload", "sharegpt", "--input", "512", "--rate", "2"},
		code: 2, want: "--input: not with --workload, which draws each request's lengths"},
	{item: "11", name: "serve --arrival all --rate 3; --cv without gamma",
		args: []string{"serve", "--hw", "h100", "--model", "llama3-8b", "--arrival", "all", "--rate", "3", "--cv", "4"},
		code: 2, want: "--rate: not with --arrival all, where every request arrives at t = 0\nperfsim: --cv: only for --arrival gamma; --arrival all would ignore it"},
	{item: "11", name: "serve --static --chunked-prefill=false --scheduler-steps 4",
		args: []string{"serve", "--hw", "h100", "--model", "llama3-8b", "--static", "--chunked-prefill=false", "--scheduler-steps", "4", "--rate", "2"},
		code: 2, want: "--chunked-prefill: not with --static, which prefills each batch whole and schedules once per step\nperfsim: --scheduler-steps: not with --static"},
	{item: "11", name: "plan serve --max-rate --rate 5 --max-gpus 8",
		args: []string{"plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--max-rate", "--rate", "5", "--max-gpus", "8", "--ttft-p99", "1s"},
		code: 2, want: "--rate: not with --max-rate, which searches the rate for one deployment\nperfsim: --max-gpus: not with --max-rate"},
	{item: "11", name: "plan serve --dp 2 --load-plot without --max-rate",
		args: []string{"plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "5", "--dp", "2", "--load-plot", "{dir}/l.svg", "--ttft-p99", "1s"},
		code: 2, want: "--dp: only with --max-rate; a layout search would ignore it\nperfsim: --load-plot: only with --max-rate"},
	{item: "12", name: "serve --trace a CSV row with a bare quote (FuzzReadTrace's crasher)",
		files: map[string]string{"q.csv": "arrival_s,input_tokens,output_tokens\n0\"0000000000"},
		args:  []string{"serve", "--hw", "h100", "--model", "llama3-8b", "--trace", "{dir}/q.csv"},
		code:  2, want: "q.csv:2: bare \" in non-quoted-field"},
	{item: "11", name: "sweep --phases --format csv",
		args: []string{"sweep", "--hw", "h100", "--model", "llama3-8b", "--phases", "--format", "csv"},
		code: 2, want: "--phases: only with --format json; --format csv would ignore it"},
}

// mustCreate creates an empty file name in dir and returns its path.
func mustCreate(dir, name string) string {
	p := filepath.Join(dir, name)
	os.WriteFile(p, nil, 0o644)
	return p
}

func TestReliability(t *testing.T) {
	var table strings.Builder
	table.WriteString("| item | input | exit | message (first line) | existing output | time |\n|---|---|---|---|---|---|\n")
	for _, tt := range reliabilityCases {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tt.files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tt.setup != nil {
				if err := tt.setup(dir); err != nil {
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
			start := time.Now()
			_, stderr, code := perfsim(t, args...)
			took := time.Since(start)
			if limit := cmp.Or(tt.slow, 10*time.Second); took > limit {
				t.Errorf("perfsim %s took %v, want at most %v", strings.Join(tt.args, " "), took, limit)
			}
			if tt.check != nil {
				tt.check(t, dir)
			}
			if want := strings.ReplaceAll(tt.want, "{dir}", dir); code != tt.code || !strings.Contains(stderr, want) {
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
			if after, _ := os.ReadDir(dir); tt.check == nil && len(after) != len(before) {
				t.Errorf("the run left files behind: %v (before: %v)", after, before)
			}
			msg := strings.TrimPrefix(strings.SplitN(stderr, "\n", 2)[0], "perfsim: ")
			msg = strings.ReplaceAll(strings.ReplaceAll(msg, dir+"/", ""), "|", `\|`)
			if tt.check != nil && !t.Failed() {
				kept = "written as asked"
			}
			fmt.Fprintf(&table, "| %s | %s | %d | %s | %s | %.2f s |\n", tt.item, tt.name, code, msg, kept, took.Seconds())
		})
	}
	if *reliabilityTable != "" {
		if err := os.WriteFile(*reliabilityTable, []byte(table.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
