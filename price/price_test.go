package price

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
)

func TestParseRate(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Rate
		err  string
	}{
		{"2.5/h", Rate{2.5, "USD", PerHour}, ""},
		{"2.5 /h", Rate{2.5, "USD", PerHour}, ""},
		{"2.1 EUR/h", Rate{2.1, "EUR", PerHour}, ""},
		{"$3/hour", Rate{3, "USD", PerHour}, ""},
		{"€0.25/kWh", Rate{0.25, "EUR", PerKWh}, ""},
		{"0.12 USD/kWh", Rate{0.12, "USD", PerKWh}, ""},
		{"1e-1/kwh", Rate{0.1, "USD", PerKWh}, ""},
		{"2.5", Rate{}, "no currency or unit"},
		{"2.5 USD", Rate{}, "no currency or unit"},
		{"-2.5/h", Rate{}, "must not be negative"},
		{"2.5/day", Rate{}, `unknown unit "day"`},
		{"2.5 dollars/h", Rate{}, `unknown currency "dollars"`},
		{"/h", Rate{}, "no number"},
		{"2.5/", Rate{}, `nothing after "/"`},
		{"$2 EUR/h", Rate{}, "two currencies"},
	} {
		got, err := ParseRate(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseRate(%q) = %v, %v; want an error with %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	if _, err := ParseRate("3"); !errors.Is(err, ErrNoUnit) {
		t.Errorf("a bare number: %v, want ErrNoUnit", err)
	}
}

// TestParse_hugeAmounts: a price beyond MaxAmount is an error, not a
// number whose products overflow to +Inf ("1e308/h" made serve's JSON
// fail with "json: unsupported value: +Inf").
func TestParse_hugeAmounts(t *testing.T) {
	for _, s := range []string{"1e308/h", "1e13 USD/h", "1e300/kWh"} {
		if _, err := ParseRate(s); err == nil {
			t.Errorf("ParseRate(%q): no error", s)
		}
	}
	if _, err := ParseMoney("1e308 USD"); err == nil {
		t.Errorf("ParseMoney(1e308 USD): no error")
	}
	if _, err := ParseRate("1e12/h"); err != nil {
		t.Errorf("ParseRate(1e12/h): %v", err)
	}
}

func TestParseMoney(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Money
		err  string
	}{
		{"25000 USD", Money{25000, "USD"}, ""},
		{"$25000", Money{25000, "USD"}, ""},
		{"£1e4", Money{1e4, "GBP"}, ""},
		{"25000", Money{}, "no currency or unit"},
		{"25000 USD/h", Money{}, "not a rate"},
		{"-1 USD", Money{}, "negative"},
	} {
		got, err := ParseMoney(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseMoney(%q) = %v, %v; want an error with %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseMoney(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestPricing_Cost(t *testing.T) {
	hourly := Pricing{Hourly: Rate{2.5, "USD", PerHour}}
	// 8 devices for 90 minutes at 2.5/h: 30 USD, energy included.
	if got := hourly.Cost(8, 5400, 1e9); math.Abs(got.Amount-30) > 1e-9 || got.Currency != "USD" {
		t.Errorf("hourly: %v, want 30 USD", got)
	}
	tco := Pricing{Purchase: Money{35064, "USD"}, Years: 4, Energy: Rate{0.1, "USD", PerKWh}, PUE: 1.5}
	// 35064 USD over 4 Julian years is 1 USD per hour; 1 device for 1 h
	// drawing 1 kWh at the node is 1.5 kWh at the facility, 0.15 USD.
	if got := tco.Cost(1, 3600, model.Joules(3.6e6)); math.Abs(got.Amount-1.15) > 1e-9 {
		t.Errorf("TCO: %v, want 1.15 USD", got)
	}
	if got := tco.FacilityEnergy(100); got != 150 {
		t.Errorf("facility energy %v, want 150 J", got)
	}
	for _, s := range []string{"TCO: 35064 USD per device over 4 years + 0.1 USD/kWh × PUE 1.5", "given on the command line"} {
		if !strings.Contains(tco.Inputs(), s) {
			t.Errorf("Inputs() = %q, want it to contain %q", tco.Inputs(), s)
		}
	}
}

func TestPricing_Check(t *testing.T) {
	for _, tt := range []struct {
		name string
		p    Pricing
		errs []string
	}{
		{"hourly", Pricing{Hourly: Rate{2.5, "USD", PerHour}}, nil},
		{"pue below 1", Pricing{Hourly: Rate{2.5, "USD", PerHour}, PUE: 0.8}, []string{"--pue: must be at least 1"}},
		{"negative", Pricing{Hourly: Rate{-1, "USD", PerHour}}, []string{"--price: must not be negative"}},
		{"tco without years or energy", Pricing{Purchase: Money{1, "USD"}}, []string{"--years:", "--energy-price: a TCO needs"}},
		{"tco currencies", Pricing{Purchase: Money{1, "USD"}, Years: 3, Energy: Rate{0.1, "EUR", PerKWh}}, []string{"--energy-price: is in EUR, the purchase in USD"}},
		{"both", Pricing{Hourly: Rate{2, "USD", PerHour}, Purchase: Money{1, "USD"}, Years: 3, Energy: Rate{0.1, "USD", PerKWh}}, []string{"--price: give either"}},
		// An amortisation over 1e-300 years made the cost +Inf (and the
		// JSON output fail): a period under a day is refused.
		{"years tiny", Pricing{Purchase: Money{25000, "USD"}, Years: 1e-300, Energy: Rate{0.1, "USD", PerKWh}}, []string{"--years:"}},
		{"years huge", Pricing{Purchase: Money{25000, "USD"}, Years: 1e6, Energy: Rate{0.1, "USD", PerKWh}}, []string{"--years:"}},
		// A negative or NaN period alone was no TCO (Years > 0 false) and
		// was dropped without a word; a PUE of 1e308 made the facility
		// energy +Inf (printed, and the JSON output failed).
		{"years negative alone", Pricing{Years: -1}, []string{"--years:", "--purchase: a TCO needs"}},
		{"years NaN alone", Pricing{Years: math.NaN()}, []string{"--years:", "--purchase: a TCO needs"}},
		{"years NaN beside a price", Pricing{Hourly: Rate{2, "USD", PerHour}, Years: math.NaN()}, []string{"--years:"}},
		{"pue huge", Pricing{Hourly: Rate{2.5, "USD", PerHour}, PUE: 1e308}, []string{"--pue: must be at most"}},
		{"pue NaN", Pricing{Hourly: Rate{2.5, "USD", PerHour}, PUE: math.NaN()}, []string{"--pue:"}},
	} {
		err := tt.p.Check()
		if len(tt.errs) == 0 {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		for _, want := range tt.errs {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v, want %q", tt.name, err, want)
			}
		}
	}
}

func TestLoadTable(t *testing.T) {
	tab, err := LoadTableFile("testdata/prices.toml")
	if err != nil {
		t.Fatal(err)
	}
	e, ok := tab.Find([]string{"H100 SXM", "h100-sxm"}, "")
	if !ok || e.Hourly.Amount != 2.94 || e.Date != "2026-01" || e.Line != 4 {
		t.Errorf("first h100-sxm price: %+v, %v", e, ok)
	}
	own, ok := tab.Find([]string{"h100-sxm"}, "own")
	if !ok || !own.TCO() || own.PUE != 1.3 || own.Years != 4 {
		t.Errorf("own: %+v, %v", own, ok)
	}
	if _, ok := tab.Find([]string{"b200"}, ""); ok {
		t.Error("found a b200 price in a table without one")
	}
}

func TestLoadTable_bad(t *testing.T) {
	_, err := LoadTableFile("testdata/bad.toml")
	want := []string{
		`price: testdata/bad.toml:14: price[2].colour: unknown key`,
		`price: testdata/bad.toml:1: price[1].source: missing`,
		`price: testdata/bad.toml:3: price[1].hourly: "2.5" is not a price per hour or per kWh (e.g. "2.5/h", "2.1 EUR/h", "0.12 USD/kWh"): no currency or unit`,
		`price: testdata/bad.toml:11: price[2].pue: must be at least 1`,
		`price: testdata/bad.toml:18: price[3].hourly: "-1/h" is not a price per hour or per kWh (e.g. "2.5/h", "2.1 EUR/h", "0.12 USD/kWh"): a price must not be negative`,
	}
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("missing %q in:\n%v", w, err)
		}
	}
}

func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"2.5/h", "$3/hour", "0.1 EUR/kWh", "2.5", "-1/h", "1e309/h", "€/h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRate(s)
		if err != nil {
			return
		}
		if r.Amount < 0 || math.IsNaN(r.Amount) || math.IsInf(r.Amount, 0) || r.Currency == "" || r.Per == 0 {
			t.Fatalf("ParseRate(%q) = %+v", s, r)
		}
		back, err := ParseRate(r.String())
		if err != nil || back.Per != r.Per || back.Currency != r.Currency {
			t.Fatalf("%q → %v → %+v, %v", s, r, back, err)
		}
	})
}

func FuzzLoadTable(f *testing.F) {
	f.Add("[[price]]\nhardware = \"h100\"\nhourly = \"2/h\"\nsource = \"x\"\ndate = \"2026\"\n")
	f.Add("[[price]]\nhardware = 1\n")
	f.Fuzz(func(t *testing.T, s string) {
		tab, err := LoadTable(strings.NewReader(s), "fuzz.toml")
		if err != nil {
			return
		}
		for _, e := range tab.Entries {
			if e.Check() != nil || e.Source == "" || e.Date == "" {
				t.Fatalf("accepted a bad entry %+v", e)
			}
		}
	})
}

// TestLoadTable_reviewed: a bare number where a price with its unit is
// wanted names its file:line:key (it was "not valid TOML: ... incompatible
// types: TOML value has type float64; destination has type string"); a
// date that is no date is refused (2025-13-45 was taken); two entries of
// the same hardware and name are ambiguous (Find took the first
// silently).
func TestLoadTable_reviewed(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		want       []string
	}{
		{"bare number", "[[price]]\nhardware = \"h100\"\nhourly = 2.5\nsource = \"s\"\ndate = \"2026-01\"\n\n[[price]]\nhardware = \"a100\"\npurchase = 25000\nyears = \"4\"\nenergy = \"0.1/kWh\"\nsource = \"s\"\ndate = \"2026-01\"\n",
			[]string{"t.toml:3: price[1].hourly: want a string with a unit", "t.toml:9: price[2].purchase: want a string", "t.toml:10: price[2].years: want a number"}},
		// An energy price beside an hourly one had been dropped without a
		// word, and a bad price hid the entry's other problems (pue 0.5).
		{"energy beside hourly", "[[price]]\nhardware = \"h100\"\nhourly = \"2.5/h\"\nenergy = \"0.1/kWh\"\nsource = \"s\"\ndate = \"2026-01\"\n",
			[]string{"t.toml:4: price[1].energy: prices a TCO's energy only"}},
		{"every problem", "[[price]]\nhardware = \"h100\"\nhourly = \"-2/h\"\npue = 0.5\nsource = \"s\"\ndate = \"2026-01\"\n",
			[]string{"t.toml:3: price[1].hourly:", "t.toml:4: price[1].pue: must be at least 1"}},
		// Two entries' unknown keys had both been put at the first's line.
		{"unknown keys", "[[price]]\nhardware = \"h100\"\nhourly = \"2.5/h\"\nsource = \"s\"\ndate = \"2026-01\"\ncolour = 1\n\n[[price]]\nhardware = \"a100\"\nhourly = \"2/h\"\nsource = \"s\"\ndate = \"2026-01\"\ncolour = 2\n",
			[]string{"t.toml:6: price[1].colour: unknown key", "t.toml:13: price[2].colour: unknown key"}},
		{"bad date", "[[price]]\nhardware = \"h100\"\nhourly = \"2.5/h\"\nsource = \"s\"\ndate = \"2025-13-45\"\n",
			[]string{"t.toml:5: price[1].date:"}},
		{"duplicate", "[[price]]\nhardware = \"h100\"\nname = \"x\"\nhourly = \"2.5/h\"\nsource = \"s\"\ndate = \"2026-01\"\n\n[[price]]\nhardware = \"H100\"\nname = \"x\"\nhourly = \"3/h\"\nsource = \"t\"\ndate = \"2026-01-15\"\n",
			[]string{"t.toml:10: price[2].name:", "price[1]"}},
	} {
		_, err := LoadTable(strings.NewReader(tt.text), "t.toml")
		for _, w := range tt.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %v, want %q", tt.name, err, w)
			}
		}
	}
	for _, d := range []string{"2026", "2026-01", "2026-01-15"} {
		text := "[[price]]\nhardware = \"h100\"\nhourly = \"2.5/h\"\nsource = \"s\"\ndate = \"" + d + "\"\n"
		if _, err := LoadTable(strings.NewReader(text), "t.toml"); err != nil {
			t.Errorf("date %s: %v", d, err)
		}
	}
}

// TestFormatAmount: money and rates print in one format, the one the
// reports' figures use (four significant digits, no exponent, no padded
// zeros), except that an amount of a thousand or more keeps every whole
// unit, so a purchase is printed as it was given. A TCO's inputs had read
// "25000.00 USD ... + 0.1 USD/kWh".
func TestFormatAmount(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0"},
		{25000, "25000"},
		{35064, "35064"},
		{1234.567, "1235"},
		{250, "250"},
		{99.999, "100"},
		{2.94, "2.94"},
		{2.5, "2.5"},
		{0.1, "0.1"},
		{0.0001317426, "0.0001317"},
		{1e-7, "0.0000001"},
		{1e12, "1000000000000"},
	} {
		if got := formatAmount(tc.v); got != tc.want {
			t.Errorf("formatAmount(%g) = %q, want %q", tc.v, got, tc.want)
		}
	}
	tco := Pricing{Purchase: Money{25000, "USD"}, Years: 4, Energy: Rate{0.1, "USD", PerKWh}, PUE: 1.3}
	if got, want := tco.Inputs(), "TCO: 25000 USD per device over 4 years + 0.1 USD/kWh × PUE 1.3"; !strings.HasPrefix(got, want) {
		t.Errorf("Inputs() = %q, want it to begin %q", got, want)
	}
}

// TestParse_zeroAndTiny: "-0" is a price of 0, printed "0" (it had
// printed "-0 USD/h" and a run costing "-0 USD"); a positive amount
// below MinAmount is an error (1e-300/h had printed a price of 300
// digits).
func TestParse_zeroAndTiny(t *testing.T) {
	for _, s := range []string{"-0/h", "-0.0 EUR/kWh", "0/h"} {
		r, err := ParseRate(s)
		if err != nil || r.Amount != 0 || math.Signbit(r.Amount) || strings.Contains(r.String(), "-") {
			t.Errorf("ParseRate(%q) = %v (%q), %v; want 0", s, r.Amount, r.String(), err)
		}
	}
	if m, err := ParseMoney("-0 USD"); err != nil || math.Signbit(m.Amount) {
		t.Errorf(`ParseMoney("-0 USD") = %v, %v; want 0`, m.Amount, err)
	}
	for _, s := range []string{"1e-300/h", "1e-7 USD/kWh"} {
		if _, err := ParseRate(s); err == nil || !strings.Contains(err.Error(), "smallest") {
			t.Errorf("ParseRate(%q): %v, want an error naming the smallest amount", s, err)
		}
	}
	if _, err := ParseMoney("1e-9 USD"); err == nil {
		t.Errorf("ParseMoney(1e-9 USD): no error")
	}
	if r, err := ParseRate("0.000001/kWh"); err != nil || r.Amount != MinAmount {
		t.Errorf("ParseRate(0.000001/kWh) = %v, %v; want MinAmount", r, err)
	}
}
