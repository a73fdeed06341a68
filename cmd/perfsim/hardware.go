package main

import (
	"context"
	"errors"
	"io"
)

// runHardwareCmd is a placeholder until its issue lands.
func runHardwareCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("hardware: not implemented yet")
}
