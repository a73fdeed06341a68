package serve

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ParseDisagg parses a disaggregated layout, xPyD (2P1D: two prefill
// instances and one decode instance; case does not matter), into its
// instance counts, each at least 1.
func ParseDisagg(s string) (prefill, decode int, err error) {
	bad := fmt.Errorf("%q: want xPyD with x prefill and y decode instances, each at least 1 (e.g. 2P1D)", s)
	u := strings.ToUpper(strings.TrimSpace(s))
	i := strings.IndexByte(u, 'P')
	if i <= 0 || !strings.HasSuffix(u, "D") || i+1 >= len(u)-1 {
		return 0, 0, bad
	}
	p, err1 := strconv.Atoi(u[:i])
	d, err2 := strconv.Atoi(u[i+1 : len(u)-1])
	if err1 != nil || err2 != nil || p < 1 || d < 1 || p > 1<<16 || d > 1<<16 || u[0] == '+' || u[i+1] == '+' {
		return 0, 0, bad
	}
	return p, d, nil
}

// maxLengthErrors bounds the problems ReadLengths reports at once.
const maxLengthErrors = 20

// ReadLengths reads an empirical length distribution: one token count
// per line (whole, 1 to 2^30), blank lines and lines starting with #
// ignored; every value is drawn with equal weight. Problems name
// file:line, up to 20 at once.
func ReadLengths(r io.Reader, file string) (Empirical, error) {
	data, err := readLimited(r, file, "lengths file")
	if err != nil {
		return nil, err
	}
	var out Empirical
	var errs []error
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		f := strings.TrimSpace(sc.Text())
		if line == 1 {
			f = strings.TrimPrefix(f, "\ufeff")
		}
		if f == "" || strings.HasPrefix(f, "#") {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 || v > 1<<30 {
			if len(errs) < maxLengthErrors {
				errs = append(errs, &TraceError{File: file, Line: line, Err: fmt.Errorf("want a token count from 1 to %d, got %q", 1<<30, f)})
			}
			continue
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, &TraceError{File: file, Line: line + 1, Err: err})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("serve: %s: no lengths (want one token count per line)", file)
	}
	return out, nil
}
