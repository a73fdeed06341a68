package hardware

// Fast paths of the loader: the fitted lists parsed without the TOML
// decoder (stashed before it runs), and the key lines probed only when an
// error needs them.

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/perfsim/perfsim/model"
)

// parseFloats reads a string of space-separated numbers.
func parseFloats(s string) ([]float64, error) {
	xs := make([]float64, 0, strings.Count(s, " ")+1)
	for f := range strings.FieldsSeq(s) {
		x, ok := parseShortDecimal(f)
		if !ok {
			var err error
			x, err = strconv.ParseFloat(f, 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("number %d of the list, %q, is not a finite number", len(xs)+1, f)
			}
		}
		xs = append(xs, x)
	}
	return xs[:len(xs):len(xs)], nil
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseShortDecimal reads a plain decimal, an optional minus, digits and
// at most one point, of at most 15 digits (the fitted tables' numbers,
// -0.0962), reporting false for anything else. Such a number is m/10^k
// with m < 2^53 and 10^k exact, so the one division is correctly rounded
// and the result is strconv.ParseFloat's (which takes the same path for
// it, after a slower scan); TestParseShortDecimal checks them against
// each other.
func parseShortDecimal(s string) (float64, bool) {
	neg := false
	if len(s) > 0 && s[0] == '-' {
		neg, s = true, s[1:]
	}
	if len(s) == 0 || len(s) > 16 {
		return 0, false
	}
	var m uint64
	digits, frac, point := 0, 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			m = m*10 + uint64(c-'0')
			digits++
			if point {
				frac++
			}
		case c == '.' && !point:
			point = true
		default:
			return 0, false
		}
	}
	if digits > 15 || s[0] == '.' || s[len(s)-1] == '.' {
		return 0, false // too long for the exact path, or "1." or ".5": left to strconv
	}
	x := float64(m) / pow10[frac]
	if neg {
		x = -x
	}
	return x, true
}

// minStash is the shortest number list stashLists takes out of the text.
const minStash = 256

// stashLists takes the long lists of numbers written as strings (the
// fitted residual tables: tens of kilobytes each, which the TOML lexer
// reads a character at a time) out of data before it is parsed: each line
// that is exactly `key = "<list>"`, with key one of the []float64 keys of
// a residual table and the list at least minStash characters of digits,
// signs, points, exponents and spaces (so the string has no escapes and
// its value is its text), becomes `key = ""`; the lists are returned by
// line, and decodeStruct reads a []float64 key that is "" at a stashed
// line from there. Lines keep their numbers; data is unchanged (and the
// map nil) when there is nothing to stash.
func stashLists(data []byte) ([]byte, map[int]string) {
	var lists map[int]string
	var out []byte
	done := 0 // data[:done] is in out
	line := 1
	for pos := 0; pos < len(data); line++ {
		end := bytes.IndexByte(data[pos:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += pos
		}
		if lo, hi, ok := stashable(data[pos:end]); ok {
			if lists == nil {
				lists = map[int]string{}
				out = make([]byte, 0, len(data))
			}
			lists[line] = string(data[pos+lo : pos+hi])
			out = append(out, data[done:pos+lo]...)
			done = pos + hi
		}
		pos = end + 1
	}
	if lists == nil {
		return data, nil
	}
	return append(out, data[done:]...), lists
}

// stashable returns the bounds of the list in a line that stashLists
// takes out.
func stashable(l []byte) (lo, hi int, ok bool) {
	if len(l) < minStash {
		return 0, 0, false
	}
	eq := bytes.IndexByte(l, '=')
	if eq < 0 || !residualListKeys[string(bytes.TrimSpace(l[:eq]))] {
		return 0, 0, false
	}
	v := bytes.TrimRight(l[eq+1:], " \t\r")
	lo = eq + 1
	for lo < len(l) && (l[lo] == ' ' || l[lo] == '\t') {
		lo++
	}
	if lo >= eq+1+len(v) || l[lo] != '"' || v[len(v)-1] != '"' {
		return 0, 0, false
	}
	lo, hi = lo+1, eq+len(v)
	if hi-lo < minStash {
		return 0, 0, false
	}
	for _, c := range l[lo:hi] {
		if !(c >= '0' && c <= '9' || c == ' ' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E') {
			return 0, 0, false
		}
	}
	return lo, hi, true
}

// residualListKeys are the TOML keys of model.Residual's number lists.
var residualListKeys = func() map[string]bool {
	m := map[string]bool{}
	t := reflect.TypeOf(model.Residual{})
	for i := range t.NumField() {
		if f := t.Field(i); f.Type == reflect.TypeOf([]float64(nil)) {
			m[strings.Split(f.Tag.Get("toml"), ",")[0]] = true
		}
	}
	return m
}()

// scanKeyLines maps the dotted path of each plainly written key
// ("[a.b]" then "c = ...": "a.b.c") to its line, in one pass over the
// text. lineOf asks the TOML package instead for what this misses
// (quoted keys, array tables); asking costs a copy of the file per key,
// which the fitted overlays, of thousands of numbers, cannot afford.
func scanKeyLines(data []byte) map[string]int {
	lines := map[string]int{}
	table := ""
	for i, line := range bytes.Split(data, []byte("\n")) {
		l := strings.TrimSpace(string(line))
		switch {
		case l == "" || l[0] == '#' || strings.HasPrefix(l, "[["):
			continue
		case l[0] == '[':
			end := strings.IndexByte(l, ']')
			if end < 0 {
				continue
			}
			table = strings.TrimSpace(l[1:end])
			if !plainKey.MatchString(table) {
				table = "\x00" // quoted: leave its keys to lineOf
			}
			lines[table] = i + 1
			continue
		}
		eq := strings.IndexByte(l, '=')
		if eq <= 0 {
			continue
		}
		k := strings.TrimSpace(l[:eq])
		if !plainKey.MatchString(k) || strings.HasPrefix(table, "\x00") {
			continue
		}
		if table != "" {
			k = table + "." + k
		}
		if _, dup := lines[k]; !dup {
			lines[k] = i + 1
		}
	}
	return lines
}

// plainKey matches a bare (dotted) TOML key.
var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]+(\s*\.\s*[A-Za-z0-9_-]+)*$`)
