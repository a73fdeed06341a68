package workloads

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/perfsim/perfsim/internal/errlist"
	"github.com/perfsim/perfsim/internal/fileio"
	"github.com/perfsim/perfsim/internal/suggest"
)

// maxFileSize bounds what the loaders read: model descriptions are small.
const maxFileSize = 4 << 20

// Load reads a model description in TOML from r; file names it in
// errors. Unknown keys are errors, and every problem is reported at once,
// each as a *ConfigError with the file, the line and the key.
func Load(r io.Reader, file string) (*Model, error) {
	src, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("workloads: %s: %w", file, err)
	}
	if len(src) > maxFileSize {
		return nil, &ConfigError{File: file, Err: fmt.Errorf("over %d bytes: %w", maxFileSize, ErrTooLarge)}
	}
	return parseTOML(src, file)
}

// LoadFile reads a model description from a .toml file or a HuggingFace
// config.json (by its extension).
func LoadFile(path string) (*Model, error) {
	f, err := fileio.Open(path, maxFileSize, "model file")
	if err != nil {
		return nil, fmt.Errorf("workloads: %w", err)
	}
	defer f.Close()
	if strings.EqualFold(filepath.Ext(path), ".json") {
		return LoadHF(f, path)
	}
	return Load(f, path)
}

func parseTOML(src []byte, file string) (*Model, error) {
	var c Config
	md, err := toml.NewDecoder(bytes.NewReader(src)).Decode(&c)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &ConfigError{File: file, Line: pe.Position.Line, Err: errors.New(pe.Message)}
		}
		// A value of the wrong type: the TOML package stops at the first;
		// report every one, each with its line and key, and the other
		// keys' value errors with them.
		if errs := typeErrors(src, file); len(errs) > 0 {
			return nil, locate(errors.Join(append(errs, valueErrorsWithout(src, errs)...)...), src, file)
		}
		return nil, &ConfigError{File: file, Err: err}
	}
	var raw map[string]any
	_, rawErr := toml.Decode(string(src), &raw)
	var errs []error
	seen := map[string]int{} // an unknown [[layer]] key's occurrences so far
	for _, k := range md.Undecoded() {
		key := k.String()
		line := keyLine(src, undecodedKey(k))
		if len(k) == 2 && k[0] == "layer" {
			// The n-th occurrence is in the n-th layer that has the key:
			// two layers' unknown keys had both been put at the first's
			// line, as "layer.bogus".
			if i := nthLayerWith(raw, k[1], seen[k[1]]); i >= 0 {
				key = fmt.Sprintf("layer[%d].%s", i, k[1])
				line = keyLine(src, key)
			}
			seen[k[1]]++
		}
		errs = append(errs, &ConfigError{File: file, Line: line, Key: key, Err: errors.New("unknown key")})
	}
	// The values are checked too, so that an unknown key does not hide
	// them: every problem at once, in file order. A value the file gives
	// is said as given, never "missing", and a given 0 is never replaced
	// by a default (given.go).
	if rawErr == nil {
		errs = append(errs, givenZeros(raw)...)
	}
	m, err := New(c)
	if err != nil {
		errs = append(errs, sayGiven(err, raw))
	}
	if len(errs) > 0 {
		return nil, locate(errors.Join(errs...), src, file)
	}
	return m, nil
}

// nthLayerWith returns the index of the n-th (from 0) [[layer]] of the
// decoded file raw that gives key, -1 when there is none.
func nthLayerWith(raw map[string]any, key string, n int) int {
	layers, _ := raw["layer"].([]map[string]any)
	for i, l := range layers {
		if _, ok := l[key]; ok {
			if n == 0 {
				return i
			}
			n--
		}
	}
	return -1
}

// undecodedKey turns a toml key path into keyLine's form: an unknown key
// inside some [[layer]] is searched from the first layer.
func undecodedKey(k toml.Key) string {
	if len(k) == 2 && k[0] == "layer" {
		return "layer[*]." + k[1]
	}
	return strings.Join(k, ".")
}

// locate fills the file and line of every *ConfigError in err.
func locate(err error, src []byte, file string) error {
	list := errlist.Flatten(err)
	out := make([]error, len(list))
	for i, e := range list {
		var ce *ConfigError
		if errors.As(e, &ce) {
			c := *ce
			c.File = file
			if src != nil && c.Line == 0 {
				c.Line = keyLine(src, c.Key)
			}
			out[i] = &c
		} else {
			out[i] = e
		}
	}
	// In file order, as the hardware loader reports them, each once (a
	// given 0 is found both as given and, when required, as missing).
	sort.SliceStable(out, func(i, j int) bool { return errLine(out[i]) < errLine(out[j]) })
	seen := map[string]bool{}
	uniq := out[:0]
	for _, e := range out {
		if msg := e.Error(); !seen[msg] {
			seen[msg] = true
			uniq = append(uniq, e)
		}
	}
	return errors.Join(uniq...)
}

// errLine is the line of a *ConfigError, 0 for others.
func errLine(err error) int {
	var ce *ConfigError
	if errors.As(err, &ce) {
		return ce.Line
	}
	return 0
}

var layerKey = regexp.MustCompile(`^layer\[(\d+|\*)\]\.(\w+)$`)

// keyLine returns the line of key in a TOML source: a top-level key, or
// "layer[i].key" for the i-th [[layer]] table (the table's header when the
// key is absent there). It returns 0 when the key is not written.
func keyLine(src []byte, key string) int {
	layer, name := -2, key // -2: top level
	if m := layerKey.FindStringSubmatch(key); m != nil {
		name = m[2]
		layer = -1 // any
		if m[1] != "*" {
			layer, _ = strconv.Atoi(m[1])
		}
	}
	cur, header := -2, 0 // the table the scan is in; -2 top level, ≥0 a layer, -3 another
	lines := bytes.Split(src, []byte("\n"))
	for i, ln := range lines {
		s := strings.TrimSpace(string(ln))
		switch {
		case strings.HasPrefix(s, "[[layer]]"):
			if cur < 0 {
				cur = -1
			}
			cur++
			if cur == layer {
				header = i + 1
			}
			continue
		case strings.HasPrefix(s, "["):
			cur = -3
			continue
		}
		inScope := cur == layer || (layer == -1 && cur >= 0) || (layer == -2 && cur == -2)
		if !inScope {
			continue
		}
		if rest, ok := strings.CutPrefix(s, name); ok {
			rest = strings.TrimSpace(rest)
			if strings.HasPrefix(rest, "=") {
				return i + 1
			}
		}
	}
	return header
}

//go:embed models/*.toml
var catalogFS embed.FS

// Catalog returns the models of the embedded catalog, by family and size.
func Catalog() ([]*Model, error) {
	entries, err := catalogFS.ReadDir("models")
	if err != nil {
		return nil, err
	}
	ms := make([]*Model, 0, len(entries))
	var errs []error
	for _, e := range entries {
		m, err := catalogModel(strings.TrimSuffix(e.Name(), ".toml"))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ms = append(ms, m)
	}
	sort.SliceStable(ms, func(i, j int) bool {
		fi, fj := family(ms[i].Name()), family(ms[j].Name())
		if fi != fj {
			return fi < fj
		}
		if ms[i].Params() != ms[j].Params() {
			return ms[i].Params() < ms[j].Params()
		}
		return ms[i].Name() < ms[j].Name()
	})
	return ms, errors.Join(errs...)
}

// CatalogNames returns the names in the embedded catalog, sorted.
func CatalogNames() []string {
	entries, _ := catalogFS.ReadDir("models")
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = strings.TrimSuffix(e.Name(), ".toml")
	}
	sort.Strings(names)
	return names
}

func family(name string) string {
	if i := strings.IndexByte(name, '-'); i > 0 {
		return name[:i]
	}
	return name
}

func catalogModel(name string) (*Model, error) {
	src, err := catalogFS.ReadFile("models/" + name + ".toml")
	if err != nil {
		return nil, err
	}
	return parseTOML(src, "catalog:"+name)
}

// ErrUnknownModel is wrapped by Resolve when an argument is neither a
// catalog name nor a file.
var ErrUnknownModel = errors.New("unknown model")

// Resolve returns the model an argument names: a catalog name (case
// ignored), a path to a .toml description or a HuggingFace config.json,
// or a directory holding a config.json (a HuggingFace model directory). A
// name that is none of these is an error wrapping ErrUnknownModel, with
// the closest catalog name when one is close.
func Resolve(arg string) (*Model, error) {
	name := strings.ToLower(strings.TrimSpace(arg))
	if name == "" {
		return nil, fmt.Errorf("workloads: no model given (a catalog name or a .toml or config.json file): %w", ErrUnknownModel)
	}
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		return loadDir(arg)
	}
	looksLikeFile := strings.ContainsAny(arg, `/\`) || strings.HasSuffix(name, ".toml") || strings.HasSuffix(name, ".json")
	if !looksLikeFile {
		names := CatalogNames()
		for _, n := range names {
			if n == name {
				return catalogModel(n)
			}
		}
		if _, err := os.Stat(arg); err != nil {
			if s := suggest.Closest(name, names); s != "" {
				return nil, fmt.Errorf("workloads: %w %q: did you mean %q?", ErrUnknownModel, arg, s)
			}
			return nil, fmt.Errorf("workloads: %w %q: not in the catalog (%s) and not a file", ErrUnknownModel, arg, strings.Join(names, ", "))
		}
	}
	return LoadFile(arg)
}

// loadDir loads the config.json of a HuggingFace model directory. A
// directory without one is an error wrapping ErrUnknownModel that says
// what it holds.
func loadDir(dir string) (*Model, error) {
	cfg := filepath.Join(dir, "config.json")
	if st, err := os.Stat(cfg); err == nil && !st.IsDir() {
		return LoadFile(cfg)
	} else if err == nil {
		// It had read "has no config.json (it holds config.json)".
		return nil, fmt.Errorf("workloads: %w: model directory %q: its config.json is a directory, not a file: want a HuggingFace model directory", ErrUnknownModel, dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("workloads: model directory %q: %w", dir, err)
	}
	if len(ents) == 0 {
		return nil, fmt.Errorf("workloads: %w: model directory %q is empty: want a HuggingFace model directory with a config.json, or a catalog name or a .toml or config.json file", ErrUnknownModel, dir)
	}
	var names []string
	for _, e := range ents {
		if len(names) == 5 {
			names = append(names, fmt.Sprintf("and %d more", len(ents)-5))
			break
		}
		names = append(names, e.Name())
	}
	return nil, fmt.Errorf("workloads: %w: model directory %q has no config.json (it holds %s): want a HuggingFace model directory", ErrUnknownModel, dir, strings.Join(names, ", "))
}

// typeErrors decodes src without a schema and checks each value against
// the type of its field in Config or Layer, so that every value of the
// wrong type is reported with its line and key.
// valueErrorsWithout returns the problems New finds in src's values once
// the keys of the type errors bad are left out (those keys' own
// "missing" errors dropped): a key of the wrong type then hides no other
// problem. It returns nil where src cannot be decoded without them.
func valueErrorsWithout(src []byte, bad []error) []error {
	var raw map[string]any
	if _, err := toml.Decode(string(src), &raw); err != nil {
		return nil
	}
	drop := map[string]bool{}
	for _, e := range bad {
		var ce *ConfigError
		if !errors.As(e, &ce) {
			return nil
		}
		drop[ce.Key] = true
		var i int
		var k string
		if n, _ := fmt.Sscanf(strings.Replace(ce.Key, "].", "] ", 1), "layer[%d] %s", &i, &k); n == 2 {
			if layers, ok := raw["layer"].([]map[string]any); ok && i < len(layers) {
				delete(layers[i], k)
			}
			continue
		}
		delete(raw, ce.Key)
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(raw); err != nil {
		return nil
	}
	var c Config
	md, err := toml.NewDecoder(&buf).Decode(&c)
	if err != nil {
		return nil
	}
	var out []error
	for _, k := range md.Undecoded() {
		out = append(out, &ConfigError{Line: keyLine(src, undecodedKey(k)), Key: k.String(), Err: errors.New("unknown key")})
	}
	out = append(out, givenZeros(raw)...)
	_, err = New(c)
	for _, e := range errlist.Flatten(sayGiven(err, raw)) {
		var ce *ConfigError
		if errors.As(e, &ce) && drop[ce.Key] {
			continue
		}
		out = append(out, e)
	}
	return out
}

func typeErrors(src []byte, file string) []error {
	var raw map[string]any
	if _, err := toml.Decode(string(src), &raw); err != nil {
		return nil
	}
	var errs []error
	check := func(key string, v any, t reflect.Type) {
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		want, ok := "", false
		switch t.Kind() {
		case reflect.Int:
			_, ok = v.(int64)
			want = "an integer"
		case reflect.String:
			_, ok = v.(string)
			want = "a string"
		case reflect.Bool:
			_, ok = v.(bool)
			want = "true or false"
		case reflect.Slice:
			if t.Elem().Kind() == reflect.String {
				want = "an array of strings"
				if vs, isArr := v.([]any); isArr {
					ok = true
					for _, x := range vs {
						if _, isStr := x.(string); !isStr {
							ok = false
						}
					}
				}
				break
			}
			_, ok = v.([]map[string]any)
			want = "[[" + key + "]] tables"
		default:
			return
		}
		if !ok {
			errs = append(errs, &ConfigError{File: file, Line: keyLine(src, key), Key: key,
				Err: fmt.Errorf("want %s, found %s", want, tomlType(v))})
		}
	}
	fields := func(t reflect.Type, prefix string, m map[string]any) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if v, ok := m[f.Tag.Get("toml")]; ok {
				check(prefix+f.Tag.Get("toml"), v, f.Type)
			}
		}
	}
	fields(reflect.TypeOf(Config{}), "", raw)
	if layers, ok := raw["layer"].([]map[string]any); ok {
		for i, l := range layers {
			fields(reflect.TypeOf(Layer{}), fmt.Sprintf("layer[%d].", i), l)
		}
	}
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].(*ConfigError).Line < errs[j].(*ConfigError).Line })
	return errs
}

// tomlType names the TOML type of a decoded value, for messages.
func tomlType(v any) string {
	switch v := v.(type) {
	case int64:
		return fmt.Sprintf("the integer %d", v)
	case float64:
		return fmt.Sprintf("the float %v", v)
	case string:
		return fmt.Sprintf("the string %q", v)
	case bool:
		return fmt.Sprintf("%v", v)
	case []any, []map[string]any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("a %T", v)
}
