//go:build unix

package fileio

import (
	"errors"
	"syscall"
)

// alive reports whether a process pid runs (or might: a process of another
// user answers EPERM).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
