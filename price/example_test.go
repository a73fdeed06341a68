package price_test

import (
	"fmt"

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
