package serve

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/perfsim/perfsim/internal/jsonkeys"
	"github.com/perfsim/perfsim/model"
)

// A TraceError is a problem at a line of a trace file.
type TraceError struct {
	File string
	Line int
	Key  string // the column or field, "" for the whole line
	Err  error
}

func (e *TraceError) Error() string {
	if e.Key != "" {
		return fmt.Sprintf("%s:%d: %s: %v", e.File, e.Line, e.Key, e.Err)
	}
	return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
}

func (e *TraceError) Unwrap() error { return e.Err }

// MaxTraceSize bounds the bytes of a trace or a lengths file: 64 MiB is
// over ten million rows, more than MaxRequests.
const MaxTraceSize = 64 << 20

// maxTraceErrors bounds the problems a trace reports at once.
const maxTraceErrors = 20

// ReadTrace reads a trace's requests (LoadTrace) into a slice.
func ReadTrace(r io.Reader, file string, maxContext int) ([]Request, error) {
	t, err := LoadTrace(r, file, maxContext)
	if err != nil {
		return nil, err
	}
	return t.Requests(), nil
}

// LoadTrace reads requests to replay: CSV with a header naming
// arrival_s, input_tokens and output_tokens (prefix_id optional: any
// text or number, requests with equal ids share a prompt prefix; ids
// are numbered 1, 2, ... in order of first appearance into
// Request.Prefix, empty for none), or JSON lines with those keys (the format is told by the
// first non-blank byte: '{' is JSON lines). Arrivals are seconds since
// the start and must not go backwards; lengths are at least 1 and, when
// maxContext > 0, their sum at most maxContext. Every problem is
// reported at once (up to 20), each with its file:line:key. The file is
// read as a stream, never held, and its requests are kept in 24 bytes a
// row (Trace).
func LoadTrace(r io.Reader, file string, maxContext int) (*Trace, error) {
	in := &traceReader{r: r}
	br := bufio.NewReaderSize(in, 64<<10)
	// The format is told by the first byte that is not blank; the
	// blanks read to find it are read again by the parser.
	var blank bytes.Buffer
	jsonl := false
	for {
		c, _, err := br.ReadRune()
		if err != nil {
			break
		}
		if !strings.ContainsRune(" \t\r\n\ufeff", c) {
			jsonl = c == '{'
			_ = br.UnreadRune()
			break
		}
		if c != '\ufeff' { // a byte-order mark is not the text's: neither parser reads it
			blank.WriteRune(c)
		}
	}
	data := io.MultiReader(&blank, br)
	var errs []error
	add := func(line int, key string, err error) {
		if len(errs) < maxTraceErrors {
			errs = append(errs, &TraceError{file, line, key, err})
		}
	}
	t := &Trace{ids: prefixIDs{}}
	if jsonl {
		readJSONL(data, add, t)
	} else {
		readTraceCSV(data, add, t)
	}
	if in.err != nil {
		return nil, fmt.Errorf("serve: %s: %w", file, in.err)
	}
	if in.n > MaxTraceSize {
		return nil, fmt.Errorf("serve: %s: over the %d MiB limit for a %s", file, MaxTraceSize>>20, "trace")
	}
	t.ids = nil
	if len(errs) == 0 && t.n == 0 {
		return nil, fmt.Errorf("serve: %s: the trace holds no requests", file)
	}
	if t.n > MaxRequests {
		return nil, fmt.Errorf("serve: %s: %d requests, over the %d a run simulates", file, t.n, MaxRequests)
	}
	prev := model.Seconds(0)
	for i := range t.rows {
		q := t.at(i)
		line := q.ID
		if q.Arrival < prev {
			add(line, "arrival_s", fmt.Errorf("%g s goes back in time (the previous request arrives at %g s)", float64(q.Arrival), float64(prev)))
		}
		prev = max(prev, q.Arrival)
		if maxContext > 0 && q.Input+q.Output > maxContext {
			add(line, "input_tokens", fmt.Errorf("%d + %d output tokens exceed the model's context of %d", q.Input, q.Output, maxContext))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return t, nil
}

// readLimited reads r whole up to MaxTraceSize bytes; past them it is an
// error, not a file cut short.
func readLimited(r io.Reader, file, what string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxTraceSize+1))
	if err != nil {
		return nil, fmt.Errorf("serve: %s: %w", file, err)
	}
	if len(data) > MaxTraceSize {
		return nil, fmt.Errorf("serve: %s: over the %d MiB limit for a %s", file, MaxTraceSize>>20, what)
	}
	return data, nil
}

// traceValue checks one request's fields; ID is the line.
func traceValue(line int, arrival float64, in, out int64, add func(int, string, error)) (Request, bool) {
	ok := true
	if !(arrival >= 0 && arrival <= MaxTime) {
		add(line, "arrival_s", fmt.Errorf("want a time from 0 to %g s, got %g", MaxTime, arrival))
		ok = false
	}
	for _, f := range []struct {
		key string
		v   int64
	}{{"input_tokens", in}, {"output_tokens", out}} {
		if f.v < 1 || f.v > 1<<30 {
			add(line, f.key, fmt.Errorf("want a token count from 1 to %d, got %d", 1<<30, f.v))
			ok = false
		}
	}
	return Request{ID: line, Arrival: model.Seconds(arrival), Input: int(in), Output: int(out)}, ok
}

// prefixIDs numbers a trace's shared-prefix ids in order of first
// appearance, from 1 ("" is none).
type prefixIDs map[string]int

func (p prefixIDs) id(s string) int {
	if s == "" {
		return 0
	}
	if v, ok := p[s]; ok {
		return v
	}
	p[s] = len(p) + 1
	return p[s]
}

func readTraceCSV(data io.Reader, add func(int, string, error), t *Trace) {
	ids := t.ids
	cr := csv.NewReader(data)
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if err != nil {
		add(1, "", fmt.Errorf("want a CSV header arrival_s,input_tokens,output_tokens: %v", err))
		return
	}
	header = slices.Clone(header) // the reader reuses its record
	col := map[string]int{}
	dup, unknown := false, false
	known := []string{"arrival_s", "input_tokens", "output_tokens", "prefix_id"}
	for i, h := range header {
		k := strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if j, ok := col[k]; ok && slices.Contains(known, k) {
			add(1, k, fmt.Errorf("the header names it twice (columns %d and %d)", j+1, i+1))
			dup = true
		}
		if !slices.Contains(known, k) {
			// As JSON lines refuse an unknown key: a misspelt prefix_id
			// had been dropped without a word.
			add(1, "", fmt.Errorf("column %d: unknown column %q (want arrival_s,input_tokens,output_tokens[,prefix_id])", i+1, k))
			unknown = true
		}
		col[k] = i
	}
	if dup {
		return
	}
	var missing []string
	for _, k := range []string{"arrival_s", "input_tokens", "output_tokens"} {
		if _, ok := col[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		add(1, "", fmt.Errorf("the header lacks %s (want arrival_s,input_tokens,output_tokens[,prefix_id])", strings.Join(missing, ", ")))
		return
	}
	if unknown {
		return
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			// The record's position comes from the error: FieldPos
			// panics on a record that did not parse.
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				add(pe.Line, "", pe.Err)
			} else {
				add(0, "", err)
			}
			if errors.As(err, &pe) && pe.Err != csv.ErrFieldCount {
				break
			}
			continue
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(header) {
			add(line, "", fmt.Errorf("%d cells, the header has %d", len(rec), len(header)))
			continue
		}
		get := func(k string) string {
			if i := col[k]; i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		a, err0 := strconv.ParseFloat(get("arrival_s"), 64)
		in, err1 := strconv.ParseInt(get("input_tokens"), 10, 64)
		out, err2 := strconv.ParseInt(get("output_tokens"), 10, 64)
		if err0 != nil {
			add(line, "arrival_s", fmt.Errorf("want seconds, got %q", get("arrival_s")))
			a = 0
		}
		if err1 != nil {
			add(line, "input_tokens", fmt.Errorf("want an integer, got %q", get("input_tokens")))
			in = 1
		}
		if err2 != nil {
			add(line, "output_tokens", fmt.Errorf("want an integer, got %q", get("output_tokens")))
			out = 1
		}
		if err0 != nil || err1 != nil || err2 != nil {
			// The cells that did parse are checked too, each in
			// range, so that a row says all it has wrong at once.
			traceValue(line, a, in, out, add)
			continue
		}
		if q, ok := traceValue(line, a, in, out, add); ok {
			if _, has := col["prefix_id"]; has {
				q.Prefix = ids.id(get("prefix_id"))
			}
			t.add(q)
		}
	}
}

func readJSONL(data io.Reader, add func(int, string, error), t *Trace) {
	ids := t.ids
	sc := bufio.NewScanner(data)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var v struct {
			Arrival *float64 `json:"arrival_s"`
			In      *int64   `json:"input_tokens"`
			Out     *int64   `json:"output_tokens"`
			Prefix  any      `json:"prefix_id"`
		}
		d := json.NewDecoder(bytes.NewReader(b))
		d.DisallowUnknownFields()
		if err := d.Decode(&v); err != nil {
			// A value of the wrong type names its key, not Go's struct
			// ("cannot unmarshal string into Go struct field
			// .input_tokens of type int64").
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) && te.Field != "" {
				want := map[string]string{"arrival_s": "seconds (a number)", "input_tokens": "an integer", "output_tokens": "an integer"}[te.Field]
				add(line, te.Field, fmt.Errorf("want %s, got a JSON %s", want, te.Value))
				continue
			}
			add(line, "", fmt.Errorf("want a JSON object with arrival_s, input_tokens, output_tokens: %v", err))
			continue
		}
		bad := false
		for _, d := range jsonkeys.Duplicates(b) {
			add(line, d.Key, errors.New("given twice (JSON keeps the last; say which one you mean)"))
			bad = true
		}
		for _, f := range []struct {
			key string
			nil bool
		}{{"arrival_s", v.Arrival == nil}, {"input_tokens", v.In == nil}, {"output_tokens", v.Out == nil}} {
			if f.nil {
				add(line, f.key, errors.New("missing"))
				bad = true
			}
		}
		if bad {
			continue
		}
		if q, ok := traceValue(line, *v.Arrival, *v.In, *v.Out, add); ok {
			switch x := v.Prefix.(type) {
			case nil:
			case string:
				q.Prefix = ids.id(x)
			case float64, bool:
				q.Prefix = ids.id(fmt.Sprint(x))
			default:
				add(line, "prefix_id", fmt.Errorf("want a string or a number, got %v", x))
				continue
			}
			t.add(q)
		}
	}
	if err := sc.Err(); err != nil {
		add(line+1, "", err)
	}
}

// ParseLengths parses a length distribution: N (fixed), uniform:MIN:MAX,
// normal:MEAN:SD[:MIN:MAX], lognormal:MEAN:SD[:MIN:MAX] (the mean and
// standard deviation of the lengths), or a list of values to draw from
// with equal weight, "empirical:" followed by comma-separated counts.
func ParseLengths(s string) (Lengths, error) {
	parts := strings.Split(strings.TrimSpace(s), ":")
	nums := func(want ...int) ([]float64, error) {
		args := parts[1:]
		if !slices.Contains(want, len(args)) {
			ns := make([]string, len(want))
			for i, n := range want {
				ns[i] = strconv.Itoa(n)
			}
			// "2 or 4 numbers", not Go's "[2 4] numbers".
			return nil, fmt.Errorf("%q: %s takes %s numbers, got %d", s, parts[0], strings.Join(ns, " or "), len(args))
		}
		out := make([]float64, len(args))
		for i, a := range args {
			v, err := strconv.ParseFloat(a, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%q: %q is not a number", s, a)
			}
			out[i] = v
		}
		return out, nil
	}
	posInt := func(v float64) bool { return v >= 1 && v <= 1<<30 && v == math.Trunc(v) }
	switch strings.ToLower(parts[0]) {
	case "uniform":
		v, err := nums(2)
		if err != nil {
			return nil, err
		}
		if !posInt(v[0]) || !posInt(v[1]) || v[1] < v[0] {
			return nil, fmt.Errorf("%q: want uniform:MIN:MAX with 1 ≤ MIN ≤ MAX whole tokens", s)
		}
		return Uniform{int(v[0]), int(v[1])}, nil
	case "normal", "lognormal":
		v, err := nums(2, 4)
		if err != nil {
			return nil, err
		}
		lo, hi := 1.0, float64(1<<30)
		if len(v) == 4 {
			lo, hi = v[2], v[3]
		}
		// An SD beyond the largest length (2^30 tokens) is no distribution
		// of lengths, and overflows the lognormal's parameters.
		if !(v[0] >= 1) || !(v[1] >= 0) || v[0] > 1<<30 || v[1] > 1<<30 || !posInt(lo) || !posInt(hi) || hi < lo {
			return nil, fmt.Errorf("%q: want %s:MEAN:SD[:MIN:MAX] with 1 ≤ MEAN ≤ 2^30, 0 ≤ SD ≤ 2^30 and 1 ≤ MIN ≤ MAX whole tokens", s, parts[0])
		}
		if parts[0] == "normal" {
			return Normal{v[0], v[1], int(lo), int(hi)}, nil
		}
		if v[1] == 0 {
			return Fixed(int(math.Round(v[0]))), nil
		}
		return LogNormal{v[0], v[1], int(lo), int(hi)}, nil
	case "empirical":
		if len(parts) != 2 || parts[1] == "" {
			return nil, fmt.Errorf("%q: want empirical: and comma-separated lengths", s)
		}
		var e Empirical
		for _, f := range strings.Split(parts[1], ",") {
			v, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || v < 1 || v > 1<<30 {
				return nil, fmt.Errorf("%q: %q is not a token count of at least 1", s, f)
			}
			e = append(e, v)
		}
		return e, nil
	}
	if len(parts) == 1 {
		v, err := strconv.Atoi(parts[0])
		if err == nil && v >= 1 && v <= 1<<30 {
			return Fixed(v), nil
		}
	}
	return nil, fmt.Errorf("%q: want N, uniform:MIN:MAX, normal:MEAN:SD[:MIN:MAX], lognormal:MEAN:SD[:MIN:MAX], empirical:N1,N2,…,Nk or file:PATH", s)
}
