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
func writeAtomic(path string, data []byte, perm os.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	removeStale(dir, base)
	tmp := filepath.Join(dir, fmt.Sprintf("%s%d-%d.tmp", tempPrefix(base), os.Getpid(), temps.n.Add(1)))
	temps.Lock()
	if temps.stopped {
		temps.Unlock()
		return fmt.Errorf("%s: %w", path, errStopped)
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		temps.names[tmp] = true
	}
	temps.Unlock()
	if err != nil {
		return fmt.Errorf("%s: cannot write a file beside it: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
		temps.Lock()
		delete(temps.names, tmp)
		temps.Unlock()
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	// The rename is durable once the directory is synced; where a
	// directory cannot be synced (some file systems), the data still is.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
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
