package price_test

import (
	"fmt"
	"strings"

	"github.com/perfsim/perfsim/price"
)

// ExamplePricing_Cost prices 8 GPUs for an hour at a cloud's hourly rate,
// then the same hour owned: purchase amortised over 4 years plus 8 kWh at
// the node, times a PUE of 1.3, at 0.10 USD/kWh.
func ExamplePricing_Cost() {
	r, _ := price.ParseRate("2.5/h")
	cloud := price.Pricing{Hourly: r, Source: "example", Date: "2026-01"}
	fmt.Println(cloud.Cost(8, 3600, 0), "—", cloud.Inputs())

	buy, _ := price.ParseMoney("25000 USD")
	kwh, _ := price.ParseRate("0.10 USD/kWh")
	own := price.Pricing{Purchase: buy, Years: 4, Energy: kwh, PUE: 1.3}
	fmt.Println(own.Cost(8, 3600, 8*3.6e6), "—", own.Inputs())
	// Output:
	// 20 USD — 2.5 USD/h per device (energy included), PUE 1 for the facility energy (example, 2026-01)
	// 6.744 USD — TCO: 25000 USD per device over 4 years + 0.1 USD/kWh × PUE 1.3 (given on the command line)
}

// ExampleLoadTable reads a price table of two entries for one device, a
// cloud's hourly price and an owner's TCO (25,000 USD over 4 years of
// 365.25 days is 0.713 USD an hour a GPU; 5.6 kWh at the node × PUE 1.3
// at 0.10 USD/kWh is 0.728 USD), picks each by name, then a table with a
// bare number and a missing source: every problem at its file:line:key
// at once.
func ExampleLoadTable() {
	const table = `
[[price]]
hardware = "h100-sxm"
hourly = "2.94 USD/h"
source = "a cloud's on-demand offer"
date = "2026-01"

[[price]]
hardware = "h100-sxm"
name = "own"
purchase = "25000 USD"
years = 4
energy = "0.10 USD/kWh"
pue = 1.3
source = "an owner's figures"
date = "2026-01"
`
	t, err := price.LoadTable(strings.NewReader(table), "prices.toml")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range []string{"", "own"} {
		e, ok := t.Find([]string{"H100 SXM", "h100-sxm"}, name)
		fmt.Printf("%q: found %v at line %d, %v an hour of 8 GPUs\n", name, ok, e.Line, e.Cost(8, 3600, 8*0.7*3.6e6))
	}
	const bad = `
[[price]]
hardware = "h100-sxm"
hourly = "2.94"
date = "2026-01"
`
	_, err = price.LoadTable(strings.NewReader(bad), "bad.toml")
	fmt.Println(err)
	// Output:
	// "": found true at line 2, 23.52 USD an hour of 8 GPUs
	// "own": found true at line 8, 6.432 USD an hour of 8 GPUs
	// price: bad.toml:2: price[1].source: missing: every price needs the hardware it is for, its source and its date
	// price: bad.toml:4: price[1].hourly: "2.94" is not a price per hour or per kWh (e.g. "2.5/h", "2.1 EUR/h", "0.12 USD/kWh"): no currency or unit
}
