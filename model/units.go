package model

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// Quantities in base SI units. Each is a float64 with its own type, so that
// mixing a time with a byte count does not compile. Cross-unit arithmetic
// goes through the named methods below (At, IntensityOf, ...), which keeps
// dimensional reasoning in this file.
type (
	// Seconds is a duration in seconds.
	Seconds float64
	// Bytes is an amount of memory or traffic in bytes.
	Bytes float64
	// FLOPs is an amount of arithmetic in floating-point (or integer)
	// operations; one multiply-accumulate is two.
	FLOPs float64
	// FLOPRate is a compute rate in operations per second.
	FLOPRate float64
	// ByteRate is a bandwidth in bytes per second.
	ByteRate float64
	// Hertz is a frequency in cycles per second.
	Hertz float64
	// Watts is a power.
	Watts float64
	// Intensity is arithmetic intensity in FLOPs per byte.
	Intensity float64
)

// At returns the time to do f at rate r.
func (f FLOPs) At(r FLOPRate) Seconds { return Seconds(float64(f) / float64(r)) }

// At returns the time to move b at rate r.
func (b Bytes) At(r ByteRate) Seconds { return Seconds(float64(b) / float64(r)) }

// IntensityOf returns f/b, the arithmetic intensity of an op doing f while
// moving b. It is +Inf when b is zero and f is not, and zero when both are.
func IntensityOf(f FLOPs, b Bytes) Intensity {
	if b == 0 {
		if f == 0 {
			return 0
		}
		return Intensity(math.Inf(1))
	}
	return Intensity(float64(f) / float64(b))
}

// Ridge returns the ridge point of a roofline: the intensity at which a
// device with compute peak p and bandwidth w turns from memory- to
// compute-bound.
func Ridge(p FLOPRate, w ByteRate) Intensity { return Intensity(float64(p) / float64(w)) }

// Attainable returns the roofline bound min(p, i·w).
func Attainable(p FLOPRate, w ByteRate, i Intensity) FLOPRate {
	return FLOPRate(math.Min(float64(p), float64(i)*float64(w)))
}

// Rate returns the rate of doing f in t.
func (f FLOPs) Rate(t Seconds) FLOPRate { return FLOPRate(float64(f) / float64(t)) }

// Rate returns the rate of moving b in t.
func (b Bytes) Rate(t Seconds) ByteRate { return ByteRate(float64(b) / float64(t)) }

// Over returns the amount moved in t at rate r.
func (r ByteRate) Over(t Seconds) Bytes { return Bytes(float64(r) * float64(t)) }

// Over returns the work done in t at rate r.
func (r FLOPRate) Over(t Seconds) FLOPs { return FLOPs(float64(r) * float64(t)) }

// A unit describes how one quantity is written: its symbols (the first is
// the one printed), the SI prefixes it takes, and an example for messages.
type unit struct {
	what    string   // "a time", "a byte rate", ...
	symbols []string // accepted unit symbols, first is canonical
	binary  bool     // accepts Ki, Mi, Gi, ... prefixes
	small   bool     // accepts m, u, µ, n, p prefixes
	example string
}

var (
	secondsUnit  = unit{"a time", []string{"s", "sec"}, false, true, `"4.5 us"`}
	bytesUnit    = unit{"a size in bytes", []string{"B", "bytes", "byte"}, true, false, `"80 GB" or "80 GiB"`}
	flopsUnit    = unit{"an amount of work", []string{"FLOP", "FLOPs", "OP", "OPs"}, false, false, `"3.5 TFLOP"`}
	flopRateUnit = unit{"a compute rate", []string{"FLOP/s", "FLOPS", "OP/s", "OPS", "FLOPs/s"}, false, false, `"989.5 TFLOP/s" or "1979 TOPS"`}
	byteRateUnit = unit{"a bandwidth", []string{"B/s", "Bps"}, true, false, `"3.35 TB/s"`}
	hertzUnit    = unit{"a frequency", []string{"Hz"}, false, false, `"1.98 GHz"`}
	wattsUnit    = unit{"a power", []string{"W"}, false, true, `"700 W"`}
)

// prefixes maps SI and binary prefixes to their multipliers. Rates are
// always decimal in datasheets, but a user writing "GiB/s" means 2^30.
var prefixes = map[string]float64{
	"":  1,
	"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
	"m": 1e-3, "u": 1e-6, "µ": 1e-6, "μ": 1e-6, "n": 1e-9, "p": 1e-12,
	"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50,
}

// ErrNoUnit is returned when a bare number is given where a unit is needed.
var ErrNoUnit = errors.New("missing unit")

// A UnitError reports text that is not a valid quantity.
type UnitError struct {
	Text string
	What string // what was expected: "a bandwidth"
	Err  error
	hint string
}

func (e *UnitError) Error() string {
	msg := fmt.Sprintf("%q is not %s", e.Text, e.What)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.hint != "" {
		msg += " (" + e.hint + ")"
	}
	return msg
}

func (e *UnitError) Unwrap() error { return e.Err }

// parse reads text written as a number, optional spaces, and a unit with an
// optional prefix, as described by u.
func (u unit) parse(text string) (float64, error) {
	s := strings.TrimSpace(text)
	fail := func(err error, hint string) (float64, error) {
		return 0, &UnitError{Text: text, What: u.what, Err: err, hint: hint}
	}
	// Split the numeric prefix from the unit suffix.
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= '0' && c <= '9' || c == '.' || c == '+' || c == '-' {
			i++
			continue
		}
		if (c == 'e' || c == 'E') && i > 0 && i+1 < len(s) {
			n := s[i+1]
			if n >= '0' && n <= '9' || n == '+' || n == '-' {
				i += 2
				continue
			}
		}
		break
	}
	num, sym := s[:i], strings.TrimLeftFunc(s[i:], unicode.IsSpace)
	if num == "" {
		return fail(errors.New("no number"), "expected "+u.example)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return fail(errors.New("bad number"), "expected "+u.example)
	}
	if sym == "" {
		return fail(ErrNoUnit, "expected "+u.example)
	}
	for _, base := range u.symbols {
		if !strings.HasSuffix(sym, base) {
			continue
		}
		p := strings.TrimSuffix(sym, base)
		mul, ok := prefixes[p]
		if !ok {
			continue
		}
		if (strings.HasSuffix(p, "i") && !u.binary) || (mul < 1 && !u.small) {
			continue
		}
		v *= mul
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fail(errors.New("not finite"), "")
		}
		return v, nil
	}
	hint := "expected " + u.example
	if other := unitKind(sym); other != "" && other != u.what {
		hint = fmt.Sprintf("%q is %s unit; expected %s", sym, other, u.example)
	}
	return fail(fmt.Errorf("unknown unit %q", sym), hint)
}

// unitKind names what sym would measure, for messages such as "a FLOP rate
// given for a bandwidth".
func unitKind(sym string) string {
	for _, u := range []unit{byteRateUnit, flopRateUnit, secondsUnit, bytesUnit, flopsUnit, hertzUnit, wattsUnit} {
		for _, base := range u.symbols {
			if p, ok := strings.CutSuffix(sym, base); ok {
				if _, ok := prefixes[p]; ok {
					return u.what
				}
			}
		}
	}
	return ""
}

// format prints v scaled by an SI prefix with four significant digits, as
// in "989.5 TFLOP/s" or "1.23 ms".
func (u unit) format(v float64) string {
	return formatSI(v, u.symbols[0], u.small)
}

func formatSI(v float64, sym string, small bool) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64) + " " + sym
	}
	type pf struct {
		p string
		m float64
	}
	list := []pf{{"E", 1e18}, {"P", 1e15}, {"T", 1e12}, {"G", 1e9}, {"M", 1e6}, {"k", 1e3}, {"", 1}}
	if small {
		list = append(list, pf{"m", 1e-3}, pf{"u", 1e-6}, pf{"n", 1e-9}, pf{"p", 1e-12})
	}
	a := math.Abs(v)
	chosen := list[len(list)-1]
	for _, p := range list {
		// Round first so that 999.96 prints as "1 k", not "1000".
		if r, _ := strconv.ParseFloat(strconv.FormatFloat(a/p.m, 'g', 4, 64), 64); r >= 1 {
			chosen = p
			break
		}
	}
	return strconv.FormatFloat(v/chosen.m, 'g', 4, 64) + " " + chosen.p + sym
}

// marshal writes v exactly (it parses back to the same float64), scaled
// when that is exact.
func (u unit) marshal(v float64) []byte {
	s := u.format(v)
	if back, err := u.parse(s); err == nil && back == v {
		return []byte(s)
	}
	return []byte(strconv.FormatFloat(v, 'g', -1, 64) + " " + u.symbols[0])
}

// ParseSeconds parses a time such as "4.5 us" or "1.2 ms".
func ParseSeconds(s string) (Seconds, error) { v, err := secondsUnit.parse(s); return Seconds(v), err }

// ParseBytes parses a size such as "80 GB" (1e9) or "80 GiB" (2^30).
func ParseBytes(s string) (Bytes, error) { v, err := bytesUnit.parse(s); return Bytes(v), err }

// ParseFLOPs parses an amount of work such as "3.5 TFLOP".
func ParseFLOPs(s string) (FLOPs, error) { v, err := flopsUnit.parse(s); return FLOPs(v), err }

// ParseFLOPRate parses a compute rate such as "989.5 TFLOP/s" or "1979 TOPS".
func ParseFLOPRate(s string) (FLOPRate, error) {
	v, err := flopRateUnit.parse(s)
	return FLOPRate(v), err
}

// ParseByteRate parses a bandwidth such as "3.35 TB/s" or "450 GB/s".
func ParseByteRate(s string) (ByteRate, error) {
	v, err := byteRateUnit.parse(s)
	return ByteRate(v), err
}

// ParseHertz parses a frequency such as "1.98 GHz".
func ParseHertz(s string) (Hertz, error) { v, err := hertzUnit.parse(s); return Hertz(v), err }

// ParseWatts parses a power such as "700 W".
func ParseWatts(s string) (Watts, error) { v, err := wattsUnit.parse(s); return Watts(v), err }

// String prints a time with four significant digits: below 1000 s with
// an SI prefix ("1.234 ms"), above it in minutes, hours, days or years
// ("9.461 h", "140.9 days"): a prefix there read "12.17 Ms" (megaseconds),
// a case away from "12.17 ms".
func (x Seconds) String() string {
	v := float64(x)
	a := math.Abs(v)
	if !(a >= 999.95) || math.IsInf(v, 0) {
		return secondsUnit.format(v)
	}
	for _, u := range []struct {
		sym  string
		secs float64
		upTo float64 // the largest count (rounded) before the next unit
	}{{"min", 60, 59.995}, {"h", 3600, 99.995}, {"days", 86400, 999.95}} {
		if a/u.secs < u.upTo {
			return strconv.FormatFloat(v/u.secs, 'g', 4, 64) + " " + u.sym
		}
	}
	return strconv.FormatFloat(v/(365.25*86400), 'g', 4, 64) + " years"
}

func (x Bytes) String() string    { return bytesUnit.format(float64(x)) }
func (x FLOPs) String() string    { return flopsUnit.format(float64(x)) }
func (x FLOPRate) String() string { return flopRateUnit.format(float64(x)) }
func (x ByteRate) String() string { return byteRateUnit.format(float64(x)) }
func (x Hertz) String() string    { return hertzUnit.format(float64(x)) }
func (x Watts) String() string    { return wattsUnit.format(float64(x)) }

// String prints an intensity with four significant digits.
func (x Intensity) String() string {
	return strconv.FormatFloat(float64(x), 'g', 4, 64) + " FLOP/B"
}

// BinaryString prints b with a binary prefix, as in "80 GiB".
func (x Bytes) BinaryString() string {
	v := float64(x)
	for _, p := range []struct {
		p string
		m float64
	}{{"Pi", 1 << 50}, {"Ti", 1 << 40}, {"Gi", 1 << 30}, {"Mi", 1 << 20}, {"Ki", 1 << 10}} {
		if math.Abs(v) >= p.m {
			return strconv.FormatFloat(v/p.m, 'g', 4, 64) + " " + p.p + "B"
		}
	}
	return strconv.FormatFloat(v, 'g', 4, 64) + " B"
}

func (x Seconds) MarshalText() ([]byte, error)  { return secondsUnit.marshal(float64(x)), nil }
func (x Bytes) MarshalText() ([]byte, error)    { return bytesUnit.marshal(float64(x)), nil }
func (x FLOPs) MarshalText() ([]byte, error)    { return flopsUnit.marshal(float64(x)), nil }
func (x FLOPRate) MarshalText() ([]byte, error) { return flopRateUnit.marshal(float64(x)), nil }
func (x ByteRate) MarshalText() ([]byte, error) { return byteRateUnit.marshal(float64(x)), nil }
func (x Hertz) MarshalText() ([]byte, error)    { return hertzUnit.marshal(float64(x)), nil }
func (x Watts) MarshalText() ([]byte, error)    { return wattsUnit.marshal(float64(x)), nil }

func (x *Seconds) UnmarshalText(b []byte) (err error)  { *x, err = ParseSeconds(string(b)); return }
func (x *Bytes) UnmarshalText(b []byte) (err error)    { *x, err = ParseBytes(string(b)); return }
func (x *FLOPs) UnmarshalText(b []byte) (err error)    { *x, err = ParseFLOPs(string(b)); return }
func (x *FLOPRate) UnmarshalText(b []byte) (err error) { *x, err = ParseFLOPRate(string(b)); return }
func (x *ByteRate) UnmarshalText(b []byte) (err error) { *x, err = ParseByteRate(string(b)); return }
func (x *Hertz) UnmarshalText(b []byte) (err error)    { *x, err = ParseHertz(string(b)); return }
func (x *Watts) UnmarshalText(b []byte) (err error)    { *x, err = ParseWatts(string(b)); return }

// The pflag.Value interface (String, Set, Type) lets a quantity be a flag.

func (x *Seconds) Set(s string) error  { return x.UnmarshalText([]byte(s)) }
func (x *Bytes) Set(s string) error    { return x.UnmarshalText([]byte(s)) }
func (x *FLOPRate) Set(s string) error { return x.UnmarshalText([]byte(s)) }
func (x *ByteRate) Set(s string) error { return x.UnmarshalText([]byte(s)) }

func (*Seconds) Type() string  { return "time" }
func (*Bytes) Type() string    { return "bytes" }
func (*FLOPRate) Type() string { return "flop-rate" }
func (*ByteRate) Type() string { return "byte-rate" }
