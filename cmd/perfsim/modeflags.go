package main

import "github.com/spf13/pflag"

// ignoredFlags returns a usage error for each of names that the user set
// but the run, in its mode, would silently ignore; why says which mode
// and why ("not with --trace: the trace gives each request's lengths").
// A flag that means nothing in a mode is refused, never dropped.
func ignoredFlags(fs *pflag.FlagSet, why string, names ...string) []error {
	var errs []error
	for _, n := range names {
		if fs.Changed(n) {
			errs = append(errs, usagef("--%s: %s", n, why))
		}
	}
	return errs
}
