package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/perfsim/perfsim/internal/fileio"
)

// cleanUpOnSignal makes SIGINT and SIGTERM remove the temporary file of a
// write in progress (fileio.RemoveTemps) before perfsim exits with the
// shell's status for the signal (128 + its number). A SIGKILL cannot be
// caught: the next write to the same file removes what it left.
func cleanUpOnSignal() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		fileio.RemoveTemps()
		code := 130
		if s == syscall.SIGTERM {
			code = 143
		}
		os.Exit(code)
	}()
}
