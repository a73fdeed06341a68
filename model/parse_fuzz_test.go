package model

import (
	"math"
	"testing"
)

// FuzzParseUnits checks every unit parser: none panics, what one accepts
// is finite, and its text form parses back to the same value. The bytes
// and FLOP-rate parsers have their own targets as well.
//
//	go test -fuzz=FuzzParseUnits ./model
func FuzzParseUnits(f *testing.F) {
	for _, s := range []string{
		"3.35 TB/s", "900 GB/s", "1 GiB/s", "4.5 us", "1.2 ms", "12.5ns", "1e-300 s",
		"1.98 GHz", "1410 MHz", "700 W", "1.2 kW", "1e30 GW", "3.1 PFLOP", "2 GFLOPs",
		"1e308 EFLOP", "3.6 MJ", "12 kJ", "-1 J", "1e400 J", "-1 s", " 5 Hz ", "5", "GHz", "1e+", "0x10 s", "∞ W", "NaN s",
	} {
		f.Add(s)
	}
	type parser struct {
		name  string
		parse func(string) (float64, []byte, error)
	}
	parsers := []parser{
		{"ParseSeconds", func(s string) (float64, []byte, error) {
			v, err := ParseSeconds(s)
			b, _ := v.MarshalText()
			return float64(v), b, err
		}},
		{"ParseByteRate", func(s string) (float64, []byte, error) {
			v, err := ParseByteRate(s)
			b, _ := v.MarshalText()
			return float64(v), b, err
		}},
		{"ParseHertz", func(s string) (float64, []byte, error) {
			v, err := ParseHertz(s)
			b, _ := v.MarshalText()
			return float64(v), b, err
		}},
		{"ParseWatts", func(s string) (float64, []byte, error) {
			v, err := ParseWatts(s)
			b, _ := v.MarshalText()
			return float64(v), b, err
		}},
		{"ParseFLOPs", func(s string) (float64, []byte, error) {
			v, err := ParseFLOPs(s)
			b, _ := v.MarshalText()
			return float64(v), b, err
		}},
		{"ParseFLOPRate", func(s string) (float64, []byte, error) {
			v, err := ParseFLOPRate(s)
			b, _ := v.MarshalText()
			return float64(v), b, err
		}},
		{"ParseBytes", func(s string) (float64, []byte, error) {
			v, err := ParseBytes(s)
			b, _ := v.MarshalText()
			return float64(v), b, err
		}},
		{"ParseJoules", func(s string) (float64, []byte, error) {
			v, err := ParseJoules(s)
			b, _ := v.MarshalText()
			return float64(v), b, err
		}},
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range parsers {
			v, text, err := p.parse(s)
			if err != nil {
				if err.Error() == "" {
					t.Errorf("%s(%q): an empty error message", p.name, s)
				}
				continue
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%s(%q) = %v, want a finite value or an error", p.name, s, v)
			}
			back, _, err := p.parse(string(text))
			if err != nil || back != v {
				t.Fatalf("%s round trip %q -> %q -> %v, %v", p.name, s, text, back, err)
			}
		}
	})
}

// FuzzParseDType checks that ParseDType never panics and that what it
// accepts is a valid type whose name parses back to it.
//
//	go test -fuzz=FuzzParseDType ./model
func FuzzParseDType(f *testing.F) {
	for _, s := range []string{"bf16", "FP8", " fp16 ", "float8_e4m3fn", "nvfp4", "int4", "invalid", "", "bf16\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDType(s)
		if err != nil {
			if d != Invalid {
				t.Errorf("ParseDType(%q) = %v with an error, want Invalid", s, d)
			}
			return
		}
		if !d.Valid() || d.Size() <= 0 || math.IsNaN(d.Size()) {
			t.Fatalf("ParseDType(%q) = %v: not a valid type (size %v)", s, d, d.Size())
		}
		back, err := ParseDType(d.String())
		if err != nil || back != d {
			t.Fatalf("ParseDType(%q) = %v, whose name %q parses to %v, %v", s, d, d.String(), back, err)
		}
	})
}
