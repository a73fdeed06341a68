package main

import (
	"context"
	"errors"
	"io"
)

// runKernelCmd is a placeholder until its issue lands.
func runKernelCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("kernel: not implemented yet")
}
