package main

import (
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// FuzzParseNameList checks the comma-list parser of --hw, --model and
// --dtype: it never panics, keeps no empty or repeated item and no item
// with spaces around it, and an empty list is a usage error naming the
// flag.
//
//	go test -fuzz=FuzzParseNameList ./cmd/perfsim
func FuzzParseNameList(f *testing.F) {
	for _, s := range []string{"h100,a100", " h100 , h100 ", ",,", "", "llama-3-8b,./m.toml", "bf16,fp8,\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parseNameList("hw", s)
		if err != nil {
			if exitCode(err) != 2 || !strings.Contains(err.Error(), "--hw") {
				t.Fatalf("parseNameList(%q) error %v (exit %d), want a usage error naming --hw", s, err, exitCode(err))
			}
			return
		}
		if len(v) == 0 {
			t.Fatalf("parseNameList(%q) = an empty list without an error", s)
		}
		seen := map[string]bool{}
		for _, x := range v {
			if x == "" || x != strings.TrimSpace(x) || seen[x] || strings.Contains(x, ",") {
				t.Fatalf("parseNameList(%q) = %q: an empty, padded, repeated or comma item", s, v)
			}
			seen[x] = true
		}
	})
}

// FuzzParseCounts checks the parser of plan train's --scaling (a comma
// list of GPU counts) and of --format: neither panics, counts come back
// positive and sorted, each written as the list wrote it, and a format
// is one of the three or a usage error naming --format.
//
//	go test -fuzz=FuzzParseCounts ./cmd/perfsim
func FuzzParseCounts(f *testing.F) {
	for _, s := range []string{"256,512,1024", " 8 , 16", "", "0", "-8", "+8", "1e3", "99999999999999999999", "8,,16", "json", "table", "CSV"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parseCounts("scaling", s)
		if err == nil {
			for i, n := range v {
				if n < 1 || i > 0 && n < v[i-1] {
					t.Fatalf("parseCounts(%q) = %v: a count below 1 or out of order", s, v)
				}
			}
			if strings.TrimSpace(s) != "" && len(v) != strings.Count(s, ",")+1 {
				t.Fatalf("parseCounts(%q) = %v: %d counts for %d items", s, v, len(v), strings.Count(s, ",")+1)
			}
		} else if exitCode(err) != 2 || !strings.Contains(err.Error(), "--scaling") {
			t.Fatalf("parseCounts(%q): %v (exit %d), want a usage error naming --scaling", s, err, exitCode(err))
		}
		if fm, err := parseFormat(s); err == nil {
			if fm != formatTable && fm != formatJSON && fm != formatCSV {
				t.Fatalf("parseFormat(%q) = %q", s, fm)
			}
		} else if exitCode(err) != 2 || !strings.Contains(err.Error(), "--format") {
			t.Fatalf("parseFormat(%q): %v (exit %d), want a usage error naming --format", s, err, exitCode(err))
		}
	})
}

// FuzzParseGradDType checks the parser of --grad-dtype: it never panics,
// "" is the weights' type, what it accepts is a 16- or 32-bit float type
// whose name parses back to it, and what it refuses is a usage error
// naming the flag.
//
//	go test -fuzz=FuzzParseGradDType ./cmd/perfsim
func FuzzParseGradDType(f *testing.F) {
	for _, s := range []string{"", "fp32", "bf16", "FP16", "fp8", "int8", "fp64", "tf32", " fp32", "fp32\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseGradDType(s)
		if err != nil {
			if exitCode(err) != 2 || !strings.Contains(err.Error(), "--grad-dtype") {
				t.Fatalf("parseGradDType(%q) error %v (exit %d), want a usage error naming --grad-dtype", s, err, exitCode(err))
			}
			return
		}
		if s == "" {
			if d != model.Invalid {
				t.Fatalf(`parseGradDType("") = %v, want model.Invalid (the weights' type)`, d)
			}
			return
		}
		if !d.IsFloat() || d.Size() < 2 || d.Size() > 4 {
			t.Fatalf("parseGradDType(%q) = %v: not a 16- or 32-bit float type", s, d)
		}
		if back, err := parseGradDType(d.String()); err != nil || back != d {
			t.Fatalf("parseGradDType(%q) = %v, whose name parses to %v, %v", s, d, back, err)
		}
	})
}
