package price

import (
	"math"
	"testing"
)

// FuzzParseMoney checks the parser of purchase prices (a price table's
// purchase, --purchase): it never panics, what it accepts is a finite,
// non-negative amount with a currency, and that amount prints as text
// that parses back to the same currency.
//
//	go test -fuzz=FuzzParseMoney ./price
func FuzzParseMoney(f *testing.F) {
	for _, s := range []string{"25000 USD", "$25000", "€30000", "£1", "¥1e6", "25000", "-5 USD", "1e309 USD", "2.5/h", "5 usd", "$5 EUR", "NaN USD"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMoney(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("ParseMoney(%q): an empty error", s)
			}
			return
		}
		if math.IsNaN(m.Amount) || math.IsInf(m.Amount, 0) || m.Amount < 0 || m.Currency == "" {
			t.Fatalf("ParseMoney(%q) = %+v", s, m)
		}
		back, err := ParseMoney(m.String())
		if err != nil || back.Currency != m.Currency {
			t.Fatalf("%q → %v → %+v, %v", s, m, back, err)
		}
	})
}
