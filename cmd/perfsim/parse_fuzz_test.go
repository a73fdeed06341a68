package main

import (
	"strings"
	"testing"
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
