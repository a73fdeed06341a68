package main

import (
	"context"
	"errors"
	"io"
)

// runMaxModelCmd is a placeholder until its issue lands.
func runMaxModelCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("maxmodel: not implemented yet")
}
