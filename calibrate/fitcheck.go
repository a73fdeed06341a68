package calibrate

import (
	"errors"
	"fmt"
	"math"

	"github.com/perfsim/perfsim/hardware"
)

// The range of a kernel time Fit accepts. A GPU kernel launch alone costs
// a few microseconds and the smallest CPU kernels of the CPU suite tens of
// nanoseconds, so a time below a nanosecond is a unit mistake (ms or µs
// written as s) or a corrupt row; so is one above an hour.
const (
	minKernelTime = 1e-9
	maxKernelTime = 3600
)

// checkTimes reports every measurement whose time Fit cannot use, each
// naming file:line (at most maxReported, then a count).
func checkTimes(ms []Measurement) error {
	var errs []error
	n := 0
	for _, m := range ms {
		t := float64(m.Time)
		if !(t >= minKernelTime && t <= maxKernelTime) {
			n++
			if n <= maxReported {
				errs = append(errs, &ParseError{File: m.File, Line: m.Line,
					Err: fmt.Errorf("time %.4g s is outside 1 ns to 1 h: not a kernel's time (a wrong unit, or a corrupt row)", t)})
			}
		}
	}
	if n > maxReported {
		errs = append(errs, fmt.Errorf("calibrate: %d more rows with such times not shown", n-maxReported))
	}
	return errors.Join(errs...)
}

// checkFitted refuses a fit that would write a file the loader rejects or
// an interval wider than hardware.MaxRelErr allows: non-finite or
// out-of-range parameters, or errors so large that the measurements do
// not follow the model (noise, mixed devices or units).
func checkFitted(dev *hardware.Device, classes []ClassFit) error {
	var errs []error
	for _, c := range classes {
		for _, s := range []struct {
			what string
			st   Stats
		}{{"in-sample", c.InSample}, {"held-out", c.HeldOut}} {
			if !c.Fitted || s.st.N == 0 {
				continue
			}
			if p := s.st.P90; math.IsNaN(p) || math.IsInf(p, 0) || p > hardware.MaxRelErr {
				errs = append(errs, fmt.Errorf("calibrate: %s: the fit's %s p90 |error| is %.3g (over %g%%): its %d measurements do not follow the cost model (noisy or mixed data, another device, or times in the wrong unit)",
					c.Name(), s.what, p, 100*hardware.MaxRelErr, c.Points))
			}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if err := dev.Validate(); err != nil {
		return fmt.Errorf("calibrate: the fitted parameters are out of range (the measurements are far from the device's peaks and bandwidth; check the device and the time unit):\n%w", err)
	}
	return nil
}
