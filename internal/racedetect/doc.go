// Package racedetect says whether the binary was built with the race
// detector (go test -race). Tests whose measure the detector changes
// (allocation counts, real CPU timings) skip under it, saying why, and
// keep their bounds in normal builds.
package racedetect
