package fileio

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// newFileMode is the permission of a file WriteFile creates.
const newFileMode = 0o644

// temps holds this process's temporary files, for RemoveTemps. A file is
// created and recorded under its lock, so that RemoveTemps, which takes
// the lock and then refuses new files (stopped), never misses one.
var temps = struct {
	sync.Mutex
	names   map[string]bool
	stopped bool
	n       atomic.Int64
}{names: map[string]bool{}}

// errStopped is a write begun after RemoveTemps: the process is ending.
var errStopped = errors.New("perfsim is ending on a signal")

// WriteFile writes data to path: atomically over a regular file (or a new
// one), through a symlink to its target, directly to a character device
// or a named pipe; a directory or another kind of file is an error.
func WriteFile(path string, data []byte) error {
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return writeAtomic(path, data, newFileMode)
	case err != nil:
		return err
	case st.Mode()&os.ModeSymlink != 0:
		target, err := filepath.EvalSymlinks(path)
		if errors.Is(err, fs.ErrNotExist) {
			// A dangling link: create what it points to, as a shell's >
			// would; the link stays.
			dest, rerr := os.Readlink(path)
			if rerr != nil {
				return rerr
			}
			if !filepath.IsAbs(dest) {
				dest = filepath.Join(filepath.Dir(path), dest)
			}
			if _, serr := os.Lstat(dest); serr == nil {
				return fmt.Errorf("%s: a chain of symlinks that ends nowhere: %w", path, err)
			}
			return writeAtomic(dest, data, newFileMode)
		}
		if err != nil {
			return err
		}
		return WriteFile(target, data)
	case st.IsDir():
		return fmt.Errorf("%s: is a directory (give a file name)", path)
	case st.Mode().IsRegular():
		return writeAtomic(path, data, st.Mode().Perm())
	case st.Mode()&(os.ModeCharDevice|os.ModeNamedPipe) != 0:
		// A terminal, /dev/stdout, /dev/null or a pipe: write through; a
		// rename would replace the node with a regular file.
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return fmt.Errorf("%s: is a %s: perfsim writes regular files, terminals and pipes only", path, kind(st.Mode()))
}

// CheckOutput reports, before any work is done, whether WriteFile could
// write path: not a directory or another kind of file it refuses, in a
// directory that exists. It writes nothing.
func CheckOutput(path string) error {
	if path == "-" {
		// "-" is standard output by convention (plot's -o takes it so):
		// a file named "-" had been written in the working directory.
		return errors.New(`"-": standard output is not written here (give a file name, /dev/stdout, or ./- for a file named -)`)
	}
	st, err := os.Stat(path) // through symlinks, as WriteFile writes
	switch {
	case errors.Is(err, fs.ErrNotExist):
		dir := filepath.Dir(path)
		if dst, derr := os.Stat(dir); derr != nil || !dst.IsDir() {
			return fmt.Errorf("%s: no such directory (%s does not exist)", path, dir)
		}
		return nil
	case err != nil:
		return err
	case st.IsDir():
		return fmt.Errorf("%s: is a directory (give a file name)", path)
	case st.Mode().IsRegular(), st.Mode()&(os.ModeCharDevice|os.ModeNamedPipe) != 0:
		return nil
	}
	return fmt.Errorf("%s: is a %s: perfsim writes regular files, terminals and pipes only", path, kind(st.Mode()))
}

// tempPrefix is the start of the names of path's temporary files.
func tempPrefix(base string) string { return "." + base + ".perfsim-" }

// writeAtomic writes data to a temporary file beside path, syncs it, and
// renames it over path with permission perm.
func writeAtomic(path string, data []byte, perm os.FileMode) error {
	w, err := createTemp(path, perm)
	if err != nil {
		return err
	}
	if _, err := w.f.Write(data); err != nil {
		w.Abort()
		return fmt.Errorf("%s: %w", path, err)
	}
	return w.Commit()
}

// createTemp creates the temporary file beside path that Commit renames
// over it with permission perm.
func createTemp(path string, perm os.FileMode) (*File, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	removeStale(dir, base)
	tmp := filepath.Join(dir, fmt.Sprintf("%s%d-%d.tmp", tempPrefix(base), os.Getpid(), temps.n.Add(1)))
	temps.Lock()
	if temps.stopped {
		temps.Unlock()
		return nil, fmt.Errorf("%s: %w", path, errStopped)
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		temps.names[tmp] = true
	}
	temps.Unlock()
	if err != nil {
		return nil, fmt.Errorf("%s: cannot write a file beside it: %w", path, err)
	}
	return &File{path: path, dir: dir, perm: perm, f: f, tmp: tmp}, nil
}

// A File is a file written whole as it is made (Create): its bytes go
// to a temporary file beside its path, which Commit syncs and renames
// over the path; Abort, or a failed Commit, removes it and leaves the
// path as it was. A path WriteFile would not write through a temporary
// file (a symlink, a terminal, a pipe) is written by Commit from memory.
type File struct {
	path, dir string
	perm      os.FileMode
	f         *os.File // the temporary file; nil: buf
	tmp       string
	buf       []byte
	err       error // the first write's error
	done      bool
}

// Create starts writing path (see File).
func Create(path string) (*File, error) {
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return createTemp(path, newFileMode)
	case err != nil:
		return nil, err
	case st.Mode().IsRegular():
		return createTemp(path, st.Mode().Perm())
	case st.IsDir():
		return nil, fmt.Errorf("%s: is a directory (give a file name)", path)
	}
	return &File{path: path}, nil
}

// Write writes p to the file (or, for WriteFile's other targets, to
// memory); it fails with the first error and keeps failing.
func (w *File) Write(p []byte) (int, error) {
	switch {
	case w.err != nil:
		return 0, w.err
	case w.done:
		return 0, fmt.Errorf("%s: written after its commit or abort", w.path)
	case w.f == nil:
		w.buf = append(w.buf, p...)
		return len(p), nil
	}
	n, err := w.f.Write(p)
	if err != nil {
		w.err = fmt.Errorf("%s: %w", w.path, err)
	}
	return n, w.err
}

// Commit makes the file whole at its path; on failure the path is as
// it was.
func (w *File) Commit() (err error) {
	if w.done {
		return fmt.Errorf("%s: committed after its commit or abort", w.path)
	}
	if w.f == nil {
		w.done = true
		return WriteFile(w.path, w.buf)
	}
	if w.err != nil {
		w.Abort()
		return w.err
	}
	defer func() {
		if err != nil {
			w.Abort()
		}
	}()
	if err = w.f.Chmod(w.perm); err != nil {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	if err = w.f.Sync(); err != nil {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	if err = w.f.Close(); err != nil {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	if err = os.Rename(w.tmp, w.path); err != nil {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	w.forget()
	// The rename is durable once the directory is synced; where a
	// directory cannot be synced (some file systems), the data still is.
	if d, derr := os.Open(w.dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Abort removes the temporary file, leaving the path as it was; it does
// nothing after Commit.
func (w *File) Abort() {
	if w.done {
		return
	}
	if w.f != nil {
		w.f.Close()
		os.Remove(w.tmp)
		w.forget()
	}
	w.done, w.buf = true, nil
}

// forget drops the temporary file from those RemoveTemps removes.
func (w *File) forget() {
	w.done = true
	temps.Lock()
	delete(temps.names, w.tmp)
	temps.Unlock()
}

// removeStale removes the temporary files of base in dir left by
// processes that no longer run (a write killed before its rename).
func removeStale(dir, base string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), tempPrefix(base))
		if !ok || !strings.HasSuffix(rest, ".tmp") {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() || alive(pid) {
			continue
		}
		os.Remove(filepath.Join(dir, e.Name()))
	}
}

// RemoveTemps removes the temporary files this process is writing. perfsim
// calls it when a signal ends the process mid-write.
// Writes that have not yet created their file fail after it.
func RemoveTemps() {
	temps.Lock()
	defer temps.Unlock()
	temps.stopped = true
	for name := range temps.names {
		os.Remove(name)
	}
}
