package main

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/perfsim/perfsim/hardware"
)

// version is set at link time with -ldflags "-X main.version=v1.2.3"; a
// plain build reports the module version or "devel".
var version = ""

// runVersionCmd prints what a number in a review needs to be traced to a
// build: the module version, the VCS revision and time the binary was
// built from (Go stamps them into the build info when it builds in a
// git checkout), the Go version, and the dates of the catalog's fits.
func runVersionCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "perfsim version", "  perfsim version\n", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("version takes no arguments")
	}
	bi, _ := debug.ReadBuildInfo()
	writeVersion(stdout, bi)
	return nil
}

func writeVersion(w io.Writer, bi *debug.BuildInfo) {
	v := version
	if v == "" {
		v = "devel"
		if bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
	}
	fmt.Fprintf(w, "perfsim %s\n", v)
	if bi != nil {
		set := map[string]string{}
		for _, s := range bi.Settings {
			set[s.Key] = s.Value
		}
		if rev := set["vcs.revision"]; rev != "" {
			mod := ""
			if set["vcs.modified"] == "true" {
				mod = " (with uncommitted changes)"
			}
			fmt.Fprintf(w, "revision %s%s\n", rev, mod)
			if t := set["vcs.time"]; t != "" {
				fmt.Fprintf(w, "committed %s\n", t)
			}
		} else {
			fmt.Fprintln(w, "revision unknown (not built from a git checkout, or built with -buildvcs=false)")
		}
		fmt.Fprintf(w, "built with %s\n", bi.GoVersion)
	}
	if fits := catalogFitDates(); len(fits) > 0 {
		fmt.Fprintln(w, "catalog fits:")
		for _, f := range fits {
			fmt.Fprintf(w, "  %s\n", f)
		}
	}
}

// fitDate finds the date in a fitted table's source ("fitted: perfsim
// calibrate fit, 35700 points, 2026-11-22, from ...").
var fitDate = regexp.MustCompile(`fitted: perfsim calibrate fit, \d+ points, (\d{4}-\d{2}-\d{2})`)

// catalogFitDates lists each calibrated catalog device with the dates of
// its fits: "H100 SXM: 2026-11-22". It reads the fitted overlays' sources
// as text: version loads no device.
func catalogFitDates() []string {
	all, err := hardware.CatalogFitSources()
	if err != nil {
		panic(fmt.Sprintf("perfsim: embedded catalog: %v", err)) // the embedded files are tested
	}
	var out []string
	for _, d := range all {
		if ds := fitDates(d.Sources); ds != "" {
			out = append(out, d.Name+": "+ds)
		}
	}
	return out
}

// fitDates returns the distinct dates of fits in sources, sorted and
// comma-separated; "" for none.
func fitDates(sources []string) string {
	dates := map[string]bool{}
	for _, s := range sources {
		for _, m := range fitDate.FindAllStringSubmatch(s, -1) {
			dates[m[1]] = true
		}
	}
	ds := make([]string, 0, len(dates))
	for k := range dates {
		ds = append(ds, k)
	}
	sort.Strings(ds)
	return strings.Join(ds, ", ")
}
