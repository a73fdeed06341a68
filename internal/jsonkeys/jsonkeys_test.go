package jsonkeys

import (
	"reflect"
	"testing"
)

func TestDuplicates(t *testing.T) {
	for _, tt := range []struct {
		src  string
		want []Duplicate
	}{
		{`{"a": 1, "b": 2}`, nil},
		{`{"a": 1, "a": 2}`, []Duplicate{{"a", 1}}},
		{"{\n\"r\": {\"f\": 1,\n\"f\": 2}, \"l\": [{\"x\": 1, \"x\": 2}]}", []Duplicate{{"r.f", 3}, {"l.x", 3}}},
		{`{"a": 1, "a"`, []Duplicate{{"a", 1}}}, // reported up to the syntax error
		{`not json`, nil},
	} {
		if got := Duplicates([]byte(tt.src)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Duplicates(%q) = %v, want %v", tt.src, got, tt.want)
		}
	}
}

// FuzzDuplicates: no input panics, and every line is within the text.
func FuzzDuplicates(f *testing.F) {
	f.Add(`{"a": 1, "a": {"b": [1, {"c": 2, "c": 3}]}}`)
	f.Add("{\n\"a\":\n1,\n\"a\":2}")
	f.Fuzz(func(t *testing.T, s string) {
		lines := 1
		for _, c := range s {
			if c == '\n' {
				lines++
			}
		}
		for _, d := range Duplicates([]byte(s)) {
			if d.Line < 1 || d.Line > lines {
				t.Fatalf("%q: %+v beyond %d lines", s, d, lines)
			}
		}
	})
}
