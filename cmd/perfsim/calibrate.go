package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/perfsim/perfsim/calibrate"
	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/internal/fileio"
	"github.com/perfsim/perfsim/model"
)

const calibrateSynopsis = `perfsim calibrate fit --hw NAME|FILE --measurements FILE[,FILE...] -o calibrated.toml
       perfsim calibrate validate --hw NAME|FILE --measurements FILE[,FILE...]
       perfsim calibrate merge --hw FITTED.toml -o hardware/devices/fitted/STEM.toml [--check]
       perfsim calibrate measure --device cpu [-o cpu.csv]   (see perfsim calibrate measure --help)

fit fits the cost model's efficiency parameters of a device to measured
kernels: per GEMM compute type the tile-aware roofline (peak and bandwidth
fractions, launch, per-CTA and per-K-step costs, split-K cost, overlap
exponent, L2 factor or fp8 quantisation bytes) and a residual table over
log-shape space; the prefill and decode attention parameters; the
streaming bandwidth against size and the launch cost. It writes the device
with the fitted efficiency section and its provenance to -o (atomically),
and prints, per kernel class and dtype, the median, p90 and max |error|
in-sample and k-fold cross-validated. Measurements are perfsim's CSV
(kernels/README.md) or a third-party table (aiconfigurator, vidur,
llmcompass, xla; docs/hardware.md names each), told apart by the
header unless --input-format says; a file named .gz is read through gzip.
Rows of another device are an error (skipped,
with a warning, in files that mix devices by design).

validate scores a device's predictions against measurements: per kernel
class the median, p90 and max |error| and the worst rows.

merge writes the fitted part of a calibrated device file (the efficiency
tables with fitted points, the interconnect keys with a fitted source) as
the catalog overlay hardware/devices/fitted/<stem>.toml, which the catalog
applies on top of the hand-written device file (docs/hardware.md,
"Calibrated devices"). The output depends on the fitted file alone. With
--check it writes nothing and fails when -o differs from what it would
write. calibrate/fitted/regen.sh runs fit and merge for the catalog.`

const calibrateExamples = `  perfsim calibrate fit --hw h100 --measurements h100_sxm_gemm_trtllm_1.3.0rc20_gemm_perf.csv -o h100-calibrated.toml
  perfsim calibrate validate --hw h100-calibrated.toml --measurements vidur_gemm_ops.csv
`

// calibrateOptions are the flags of "perfsim calibrate".
type calibrateOptions struct {
	hw, measurements, format, out, date, output string
	timeCol                                     string
	folds, worst                                int
	seed                                        uint64
	noResidual, check                           bool
}

func (o *calibrateOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.hw, "hw", "", "device: a catalog name or a hardware TOML file")
	fs.StringVar(&o.measurements, "measurements", "", "measurement files, comma-separated")
	fs.StringVar(&o.format, "input-format", calibrate.FormatAuto, "measurements format: "+strings.Join(calibrate.Formats, ", "))
	fs.StringVarP(&o.out, "out", "o", "", "fit: the calibrated hardware TOML to write; merge: the overlay to write")
	fs.StringVar(&o.timeCol, "time", "median", "fit, validate: the measured time to use: median (time_s) or min (time_min_s, the fastest sample: steadier on a machine other work shares)")
	fs.IntVar(&o.folds, "folds", 5, "fit: k of the k-fold cross-validation (1 turns it off)")
	fs.Uint64Var(&o.seed, "seed", 1, "fit: seed of the folds and subsamples")
	fs.BoolVar(&o.noResidual, "no-residual", false, "fit: no residual tables")
	fs.StringVar(&o.date, "date", "", "fit: the date written as provenance (default today, UTC)")
	fs.IntVar(&o.worst, "worst", 5, "validate: worst rows listed per class")
	fs.BoolVar(&o.check, "check", false, "merge: compare with -o instead of writing it (exit 1 when they differ)")
	addFormatFlag(fs, &o.output)
}

// runCalibrateCmd runs "perfsim calibrate fit|validate|measure".
func runCalibrateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "measure" {
		return runCalibrateMeasure(ctx, args[1:], stdout, stderr)
	}
	var o calibrateOptions
	fs := newFlagSet("calibrate", calibrateSynopsis, calibrateExamples, stderr)
	o.AddFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	f, err := parseFormat(o.output)
	if err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) != 1 {
		return usagef("calibrate: give one subcommand: fit, validate, merge or measure")
	}
	switch rest[0] {
	case "fit":
		return calibrateFit(ctx, o, f, stdout, stderr)
	case "validate":
		return calibrateValidate(o, f, stdout, stderr)
	case "merge":
		return calibrateMerge(o, stdout)
	}
	return usagef("calibrate: unknown subcommand %q (want fit, validate, merge or measure)", rest[0])
}

// loadMeasurements resolves the device and reads every measurement file.
// The flags' problems are said together; the files are read once the
// device and the list of them are right.
func loadMeasurements(o calibrateOptions, stderr io.Writer) (*hardware.Device, []calibrate.Measurement, error) {
	var errs []error
	var dev *hardware.Device
	if o.hw == "" {
		errs = append(errs, usagef("calibrate: --hw: give a device (a catalog name or a .toml file)"))
	} else if d, err := hardware.Resolve(o.hw); err != nil {
		errs = append(errs, hwFlagError(err))
	} else {
		dev = d
	}
	var paths []string
	if o.measurements == "" {
		errs = append(errs, usagef("calibrate: --measurements: give at least one file"))
	} else if p, err := parseNameList("measurements", o.measurements); err != nil {
		errs = append(errs, err)
	} else {
		paths = p
	}
	known := false
	for _, f := range calibrate.Formats {
		known = known || f == o.format
	}
	if !known {
		errs = append(errs, usagef("calibrate: --input-format: unknown format %q (want one of %s)", o.format, strings.Join(calibrate.Formats, ", ")))
	}
	if o.timeCol != "median" && o.timeCol != "min" {
		errs = append(errs, usagef("calibrate: --time: %q, want median or min", o.timeCol))
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	names := append([]string{dev.Name}, dev.Aliases...)
	var all []calibrate.Measurement
	for _, path := range paths {
		ms, warns, err := calibrate.ReadFile(path, o.format, strings.Join(names, "|"))
		if err != nil {
			var pe *calibrate.ParseError
			errs = append(errs, inputError("--measurements", err, errors.As(err, &pe)))
			continue
		}
		warn(stderr, warns)
		all = append(all, ms...)
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	if o.timeCol == "min" {
		all = calibrate.FastestSample(all)
	}
	return dev, all, nil
}

func warn(w io.Writer, warns []error) {
	for _, e := range warns {
		fmt.Fprintf(w, "perfsim: warning: %v\n", e)
	}
}

func calibrateFit(ctx context.Context, o calibrateOptions, f format, stdout, stderr io.Writer) error {
	// Every problem at once, and the output's before minutes of fitting.
	var outErr error
	if o.out == "" {
		outErr = usagef("calibrate fit: -o: give the calibrated hardware file to write")
	} else if outErr = fileio.CheckOutput(o.out); outErr != nil {
		outErr = fmt.Errorf("calibrate fit: -o: %w", outErr)
	}
	var flagErrs []error
	if o.folds < 1 {
		flagErrs = append(flagErrs, usagef("calibrate fit: --folds %d: want at least 1 (1 turns the cross-validation off)", o.folds))
	}
	if o.date != "" {
		if _, err := time.Parse("2006-01-02", o.date); err != nil {
			flagErrs = append(flagErrs, usagef("calibrate fit: --date %q: want a date such as 2026-01-31", o.date))
		}
	}
	dev, ms, err := loadMeasurements(o, stderr)
	if err != nil || outErr != nil || len(flagErrs) > 0 {
		return errors.Join(append(flagErrs, outErr, err)...)
	}
	date := o.date
	if date == "" {
		date = time.Now().UTC().Format("2006-01-02")
	}
	var source string
	if o.timeCol == "min" {
		source = "time: the fastest sample (time_min_s)"
	}
	res, err := calibrate.Fit(dev, ms, calibrate.Options{Folds: o.folds, Seed: o.seed, NoResidual: o.noResidual, Date: date, Source: source})
	if err != nil {
		// Rows whose times no kernel takes are bad input, each at its
		// file:line (exit 2); a fit the data do not support is not.
		var pe *calibrate.ParseError
		if errors.As(err, &pe) {
			return inputError("", err, true)
		}
		return err
	}
	warn(stderr, res.Warnings)
	files := map[string]bool{}
	for _, m := range ms {
		files[baseName(m.File)] = true
	}
	comment := []string{
		fmt.Sprintf("%s, calibrated by perfsim calibrate fit on %s", dev.Name, date),
		fmt.Sprintf("from %d measurements: %s", len(ms), strings.Join(sortedKeys(files), ", ")),
		"(each [efficiency] table's source gives its points and held-out error)",
	}
	// The file must read back before it replaces -o: a fit that the loader
	// rejects leaves the old file as it was.
	var b bytes.Buffer
	if err := calibrate.WriteDevice(&b, res.Device, comment); err != nil {
		return err
	}
	if _, err := hardware.Load(bytes.NewReader(b.Bytes()), o.out); err != nil {
		return fmt.Errorf("calibrate fit: the fitted device does not load (nothing written): %w", err)
	}
	if err := calibrate.WriteFile(o.out, b.Bytes()); err != nil {
		return err
	}
	return printFit(stdout, f, res)
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// printFit prints the per-class errors of a fit.
func printFit(w io.Writer, f format, res *calibrate.Result) error {
	type stats struct {
		N      int     `json:"n"`
		Median float64 `json:"median_abs_err"`
		P90    float64 `json:"p90_abs_err"`
		Max    float64 `json:"max_abs_err"`
	}
	type class struct {
		Class    string `json:"class"`
		Points   int    `json:"points"`
		Dropped  int    `json:"dropped,omitempty"` // left out as faster than DRAM allows
		Fitted   bool   `json:"fitted"`
		InSample stats  `json:"in_sample"`
		HeldOut  stats  `json:"held_out"`
	}
	conv := func(s calibrate.Stats) stats { return stats{s.N, s.Median, s.P90, s.Max} }
	var cs []class
	for _, c := range res.Classes {
		cs = append(cs, class{c.Name(), c.Points, c.Dropped, c.Fitted, conv(c.InSample), conv(c.HeldOut)})
	}
	switch f {
	case formatJSON:
		return writeJSON(w, struct {
			Schema  string  `json:"schema"`
			Device  string  `json:"device"`
			Classes []class `json:"classes"`
		}{"perfsim.calibrate-fit/v1", res.Device.Name, cs})
	case formatCSV:
		var rows [][]string
		for _, c := range cs {
			rows = append(rows, []string{c.Class, fmt.Sprint(c.Points), fmt.Sprint(c.Fitted),
				num(c.InSample.Median), num(c.InSample.P90), num(c.InSample.Max),
				fmt.Sprint(c.HeldOut.N), num(c.HeldOut.Median), num(c.HeldOut.P90), num(c.HeldOut.Max)})
		}
		return writeCSV(w, []string{"class", "points", "fitted", "in_median_abs_err", "in_p90_abs_err", "in_max_abs_err",
			"heldout_n", "heldout_median_abs_err", "heldout_p90_abs_err", "heldout_max_abs_err"}, rows)
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "class\tpoints\tfitted\tin-sample |err| median\tp90\tmax\theld-out median\tp90\tmax")
	for _, c := range cs {
		ho := "-\t-\t-"
		if c.HeldOut.N > 0 {
			ho = fmt.Sprintf("%s\t%s\t%s", pct(c.HeldOut.Median), pct(c.HeldOut.P90), pct(c.HeldOut.Max))
		}
		fitted := "yes"
		if !c.Fitted {
			fitted = "no (defaults)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", c.Class, c.Points, fitted, pct(c.InSample.Median), pct(c.InSample.P90), pct(c.InSample.Max), ho)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range cs {
		if c.Dropped > 0 {
			fmt.Fprintf(w, "%s: %d more points dropped, not fitted: faster than the device's DRAM bandwidth allows for a working set larger than its L2\n", c.Class, c.Dropped)
		}
	}
	return nil
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

func calibrateValidate(o calibrateOptions, f format, stdout, stderr io.Writer) error {
	if o.worst < 0 {
		return usagef("calibrate validate: --worst must not be negative")
	}
	dev, ms, err := loadMeasurements(o, stderr)
	if err != nil {
		return err
	}
	scores, warns := calibrate.Score(dev, ms, o.worst)
	warn(stderr, warns)
	type row struct {
		Kernel    string  `json:"kernel"`
		DType     string  `json:"dtype"`
		Shape     string  `json:"shape"`
		File      string  `json:"file"`
		Line      int     `json:"line"`
		Measured  float64 `json:"measured_s"`
		Predicted float64 `json:"predicted_s"`
		Err       float64 `json:"err"`
	}
	type class struct {
		Class  string  `json:"class"`
		N      int     `json:"n"`
		Median float64 `json:"median_abs_err"`
		P90    float64 `json:"p90_abs_err"`
		Max    float64 `json:"max_abs_err"`
		Bias   float64 `json:"median_err"`
		Worst  []row   `json:"worst"`
	}
	var cs []class
	for _, s := range scores {
		c := class{Class: s.Name, N: s.Stats.N, Median: s.Stats.Median, P90: s.Stats.P90, Max: s.Stats.Max, Bias: s.Stats.Bias}
		for _, r := range s.Worst {
			c.Worst = append(c.Worst, row{r.M.Kernel, r.M.DType.String(), shape(r.M), baseName(r.M.File), r.M.Line,
				float64(r.M.Time), float64(r.Predicted), r.Err})
		}
		cs = append(cs, c)
	}
	switch f {
	case formatJSON:
		return writeJSON(stdout, struct {
			Schema  string  `json:"schema"`
			Device  string  `json:"device"`
			Classes []class `json:"classes"`
		}{"perfsim.calibrate-validate/v1", dev.Name, cs})
	case formatCSV:
		var rows [][]string
		for _, c := range cs {
			rows = append(rows, []string{c.Class, fmt.Sprint(c.N), num(c.Median), num(c.P90), num(c.Max), num(c.Bias)})
		}
		return writeCSV(stdout, []string{"class", "n", "median_abs_err", "p90_abs_err", "max_abs_err", "median_err"}, rows)
	}
	tw := newTable(stdout)
	fmt.Fprintf(tw, "%s: predicted against measured\n", dev.Name)
	fmt.Fprintln(tw, "class\tpoints\t|err| median\tp90\tmax\tbias")
	for _, c := range cs {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%+.1f%%\n", c.Class, c.N, pct(c.Median), pct(c.P90), pct(c.Max), 100*c.Bias)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range cs {
		if len(c.Worst) == 0 {
			continue
		}
		fmt.Fprintf(stdout, "\nworst %s rows:\n", c.Class)
		tw = newTable(stdout)
		fmt.Fprintln(tw, "  where\tshape\tmeasured\tpredicted\terror")
		for _, r := range c.Worst {
			fmt.Fprintf(tw, "  %s:%d\t%s\t%v\t%v\t%+.1f%%\n", r.File, r.Line, r.Shape, model.Seconds(r.Measured), model.Seconds(r.Predicted), 100*r.Err)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// shape describes a measurement's kernel shape.
func shape(m calibrate.Measurement) string {
	switch {
	case m.M > 0:
		s := fmt.Sprintf("%d×%d×%d", m.M, m.N, m.K)
		if m.Batch > 1 {
			s = fmt.Sprintf("%d·%s", m.Batch, s)
		}
		return s
	case m.Heads > 0:
		return fmt.Sprintf("b%d h%d/%d d%d q%d kv%d", m.Batch, m.Heads, m.KVHeads, m.HeadDim, m.QLen, m.KVLen)
	case m.Ranks > 0:
		return fmt.Sprintf("%d ranks, %v", m.Ranks, m.Bytes)
	}
	return m.Bytes.String()
}

// calibrateMerge writes (or, with --check, compares) the catalog overlay
// of a fitted device file.
func calibrateMerge(o calibrateOptions, stdout io.Writer) error {
	if o.hw == "" {
		return usagef("calibrate merge: --hw: give the fitted device file (calibrate/fitted/<stem>.toml)")
	}
	if o.out == "" {
		return usagef("calibrate merge: -o: give the overlay to write (hardware/devices/fitted/<stem>.toml)")
	}
	dev, err := hardware.Resolve(o.hw)
	if err != nil {
		return hwFlagError(err)
	}
	// The overlay is applied to the catalog device of the same file stem:
	// it must be the device that was fitted.
	stem := strings.TrimSuffix(baseName(o.out), ".toml")
	if cat, err := hardware.Lookup(stem); err != nil || cat.Name != dev.Name {
		name := "no catalog device"
		if err == nil {
			name = cat.Name
		}
		return usagef("calibrate merge: -o %s: the overlay of catalog device %q must be named after its file stem (%s has %s)", o.out, dev.Name, stem, name)
	}
	var b bytes.Buffer
	from := filepath.ToSlash(filepath.Clean(o.hw))
	if err := calibrate.WriteFitted(&b, dev, from); err != nil {
		return err
	}
	// The overlay must apply: a strict re-read, on the fitted device itself.
	probe := *dev
	if err := hardware.ApplyFitted(&probe, bytes.NewReader(b.Bytes()), o.out); err != nil {
		return fmt.Errorf("calibrate merge: the overlay does not load: %w", err)
	}
	if o.check {
		old, err := fileio.ReadFile(o.out, hardware.MaxFileSize, "hardware file")
		if err != nil {
			return fmt.Errorf("calibrate merge: %w", err)
		}
		if !bytes.Equal(old, b.Bytes()) {
			return fmt.Errorf("calibrate merge: %s differs from the overlay of %s: run calibrate/fitted/regen.sh", o.out, from)
		}
		fmt.Fprintf(stdout, "%s: up to date with %s\n", o.out, from)
		return nil
	}
	if err := calibrate.WriteFittedFile(o.out, dev, from); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: fitted parameters of %s from %s\n", o.out, dev.Name, from)
	return nil
}
