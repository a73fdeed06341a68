// Package fileio owns how perfsim reads its input files and writes its
// output files, so that every command treats files the same way.
//
// Reading (ReadFile, Open): the path is checked before a byte is read. A
// directory, a device, a pipe or a socket (also through a symlink, such as
// a .toml linked to /dev/zero) is refused at once, and so is a file over
// the caller's size limit; what is read is bounded by that limit even if
// the file grows meanwhile.
//
// Writing (WriteFile): a regular file is replaced atomically: the data
// goes to a temporary file beside it, is synced to disk, and is renamed
// over the target, which keeps its permission bits; a reader sees the old
// file or the new one, never a part. A symlink is written through (its
// target is replaced, the link stays); a terminal, /dev/stdout, /dev/null
// or a named pipe is written to directly; a directory or any other kind of
// file is refused. Temporary files are named .NAME.perfsim-PID.tmp: a
// later write to the same target removes those whose process is gone
// (killed mid-write), and RemoveTemps, which perfsim calls on SIGINT and
// SIGTERM, removes the process's own. Create gives the same writes to a
// file too large to hold in memory (a File: written as it is made, made
// whole by Commit, or left as it was by Abort).
package fileio
