package calibrate

import (
	"math"
	"regexp"
	"strings"
	"testing"
)

// FuzzCPUInfo checks the readers of /proc/cpuinfo, /proc/meminfo and the
// sysfs cache sizes on arbitrary text: none panics, a value has no space
// around it, a clock is "N MHz", and sizes are finite and non-negative.
//
//	go test -fuzz=FuzzCPUInfo ./calibrate
func FuzzCPUInfo(f *testing.F) {
	f.Add("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13 64-Core Processor\ncpu MHz\t\t: 2450.000\ncache size\t: 512 KB\n",
		"MemTotal:       65842220 kB\nMemFree:        1234 kB\n", "32768K")
	f.Add("model name: x\ncpu MHz: 1e400\n", "MemTotal: 1e400 kB\n", "1e308M")
	f.Add("cpu MHz : NaN\n::::\n", "MemTotal: -5 kB\n", "-1K")
	f.Add(strings.Repeat("x", 70000)+"\nmodel name: late\n", "MemTotal:\n", "")
	clock := regexp.MustCompile(`^[0-9]+ MHz$`)
	f.Fuzz(func(t *testing.T, cpuinfo, meminfo, cache string) {
		for _, key := range []string{"model name", "vendor_id", "cpu MHz"} {
			v := cpuinfoValue(strings.NewReader(cpuinfo), key)
			if v != strings.TrimSpace(v) || strings.Contains(v, "\n") {
				t.Fatalf("cpuinfoValue(%q) = %q: padded or multi-line", key, v)
			}
		}
		if c := clockOf(cpuinfoValue(strings.NewReader(cpuinfo), "cpu MHz")); c != "" && !clock.MatchString(c) {
			t.Fatalf("clock %q, want N MHz", c)
		}
		if kb := meminfoValue([]byte(meminfo), "MemTotal"); math.IsNaN(kb) || math.IsInf(kb, 0) || kb < 0 {
			t.Fatalf("meminfoValue(%q) = %v", meminfo, kb)
		}
		if b := float64(cacheSizeOf(cache)); math.IsNaN(b) || math.IsInf(b, 0) || b < 0 {
			t.Fatalf("cacheSizeOf(%q) = %v", cache, b)
		}
	})
}
