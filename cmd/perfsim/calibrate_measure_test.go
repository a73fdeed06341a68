package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/perfsim/perfsim/calibrate"
	"github.com/perfsim/perfsim/hardware"
)

func measureCmdForTest(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	err = runCalibrateMeasure(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), err
}

func TestCalibrateMeasure_usage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"gpu", []string{"--device", "h200"}, 2, `--device "h200": perfsim measures only the cpu; GPUs are measured with the CUDA suite: make -C kernels && kernels/run.sh`},
		{"argument", []string{"cpu"}, 2, `unexpected argument "cpu"`},
		{"bad kernel", []string{"--kernels", "gemm,fft"}, 2, `--kernels: unknown kernel "fft"`},
		{"bad flag", []string{"--fast"}, 2, "unknown flag: --fast"},
		{"no directory", []string{"--kernels", "launch", "-o", filepath.Join(t.TempDir(), "missing", "cpu.csv")}, 1, "no such directory"},
		{"describe no directory", []string{"--kernels", "copy", "--describe", filepath.Join(t.TempDir(), "missing", "host.toml")}, 1, "host.toml: no such directory"},
		{"describe without bandwidth", []string{"--kernels", "launch", "--describe", filepath.Join(t.TempDir(), "host.toml")}, 2, "--describe takes the memory bandwidth from the read, write, copy or triad rows"},
		{"threads", []string{"--threads", "-1"}, 2, "--threads -1: want at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, _, err := measureCmdForTest(t, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) || exitCode(err) != tt.code {
				t.Errorf("calibrate measure %q = %v (exit %d), want exit %d with %q", tt.args, err, exitCode(err), tt.code, tt.want)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
		})
	}
}

func TestCalibrateMeasure_help(t *testing.T) {
	_, stderr, err := measureCmdForTest(t, "--help")
	if !errors.Is(err, pflag.ErrHelp) || !strings.Contains(stderr, "--device") || !strings.Contains(stderr, "kernels/run.sh") {
		t.Errorf("--help = %v, stderr:\n%s", err, stderr)
	}
}

func TestCalibrateMeasure_stdout(t *testing.T) {
	stdout, stderr, err := measureCmdForTest(t, "--device", "cpu", "--quick", "--kernels", "launch,copy")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	ms, warns, err := calibrate.ReadCSV(strings.NewReader(stdout), "stdout")
	if err != nil || len(warns) > 0 {
		t.Fatalf("ReadCSV(stdout) = %v, %v\n%s", warns, err, stdout)
	}
	// copy over the Quick sizes, then launch: the documented order.
	var kernels []string
	for _, m := range ms {
		kernels = append(kernels, m.Kernel)
	}
	if got := strings.Join(kernels, ","); got != "copy,copy,copy,launch" {
		t.Errorf("kernels = %s, want copy,copy,copy,launch", got)
	}
}

func TestCalibrateMeasure_output(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cpu.csv")
	if err := os.WriteFile(path, []byte("old contents\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := measureCmdForTest(t, "--kernels", "launch", "-o", path)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout = %q, want nothing with -o", stdout)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ms, _, err := calibrate.ReadCSV(f, path)
	if err != nil || len(ms) != 1 || ms[0].Kernel != "launch" || ms[0].Source != "perfsim-cpu" {
		t.Errorf("ReadCSV(%s) = %+v, %v", path, ms, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%s holds %d entries, want only cpu.csv (no temporary file left)", dir, len(entries))
	}
}

func TestCalibrateMeasure_describe(t *testing.T) {
	// The described machine loads as a hardware file and names the device
	// of the measured rows, so that calibrate fit takes them.
	if _, err := os.Stat("/proc/cpuinfo"); err != nil {
		t.Skip("no /proc/cpuinfo: --describe describes Linux machines")
	}
	dir := t.TempDir()
	csv, host := filepath.Join(dir, "cpu.csv"), filepath.Join(dir, "host.toml")
	if _, stderr, err := measureCmdForTest(t, "--quick", "--kernels", "launch,copy", "--threads", "1", "-o", csv, "--describe", host); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	dev, err := hardware.LoadFile(host)
	if err != nil {
		t.Fatal(err)
	}
	ms, _, err := calibrate.ReadFile(csv, calibrate.FormatAuto, dev.Name)
	if err != nil || dev.Kind != "cpu" || dev.ComputeUnits != 1 {
		t.Errorf("host %q (%s, %d units) against its measurements: %v", dev.Name, dev.Kind, dev.ComputeUnits, err)
	}
	if len(ms) != 4 {
		t.Errorf("%d rows, want 4", len(ms))
	}
}

func TestMeasureProgressWriter(t *testing.T) {
	var b bytes.Buffer
	w := &measureProgressWriter{w: &b, prefix: "perfsim: "}
	w.Write([]byte("a\nb\n"))
	w.Write([]byte("c\n"))
	if got, want := b.String(), "perfsim: a\nperfsim: b\nperfsim: c\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
