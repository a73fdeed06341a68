package main

import (
	"math"
	"strconv"
	"testing"
)

func TestParseCount(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"4096", 4096, true}, {"128k", 128000, true}, {"128Ki", 131072, true}, {"15T", 15e12, true},
		{"300e9", 300e9, true}, {"1.5M", 1.5e6, true}, {"2B", 2e9, true},
		{"12q", 0, false}, {"", 0, false}, {"k", 0, false}, {"NaN", 0, false}, {"1e400", 0, false},
	}
	for _, tt := range tests {
		got, err := parseCount(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseCount(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
	var n int
	if err := (intCount{&n}).Set("1.5k"); err != nil || n != 1500 {
		t.Errorf("intCount 1.5k = %d, %v", n, err)
	}
	if err := (intCount{&n}).Set("0.5"); err == nil {
		t.Error("intCount 0.5: no error")
	}
}

// FuzzParseCount: no panic, and a parsed count prints and parses back.
func FuzzParseCount(f *testing.F) {
	for _, s := range []string{"4096", "128k", "128Ki", "15T", "300e9", "12q", "-1", "1e308T"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parseCount(s)
		if err != nil {
			return
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("parseCount(%q) = %v", s, v)
		}
		back, err := parseCount(strconv.FormatFloat(v, 'g', -1, 64))
		if err != nil || back != v {
			t.Fatalf("round trip of %q: %v, %v", s, back, err)
		}
	})
}
