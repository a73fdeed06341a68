package main

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// countSuffixes are the multipliers a count flag takes: SI (k = 1000, as
// "15T tokens") and binary (Ki = 1024, as a "128Ki" context of 131072).
var countSuffixes = []struct {
	s string
	m float64
}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40}, {"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"B", 1e9}, {"T", 1e12}}

// parseCount reads a count with an optional suffix: "4096", "128k"
// (128000), "128Ki" (131072), "15T", "300e9", "1.5M".
func parseCount(s string) (float64, error) {
	t := strings.TrimSpace(s)
	m := 1.0
	for _, x := range countSuffixes {
		if strings.HasSuffix(t, x.s) {
			t, m = strings.TrimSuffix(t, x.s), x.m
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || t == "" || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a count (a number with an optional k, M, G, T, Ki, Mi suffix: 128k, 15T)", s)
	}
	v *= m
	if math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	return v, nil
}

// intCount is an int flag that takes parseCount's suffixes.
type intCount struct{ p *int }

func (c intCount) String() string {
	if c.p == nil {
		return "0"
	}
	return strconv.Itoa(*c.p)
}
func (c intCount) Type() string { return "int" }
func (c intCount) Set(s string) error {
	v, err := parseCount(s)
	if err != nil {
		return err
	}
	switch {
	case v != math.Trunc(v):
		return fmt.Errorf("%q is not a whole number", s)
	case math.Abs(v) > 1<<53:
		return fmt.Errorf("%q is over the largest count perfsim reads exactly, 2^53 = %d", s, int64(1<<53))
	}
	*c.p = int(v)
	return nil
}

// floatCount is a float64 flag that takes parseCount's suffixes.
type floatCount struct{ p *float64 }

func (c floatCount) String() string {
	if c.p == nil {
		return "0"
	}
	return strconv.FormatFloat(*c.p, 'g', -1, 64)
}
func (c floatCount) Type() string { return "float" }
func (c floatCount) Set(s string) error {
	v, err := parseCount(s)
	if err != nil {
		return err
	}
	*c.p = v
	return nil
}

// nameCounts is a NAME=COUNT flag (repeatable, or comma-separated), each
// count with parseCount's suffixes; a bad item names itself, where
// pflag's StringToInt said "strconv.Atoi: parsing "abc": invalid syntax".
type nameCounts struct{ m *map[string]int }

func (c nameCounts) String() string {
	if c.m == nil || len(*c.m) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(*c.m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, (*c.m)[k]))
	}
	return strings.Join(parts, ",")
}
func (c nameCounts) Type() string { return "NAME=TOKENS" }
func (c nameCounts) Set(s string) error {
	if *c.m == nil {
		*c.m = map[string]int{}
	}
	for _, item := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(item, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return fmt.Errorf("%q: want NAME=TOKENS, e.g. llama2-70b=1024", item)
		}
		var n int
		if err := (intCount{&n}).Set(strings.TrimSpace(v)); err != nil {
			return fmt.Errorf("%s: %v", item, err)
		}
		(*c.m)[k] = n
	}
	return nil
}
