package hardware

import (
	"encoding"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/perfsim/perfsim/model"
)

// A decoder turns a parsed TOML document into Go values one key at a
// time, so that it can report every problem in the file rather than the
// first, each at the line of its key.
type decoder struct {
	md    *toml.MetaData
	file  string
	errs  []*ParseError
	lines map[string]int // dotted key -> line
	// keyLines maps the dotted keys written plainly in the file to their
	// lines (scanKeyLines); lineOf is asked for the others.
	keyLines map[string]int
	bad      map[string]bool   // keys that already have an error
	srcs     map[string]string // dotted key of a number -> its source
	// lists holds, by line, the long number lists that parse took out of
	// the text before the TOML parser saw it (see stashLists).
	lists map[int]string
	// floats holds the lists read so far by their text: a fitted file
	// repeats its axes in every table, and fp16's tables are bf16's.
	floats map[string][]float64
}

func newDecoder(md *toml.MetaData, file string) *decoder {
	return &decoder{md: md, file: file, lines: map[string]int{}, bad: map[string]bool{}, srcs: map[string]string{}}
}

// fail records a problem with key (a dotted path) at line.
func (d *decoder) fail(line int, key string, err error) {
	d.errs = append(d.errs, &ParseError{File: d.file, Line: line, Key: key, Err: err})
	if key != "" {
		d.bad[key] = true
	}
}

// errProbe is returned by lineProbe; see lineOf.
var errProbe = errors.New("hardware: line probe")

// lineProbe finds where a key is in the file: decoding a primitive into it
// fails, and the TOML decoder positions the failure at the key's line.
type lineProbe struct{}

func (lineProbe) UnmarshalTOML(any) error { return errProbe }

// lineOf returns the line of the key whose value is p, or 0 for a table
// that is only implied by its sub-tables.
func (d *decoder) lineOf(p toml.Primitive) int {
	var pe toml.ParseError
	if err := d.md.PrimitiveDecode(p, lineProbe{}); errors.As(err, &pe) {
		return pe.Position.Line
	}
	return 0
}

// A table is one TOML table being decoded. Getters read a key and mark it
// known; close reports the keys nobody asked for and the numbers without
// a source.
type table struct {
	d       *decoder
	path    string // dotted key of the table, "" for the document
	line    int
	keys    map[string]toml.Primitive
	lines   map[string]int
	known   []string
	numbers []string          // numeric keys that were set
	source  string            // the table's source, or its parent's
	sources map[string]string // per-key overrides
}

// join returns the dotted key of k in t.
func (t *table) join(k string) string {
	if t.path == "" {
		return k
	}
	return t.path + "." + k
}

// open makes a table of keys at path, inheriting source.
func (d *decoder) open(path string, line int, keys map[string]toml.Primitive, known []string, source string) *table {
	t := &table{d: d, path: path, line: line, keys: keys, lines: map[string]int{}, known: known, source: source}
	first := 0
	for k, p := range keys {
		l, ok := d.keyLines[t.join(k)]
		if !ok {
			l = d.lineOf(p)
		}
		t.lines[k] = l
		d.lines[t.join(k)] = l
		if l > 0 && (first == 0 || l < first) {
			first = l
		}
	}
	if t.line == 0 {
		t.line = first // a table implied by [a.b] headers: its first key
	}
	if path != "" {
		d.lines[path] = t.line
	}
	if s, ok := t.str("source", false); ok {
		t.source = s
	}
	t.readSources()
	return t
}

// readSources reads the optional "sources" inline table of per-key
// source overrides.
func (t *table) readSources() {
	p, ok := t.keys["sources"]
	t.known = append(t.known, "sources")
	if !ok {
		return
	}
	var m map[string]toml.Primitive
	if err := t.d.md.PrimitiveDecode(p, &m); err != nil {
		t.d.fail(t.lines["sources"], t.join("sources"), t.typeErr("sources", "a table of strings"))
		return
	}
	t.sources = map[string]string{}
	for k, v := range m {
		var s string
		if err := t.d.md.PrimitiveDecode(v, &s); err != nil {
			t.d.fail(t.lines["sources"], t.join("sources."+k), fmt.Errorf("expected a string, found %s", t.d.tomlType(t.join("sources."+k))))
			continue
		}
		t.sources[k] = s
	}
}

// tomlType names the TOML type of the value at a dotted key.
func (d *decoder) tomlType(key string) string {
	typ := d.md.Type(strings.Split(key, ".")...)
	switch typ {
	case "":
		return "a table"
	case "Hash":
		return "a table"
	case "Array", "ArrayHash":
		return "an array"
	case "Integer":
		return "an integer"
	}
	return "a " + strings.ToLower(typ)
}

func (t *table) typeErr(k, want string) error {
	var v any
	if p, ok := t.keys[k]; ok && t.d.md.PrimitiveDecode(p, &v) == nil {
		switch v := v.(type) {
		case string:
			return fmt.Errorf("expected %s, found the string %q", want, v)
		case int64, float64, bool:
			return fmt.Errorf("expected %s, found %s %v", want, t.d.tomlType(t.join(k)), v)
		}
	}
	return fmt.Errorf("expected %s, found %s", want, t.d.tomlType(t.join(k)))
}

// take marks k known and returns its value.
func (t *table) take(k string) (toml.Primitive, bool) {
	if !contains(t.known, k) {
		t.known = append(t.known, k)
	}
	p, ok := t.keys[k]
	return p, ok
}

// missing reports a required key that is absent.
func (t *table) missing(k string) {
	t.d.fail(t.keyLine(), "", fmt.Errorf("missing required key %q", t.join(k)))
	t.d.bad[t.join(k)] = true
}

// keyLine is the line a problem with the table as a whole is reported
// at: its header, or none for the document itself.
func (t *table) keyLine() int {
	if t.path == "" {
		return 0
	}
	return t.line
}

// str reads a string.
func (t *table) str(k string, required bool) (string, bool) {
	p, ok := t.take(k)
	if !ok {
		if required {
			t.missing(k)
		}
		return "", false
	}
	var s string
	if err := t.d.md.PrimitiveDecode(p, &s); err != nil {
		t.d.fail(t.lines[k], t.join(k), t.typeErr(k, "a string"))
		return "", false
	}
	return s, true
}

// fact reads a string that states a fact of the hardware (an enum such
// as in_network_reduction), which needs a source as a number does.
func (t *table) fact(k string) (string, bool) {
	s, ok := t.str(k, false)
	if ok {
		t.numbers = append(t.numbers, k)
	}
	return s, ok
}

// strs reads an array of strings.
func (t *table) strs(k string) []string {
	p, ok := t.take(k)
	if !ok {
		return nil
	}
	var s []string
	if err := t.d.md.PrimitiveDecode(p, &s); err != nil {
		t.d.fail(t.lines[k], t.join(k), t.typeErr(k, "an array of strings"))
		return nil
	}
	return s
}

// boolean reads a boolean.
func (t *table) boolean(k string) (bool, bool) {
	p, ok := t.take(k)
	if !ok {
		return false, false
	}
	var b bool
	if err := t.d.md.PrimitiveDecode(p, &b); err != nil {
		t.d.fail(t.lines[k], t.join(k), t.typeErr(k, "a boolean"))
		return false, false
	}
	return b, true
}

// plain takes key k and decodes its value as a plain TOML value; a
// missing key is reported when required, a value that does not decode at
// its line.
func (t *table) plain(k string, required bool) (any, bool) {
	p, ok := t.take(k)
	if !ok {
		if required {
			t.missing(k)
		}
		return nil, false
	}
	var v any
	if err := t.d.md.PrimitiveDecode(p, &v); err != nil {
		t.d.fail(t.lines[k], t.join(k), err)
		return nil, false
	}
	return v, true
}

// integer reads an integer count.
func (t *table) integer(k string, required bool) (int, bool) {
	v, ok := t.plain(k, required)
	if !ok {
		return 0, false
	}
	n, isInt := v.(int64)
	if !isInt {
		t.d.fail(t.lines[k], t.join(k), t.typeErr(k, "an integer"))
		return 0, false
	}
	if n > math.MaxInt32 || n < math.MinInt32 {
		t.d.fail(t.lines[k], t.join(k), fmt.Errorf("%d is out of range (at most %d)", n, math.MaxInt32))
		return 0, false
	}
	t.numbers = append(t.numbers, k)
	return int(n), true
}

// float reads a plain number (a fraction or exponent); integers are
// accepted. NaN and Inf are returned for validation to reject.
func (t *table) float(k string, required bool) (float64, bool) {
	v, ok := t.plain(k, required)
	if !ok {
		return 0, false
	}
	t.numbers = append(t.numbers, k)
	switch v := v.(type) {
	case float64:
		return v, true
	case int64:
		return float64(v), true
	case string:
		t.d.fail(t.lines[k], t.join(k), fmt.Errorf("expected a number, found the string %q", v))
	default:
		t.d.fail(t.lines[k], t.join(k), t.typeErr(k, "a number"))
	}
	return 0, false
}

// quantity reads a value with a unit, such as "3.35 TB/s", into v.
func (t *table) quantity(k string, v encoding.TextUnmarshaler, required bool) bool {
	p, ok := t.take(k)
	if !ok {
		if required {
			t.missing(k)
		}
		return false
	}
	var raw any
	if err := t.d.md.PrimitiveDecode(p, &raw); err != nil {
		t.d.fail(t.lines[k], t.join(k), err)
		return false
	}
	t.numbers = append(t.numbers, k)
	var text string
	switch r := raw.(type) {
	case string:
		text = r
	case int64:
		// A bare number: let the unit parser say which unit it needs.
		text = strconv.FormatInt(r, 10)
	case float64:
		text = strconv.FormatFloat(r, 'g', -1, 64)
	default:
		t.d.fail(t.lines[k], t.join(k), t.typeErr(k, "a string with a unit"))
		return false
	}
	if err := v.UnmarshalText([]byte(text)); err != nil {
		t.d.fail(t.lines[k], t.join(k), err)
		return false
	}
	return true
}

// sub opens the sub-table k, or returns nil when it is absent (reporting
// it when required) or not a table.
func (t *table) sub(k string, known []string, required bool) *table {
	p, ok := t.take(k)
	if !ok {
		if required {
			t.missing(k)
		}
		return nil
	}
	var m map[string]toml.Primitive
	if err := t.d.md.PrimitiveDecode(p, &m); err != nil {
		t.d.fail(t.lines[k], t.join(k), t.typeErr(k, "a table"))
		return nil
	}
	return t.d.open(t.join(k), t.lines[k], m, append([]string(nil), known...), t.source)
}

// dtypeKeys returns the table's keys that name data types, in a fixed
// order, reporting the others (except reserved) as unknown.
func (t *table) dtypeKeys(reserved ...string) []dtypeKey {
	var out []dtypeKey
	seen := map[model.DType]string{}
	for _, k := range sortedKeys(t.keys) {
		if contains(reserved, k) || k == "source" || k == "sources" {
			continue
		}
		d, err := model.ParseDType(k)
		if d == model.MXFP4 { // a storage format: its peak is fp4's, as "mxfp4" has always been read
			d = model.FP4
		}
		switch {
		case err != nil:
			msg := fmt.Errorf("unknown data type %q (want one of %s)", t.join(k), dtypeList())
			if s := suggest(k, dtypeNames()); s != "" {
				msg = fmt.Errorf("unknown data type %q (did you mean %q?)", t.join(k), t.join(s))
			}
			t.d.fail(t.lines[k], "", msg)
		case d == model.FP8E5M2:
			t.d.fail(t.lines[k], t.join(k), errors.New("fp8e5m2 runs at the fp8 peak: give it as fp8"))
		case seen[d] != "":
			t.d.fail(t.lines[k], t.join(k), fmt.Errorf("%s is %s, already given as %q", k, d, seen[d]))
		default:
			seen[d] = k
			out = append(out, dtypeKey{k, d})
		}
		t.known = append(t.known, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].d < out[j].d })
	return out
}

type dtypeKey struct {
	key string
	d   model.DType
}

func dtypeNames() []string {
	var s []string
	for _, d := range model.DTypes {
		if d != model.FP8E5M2 {
			s = append(s, d.String())
		}
	}
	return s
}

func dtypeList() string { return strings.Join(dtypeNames(), ", ") }

// close reports unknown keys, checks the per-key sources, and records the
// source of every number read from t.
func (t *table) close() {
	for _, k := range sortedKeys(t.keys) {
		if contains(t.known, k) {
			continue
		}
		s := suggest(k, t.known)
		if s != "" {
			s = t.join(s)
		}
		t.d.fail(t.lines[k], "", unknownKey(t.join(k), s))
	}
	for _, k := range sortedKeys(t.sources) {
		if !contains(t.numbers, k) {
			msg := fmt.Errorf("names %q, which is not a number set in this table", k)
			if s := suggest(k, t.numbers); s != "" {
				msg = fmt.Errorf("names %q, which is not a number set in this table (did you mean %q?)", k, s)
			}
			t.d.fail(t.lines["sources"], t.join("sources"), msg)
		}
	}
	needSource := false
	for _, k := range t.numbers {
		src := t.sources[k]
		if src == "" {
			src = t.source
		}
		if strings.TrimSpace(src) == "" {
			needSource = true
			continue
		}
		t.d.srcs[t.join(k)] = src
	}
	if needSource {
		t.d.fail(t.keyLine(), "", fmt.Errorf("missing required key %q: every number needs a source (a datasheet, \"measured\", \"assumed\"), or give sources = { key = \"...\" }", t.join("source")))
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
