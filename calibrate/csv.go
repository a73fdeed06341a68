package calibrate

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/perfsim/perfsim/model"
)

// The measurement CSV schema: one row per timed kernel, a header naming the
// columns, '#' comment lines allowed. kernels/README.md documents every
// column with its unit; the CUDA suite (kernels/), the CPU suite
// (MeasureCPU) and WriteCSV all write these columns in this order.
//
// Columns may come in any order. The required ones must be present; an
// optional column that is absent reads as zero (or empty). An unknown
// column is an error, so that a misspelt "time_ms" is not silently
// ignored.
var csvColumns = []struct {
	name     string
	required bool
}{
	{"device", true}, {"driver", false}, {"clocks", false}, {"source", false},
	{"kernel", true}, {"dtype", true},
	{"m", true}, {"n", true}, {"k", true}, {"batch", false},
	{"bytes", true}, {"flops", true},
	{"time_s", true}, {"time_min_s", false}, {"time_max_s", false}, {"reps", false},
	{"heads", false}, {"kv_heads", false}, {"head_dim", false},
	{"q_len", false}, {"kv_len", false}, {"ranks", false},
}

// CSVHeader returns the column names WriteCSV writes, in order.
func CSVHeader() []string {
	h := make([]string, len(csvColumns))
	for i, c := range csvColumns {
		h[i] = c.name
	}
	return h
}

// Kernel names used by perfsim's own suites (kernels/ and MeasureCPU).
// Importers may use other lowercase names; ReadCSV accepts any name made
// of lowercase letters, digits and '_'.
const (
	KernelGEMM       = "gemm"        // C = A·B, FLOPs 2·m·n·k·batch
	KernelRead       = "read"        // stream read of an array
	KernelWrite      = "write"       // stream write of an array
	KernelCopy       = "copy"        // b[i] = a[i]
	KernelTriad      = "triad"       // a[i] = b[i] + s·c[i]
	KernelLaunch     = "launch"      // an empty kernel (call), back to back
	KernelLaunchSync = "launch_sync" // an empty kernel and a synchronisation
	KernelAllReduce  = "all_reduce"  // NCCL all-reduce
	KernelAllGather  = "all_gather"  // NCCL all-gather
	KernelAllToAll   = "all_to_all"  // NCCL all-to-all
)

// A ParseError is a problem with one cell or line of a measurements file.
type ParseError struct {
	File   string // file name as given to ReadCSV
	Line   int    // 1-based line; 0 when the error concerns the whole file
	Column string // column name; "" when the error concerns the whole line
	Err    error
}

func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString("calibrate: ")
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Column != "" {
		b.WriteString(": " + e.Column)
	}
	b.WriteString(": " + e.Err.Error())
	return b.String()
}

func (e *ParseError) Unwrap() error { return e.Err }

// Errors ReadCSV wraps in a *ParseError, for errors.Is.
var (
	ErrMissingColumn = errors.New("missing column")
	ErrBadTime       = errors.New("time must be a positive, finite number of seconds")
	ErrNoRows        = errors.New("no measurements")
)

// maxReported bounds how many row errors (and how many warnings of one
// kind) ReadCSV reports one by one; the rest are counted.
const maxReported = 20

// ReadCSV reads measurements in perfsim's schema from r; file names r in
// messages. It returns the rows in file order, warnings, and an error
// joining every problem found (each a *ParseError naming file:line and
// column), in which case the rows are nil.
//
// Errors: a missing header or required column, an unknown or repeated
// column, a line with the wrong number of cells, a non-numeric or negative
// number, a time that is zero, negative, NaN or infinite, a time_min_s
// above time_s or a time_max_s below it, an unknown dtype, a gemm row
// without its shape or dtype, a collective of fewer than 2 ranks, and a
// file with no rows. Warnings: rows
// identical to an earlier row (dropped, so each point counts once) and
// gemm rows whose flops differ from 2·m·n·k·batch. ReadCSV does not check
// that the rows name one device: see CheckDevice.
func ReadCSV(r io.Reader, file string) ([]Measurement, []error, error) {
	if file == "" {
		file = "input"
	}
	br := bufio.NewReader(r)
	if b, err := br.Peek(3); err == nil && string(b) == "\uFEFF" {
		br.Discard(3) // a spreadsheet's byte-order mark
	}
	cr := csv.NewReader(br)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	perr := func(line int, col string, err error) *ParseError {
		return &ParseError{File: file, Line: line, Column: col, Err: err}
	}

	header, err := cr.Read()
	if err == io.EOF {
		return nil, nil, perr(0, "", errors.New("empty file: want a header line"))
	}
	if err != nil {
		return nil, nil, csvError(file, err)
	}
	headerLine, _ := cr.FieldPos(0)
	idx, err := readHeader(header, func(col string, err error) error { return perr(headerLine, col, err) })
	if err != nil {
		return nil, nil, err
	}

	var (
		ms        []Measurement
		errs      []error
		nerrs     int
		seen      = map[Measurement]int{} // row (File, Line zeroed) → first line
		dups      []error
		ndups     int
		badFLOPs  int
		firstBadF int
	)
	addErr := func(e error) {
		nerrs++
		if nerrs <= maxReported {
			errs = append(errs, e)
		}
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			addErr(csvError(file, err))
			break
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(header) {
			addErr(perr(line, "", fmt.Errorf("%d cells, the header has %d", len(rec), len(header))))
			continue
		}
		m, rowErrs := parseRow(rec, idx)
		for _, e := range rowErrs {
			addErr(perr(line, e.col, e.err))
		}
		if len(rowErrs) > 0 {
			continue
		}
		if first, ok := seen[m]; ok {
			ndups++
			if ndups <= maxReported {
				dups = append(dups, perr(line, "", fmt.Errorf("duplicate of line %d (dropped)", first)))
			}
			continue
		}
		seen[m] = line
		if m.Kernel == KernelGEMM && !gemmFLOPsMatch(m) {
			badFLOPs++
			if badFLOPs == 1 {
				firstBadF = line
			}
		}
		m.File, m.Line = file, line
		ms = append(ms, m)
	}
	if nerrs > maxReported {
		errs = append(errs, perr(0, "", fmt.Errorf("%d more errors not shown", nerrs-maxReported)))
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	if len(ms) == 0 {
		return nil, nil, perr(0, "", ErrNoRows)
	}
	var warns []error
	warns = append(warns, dups...)
	if ndups > maxReported {
		warns = append(warns, perr(0, "", fmt.Errorf("%d more duplicate rows dropped", ndups-maxReported)))
	}
	if badFLOPs > 0 {
		warns = append(warns, perr(firstBadF, "flops", fmt.Errorf("%d gemm rows have flops other than 2·m·n·k·batch (the first here)", badFLOPs)))
	}
	return ms, warns, nil
}

// csvError turns an encoding/csv error into a *ParseError.
func csvError(file string, err error) error {
	var ce *csv.ParseError
	if errors.As(err, &ce) {
		return &ParseError{File: file, Line: ce.Line, Err: ce.Err}
	}
	return &ParseError{File: file, Err: err}
}

// readHeader maps each known column to its index in the header.
func readHeader(header []string, perr func(col string, err error) error) (map[string]int, error) {
	known := map[string]bool{}
	for _, c := range csvColumns {
		known[c.name] = true
	}
	idx := map[string]int{}
	var errs []error
	for i, h := range header {
		name := strings.ToLower(strings.TrimSpace(h))
		switch {
		case !known[name]:
			errs = append(errs, perr(name, fmt.Errorf("unknown column (want %s)", strings.Join(CSVHeader(), ","))))
		case hasKey(idx, name):
			errs = append(errs, perr(name, errors.New("column given twice")))
		default:
			idx[name] = i
		}
	}
	for _, c := range csvColumns {
		if _, ok := idx[c.name]; c.required && !ok {
			errs = append(errs, perr(c.name, ErrMissingColumn))
		}
	}
	return idx, errors.Join(errs...)
}

func hasKey(m map[string]int, k string) bool { _, ok := m[k]; return ok }

// A cellError is a problem with one cell of a row.
type cellError struct {
	col string
	err error
}

// parseRow parses one record; idx maps column names to cells.
func parseRow(rec []string, idx map[string]int) (Measurement, []cellError) {
	var errs []cellError
	cell := func(col string) string {
		if i, ok := idx[col]; ok {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	str := func(col string) string { return cell(col) }
	integer := func(col string) int {
		v, err := parseCount(cell(col))
		if err != nil {
			errs = append(errs, cellError{col, err})
		}
		return v
	}
	float := func(col string) float64 {
		s := cell(col)
		if s == "" {
			return 0
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			errs = append(errs, cellError{col, fmt.Errorf("not a number: %q", s)})
			return 0
		}
		return v
	}
	var m Measurement
	m.Device = str("device")
	m.Driver = str("driver")
	m.Clocks = str("clocks")
	m.Source = str("source")
	m.Kernel = strings.ToLower(str("kernel"))
	if s := cell("dtype"); s != "" {
		d, err := model.ParseDType(s)
		if err != nil {
			errs = append(errs, cellError{"dtype", err})
		}
		m.DType = d
	}
	m.M, m.N, m.K = integer("m"), integer("n"), integer("k")
	m.Batch = integer("batch")
	m.Bytes = model.Bytes(float("bytes"))
	m.FLOPs = model.FLOPs(float("flops"))
	if cell("time_s") == "" {
		errs = append(errs, cellError{"time_s", fmt.Errorf("empty: %w", ErrBadTime)})
	}
	m.Time = model.Seconds(float("time_s"))
	m.TimeMin = model.Seconds(float("time_min_s"))
	m.TimeMax = model.Seconds(float("time_max_s"))
	m.Reps = integer("reps")
	m.Heads, m.KVHeads, m.HeadDim = integer("heads"), integer("kv_heads"), integer("head_dim")
	m.QLen, m.KVLen = integer("q_len"), integer("kv_len")
	m.Ranks = integer("ranks")
	if len(errs) > 0 {
		return m, errs
	}
	return m, check(m)
}

// parseCount parses a non-negative integer cell; empty is 0. An integral
// float such as "4096.0" (as pandas writes integer columns holding gaps)
// is accepted.
func parseCount(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return 0, fmt.Errorf("not an integer: %q", s)
		}
		v = int(f)
	}
	if v < 0 {
		return 0, fmt.Errorf("negative: %q", s)
	}
	return v, nil
}

// check validates a measurement's values, as ReadCSV and WriteCSV require
// them.
func check(m Measurement) []cellError {
	var errs []cellError
	add := func(col string, err error) { errs = append(errs, cellError{col, err}) }
	for _, s := range []struct{ col, v string }{
		{"device", m.Device}, {"driver", m.Driver}, {"clocks", m.Clocks},
		{"source", m.Source}, {"kernel", m.Kernel},
	} {
		if err := checkText(s.v); err != nil {
			add(s.col, err)
		}
	}
	if m.Device == "" {
		add("device", errors.New("empty"))
	} else if strings.HasPrefix(m.Device, "#") {
		add("device", errors.New("must not begin with '#' (a comment mark in the first column)"))
	}
	if !isKernelName(m.Kernel) {
		add("kernel", fmt.Errorf("%q is not a kernel name (lowercase letters, digits and _)", m.Kernel))
	}
	if m.DType != model.Invalid && !m.DType.Valid() {
		add("dtype", fmt.Errorf("invalid data type %d", m.DType))
	}
	for _, v := range []struct {
		col string
		n   int
	}{{"m", m.M}, {"n", m.N}, {"k", m.K}, {"batch", m.Batch}, {"reps", m.Reps},
		{"heads", m.Heads}, {"kv_heads", m.KVHeads}, {"head_dim", m.HeadDim},
		{"q_len", m.QLen}, {"kv_len", m.KVLen}, {"ranks", m.Ranks}} {
		if v.n < 0 {
			add(v.col, fmt.Errorf("negative: %d", v.n))
		}
	}
	if m.Kernel == KernelGEMM {
		if m.M <= 0 || m.N <= 0 || m.K <= 0 {
			add("m", fmt.Errorf("a gemm needs m, n and k > 0, got %d×%d×%d", m.M, m.N, m.K))
		}
		if m.DType == model.Invalid {
			add("dtype", errors.New("a gemm needs a dtype"))
		}
	}
	switch m.Kernel {
	case KernelAllReduce, KernelAllGather, KernelReduceScatter, KernelAllToAll, KernelAllReduceOneShot:
		// Fewer than two ranks move nothing between GPUs: the model's
		// ring prices such a row at 0 s.
		if m.Ranks < 2 {
			add("ranks", fmt.Errorf("%s needs 2 ranks or more, got %d", m.Kernel, m.Ranks))
		}
	}
	for _, v := range []struct {
		col string
		x   float64
	}{{"bytes", float64(m.Bytes)}, {"flops", float64(m.FLOPs)}} {
		if math.IsNaN(v.x) || math.IsInf(v.x, 0) || v.x < 0 {
			add(v.col, fmt.Errorf("must be a finite number ≥ 0, got %v", v.x))
		}
	}
	t := float64(m.Time)
	if math.IsNaN(t) || math.IsInf(t, 0) || t <= 0 {
		add("time_s", fmt.Errorf("%w, got %v", ErrBadTime, t))
	}
	if x := float64(m.TimeMin); x != 0 {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			add("time_min_s", fmt.Errorf("%w, got %v", ErrBadTime, x))
		} else if x > t {
			add("time_min_s", fmt.Errorf("%v exceeds time_s %v", x, t))
		}
	}
	if x := float64(m.TimeMax); x != 0 {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			add("time_max_s", fmt.Errorf("%w, got %v", ErrBadTime, x))
		} else if x < t {
			add("time_max_s", fmt.Errorf("%v is below time_s %v", x, t))
		}
	}
	return errs
}

// checkText rejects text that would not survive a round trip through
// ReadCSV, which trims spaces: control characters and surrounding space.
func checkText(s string) error {
	if strings.TrimSpace(s) != s {
		return fmt.Errorf("%q has surrounding space", s)
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return fmt.Errorf("%q holds a control character or invalid UTF-8", s)
		}
	}
	return nil
}

func isKernelName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// gemmFLOPsMatch reports whether a gemm row's flops are 2·m·n·k·batch
// (batch 0 counting as 1), to a relative 1e-6.
func gemmFLOPsMatch(m Measurement) bool {
	b := float64(max(m.Batch, 1))
	want := 2 * float64(m.M) * float64(m.N) * float64(m.K) * b
	return math.Abs(float64(m.FLOPs)-want) <= 1e-6*want
}

// WriteCSV writes ms in perfsim's schema: the header, then one row per
// measurement in the order given. Numbers are written in base units with
// the shortest text that parses back to the same float64, so ReadCSV
// returns exactly what was written (File and Line aside). Unknown
// time_min_s and time_max_s (zero) are written as empty cells. A
// measurement ReadCSV would reject is an error, and nothing is written.
func WriteCSV(w io.Writer, ms []Measurement) error {
	var errs []error
	for i, m := range ms {
		for _, e := range check(m) {
			where := fmt.Sprintf("row %d", i+1)
			if m.File != "" && m.Line > 0 {
				where = fmt.Sprintf("%s:%d", m.File, m.Line)
			}
			errs = append(errs, fmt.Errorf("calibrate: write csv: %s: %s: %w", where, e.col, e.err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader()); err != nil {
		return err
	}
	for _, m := range ms {
		if err := cw.Write(formatRow(m)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// formatRow formats m in the column order of csvColumns.
func formatRow(m Measurement) []string {
	i := strconv.Itoa
	f := func(v float64) string {
		if v == math.Trunc(v) && math.Abs(v) < 1e21 {
			return strconv.FormatFloat(v, 'f', -1, 64) // whole numbers without an exponent: 3145728, not 3.145728e+06
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	opt := func(v float64) string {
		if v == 0 {
			return ""
		}
		return f(v)
	}
	dt := ""
	if m.DType != model.Invalid {
		dt = m.DType.String()
	}
	return []string{
		m.Device, m.Driver, m.Clocks, m.Source, m.Kernel, dt,
		i(m.M), i(m.N), i(m.K), i(m.Batch),
		f(float64(m.Bytes)), f(float64(m.FLOPs)),
		f(float64(m.Time)), opt(float64(m.TimeMin)), opt(float64(m.TimeMax)), i(m.Reps),
		i(m.Heads), i(m.KVHeads), i(m.HeadDim), i(m.QLen), i(m.KVLen), i(m.Ranks),
	}
}

// CheckDevice reports rows whose device is not want, one error per
// distinct device name (with its first line and row count). A row matches
// when every word of want (letters and digits, case ignored) is a word of
// its device: "h200" matches "NVIDIA H200" and "a100-sxm4-80gb" matches
// "NVIDIA A100-SXM4-80GB". With want empty, CheckDevice checks instead
// that all rows name the same device as the first.
func CheckDevice(ms []Measurement, want string) []error {
	if len(ms) == 0 {
		return nil
	}
	match := func(device string) bool {
		dw := words(device)
		for w := range words(want) {
			if !dw[w] {
				return false
			}
		}
		return true
	}
	if strings.TrimSpace(want) == "" {
		first := strings.Join(wordList(ms[0].Device), " ")
		want = ms[0].Device
		match = func(device string) bool { return strings.Join(wordList(device), " ") == first }
	}
	type bad struct {
		first Measurement
		n     int
	}
	var order []string
	bads := map[string]*bad{}
	for _, m := range ms {
		if match(m.Device) {
			continue
		}
		b, ok := bads[m.Device]
		if !ok {
			b = &bad{first: m}
			bads[m.Device] = b
			order = append(order, m.Device)
		}
		b.n++
	}
	var errs []error
	for _, d := range order {
		b := bads[d]
		where := "calibrate: "
		if b.first.File != "" {
			where += b.first.File + ":"
		}
		if b.first.Line > 0 {
			where += strconv.Itoa(b.first.Line) + ": "
		}
		errs = append(errs, fmt.Errorf("%s%d rows measured on %q, not %q", where, b.n, d, want))
	}
	return errs
}

// words returns the set of lowercase alphanumeric words of s.
func words(s string) map[string]bool {
	ws := map[string]bool{}
	for _, w := range wordList(s) {
		ws[w] = true
	}
	return ws
}

// wordList returns the lowercase alphanumeric words of s, in order.
func wordList(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}
