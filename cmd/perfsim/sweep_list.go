package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// maxListLen bounds one expanded list, so that a typo such as 1..1e9+1
// fails fast instead of filling memory.
const maxListLen = 1 << 20

// parseIntList parses a list of positive integers: values and ranges
// separated by commas. A range is lo..hi (step 1), lo..hi+d (additive
// step d) or lo..hi×f / lo..hi*f / lo..hixf (multiplicative factor f ≥ 2);
// it includes hi when the steps land on it. "1,2,4", "1..256x2" (1, 2, 4,
// ..., 256), "1..8+1" and "512..4096x2,6144" are all lists. The result
// keeps the order given; a value given twice (also through overlapping
// ranges) is an error naming it.
func parseIntList(flag, s string) ([]int, error) {
	bad := func(format string, args ...any) error {
		return usagef("--%s %q: %s", flag, s, fmt.Sprintf(format, args...))
	}
	if strings.TrimSpace(s) == "" {
		return nil, bad("empty list")
	}
	var out []int
	seen := map[int]bool{}
	add := func(v int) error {
		if seen[v] {
			return bad("%d is in the list twice", v)
		}
		seen[v] = true
		out = append(out, v)
		if len(out) > maxListLen {
			return bad("more than %d values", maxListLen)
		}
		return nil
	}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		lo, rest, isRange := strings.Cut(item, "..")
		if !isRange {
			v, err := positiveInt(item)
			if err != nil {
				return nil, bad("%v", err)
			}
			if err := add(v); err != nil {
				return nil, err
			}
			continue
		}
		a, err := positiveInt(lo)
		if err != nil {
			return nil, bad("range start: %v", err)
		}
		hiText, step, mul := rest, 1, false
		if i := strings.IndexAny(rest, "+x*×"); i >= 0 {
			op := rest[i:]
			hiText = rest[:i]
			sym := op[:1]
			if strings.HasPrefix(op, "×") {
				sym = "×"
			}
			step, err = positiveInt(op[len(sym):])
			if err != nil {
				return nil, bad("range step: %v", err)
			}
			mul = sym != "+"
			if mul && step < 2 {
				return nil, bad("a multiplicative range needs a factor of at least 2")
			}
		}
		b, err := positiveInt(hiText)
		if err != nil {
			return nil, bad("range end: %v", err)
		}
		if b < a {
			return nil, bad("range end %d is below its start %d", b, a)
		}
		for v := a; v <= b; {
			if err := add(v); err != nil {
				return nil, err
			}
			if mul {
				if v > b/step {
					break
				}
				v *= step
			} else {
				if v > b-step {
					break
				}
				v += step
			}
		}
	}
	return out, nil
}

// positiveInt parses a positive integer written in digits (no "4k":
// lists mean exactly what they say).
func positiveInt(s string) (int, error) {
	s = strings.TrimSpace(s)
	v, err := strconv.Atoi(s)
	if errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%s is over the largest integer, %d", s, math.MaxInt)
	}
	if err != nil {
		// A count with a suffix, as simulate's flags take it: 128k, 4Ki.
		var n int
		if cerr := (intCount{&n}).Set(s); cerr != nil {
			return 0, fmt.Errorf("%q is not a whole number (a count with an optional k, M, Ki, Mi suffix)", s)
		}
		v = n
	}
	if v < 1 {
		return 0, fmt.Errorf("%d must be at least 1", v)
	}
	return v, nil
}

// parseNameList splits a comma list of names (hardware, models, dtypes),
// keeping the order given. An empty item (h100,,a100) or a name given
// twice is a usage error naming the flag: neither is dropped silently.
func parseNameList(flag, s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, usagef("--%s: empty list", flag)
	}
	var out []string
	var errs []error
	seen := map[string]bool{}
	for i, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		switch {
		case item == "":
			errs = append(errs, usagef("--%s %q: empty item %d (a stray comma?)", flag, s, i+1))
		case seen[item]:
			errs = append(errs, usagef("--%s %q: %s is in the list twice", flag, s, item))
		default:
			seen[item] = true
			out = append(out, item)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// repeated is a usage error naming the first value a list flag holds
// twice, or nil.
func repeated[T comparable](flag string, vs []T) error {
	seen := map[T]bool{}
	for _, v := range vs {
		if seen[v] {
			return usagef("--%s: %v is in the list twice", flag, v)
		}
		seen[v] = true
	}
	return nil
}
