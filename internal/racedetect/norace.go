//go:build !race

package racedetect

// Enabled is false: this is not a -race build.
const Enabled = false
