package main

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
)

// version is set at link time with -ldflags "-X main.version=v1.2.3"; a
// plain build reports the module version or "devel".
var version = ""

func runVersionCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "perfsim version", "  perfsim version\n", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("version takes no arguments")
	}
	v := version
	if v == "" {
		v = "devel"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
	}
	fmt.Fprintf(stdout, "perfsim %s\n", v)
	return nil
}
