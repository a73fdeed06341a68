// Package hardware describes devices and systems: the TOML schema of a
// hardware file, a strict loader that reports every problem at once with
// its file and line, and an embedded catalog of real accelerators, each
// number with its source.
package hardware
