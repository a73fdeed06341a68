package main

import (
	"context"
	"errors"
	"io"
)

// runSweepCmd is a placeholder until its issue lands.
func runSweepCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("sweep: not implemented yet")
}
