package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/pflag"
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
