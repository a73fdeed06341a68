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
// keeps the order given; a value given more than once (also through
// overlapping ranges) is repeatedItems' error naming it.
func parseIntList(flag, s string) ([]int, error) {
	bad := func(format string, args ...any) error {
		return usagef("--%s %q: %s", flag, s, fmt.Sprintf(format, args...))
	}
	if strings.TrimSpace(s) == "" {
		return nil, bad("empty list")
	}
	var out []int
	add := func(v int) error {
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
			if strings.TrimSpace(hiText) == "" {
				// "1..x" is an end left out, not a bad step.
				return nil, bad("range end: missing (want lo..hi, lo..hi+d or lo..hi×f)")
			}
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
	if err := repeatedItems(flag, out); err != nil {
		return nil, err
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
// more than once (repeatedItems) is a usage error naming the flag, every
// one at once: neither is dropped silently.
func parseNameList(flag, s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, usagef("--%s: empty list", flag)
	}
	var out []string
	var errs []error
	for i, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			errs = append(errs, usagef("--%s %q: empty item %d (a stray comma?)", flag, s, i+1))
			continue
		}
		out = append(out, item)
	}
	errs = append(errs, repeatedItems(flag, out))
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// maxRepeatsNamed bounds the repeated values one error names, so that
// overlapping ranges (1..100000,1..100000) make a message, not a page.
const maxRepeatsNamed = 8

// repeatedItems is the one check of every comma-list flag (the integer
// and name lists, the pflag slices, plan train's --scaling) for a value
// given more than once: nil, or a usage error with a line per repeated
// value, in the order each first repeats, naming the flag, the value and
// how often it is given ("--tp: 1 is in the list twice", "--hw: h100 is
// in the list 3 times"). A list means exactly what it says, so a repeat
// is a mistake to show, never one to drop silently.
func repeatedItems[T comparable](flag string, vs []T) error {
	count := make(map[T]int, len(vs))
	var order []T
	for _, v := range vs {
		count[v]++
		if count[v] == 2 {
			order = append(order, v)
		}
	}
	var errs []error
	for i, v := range order {
		if i == maxRepeatsNamed-1 && len(order) > maxRepeatsNamed {
			errs = append(errs, usagef("--%s: and %d more values given more than once", flag, len(order)-i))
			break
		}
		times := "twice"
		if count[v] > 2 {
			times = fmt.Sprintf("%d times", count[v])
		}
		errs = append(errs, usagef("--%s: %v is in the list %s", flag, v, times))
	}
	return errors.Join(errs...)
}
