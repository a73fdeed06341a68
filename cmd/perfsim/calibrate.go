package main

import (
	"context"
	"errors"
	"io"
)

// runCalibrateCmd is a placeholder until its issue lands.
func runCalibrateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("calibrate: not implemented yet")
}
