package fileio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrTooLarge is what errors.Is finds in the error for a file over its
// size limit.
var ErrTooLarge = errors.New("file too large")

// ErrNotRegular is what errors.Is finds in the error for a path that is
// not a regular file (a directory, a device, a pipe, a socket).
var ErrNotRegular = errors.New("not a regular file")

// A kindError says what is wrong in its own words and is one of the
// sentinel errors above for errors.Is.
type kindError struct {
	msg  string
	kind error
}

func (e *kindError) Error() string        { return e.msg }
func (e *kindError) Is(target error) bool { return target == e.kind }

func errorf(kind error, format string, args ...any) error {
	return &kindError{fmt.Sprintf(format, args...), kind}
}

// check returns an error when path is not a regular file of at most limit
// bytes; what names the kind of file in messages ("hardware file").
func check(path string, limit int64, what string) error {
	st, err := os.Stat(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			pe.Op = "open" // as os.Open says it: "open x.toml: no such file or directory"
		}
		return err
	}
	switch m := st.Mode(); {
	case m.IsDir():
		return errorf(ErrNotRegular, "%s: is a directory, not a %s", path, what)
	case !m.IsRegular():
		return errorf(ErrNotRegular, "%s: is a %s, not a %s", path, kind(m), what)
	case st.Size() > limit:
		return errorf(ErrTooLarge, "%s: %d bytes, over the %s limit for a %s", path, st.Size(), size(limit), what)
	}
	return nil
}

// kind names a file mode that is not a regular file or a directory.
func kind(m os.FileMode) string {
	switch {
	case m&os.ModeCharDevice != 0:
		return "character device"
	case m&os.ModeDevice != 0:
		return "block device"
	case m&os.ModeNamedPipe != 0:
		return "named pipe"
	case m&os.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}

// size writes a limit in binary units ("1 MiB").
func size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadFile reads the regular file at path, of at most limit bytes; what
// names the kind of file in messages ("hardware file", "model file").
func ReadFile(path string, limit int64, what string) ([]byte, error) {
	r, err := Open(path, limit, what)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// Open opens the regular file at path for reading at most limit bytes: a
// read past the limit (a file that grew since it was checked) fails with
// ErrTooLarge rather than returning a truncated file.
func Open(path string, limit int64, what string) (io.ReadCloser, error) {
	if err := check(path, limit, what); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	// The path may have been swapped since check: look at what was opened.
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = errorf(ErrNotRegular, "%s: is a %s, not a %s", path, kind(st.Mode()), what)
		}
		return nil, err
	}
	return &limited{f: f, left: limit, path: path, limit: limit, what: what}, nil
}

// limited reads at most limit bytes of f and fails past them.
type limited struct {
	f           *os.File
	left, limit int64
	path, what  string
}

func (l *limited) Read(p []byte) (int, error) {
	if l.left <= 0 {
		// One more byte tells a file of exactly limit bytes from a longer one.
		var one [1]byte
		if n, _ := l.f.Read(one[:]); n > 0 {
			return 0, errorf(ErrTooLarge, "%s: over the %s limit for a %s", l.path, size(l.limit), l.what)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.f.Read(p)
	l.left -= int64(n)
	return n, err
}

func (l *limited) Close() error { return l.f.Close() }
