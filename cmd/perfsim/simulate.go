package main

import (
	"context"
	"errors"
	"io"
)

// runSimulateCmd is a placeholder until its issue lands.
func runSimulateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("simulate: not implemented yet")
}
