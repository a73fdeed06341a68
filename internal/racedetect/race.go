//go:build race

package racedetect

// Enabled is true: this is a -race build.
const Enabled = true
