package price

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/perfsim/perfsim/internal/errlist"
)

// A Table is a price table: prices per hardware, each with its source
// and date. Its TOML is a list of [[price]] entries:
//
//	[[price]]
//	hardware = "h100-sxm"          # a catalog name or alias, or a device name
//	hourly = "2.99 USD/h"          # per device-hour, energy included
//	source = "Lambda on-demand price list"
//	date = "2025-06-01"
//
//	[[price]]
//	hardware = "h100-sxm"
//	name = "own"                   # optional: to pick among a device's prices
//	purchase = "25000 USD"         # per device
//	years = 4
//	energy = "0.10 USD/kWh"
//	pue = 1.3
//	source = "..."
//	date = "2025-01-15"
//
// Every entry needs hardware, a source and a date, and either hourly or
// purchase, years and energy.
type Table struct {
	Entries []Entry
}

// An Entry is one price of one piece of hardware.
type Entry struct {
	Hardware string
	Name     string
	Pricing
	File string
	Line int
}

type rawEntry struct {
	Hardware string  `toml:"hardware"`
	Name     string  `toml:"name"`
	Hourly   string  `toml:"hourly"`
	Purchase string  `toml:"purchase"`
	Years    float64 `toml:"years"`
	Energy   string  `toml:"energy"`
	PUE      float64 `toml:"pue"`
	Source   string  `toml:"source"`
	Date     string  `toml:"date"`
}

// A TableError is a problem at a line of a price table.
type TableError struct {
	File string
	Line int
	Key  string
	Err  error
}

func (e *TableError) Error() string {
	s := "price: " + e.File
	if e.Line > 0 {
		s += fmt.Sprintf(":%d", e.Line)
	}
	if e.Key != "" {
		s += ": " + e.Key
	}
	return s + ": " + e.Err.Error()
}

func (e *TableError) Unwrap() error { return e.Err }

// maxTableSize bounds what LoadTable reads.
const maxTableSize = 1 << 20

// LoadTableFile reads the price table at path.
func LoadTableFile(path string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("price: %w", err)
	}
	defer f.Close()
	return LoadTable(f, path)
}

// LoadTable reads a price table from r; file names it in messages. It
// reports every problem at once, each a *TableError naming file:line:key.
func LoadTable(r io.Reader, file string) (*Table, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxTableSize+1))
	if err != nil {
		return nil, &TableError{File: file, Err: err}
	}
	if len(data) > maxTableSize {
		return nil, &TableError{File: file, Err: fmt.Errorf("larger than %d bytes", maxTableSize)}
	}
	var doc struct {
		Price []rawEntry `toml:"price"`
	}
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &TableError{File: file, Line: pe.Position.Line, Err: fmt.Errorf("not valid TOML: %s", strings.TrimSuffix(pe.Message, "."))}
		}
		// A value of the wrong type (a bare number for a price): every one,
		// with its line and key.
		if errs := typeErrors(data, file); len(errs) > 0 {
			return nil, errors.Join(errs...)
		}
		return nil, &TableError{File: file, Err: fmt.Errorf("not valid TOML: %w", err)}
	}
	starts := entryLines(data)
	var errs []error
	var raw struct {
		Price []map[string]any `toml:"price"`
	}
	_, _ = toml.Decode(string(data), &raw)
	seen := map[string]int{} // an unknown key's occurrences so far
	for _, k := range md.Undecoded() {
		line, key := 0, k.String()
		if len(k) > 1 {
			line = keyLine(data, starts, -1, k[len(k)-1])
		}
		if len(k) == 2 && k[0] == "price" {
			// The n-th occurrence is in the n-th entry that has the key:
			// two entries' unknown keys had both been put at the
			// first's line, as "price.colour".
			n := seen[k[1]]
			seen[k[1]]++
			for i, e := range raw.Price {
				if _, ok := e[k[1]]; ok {
					if n == 0 {
						key, line = fmt.Sprintf("price[%d].%s", i+1, k[1]), keyLine(data, starts, i, k[1])
						break
					}
					n--
				}
			}
		}
		errs = append(errs, &TableError{File: file, Line: line, Key: key, Err: errors.New("unknown key (want hardware, name, hourly, purchase, years, energy, pue, source, date)")})
	}
	if len(doc.Price) == 0 && len(errs) == 0 {
		errs = append(errs, &TableError{File: file, Err: errors.New("no [[price]] entries")})
	}
	t := &Table{}
	for i, raw := range doc.Price {
		line := 0
		if i < len(starts) {
			line = starts[i]
		}
		bad := func(key string, err error) {
			l := keyLine(data, starts, i, key)
			if l == 0 {
				l = line
			}
			errs = append(errs, &TableError{File: file, Line: l, Key: fmt.Sprintf("price[%d].%s", i+1, key), Err: err})
		}
		e := Entry{Hardware: raw.Hardware, Name: raw.Name, File: file, Line: line}
		e.Source, e.Date, e.Years, e.PUE = raw.Source, raw.Date, raw.Years, raw.PUE
		for _, req := range []struct{ key, v string }{{"hardware", raw.Hardware}, {"source", raw.Source}, {"date", raw.Date}} {
			if strings.TrimSpace(req.v) == "" {
				bad(req.key, errors.New("missing: every price needs the hardware it is for, its source and its date"))
			}
		}
		if d := strings.TrimSpace(raw.Date); d != "" && !validDate(d) {
			bad("date", fmt.Errorf("%q is not a date (want YYYY, YYYY-MM or YYYY-MM-DD)", raw.Date))
		}
		if raw.Name != "" {
			for j, o := range t.Entries {
				if strings.EqualFold(o.Name, raw.Name) && strings.EqualFold(strings.TrimSpace(o.Hardware), strings.TrimSpace(raw.Hardware)) {
					bad("name", fmt.Errorf("%q for %s is also price[%d]'s (line %d): --price-name would take the first", raw.Name, raw.Hardware, j+1, o.Line))
					break
				}
			}
		}
		ok := true
		if raw.Hourly != "" {
			r, err := ParseRate(raw.Hourly)
			if err == nil && r.Per != PerHour {
				err = fmt.Errorf("%s is not a price per hour", r)
			}
			if err != nil {
				bad("hourly", err)
				ok = false
			}
			e.Hourly = r
		}
		if raw.Purchase != "" {
			m, err := ParseMoney(raw.Purchase)
			if err != nil {
				bad("purchase", err)
				ok = false
			}
			e.Purchase = m
		}
		if raw.Energy != "" {
			r, err := ParseRate(raw.Energy)
			if err == nil && r.Per != PerKWh {
				err = fmt.Errorf("%s is not a price per kWh", r)
			}
			if err != nil {
				bad("energy", err)
				ok = false
			}
			e.Energy = r
		}
		if raw.Years < 0 || math.IsNaN(raw.Years) {
			bad("years", fmt.Errorf("must be positive, got %v", raw.Years))
			ok = false
		}
		if raw.Hourly == "" && !e.TCO() && ok {
			bad("hourly", errors.New("missing: give hourly, or purchase, years and energy"))
			ok = false
		}
		if raw.Energy != "" && !e.TCO() && raw.Hourly != "" {
			// Only a TCO prices the energy: beside an hourly price it
			// had been dropped without a word.
			bad("energy", errors.New("prices a TCO's energy only (with purchase and years); an hourly price includes the energy"))
		}
		// The entry's other checks run even where a value above was bad
		// (a pue below 1 beside a negative price had gone unsaid), less
		// the keys already reported.
		reported := map[string]bool{}
		for _, e := range errs {
			if te, ok := e.(*TableError); ok {
				reported[te.Key] = true
			}
		}
		if err := e.Check(); err != nil {
			for _, u := range errlist.Flatten(err) {
				key := flagKey(u.Error())
				if ok || !reported[fmt.Sprintf("price[%d].%s", i+1, key)] {
					bad(key, errors.New(strings.TrimPrefix(u.Error(), "--"+flagField(u.Error())+": ")))
				}
			}
		}
		t.Entries = append(t.Entries, e)
	}
	if len(errs) > 0 {
		sort.SliceStable(errs, func(a, b int) bool { return errs[a].(*TableError).Line < errs[b].(*TableError).Line })
		return nil, errors.Join(errs...)
	}
	return t, nil
}

// validDate says whether s is a date as the table writes them: YYYY,
// YYYY-MM or YYYY-MM-DD.
func validDate(s string) bool {
	for _, layout := range []string{"2006", "2006-01", "2006-01-02"} {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}

// typeErrors returns, for a table the TOML decoder refused on a type,
// every key of the wrong type with its line: the prices, names, sources
// and dates are strings (a price with its unit), years and pue numbers.
func typeErrors(data []byte, file string) []error {
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return nil
	}
	entries, ok := doc["price"].([]map[string]any)
	if !ok {
		return nil
	}
	starts := entryLines(data)
	var errs []error
	for i, e := range entries {
		for _, k := range sortedKeys(e) {
			v := e[k]
			var want string
			switch k {
			case "hourly", "purchase", "energy":
				if _, isStr := v.(string); !isStr {
					want = `a string with a unit, e.g. "2.5 USD/h", "25000 USD" or "0.10 USD/kWh"`
				}
			case "hardware", "name", "source", "date":
				if _, isStr := v.(string); !isStr {
					want = "a string"
				}
			case "years", "pue":
				switch v.(type) {
				case int64, float64:
				default:
					want = "a number"
				}
			}
			if want != "" {
				errs = append(errs, &TableError{File: file, Line: keyLine(data, starts, i, k), Key: fmt.Sprintf("price[%d].%s", i+1, k), Err: fmt.Errorf("want %s, found %v", want, v)})
			}
		}
	}
	sort.SliceStable(errs, func(a, b int) bool { return errs[a].(*TableError).Line < errs[b].(*TableError).Line })
	return errs
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// flagField returns the flag a Check message names ("--pue: ..." → "pue").
func flagField(msg string) string {
	s := strings.TrimPrefix(msg, "--")
	if i := strings.IndexByte(s, ':'); i >= 0 {
		return s[:i]
	}
	return ""
}

// flagKey maps a Check flag to the table key that sets it.
func flagKey(msg string) string {
	switch f := flagField(msg); f {
	case "price":
		return "hourly"
	case "energy-price":
		return "energy"
	case "":
		return "hourly"
	default:
		return f
	}
}

// entryLines returns the line of each [[price]] header.
func entryLines(data []byte) []int {
	var out []int
	for i, l := range bytes.Split(data, []byte("\n")) {
		if s := strings.TrimSpace(string(l)); strings.HasPrefix(s, "[[") && strings.Trim(strings.TrimSpace(strings.Trim(s, "[]")), " ") == "price" {
			out = append(out, i+1)
		}
	}
	return out
}

// keyLine returns the line where key is set in entry i (any entry when i
// is negative), or 0.
func keyLine(data []byte, starts []int, i int, key string) int {
	lines := bytes.Split(data, []byte("\n"))
	lo, hi := 0, len(lines)
	if i >= 0 && i < len(starts) {
		lo = starts[i]
		if i+1 < len(starts) {
			hi = starts[i+1] - 1
		}
	}
	for n := lo; n < hi; n++ {
		s := strings.TrimSpace(string(lines[n]))
		if k, _, ok := strings.Cut(s, "="); ok && strings.Trim(strings.TrimSpace(k), `"`) == key {
			return n + 1
		}
	}
	return 0
}

// Find returns the entry for hardware known by any of names (a device's
// name and aliases, compared without case), the one called name when
// name is not empty, else the first listed.
func (t *Table) Find(names []string, name string) (Entry, bool) {
	for _, e := range t.Entries {
		if name != "" && !strings.EqualFold(e.Name, name) {
			continue
		}
		for _, n := range names {
			if strings.EqualFold(strings.TrimSpace(e.Hardware), strings.TrimSpace(n)) {
				return e, true
			}
		}
	}
	return Entry{}, false
}
