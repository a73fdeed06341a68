package price

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/perfsim/perfsim/model"
)

// DefaultCurrency is the currency of a price written without one.
const DefaultCurrency = "USD"

// symbols maps currency signs to ISO 4217 codes.
var symbols = map[string]string{"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"}

// Money is an amount in a currency (an ISO 4217 code such as "USD").
type Money struct {
	Amount   float64
	Currency string
}

func (m Money) String() string { return formatAmount(m.Amount) + " " + m.Currency }

// formatAmount prints an amount of money or a rate in the format of the
// figures beside it in a report (cmd/perfsim's fnum): four significant
// digits, never an exponent, no padded zeros (25000, 2.5, 0.1, 0.0001317).
// From a thousand up it keeps every whole unit (35064, not 35060), so a
// purchase is printed as it was given.
func formatAmount(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	if math.Abs(v) >= 1000 {
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// Per is what a rate is per.
type Per int

const (
	PerHour Per = iota + 1 // per device-hour
	PerKWh                 // per kilowatt-hour
)

// A Rate is a price per hour or per kWh.
type Rate struct {
	Amount   float64
	Currency string
	Per      Per
}

func (r Rate) String() string {
	u := "/h"
	if r.Per == PerKWh {
		u = "/kWh"
	}
	return formatAmount(r.Amount) + " " + r.Currency + u
}

// ErrNoUnit is returned for a price written without a currency or a unit.
var ErrNoUnit = errors.New("no currency or unit")

// A ParseError is text that is not a price.
type ParseError struct {
	Text, Want string
	Err        error
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%q is not %s: %v", e.Text, e.Want, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// split reads a currency sign or code before or after a number, and an
// optional "/unit": "$2.5/h", "2.5 USD/h", "2.5/h", "25000 EUR".
func split(text string) (amount float64, currency, unit string, err error) {
	s := strings.TrimSpace(text)
	if i := strings.IndexByte(s, '/'); i >= 0 {
		s, unit = strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:])
		if unit == "" {
			return 0, "", "", errors.New(`nothing after "/"`)
		}
	}
	for sym, code := range symbols {
		if rest, ok := strings.CutPrefix(s, sym); ok {
			s, currency = strings.TrimSpace(rest), code
		}
	}
	// The number is the leading run of digits, signs, points and exponents.
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= '0' && c <= '9' || c == '.' || c == '+' || c == '-' || (c == 'e' || c == 'E') && i > 0 && i+1 < len(s) && (s[i+1] >= '0' && s[i+1] <= '9' || s[i+1] == '-' || s[i+1] == '+') {
			i++
			continue
		}
		break
	}
	num, rest := s[:i], strings.TrimSpace(s[i:])
	if num == "" {
		return 0, "", "", errors.New("no number")
	}
	amount, err = strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(amount) || math.IsInf(amount, 0) {
		return 0, "", "", errors.New("bad number")
	}
	if rest != "" {
		if currency != "" {
			return 0, "", "", fmt.Errorf("two currencies (%s and %q)", currency, rest)
		}
		if len(rest) != 3 || strings.IndexFunc(rest, func(r rune) bool { return !unicode.IsUpper(r) }) >= 0 {
			return 0, "", "", fmt.Errorf("unknown currency %q (want a code such as USD or EUR, or $, €, £, ¥)", rest)
		}
		currency = rest
	}
	if amount < 0 {
		return 0, "", "", errors.New("a price must not be negative")
	}
	if amount > MaxAmount {
		return 0, "", "", fmt.Errorf("%g is over the largest amount perfsim takes, %g", amount, float64(MaxAmount))
	}
	if amount > 0 && amount < MinAmount {
		return 0, "", "", fmt.Errorf("%g is below the smallest amount perfsim takes, %g (0 is free)", amount, float64(MinAmount))
	}
	// "-0" is 0: it had printed a price of "-0 USD/h" and a run of "-0 USD".
	amount = math.Abs(amount)
	return amount, currency, unit, nil
}

// MaxAmount bounds an amount of money (a purchase, a price per hour or
// per kWh): a trillion in any currency is beyond any device's price, and
// keeps every cost perfsim derives from it finite.
const MaxAmount = 1e12

// MinAmount is the smallest positive amount of money perfsim takes: a
// millionth of a currency unit, far below any price of a device-hour, a
// device or a kWh (1e-300/h had printed a price of 300 digits).
const MinAmount = 1e-6

// MaxPUE bounds a facility's power usage effectiveness: the Uptime
// Institute's annual surveys report industry averages of about 2.5 (2007)
// falling to 1.58 (2023); 4 is above any of them, and keeps the facility
// energy finite (a PUE of 1e308 printed "+Inf J" and failed the JSON).
const MaxPUE = 4

// MinYears and MaxYears bound a TCO's amortisation period: from a day to
// a century (a shorter period made the cost per second overflow).
const (
	MinYears = 1.0 / 365
	MaxYears = 100.0
)

// ParseRate parses a price per device-hour ("2.5/h", "2.1 EUR/h",
// "$3/hour") or per kWh ("0.12/kWh"). A rate without a unit is an error;
// without a currency it is in DefaultCurrency.
func ParseRate(text string) (Rate, error) {
	const want = `a price per hour or per kWh (e.g. "2.5/h", "2.1 EUR/h", "0.12 USD/kWh")`
	amount, cur, unit, err := split(text)
	if err != nil {
		return Rate{}, &ParseError{text, want, err}
	}
	r := Rate{Amount: amount, Currency: cur}
	switch strings.ToLower(unit) {
	case "h", "hr", "hour":
		r.Per = PerHour
	case "kwh":
		r.Per = PerKWh
	case "":
		return Rate{}, &ParseError{text, want, ErrNoUnit}
	default:
		return Rate{}, &ParseError{text, want, fmt.Errorf("unknown unit %q (want /h or /kWh)", unit)}
	}
	if r.Currency == "" {
		r.Currency = DefaultCurrency
	}
	return r, nil
}

// ParseMoney parses an amount of money with its currency ("25000 USD",
// "$25000", "€30000"). A bare number is an error.
func ParseMoney(text string) (Money, error) {
	const want = `an amount of money with its currency (e.g. "25000 USD" or "$25000")`
	amount, cur, unit, err := split(text)
	switch {
	case err != nil:
		return Money{}, &ParseError{text, want, err}
	case unit != "":
		return Money{}, &ParseError{text, want, fmt.Errorf("an amount, not a rate per %s", unit)}
	case cur == "":
		return Money{}, &ParseError{text, want, ErrNoUnit}
	}
	return Money{amount, cur}, nil
}

// A Pricing says what running devices costs: either Hourly (a price per
// device-hour that includes energy, as a cloud's does) or a TCO (Purchase
// per device amortised over Years, plus the facility's energy at Energy
// per kWh, the facility's energy being the node's times PUE).
type Pricing struct {
	Hourly   Rate    // per device-hour; zero for TCO
	Purchase Money   // per device; zero for hourly
	Years    float64 // amortisation period
	Energy   Rate    // per kWh
	PUE      float64 // facility power / IT power, at least 1; 0 means 1
	Source   string  // where the price came from
	Date     string  // when it was that price
}

// secondsPerYear is a Julian year, 365.25 days.
const secondsPerYear = 365.25 * 86400

// TCO reports whether p amortises a purchase.
// Any period given (a negative or NaN one too, which Check refuses) makes
// it one: p.Years > 0 let --years -1 or NaN alone be dropped unsaid.
func (p *Pricing) TCO() bool { return p.Purchase.Amount > 0 || p.Years != 0 }

// pue returns the PUE, 1 when not given.
func (p *Pricing) pue() float64 {
	if p.PUE == 0 {
		return 1
	}
	return p.PUE
}

// Currency returns the currency of p's figures.
func (p *Pricing) Currency() string {
	switch {
	case p.Hourly.Currency != "":
		return p.Hourly.Currency
	case p.Purchase.Currency != "":
		return p.Purchase.Currency
	}
	return p.Energy.Currency
}

// Check returns every problem of p at once, each naming its field as the
// flag spells it.
func (p *Pricing) Check() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("--%s: %s", field, fmt.Sprintf(format, args...)))
	}
	if p.PUE != 0 && !(p.PUE >= 1) || math.IsInf(p.PUE, 0) {
		bad("pue", "must be at least 1 (facility power over IT power), got %v", p.PUE)
	} else if p.PUE > MaxPUE {
		bad("pue", "must be at most %g (facility power over IT power), got %v", float64(MaxPUE), p.PUE)
	}
	if p.Hourly.Amount < 0 || p.Purchase.Amount < 0 || p.Energy.Amount < 0 {
		bad("price", "must not be negative")
	}
	if p.Hourly.Per != 0 && p.Hourly.Per != PerHour {
		bad("price", "%s is not a price per hour", p.Hourly)
	}
	if p.Energy.Per != 0 && p.Energy.Per != PerKWh {
		bad("energy-price", "%s is not a price per kWh", p.Energy)
	}
	if p.TCO() {
		if p.Hourly.Per != 0 {
			bad("price", "give either a price per hour or a purchase price with --years, not both")
		}
		if !(p.Purchase.Amount > 0) {
			bad("purchase", "a TCO needs the device's purchase price")
		}
		if !(p.Years >= MinYears && p.Years <= MaxYears) {
			bad("years", "a TCO needs an amortisation period from %.3g to %g years, got %v", MinYears, MaxYears, p.Years)
		}
		if p.Energy.Per == 0 {
			bad("energy-price", "a TCO needs a price per kWh")
		} else if p.Purchase.Currency != "" && p.Energy.Currency != p.Purchase.Currency {
			bad("energy-price", "is in %s, the purchase in %s", p.Energy.Currency, p.Purchase.Currency)
		}
	}
	return errors.Join(errs...)
}

// Cost returns the cost of running devices devices for t, drawing
// nodeEnergy at the node boundary (devices and the rest of their nodes):
// the hourly rate times device-hours, or the amortised purchase plus the
// facility's energy (nodeEnergy · PUE) at the kWh price.
func (p *Pricing) Cost(devices int, t model.Seconds, nodeEnergy model.Joules) Money {
	m := Money{Currency: p.Currency()}
	if p.TCO() {
		m.Amount = float64(devices) * p.Purchase.Amount * float64(t) / (p.Years * secondsPerYear)
		m.Amount += p.FacilityEnergy(nodeEnergy).KWh() * p.Energy.Amount
		return m
	}
	m.Amount = float64(devices) * p.Hourly.Amount * float64(t) / 3600
	return m
}

// FacilityEnergy returns nodeEnergy times the PUE.
func (p *Pricing) FacilityEnergy(nodeEnergy model.Joules) model.Joules {
	return model.Joules(float64(nodeEnergy) * p.pue())
}

// Inputs says what p's figures assume, for printing beside them:
// "2.5 USD/h per device (source, date)" or "25000 USD per device over 4
// years + 0.12 USD/kWh × PUE 1.3 (source, date)".
func (p *Pricing) Inputs() string {
	var s string
	if p.TCO() {
		s = fmt.Sprintf("TCO: %s per device over %g years + %s × PUE %g", p.Purchase, p.Years, p.Energy, p.pue())
	} else {
		s = fmt.Sprintf("%s per device (energy included), PUE %g for the facility energy", p.Hourly, p.pue())
	}
	var from []string
	if p.Source != "" {
		from = append(from, p.Source)
	}
	if p.Date != "" {
		from = append(from, p.Date)
	}
	if len(from) > 0 {
		s += " (" + strings.Join(from, ", ") + ")"
	} else {
		s += " (given on the command line)"
	}
	return s
}
