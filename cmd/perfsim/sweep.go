package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/perfsim/perfsim/model"
)

const sweepSynopsis = "perfsim sweep --hw A[,B...] --model M[,N...] [--batch LIST] [--input LIST] [--output LIST] [--tp LIST] [--pp LIST] [--dtype LIST] [--format table|csv|json] [--phases] [--yes]"

const sweepExamples = `  # batch sizes 1, 2, 4, ..., 256 on two devices
  perfsim sweep --hw h100,a100 --model llama3-8b --batch 1..256x2

  # a design space as CSV: layouts × prompt lengths
  perfsim sweep --hw h100 --model llama3-70b --tp 2,4,8 --batch 1,8,64 --input 1024..32768x2 --format csv > space.csv

  # additive ranges: batch 1 to 8 in steps of 1
  perfsim sweep --hw h100 --model llama3-8b --batch 1..8+1 --format json

A list is values and ranges separated by commas: 1,2,4; lo..hi (step 1);
lo..hi+d (additive); lo..hixf or lo..hi*f (multiplicative). A value takes
simulate's count suffixes: 1k..128kx2, 4Ki. Points run in
parallel on every core and stream out as they complete, in a fixed order:
hardware, model, dtype, tp, pp, batch, input, output, the last varying
fastest. A point
that cannot run (a tp that does not divide the heads) is left out and
counted on stderr. A sweep of more than 10 million points needs --yes.
`

// sweepGCPercent is the garbage collector's target (GOGC) while a sweep
// streams its rows.
const sweepGCPercent = 400

// maxSweepPoints is the largest sweep run without --yes: about a minute
// of simulation and gigabytes of output.
const maxSweepPoints = 10_000_000

// sweepFlags are the flags of perfsim sweep.
type sweepFlags struct {
	hw, model, batch, input, output, tp, pp, dtype, format string
	sets                                                   []string
	phases, yes                                            bool
	workers                                                int
	energy                                                 energyOptions
}

func (o *sweepFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.hw, "hw", "", "hardware, a comma list: catalog names or hardware TOML files")
	fs.StringArrayVar(&o.sets, "set", nil, "what-if: change a datasheet number of every --hw device, key=value with a unit (repeatable; the keys of simulate --set)")
	fs.StringVar(&o.model, "model", "", "models, a comma list: catalog names or model files")
	fs.StringVar(&o.batch, "batch", "1", "batch sizes (a list)")
	fs.StringVar(&o.input, "input", "2048", "prompt lengths in tokens (a list)")
	fs.StringVar(&o.output, "output", "128", "generated tokens (a list)")
	fs.StringVar(&o.tp, "tp", "1", "tensor-parallel degrees (a list)")
	fs.StringVar(&o.pp, "pp", "1", "pipeline-parallel degrees (a list)")
	fs.StringVar(&o.dtype, "dtype", "bf16", "data types of weights, activations and KV cache (a list)")
	addFormatFlag(fs, &o.format)
	fs.BoolVar(&o.phases, "phases", false, "json: each row's per-phase time by op class too (as simulate prints it)")
	fs.BoolVar(&o.yes, "yes", false, "run a sweep of more than 10 million points")
	fs.BoolVar(&o.yes, "force", false, "the same as --yes")
	fs.IntVar(&o.workers, "workers", 0, "parallel workers (default: the number of CPUs)")
	o.energy.AddFlags(fs)
	fs.MarkHidden("force")
}

// spec resolves the flags into a sweep. The size is checked before any
// file is read; every problem comes back at once.
func (o *sweepFlags) spec() (*sweepSpec, error) {
	s := &sweepSpec{}
	var errs []error
	ints := []struct {
		name string
		text string
		dst  *[]int
	}{{"batch", o.batch, &s.Batch}, {"input", o.input, &s.Input}, {"output", o.output, &s.Output}, {"tp", o.tp, &s.TP}, {"pp", o.pp, &s.PP}}
	for _, f := range ints {
		v, err := parseIntList(f.name, f.text)
		errs = append(errs, err)
		*f.dst = v
	}
	dts, err := parseNameList("dtype", o.dtype)
	errs = append(errs, err)
	for _, d := range dts {
		t, err := model.ParseDType(d)
		if err != nil {
			errs = append(errs, usagef("--dtype: %v", err))
			continue
		}
		s.DTypes = append(s.DTypes, t)
	}
	hws, err := parseNameList("hw", o.hw)
	if strings.TrimSpace(o.hw) == "" {
		err = usagef("--hw: no hardware given (a catalog name such as h100, or a .toml file)")
	}
	errs = append(errs, err)
	models, err := parseNameList("model", o.model)
	if strings.TrimSpace(o.model) == "" {
		err = usagef("--model is required (a catalog name such as llama3-8b, or a model file)")
	}
	errs = append(errs, err)
	if o.workers < 0 {
		errs = append(errs, usagef("--workers: must not be negative, got %d", o.workers))
	}
	if errors.Join(errs...) == nil {
		n := float64(len(hws)*len(models)) * float64(len(s.DTypes)*len(s.TP)*len(s.PP)) *
			float64(len(s.Batch)) * float64(len(s.Input)) * float64(len(s.Output))
		if n > maxSweepPoints && !o.yes {
			return nil, usagef("sweep: %.4g points is more than %d; narrow the lists or confirm with --yes", n, maxSweepPoints)
		}
	}
	// Every hardware and model named, each problem once (a bad --set is
	// the same for every device): the first bad one had hidden the rest,
	// and a bad list flag all of them.
	seen := map[string]bool{}
	add := func(err error) {
		if msg := err.Error(); !seen[msg] {
			seen[msg] = true
			errs = append(errs, err)
		}
	}
	for _, h := range hws {
		d, err := resolveHardware(h)
		if err == nil {
			d, err = whatIf(d, o.sets)
		}
		if err != nil {
			add(err)
			continue
		}
		s.HW = append(s.HW, d)
	}
	for _, m := range models {
		w, err := resolveModel(m)
		if err != nil {
			add(err)
			continue
		}
		s.Models = append(s.Models, w)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

func runSweepCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o sweepFlags
	fs := newFlagSet("sweep", sweepSynopsis, sweepExamples, stderr)
	o.AddFlags(fs)
	if err := parseFlagsNoArgs(fs, args, "sweep"); err != nil {
		return err
	}
	f, err := parseFormat(o.format)
	if err != nil {
		return err
	}
	if o.phases && f != formatJSON {
		// The table and CSV have no phase columns (issue 17 item 11).
		return usagef("--phases: only with --format json; --format %s would ignore it", f)
	}
	s, err := o.spec()
	if err != nil {
		return err
	}
	if err := o.energy.sweep(fs, s); err != nil {
		return err
	}
	if f != formatTable {
		// A streamed sweep's live heap is a few megabytes whatever its
		// size (the rows in flight and each worker's runner), so the
		// collector's default target (twice the live heap) ran it about
		// 15 times a second, at 35% of the CPU; five times the live
		// heap keeps the peak well under 100 MB. (The table holds every
		// row until it aligns the columns: its heap grows with the
		// points, and keeps the default.)
		defer debug.SetGCPercent(debug.SetGCPercent(sweepGCPercent))
	}
	skipped, warnings, err := writeSweep(ctx, stdout, s, f, o.workers, o.phases, progressLine(stderr))
	for i, w := range warnings {
		if i == maxSweepWarnings {
			fmt.Fprintf(stderr, "perfsim: warning: (%d more)\n", len(warnings)-i)
			break
		}
		fmt.Fprintf(stderr, "perfsim: warning: %s\n", w)
	}
	if len(skipped) > 0 {
		fmt.Fprintf(stderr, "perfsim: sweep: %d of %.0f points left out: %s\n", countSkipped(skipped), s.size(), summarize(skipped))
	}
	return err
}

// writeSweep runs the sweep and streams its rows to w in point order as
// they complete: each row is simulate's JSON (without the per-phase
// classes unless phases) in format f, rendered by the workers. Memory
// does not grow with the number of points, but for the table, whose
// columns are aligned over all rows. It also returns why points were
// left out, by message; when none could run it writes nothing and fails.
// The inverse queries (max_batch, max_context) are not answered per
// point: they are 0.
func writeSweep(ctx context.Context, w io.Writer, s *sweepSpec, f format, workers int, phases bool, progress func(done, total int)) (map[string]int, []string, error) {
	sw := &sweepWriter{s: s, f: f, phases: phases, out: bufio.NewWriterSize(w, 64<<10), skipped: map[string]int{}}
	for _, d := range s.HW {
		l := d.CalibrationLabel()
		sw.labels, sw.labelsCSV = append(sw.labels, l), append(sw.labelsCSV, appendCSVField(nil, l))
	}
	// The CSV prints no per-op or per-class rows.
	o := sweepOptions{Workers: workers, Progress: progress, Keep: sw.render, Totals: f == formatCSV}
	err := streamSweep(ctx, s, o, sw.emit)
	if err == nil {
		err = sw.close()
	}
	return sw.skipped, sw.warnings, err
}

// maxSweepWarnings bounds the distinct warnings a sweep prints.
const maxSweepWarnings = 10

// A sweepWriter renders sweep rows (in the workers) and writes them in
// order (in the emitting goroutine).
type sweepWriter struct {
	s       *sweepSpec
	f       format
	phases  bool
	out     *bufio.Writer
	tw      *tabwriter.Writer
	rows    int
	skipped map[string]int
	labels  []string // per device of the sweep, its calibration label
	// labelsCSV are the labels as CSV fields.
	labelsCSV [][]byte
	// warnings are the points' distinct warnings, in point order.
	warnings []string
	warned   map[string]bool
}

// render turns r's report into its output row (r.Row) and drops the
// report; a point that could not run keeps only its error.
func (sw *sweepWriter) render(r *sweepResult) {
	if r.Err != nil {
		return
	}
	r.Warnings = r.Report.Warnings
	if sw.f == formatCSV {
		e, c := sweepEnergy(sw.s, r)
		r.Row = appendSweepRow(r.Row, r.Report, sw.labelsCSV[r.Point.HW], e, c)
		r.Report = nil
		return
	}
	j := simulateJSON(r.Report, sw.labels[r.Point.HW], limitsResult{}, false)
	j.Energy, j.Cost = sweepEnergy(sw.s, r)
	r.Report = nil // the row is all that is kept
	if !sw.phases {
		j.Phases = []phaseJSON{}
	}
	switch sw.f {
	case formatJSON:
		b, err := json.MarshalIndent(j, "  ", "  ")
		if err != nil {
			r.Err = err
			return
		}
		r.Row = append(append(r.Row, "  "...), b...)
	default:
		r.Row = sweepTableRow(r.Row, &j)
	}
}

// emit writes one rendered row, the header or the opening bracket first.
func (sw *sweepWriter) emit(r *sweepResult) error {
	if r.Err != nil {
		sw.skipped[r.Err.Error()]++
		return nil
	}
	for _, w := range r.Warnings {
		if m := w.Error(); !sw.warned[m] {
			if sw.warned == nil {
				sw.warned = map[string]bool{}
			}
			sw.warned[m] = true
			sw.warnings = append(sw.warnings, m)
		}
	}
	first := sw.rows == 0
	sw.rows++
	var err error
	switch sw.f {
	case formatJSON:
		if first {
			sw.out.WriteString("[\n")
		} else {
			sw.out.WriteString(",\n")
		}
		_, err = sw.out.Write(r.Row)
	case formatCSV:
		if first {
			c := csv.NewWriter(sw.out)
			c.Write(sweepColumns)
			c.Flush()
		}
		_, err = sw.out.Write(r.Row)
	default:
		if first {
			sw.tw = newTable(sw.out)
			fmt.Fprintln(sw.tw, sweepTableHeader+energyHeader(priced(sw.s)))
		}
		_, err = sw.tw.Write(r.Row)
	}
	return err
}

// close ends the output, or fails when no point could run.
func (sw *sweepWriter) close() error {
	if sw.rows == 0 {
		return errors.New("sweep: no point could run")
	}
	switch sw.f {
	case formatJSON:
		sw.out.WriteString("\n]\n")
	case formatTable:
		if err := sw.tw.Flush(); err != nil {
			return err
		}
		// Devices whose efficiencies were not fitted to their own
		// measurements, and what-ifs, say so under the table.
		for i, d := range sw.s.HW {
			if d.Calibration().Kind != "calibrated" || d.WhatIfBase != "" {
				fmt.Fprintf(sw.out, "%s: %s\n", d.Name, sw.labels[i])
			}
		}
	}
	return sw.out.Flush()
}

func countSkipped(m map[string]int) int {
	n := 0
	for _, c := range m {
		n += c
	}
	return n
}

// summarize lists the reasons points were left out, most common first.
func summarize(m map[string]int) string {
	type kv struct {
		msg string
		n   int
	}
	var l []kv
	for k, v := range m {
		l = append(l, kv{k, v})
	}
	sort.Slice(l, func(i, j int) bool {
		if l[i].n != l[j].n {
			return l[i].n > l[j].n
		}
		return l[i].msg < l[j].msg
	})
	var parts []string
	for i, x := range l {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d other reasons", len(l)-3))
			break
		}
		parts = append(parts, fmt.Sprintf("%d × %s", x.n, x.msg))
	}
	return strings.Join(parts, "; ")
}

// progressLine returns a progress callback that redraws one line on
// stderr, or nil when stderr is not a terminal (a file or a pipe gets no
// progress, so that logs stay clean).
func progressLine(stderr io.Writer) func(done, total int) {
	f, ok := stderr.(*os.File)
	if !ok {
		return nil
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	var mu sync.Mutex
	last := time.Time{}
	return func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if now := time.Now(); done < total && now.Sub(last) < 100*time.Millisecond {
			return
		} else {
			last = now
		}
		fmt.Fprintf(f, "\rperfsim: sweep: %d/%d points (%.0f%%)", done, total, 100*float64(done)/float64(total))
		if done == total {
			fmt.Fprint(f, "\r\033[K")
		}
	}
}

// sweepColumns are the CSV columns: simulate's JSON keys, dotted for the
// nested scenario and memory objects.
var sweepColumns = []string{
	"model", "hardware", "calibration", "mode", "devices", "params",
	"scenario.batch", "scenario.input_tokens", "scenario.output_tokens", "scenario.tp", "scenario.pp",
	"scenario.weights", "scenario.act", "scenario.kv",
	"ttft_s", "tpot_s", "e2e_s", "output_tokens_per_s", "output_tokens_per_s_per_device", "images_per_s", "samples_per_s",
	"prefill_bound", "decode_bound", "fits",
	"memory.weights_bytes", "memory.kv_cache_bytes", "memory.activations_bytes", "memory.reserve_bytes",
	"memory.total_bytes", "memory.capacity_bytes", "memory.usable_bytes", "memory.headroom_bytes",
	// energy.go
	"energy.average_w_per_device", "energy.prefill_j_per_input_token", "energy.decode_j_per_output_token",
	"energy.j_per_output_token", "energy.output_tokens_per_j",
	"cost.currency", "cost.per_request", "cost.per_million_input_tokens", "cost.per_million_output_tokens", "cost.inputs",
}

func itoa64(v int64) string { return strconv.FormatInt(v, 10) }

const sweepTableHeader = "HARDWARE\tMODEL\tBATCH\tIN\tOUT\tTP\tPP\tDTYPE\tTTFT\tTPOT\tE2E\tTOK/S/DEV\tMEMORY\tFITS"

// sweepTableRow appends one row of the table, tab-separated, to dst.
func sweepTableRow(dst []byte, j *simJSON) []byte {
	sec := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return model.Seconds(*v).String()
	}
	sc := j.Scenario
	tok := "-"
	if j.OutTokDevice != nil {
		tok = strconv.FormatFloat(*j.OutTokDevice, 'f', 1, 64)
		if v := *j.OutTokDevice; v > 0 && v < 0.05 {
			tok = fnum(v) // not 0.0: a run of hours to its first token
		}
	}
	dt := sc.Act
	if sc.Weights != sc.Act || sc.KV != sc.Act {
		dt = sc.Weights + "/" + sc.Act + "/" + sc.KV
	}
	fits := "yes"
	if !j.Fits {
		fits = "no (" + model.Bytes(-j.Memory.Headroom).BinaryString() + " short)"
	}
	length := func(v *int) string {
		if v == nil {
			return "-"
		}
		return strconv.Itoa(*v)
	}
	var in, out *int
	if s := sc.InferenceScenario; s != nil {
		in, out = s.InputTokens, s.OutputTokens
	}
	return fmt.Appendf(dst, "%s\t%s\t%d\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s%s\n", j.Hardware, j.Model, sc.Batch, length(in),
		length(out), sc.TP, sc.PP, dt, sec(j.TTFT), sec(j.TPOT), sec(j.E2E), tok, model.Bytes(j.Memory.Total).BinaryString(), fits, energyTableCells(*j, j.Cost != nil))
}
