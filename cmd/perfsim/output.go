package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/perfsim/perfsim/cmd/perfsim/internal/chart"
	"github.com/perfsim/perfsim/internal/fileio"
)

// A format is how a command writes its results.
type format string

const (
	formatTable format = "table" // human-scaled units, aligned columns
	formatJSON  format = "json"  // base SI units, the unit in the key
	formatCSV   format = "csv"   // base SI units, the unit in the column name
)

// addFormatFlag adds --format to fs.
func addFormatFlag(fs *pflag.FlagSet, f *string) {
	fs.StringVar(f, "format", "table", "output format: table, json or csv")
}

// parseFormat checks a --format value.
func parseFormat(s string) (format, error) {
	switch f := format(s); f {
	case formatTable, formatJSON, formatCSV:
		return f, nil
	}
	return "", usagef("--format: unknown format %q (want table, json or csv)", s)
}

// writeJSON writes v as indented JSON followed by a newline. Keys come out
// in struct field order, so output is deterministic.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeCSV writes a header and rows.
func writeCSV(w io.Writer, header []string, rows [][]string) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// newTable returns a tabwriter for aligned columns; call Flush when done.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// num formats a float in base units for CSV: the shortest representation
// that parses back exactly. It panics on NaN or Inf, which must never
// reach the output.
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		panic(fmt.Sprintf("perfsim: non-finite value %v in output", v))
	}
	// Whole numbers print whole (parameters, bytes: 85899345920, not
	// 8.589934592e+10), as encoding/json prints them, up to where a
	// float64 stops holding every integer.
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// An outputFile is a file a command writes besides stdout, named by its
// flag (without the dashes).
type outputFile struct {
	flag, path string
	chart      bool // a chart: the extension picks the format
}

// checkOutputs reports, before any work is done, every output file that
// could not be written (fileio.CheckOutput: its directory missing, a
// directory, a socket), whose chart format is unknown, or that names
// the same file as an earlier flag; the empty path is no file.
func checkOutputs(outs ...outputFile) []error {
	var errs []error
	seen := map[string]string{}
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		if o.path == "-" { // standard output: refused, each flag on its own
			errs = append(errs, usageError{fmt.Errorf("--%s: %w", o.flag, fileio.CheckOutput(o.path))})
			continue
		}
		if o.chart {
			if _, err := chart.FormatOf(o.path); err != nil {
				errs = append(errs, usagef("--%s: %v", o.flag, err))
				continue
			}
		}
		key := filepath.Clean(o.path)
		if abs, err := filepath.Abs(o.path); err == nil {
			key = abs
		}
		if prev, ok := seen[key]; ok {
			errs = append(errs, usagef("--%s: %s is the same file as --%s's", o.flag, o.path, prev))
			continue
		}
		seen[key] = o.flag
		if err := fileio.CheckOutput(o.path); err != nil {
			errs = append(errs, fmt.Errorf("--%s: %w", o.flag, err))
		}
	}
	return errs
}

// gpuCount says n GPUs, singular for one.
func gpuCount(n int) string {
	if n == 1 {
		return "1 GPU"
	}
	return fmt.Sprintf("%d GPUs", n)
}

// deviceCount says n devices, singular for one.
func deviceCount(n int) string {
	if n == 1 {
		return "1 device"
	}
	return fmt.Sprintf("%d devices", n)
}

// withArticle puts "a" or "an" before a kind: "an encoder", "a cnn".
func withArticle(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}
