package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/pflag"
)

// A command is one subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands is the table of subcommands.
func commands() map[string]command {
	return map[string]command{
		"simulate":    {"latency, throughput and memory of a model on hardware", runSimulateCmd},
		"gemms":       {"the GEMMs (with MAC counts) a model decomposes into", runGemmsCmd},
		"kernel":      {"the predicted time of one kernel (a GEMM, a copy)", runKernelCmd},
		"maxmodel":    {"the largest model that fits a device or a node", runMaxModelCmd},
		"hardware":    {"list and show the hardware catalog or a hardware file", runHardwareCmd},
		"calibrate":   {"measure kernels, fit the cost model, validate a fit", runCalibrateCmd},
		"sweep":       {"simulate the cartesian product of scenarios", runSweepCmd},
		"plan":        {"capacity plans: the fewest GPUs serving a load under latency SLOs; the highest rate a deployment sustains; training layouts ranked on a system", runPlanCmd},
		"serve":       {"a serving engine under load: TTFT, TPOT, throughput per request", runServeCmd},
		"plot":        {"rooflines, breakdowns, memory, energy, GEMM and sweep charts", runPlotCmd},
		"sensitivity": {"how TTFT, TPOT, max batch and throughput at an SLO change per 10% more bandwidth, peak, capacity, link", runSensitivityCmd},
		"mlperf":      {"MLPerf Inference (the datacenter suite, Offline and Server) and MLPerf Training (time to train)", runMLPerfCmd},
		"version":     {"print the version", runVersionCmd},
		"completion":  {"a shell completion script: perfsim completion bash|zsh|fish", runCompletionCmd},
	}
}

// A usageError is a mistake in how perfsim was called; it exits 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef returns a usage error.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// A fileError is a bad input file, each of its problems said at its
// file:line:key: it exits 2, as a usage error does (the input is wrong,
// not the run), without the pointer to 'perfsim help', which says nothing
// of a file's contents (every line of stderr names the file).
type fileError struct{ err error }

func (e fileError) Error() string { return e.err.Error() }
func (e fileError) Unwrap() error { return e.err }

// A noAnswer is a run that worked but whose answer is that nothing
// meets the objectives (perfsim plan with no layout, or no rate, that
// does): its report has been written whole, and it exits 3, so that a
// script can tell an answer from a non-answer (both had exited 0).
type noAnswer struct{ err error }

func (e noAnswer) Error() string { return e.err.Error() }
func (e noAnswer) Unwrap() error { return e.err }

// noAnswerf returns a noAnswer.
func noAnswerf(format string, args ...any) error {
	return noAnswer{fmt.Errorf(format, args...)}
}

// exitStatus is the help's line on exit statuses.
const exitStatus = "Exit status: 0 success, 1 failure, 2 usage error or bad input file, 3 no answer (plan: the run worked, but no layout meets the objectives).\n"

// exitCode maps an error returned by a command to the process exit
// status: 2 for a usage error or a bad input file, 3 for a run with no
// answer, 1 for any other failure.
func exitCode(err error) int {
	var ue usageError
	var fe fileError
	var na noAnswer
	switch {
	case err == nil, errors.Is(err, pflag.ErrHelp):
		return 0
	case errors.As(err, &ue), errors.As(err, &fe):
		return 2
	case errors.As(err, &na):
		return 3
	}
	return 1
}

func main() {
	cleanUpOnSignal()
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run runs perfsim with args and returns the exit status. Tests call it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args, stdout, stderr)
	if err != nil && !errors.Is(err, pflag.ErrHelp) {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(stderr, "perfsim: %s\n", strings.TrimPrefix(line, "perfsim: "))
		}
		if ue := (usageError{}); errors.As(err, &ue) {
			fmt.Fprintln(stderr, "perfsim: run 'perfsim help' for usage")
		}
	}
	return exitCode(err)
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmds := commands()
	if len(args) == 0 {
		printUsage(stderr, cmds)
		return usagef("no command given")
	}
	name := args[0]
	switch name {
	case "help", "-h", "--help":
		if len(args) > 1 {
			c, ok := cmds[args[1]]
			if !ok {
				return usagef("unknown command %q", args[1])
			}
			return c.run(ctx, []string{"--help"}, stdout, stderr)
		}
		printUsage(stdout, cmds)
		return nil
	case "-v", "--version":
		name = "version"
	}
	c, ok := cmds[name]
	if !ok {
		return usagef("unknown command %q (commands: %s)", name, strings.Join(sortedKeys(cmds), ", "))
	}
	return c.run(ctx, args[1:], stdout, stderr)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func printUsage(w io.Writer, cmds map[string]command) {
	fmt.Fprint(w, `perfsim: an analytical performance model of AI workloads

Usage:
  perfsim <command> [flags]

Commands:
`)
	width := 0
	for k := range cmds {
		width = max(width, len(k))
	}
	for _, k := range sortedKeys(cmds) {
		fmt.Fprintf(w, "  %-*s  %s\n", width, k, cmds[k].summary)
	}
	fmt.Fprint(w, `
Run 'perfsim help <command>' for a command's flags and examples.

`+exitStatus)
}

// newFlagSet returns a flag set for a subcommand whose --help prints
// usage (the synopsis), the flags, and examples.
func newFlagSet(name, synopsis, examples string, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	fs.Usage = func() {
		quietDefaults(fs)
		fmt.Fprintf(stderr, "Usage: %s\n\nFlags:\n%s", synopsis, fs.FlagUsages())
		if examples != "" {
			fmt.Fprintf(stderr, "\nExamples:\n%s", examples)
		}
		fmt.Fprint(stderr, "\n"+exitStatus)
	}
	return fs
}

// quietDefaults keeps pflag from appending "(default X)" to a flag whose
// help already says its default in words ("(default: the engine's)"):
// the value behind such a default (0 B, invalid) is a placeholder, and
// printing it contradicts the words. Integer and float flags print only a
// non-zero default, so theirs is left alone.
func quietDefaults(fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		if !strings.Contains(f.Usage, "(default") {
			return
		}
		switch f.Value.Type() {
		case "int", "int64", "uint", "uint64", "float64", "float32":
			return
		case "intSlice", "stringSlice", "stringArray":
			f.DefValue = "[]" // a list's zero, which pflag does not print
			return
		}
		f.DefValue = ""
	})
}

// parseFlags parses args and turns flag mistakes into usage errors.
// pflag stops at the first mistake; every flag after it is then parsed on
// its own (flagProblems), so that all of them are said at once.
func parseFlags(fs *pflag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return usageError{errors.Join(flagProblems(fs, args, err)...)}
	}
	return nil
}

// flagProblems returns first, pflag's error for args, and the mistakes of
// the flags of args that pflag did not reach: each flag with its value
// is parsed alone, in order, and its error kept unless it is first again.
// The run is over: what the flags are set to no longer matters.
func flagProblems(fs *pflag.FlagSet, args []string, first error) []error {
	errs := []error{first}
	seen := map[string]bool{first.Error(): true}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if len(a) < 2 || a[0] != '-' {
			continue // a positional argument
		}
		seg := []string{a}
		var f *pflag.Flag
		switch name, hasValue := strings.CutPrefix(a, "--"); {
		case hasValue:
			name, _, inline := strings.Cut(name, "=")
			if name == "help" {
				continue
			}
			if f = fs.Lookup(name); inline {
				f = nil
			}
		case len(a) == 2:
			if a == "-h" && fs.ShorthandLookup("h") == nil {
				continue
			}
			f = fs.ShorthandLookup(a[1:])
		}
		if f != nil && f.NoOptDefVal == "" && i+1 < len(args) {
			i++
			seg = append(seg, args[i])
		}
		if err := fs.Parse(seg); err != nil && !errors.Is(err, pflag.ErrHelp) && !seen[err.Error()] {
			seen[err.Error()] = true
			errs = append(errs, err)
		}
	}
	return errs
}

// parseFlagsNoArgs parses args for a command that takes flags only: a
// positional argument is a usage error naming the command.
func parseFlagsNoArgs(fs *pflag.FlagSet, args []string, command string) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q", command, fs.Arg(0))
	}
	return nil
}
