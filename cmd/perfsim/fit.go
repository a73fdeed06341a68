package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/sim"
)

// A run that does not fit its device's memory cannot happen: its times
// describe nothing. The commands say so first (the headline), on stderr
// (a warning), in JSON and CSV (fits beside the times), and with
// --require-fit as exit status 1.

// notFit is the sentence that says a run does not fit, with a way out
// when one is known: "Llama 3.1 405B does not fit one H100 SXM: 758.1 GiB
// per device, 79.11 GiB usable (679 GiB short); it fits at --tp 16".
func notFit(r *sim.Report, layout string) string {
	m := r.Memory
	s := fmt.Sprintf("%s does not fit %s: %s per device, %s (%s short)", r.Model, devicesText(r), m.Total.BinaryString(), usableText(m), (-m.Headroom).BinaryString())
	switch {
	case layout != "":
		s += "; it fits at " + layout
	case r.Scenario.Mode == sim.Training:
		s += "; " + trainFitHint(r.Scenario)
	default:
		s += "; no layout of up to 64 devices (--tp, --pp) makes it fit"
	}
	return s
}

// trainFitHint says what could make a training run fit that it does not
// use already: ZeRO 3, which shards over the data- and context-parallel
// ranks (with neither, it needs --dp too), full recomputation, more
// devices.
func trainFitHint(sc sim.Scenario) string {
	var try []string
	switch {
	case sc.ZeRO >= 3 && max(sc.DP, 1)*max(sc.CP, 1) > 1:
	case max(sc.DP, 1)*max(sc.CP, 1) > 1:
		try = append(try, "--zero 3")
	default:
		try = append(try, "--dp with --zero 3 (ZeRO shards over the data-parallel ranks)")
	}
	if sc.Recompute != sim.RecomputeFull {
		try = append(try, "--recompute full")
	}
	if len(try) == 0 {
		return "try more devices"
	}
	return "try " + strings.Join(try, ", ") + " or more devices"
}

// devicesText names the devices of r: "one H100 SXM", "8 × H100 SXM".
func devicesText(r *sim.Report) string {
	if r.Devices <= 1 {
		return "one " + r.Hardware
	}
	return fmt.Sprintf("%d × %s", r.Devices, r.Hardware)
}

// fitLayout returns the flags of the smallest power-of-two layout (tensor
// parallelism first, then pipeline stages) of up to 64 devices at which an
// inference scenario fits one device of sys: "--tp 8 --pp 2". It returns
// "" when none does, or for training, where sharding has more knobs.
func fitLayout(sys *hardware.System, w sim.Workload, sc sim.Scenario) string {
	if sc.Mode == sim.Training {
		return ""
	}
	for n := max(sc.TP, 1) * max(sc.PP, 1) * 2; n <= 64; n *= 2 {
		for tp := n; tp >= 1; tp /= 2 {
			try := sc
			try.TP, try.PP = tp, n/tp
			if m, err := sim.Footprint(sys, w, try); err == nil && m.Fits {
				if try.PP == 1 {
					return fmt.Sprintf("--tp %d", tp)
				}
				return fmt.Sprintf("--tp %d --pp %d", tp, try.PP)
			}
		}
	}
	return ""
}

// warnNotFit writes the warning for a run that does not fit to stderr
// and returns the sentence, or "" when it fits.
func warnNotFit(stderr io.Writer, sys *hardware.System, w sim.Workload, r *sim.Report) string {
	if r.Memory.Fits {
		return ""
	}
	s := notFit(r, fitLayout(sys, w, r.Scenario))
	fmt.Fprintf(stderr, "perfsim: warning: %s; the times are those of a run that cannot happen\n", s)
	return s
}

// errNotFit is the error --require-fit returns (exit status 1).
type errNotFit struct{ msg string }

func (e errNotFit) Error() string { return e.msg + " (--require-fit)" }
