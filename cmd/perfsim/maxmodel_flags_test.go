package main

import (
	"strings"
	"testing"
)

// TestMaxModel_flagErrors: every flag problem at once, each naming a
// flag maxmodel has. --devices 100000000 was blamed on --dp (training)
// or --pp (inference), flags maxmodel does not take, with "cp 0"; a bad
// --mode hid a bad --family and --batch.
func TestMaxModel_flagErrors(t *testing.T) {
	for _, tt := range []struct {
		args    []string
		want    []string
		notWant []string
	}{
		{[]string{"--devices", "100000000"}, []string{"--devices"}, []string{"--dp", "--pp", "cp 0"}},
		{[]string{"--mode", "inference", "--devices", "100000000"}, []string{"--devices"}, []string{"--dp", "--pp"}},
		{[]string{"--mode", "bar", "--family", "foo", "--batch", "0", "--format", "xml"}, []string{"--mode", "--family", "--batch", "--format"}, nil},
		{[]string{"--dtype", "int8", "--recompute", "some", "--optimizer", "lion", "--devices", "0"}, []string{"--dtype", "--recompute", "--optimizer", "--devices"}, nil},
	} {
		_, stderr, code := perfsim(t, append([]string{"maxmodel", "--hw", "h100"}, tt.args...)...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", tt.args, code, stderr)
		}
		for _, w := range tt.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr lacks %s: %s", tt.args, w, stderr)
			}
		}
		for _, w := range tt.notWant {
			if strings.Contains(stderr, w) {
				t.Errorf("%v: stderr names %s: %s", tt.args, w, stderr)
			}
		}
	}
}
