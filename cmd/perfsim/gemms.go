package main

import (
	"context"
	"errors"
	"io"
)

// runGemmsCmd is a placeholder until its issue lands.
func runGemmsCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("gemms: not implemented yet")
}
