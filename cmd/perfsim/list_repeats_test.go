package main

import (
	"strings"
	"testing"
)

// TestListRepeats: every comma-list flag reports a value given more than
// once with the same message, naming the flag and the value (and how
// often it is given), every repeated value at once; the four checks
// (parseIntList's, parseNameList's, the pflag slices' and plan train's
// --scaling) had four wordings.
func TestListRepeats(t *testing.T) {
	planServe := []string{"plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "1", "--ttft-p99", "1s"}
	planTrain := []string{"plan", "train", "--model", "gpt3-2.7b", "--system", "dgx-h100", "--gpus", "8", "--global-batch", "8"}
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"sweep", "--hw", "h100", "--model", "llama3-8b", "--batch", "4,1,4"},
			[]string{"--batch: 4 is in the list twice"}},
		{[]string{"sweep", "--hw", "h100", "--model", "llama3-8b", "--batch", "1..4,2,3"},
			[]string{"--batch: 2 is in the list twice", "--batch: 3 is in the list twice"}},
		{[]string{"sweep", "--hw", "h100,a100,h100,h100", "--model", "llama3-8b"},
			[]string{"--hw: h100 is in the list 3 times"}},
		{append(append([]string{}, planServe...), "--tp", "1,2,1"),
			[]string{"--tp: 1 is in the list twice"}},
		{append(append([]string{}, planServe...), "--dtypes", "bf16,BF16"),
			[]string{"--dtypes: bf16 is in the list twice"}},
		{append(append([]string{}, planTrain...), "--scaling", "8,16,8,16"),
			[]string{"--scaling: 8 is in the list twice", "--scaling: 16 is in the list twice"}},
		{[]string{"calibrate", "measure", "--kernels", "gemm,gemm", "-o", t.TempDir() + "/m.csv"},
			[]string{"--kernels: gemm is in the list twice"}},
	} {
		_, errOut, code := perfsim(t, tt.args...)
		for _, w := range tt.want {
			if code != 2 || !strings.Contains(errOut, w) {
				t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tt.args, code, errOut, w)
			}
		}
	}
}

// TestRepeatedItems: the shared check names each repeated value once, in
// the order it first repeats, and bounds a long list of them.
func TestRepeatedItems(t *testing.T) {
	if err := repeatedItems("tp", []int{1, 2, 4}); err != nil {
		t.Errorf("no repeats: %v", err)
	}
	err := repeatedItems("tp", []int{2, 1, 1, 2, 1})
	if err == nil || exitCode(err) != 2 || err.Error() != "--tp: 1 is in the list 3 times\n--tp: 2 is in the list twice" {
		t.Errorf("repeats: %q (exit %d)", err, exitCode(err))
	}
	var many []int
	for i := range 100 {
		many = append(many, i, i)
	}
	err = repeatedItems("batch", many)
	if err == nil || strings.Count(err.Error(), "\n") != maxRepeatsNamed-1 || !strings.Contains(err.Error(), "--batch: and 93 more values given more than once") {
		t.Errorf("100 repeats: %q", err)
	}
}
