package fuzzcheck

import (
	"fmt"
	"strings"
	"testing"
)

type color int

func (c color) String() string { return [...]string{"red", "blue"}[c] }

func parseColor(s string) (color, error) {
	switch strings.ToLower(s) {
	case "red":
		return 0, nil
	case "blue":
		return 1, nil
	}
	return 0, fmt.Errorf("unknown color %q (want red or blue)", s)
}

// FuzzNames runs Names on a parser that keeps its promises.
func FuzzNames(f *testing.F) {
	Names(f, []string{"red", "BLUE", "", "green"}, parseColor, "want red or blue")
}
