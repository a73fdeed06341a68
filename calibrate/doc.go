// Package calibrate reads measured kernel timings, fits the efficiency
// parameters of the cost model to them, and reports the fit's error on
// points it did not see.
package calibrate
