package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/perfsim/perfsim/hardware"
)

// hwFlagUsage is the help text of every --hw flag.
const hwFlagUsage = "hardware: a catalog name or alias (h100, a100, mi300x; see 'perfsim hardware list') or a hardware TOML file"

// setFlagUsage is the help text of every --set flag.
const setFlagUsage = "what-if: change a datasheet number of the --hw device (or of a system's), key=value with a unit (repeatable): memory.bandwidth=8TB/s, peak.matrix.fp8=4PFLOP/s, memory.capacity, memory.l2, peak.vector.<dtype>, compute_units, clock, interconnect.intra.bandwidth, interconnect.inter.bandwidth, interconnect.intra.in_network_reduction=nvlink-sharp|none (clock and compute_units keep the peaks, which are per precision: set peak.matrix.<dtype> too for a faster or slower chip)"

// whatIf applies --set settings to d (hardware.Derive); a bad setting is
// a usage error naming the flag.
func whatIf(d *hardware.Device, sets []string) (*hardware.Device, error) {
	if len(sets) == 0 {
		return d, nil
	}
	w, err := hardware.Derive(d, sets)
	if err != nil {
		return nil, usageError{linesError{err}}
	}
	return w, nil
}

// whatIfSystem applies --set settings to the device of a catalog system
// (whose network tiers are the system's scale-up domain and NICs,
// hardware.LookupSystem) and rebuilds the system over the same nodes from
// the changed device, as serve --system and systemFor do: a changed
// interconnect.intra or .inter bandwidth is the system's.
func whatIfSystem(s *hardware.System, sets []string) (*hardware.System, error) {
	if len(sets) == 0 {
		return s, nil
	}
	d, err := whatIf(s.Device, sets)
	if err != nil {
		return nil, err
	}
	w, err := hardware.NewSystem(d, s.DevicesPerNode, s.Nodes)
	if err != nil {
		return nil, usagef("--set: %v", err)
	}
	w.Name, w.Fabric, w.Sources = s.Name, s.Fabric, s.Sources
	return w, nil
}

// resolveHardware returns the device a --hw argument names: a catalog
// name or alias, or a path to a hardware TOML file. A file's problems
// come back one per line, each prefixed "perfsim: " when printed, so that
// every line on stderr carries the prefix.
func resolveHardware(arg string) (*hardware.Device, error) {
	return resolveHardwareArg(arg, "--hw")
}

// resolveHardwareArg is resolveHardware for an argument given as flag
// (whose name an unknown device's error starts with), or positionally
// (flag "", as hardware show's).
func resolveHardwareArg(arg, flag string) (*hardware.Device, error) {
	if strings.TrimSpace(arg) == "" {
		return nil, usagef("--hw: no hardware given (a catalog name such as h100, or a .toml file)")
	}
	d, err := hardware.Resolve(arg)
	if err != nil {
		return nil, hwArgError(err, flag)
	}
	// A hand-written file without efficiencies is not a perfect roofline:
	// it takes a calibrated device's (its label says which).
	hardware.KindDefaults(d)
	return d, nil
}

// A linesError prints a joined error with "perfsim: " before every line
// after the first (main prints the first prefix).
type linesError struct{ err error }

func (e linesError) Error() string {
	return strings.ReplaceAll(e.err.Error(), "\n", "\nperfsim: ")
}

func (e linesError) Unwrap() error { return e.err }

// hwFlagError is the error of a --hw argument hardware.Resolve refused,
// for a command that takes the device as it is (calibrate).
func hwFlagError(err error) error { return hwArgError(err, "--hw") }

// hwArgError is the error of a hardware argument, given as flag (""
// positionally), that hardware.Resolve refused: a usage error (exit 2),
// as every bad input is (inputError). A file's problems, its unknown base
// among them, come one a line, each at its file:line:key; a name that is
// neither in the catalog nor a file, or a file that cannot be read,
// starts with the flag, as an unknown --model does.
func hwArgError(err error, flag string) error {
	var pe *hardware.ParseError
	return inputError(flag, err, errors.As(err, &pe))
}

// inputError is the error of an input that flag names (a catalog name or
// a file; "" for a positional argument) and that could not be read: exit
// 2, whether the flag or the file is wrong, as a bad --trace or length
// file always was (README, "Exit status"). A file's own problems
// (positioned: the loader's file:line:key errors) are a fileError, said
// as they are, one a line; anything else (an unknown name, a file that
// cannot be opened) is a usage error that starts with the flag. Hardware
// and model files had exited 1 (a "run failure"), as a price table and a
// measurements file did, while a trace exited 2.
func inputError(flag string, err error, positioned bool) error {
	if positioned {
		return fileError{linesError{err}}
	}
	if flag != "" {
		err = fmt.Errorf("%s: %w", flag, err)
	}
	return usageError{linesError{err}}
}

// systemError is the usage error of a --system that LookupSystem
// refused. A file there is said to be one (--system takes a catalog
// name), and where the command reads system files through --hw
// (simulate), the error says so.
func systemError(name string, err error, hwTakesFiles bool) error {
	if !errors.Is(err, hardware.ErrUnknownSystem) || !strings.HasSuffix(strings.ToLower(strings.TrimSpace(name)), ".toml") {
		return usagef("--system: %v", err)
	}
	where := ""
	if hwTakesFiles {
		where = "; give a system file to --hw"
	}
	return usagef("--system: %q is a file: --system takes a catalog system (%s)%s", name, strings.Join(hardware.SystemNames(), ", "), where)
}
