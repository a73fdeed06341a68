package main

import (
	"context"
	"errors"
	"io"
)

// runPlotCmd is a placeholder until its issue lands.
func runPlotCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("plot: not implemented yet")
}
