// Package price turns a run's time and energy into money: a price per
// device-hour (a cloud's, energy included) or a total cost of ownership
// (a device's purchase amortised over years, plus its energy at a price
// per kWh times the facility's PUE), and the price tables that carry each
// price with its source and date.
//
// Prices are written as text with a currency and a unit, as units are
// elsewhere in perfsim: "2.5/h" (USD unless a currency is given),
// "2.1 EUR/h", "$0.12/kWh", "25000 USD". A bare number is an error: it is
// neither a price per hour nor an amount of money until its unit is said.
//
// Every figure a Pricing produces comes with the inputs it used (Inputs),
// so that a printed cost can say what it assumed.
//
// This package imports only package model.
package price
