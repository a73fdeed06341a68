package calibrate

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"

	"github.com/perfsim/perfsim/internal/fileio"
	"github.com/perfsim/perfsim/model"
)

// HostTOML returns a hardware TOML file describing the CPU of this
// machine, the device the CPU suite measured, so that its measurements can
// be fitted like a catalog device's:
//
//	perfsim calibrate measure --device cpu -o cpu.csv --describe host.toml
//	perfsim calibrate fit --hw host.toml --measurements cpu.csv -o host-fitted.toml
//
// Every number carries its source:
//   - compute_units: the threads the GEMMs ran on (the GOMAXPROCS the
//     rows' driver column records; runtime.GOMAXPROCS where none does);
//   - the fp64 and fp32 vector peaks: compute_units × the clock
//     (/proc/cpuinfo "cpu MHz") × the FLOPs per cycle of the widest vector
//     FMA the processor flags (avx512f: 32 fp64, avx2 with fma: 16, else 4;
//     fp32 twice that): an upper bound, since gonum's pure-Go kernels use
//     less of the vector width, which the fit's compute efficiency absorbs;
//   - memory bandwidth: the best rate among ms's read, write, copy and
//     triad rows (from caches where the arrays fit them), so that the
//     fitted memory efficiency is relative to what was measured;
//   - capacity: /proc/meminfo MemTotal; l2 (the last-level cache):
//     /sys/devices/system/cpu/cpu0/cache/index3/size where it exists;
//   - launch_overhead: ms's launch row, the cost of an empty call.
//
// It returns an error, naming what is missing, where the system does not
// say the clock or the memory size (no /proc: not Linux) or ms holds no
// bandwidth row. date is written into the provenance.
func HostTOML(ms []Measurement, date string) ([]byte, error) {
	var errs []error
	mhz, err := strconv.ParseFloat(cpuinfo("cpu MHz"), 64)
	if err != nil || !(mhz > 0) {
		errs = append(errs, errors.New(`describe host: the clock is not known (no "cpu MHz" in /proc/cpuinfo); write the hardware file by hand (docs/hardware.md)`))
	}
	memKB := meminfoKB("MemTotal")
	if memKB <= 0 {
		errs = append(errs, errors.New(`describe host: the memory size is not known (no "MemTotal" in /proc/meminfo); write the hardware file by hand (docs/hardware.md)`))
	}
	var bw model.ByteRate
	var bwRow string
	var launch model.Seconds
	for _, m := range ms {
		switch m.Kernel {
		case KernelRead, KernelWrite, KernelCopy, KernelTriad:
			if r := m.Bytes.Rate(m.Time); r > bw {
				bw, bwRow = r, fmt.Sprintf("%s of %v", m.Kernel, m.Bytes)
			}
		case KernelLaunch:
			launch = m.Time
		}
	}
	if bw <= 0 {
		errs = append(errs, errors.New("describe host: the measurements hold no read, write, copy or triad row to take the memory bandwidth from (measure them too: --kernels gemm,copy,triad)"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	cus := measuredThreads(ms)
	perCycle, isa := fmaFLOPsPerCycle(cpuinfo("flags"))
	clock := model.Hertz(mhz * 1e6)
	fp64 := model.FLOPRate(float64(cus) * perCycle * float64(clock))
	// The file holds fp64 as printed (four significant digits); fp32 is
	// twice that printed figure, so the file says exactly "fp32 = 2 × fp64".
	if r, err := model.ParseFLOPRate(fp64.String()); err == nil {
		fp64 = r
	}

	var b bytes.Buffer
	q := strconv.Quote
	fmt.Fprintf(&b, "# This machine's CPU, described by perfsim calibrate measure --device cpu --describe (%s).\n", date)
	fmt.Fprintf(&b, "name = %s\n", q(cpuName()))
	fmt.Fprintf(&b, "vendor = %s\n", q(cpuVendor()))
	fmt.Fprintf(&b, "kind = \"cpu\"\n")
	fmt.Fprintf(&b, "source = %s\n", q("perfsim calibrate measure --device cpu --describe, "+date+": /proc/cpuinfo, /proc/meminfo and the measurements"))
	fmt.Fprintf(&b, "compute_units = %d\n", cus)
	fmt.Fprintf(&b, "clock = %s\n", q(clock.String()))
	if launch > 0 {
		fmt.Fprintf(&b, "launch_overhead = %s\n", q(launch.String()))
	}
	fmt.Fprintf(&b, "sources = { compute_units = %s, clock = %s", q("GOMAXPROCS of the measurement: the threads gonum's GEMM ran on"), q("/proc/cpuinfo cpu MHz at the measurement"))
	if launch > 0 {
		fmt.Fprintf(&b, ", launch_overhead = %s", q("measured: the launch row (an empty call)"))
	}
	fmt.Fprintf(&b, " }\n\n[peak.vector]\n")
	fmt.Fprintf(&b, "source = %s\n", q(fmt.Sprintf("[D]: %d cores x %g FP64 (%g FP32) FLOP/cycle (%s) x %v; an upper bound", cus, perCycle, 2*perCycle, isa, clock)))
	fmt.Fprintf(&b, "fp64 = %s\n", q(fp64.String()))
	fmt.Fprintf(&b, "fp32 = %s\n\n", q((2 * fp64).String()))
	fmt.Fprintf(&b, "[memory]\n")
	fmt.Fprintf(&b, "source = %s\n", q("capacity: /proc/meminfo MemTotal; bandwidth: measured, the best streaming row ("+bwRow+")"))
	fmt.Fprintf(&b, "capacity = %s\n", q(model.Bytes(memKB*1024).String()))
	fmt.Fprintf(&b, "bandwidth = %s\n", q(bw.String()))
	if l3 := cacheSize("/sys/devices/system/cpu/cpu0/cache/index3/size"); l3 > 0 {
		fmt.Fprintf(&b, "l2 = %s\n", q(l3.String()))
		fmt.Fprintf(&b, "sources = { l2 = %s }\n", q("/sys/devices/system/cpu/cpu0/cache/index3/size: the last-level cache"))
	}
	return b.Bytes(), nil
}

// measuredThreads returns the GOMAXPROCS=N that MeasureCPU writes into
// the driver column of its rows, or runtime.GOMAXPROCS where no row says.
func measuredThreads(ms []Measurement) int {
	for _, m := range ms {
		for _, f := range strings.Fields(m.Driver) {
			if v, ok := strings.CutPrefix(f, "GOMAXPROCS="); ok {
				if n, err := strconv.Atoi(v); err == nil && n > 0 {
					return n
				}
			}
		}
	}
	return runtime.GOMAXPROCS(0)
}

// fmaFLOPsPerCycle returns the fp64 FLOPs per cycle and core of the widest
// vector FMA that flags (/proc/cpuinfo) name, assuming two FMA pipes (Intel
// since Haswell, AMD since Zen 2), and what it read them from.
func fmaFLOPsPerCycle(flags string) (float64, string) {
	has := map[string]bool{}
	for _, f := range strings.Fields(flags) {
		has[f] = true
	}
	switch {
	case has["avx512f"]:
		return 32, "AVX-512: 2 FMA x 8 lanes x 2"
	case has["avx2"] && has["fma"]:
		return 16, "AVX2: 2 FMA x 4 lanes x 2"
	default:
		return 4, "128-bit SIMD: 2 FMA x 2 lanes x 2, assumed"
	}
}

// cpuVendor returns the processor's vendor from /proc/cpuinfo.
func cpuVendor() string {
	switch v := cpuinfo("vendor_id"); v {
	case "AuthenticAMD":
		return "AMD"
	case "GenuineIntel":
		return "Intel"
	case "":
		return "unknown"
	default:
		return v
	}
}

// procLimit bounds what is read of a /proc or /sys file (/proc/cpuinfo of
// a 256-core machine is about 300 KB).
const procLimit = 16 << 20

// meminfoKB returns a /proc/meminfo entry in kB, or 0.
func meminfoKB(key string) float64 {
	data, err := fileio.ReadFile("/proc/meminfo", procLimit, "meminfo file")
	if err != nil {
		return 0
	}
	return meminfoValue(data, key)
}

// meminfoValue returns the entry key, in kB, of text written as
// /proc/meminfo writes it ("MemTotal:       65842220 kB"), or 0.
func meminfoValue(data []byte, key string) float64 {
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || k != key {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 2 && f[1] == "kB" {
			x, err := strconv.ParseFloat(f[0], 64)
			if err == nil && x > 0 {
				return x
			}
		}
	}
	return 0
}

// cacheSize reads a sysfs cache size such as "32768K", or 0.
func cacheSize(path string) model.Bytes {
	data, err := fileio.ReadFile(path, procLimit, "sysfs file")
	if err != nil {
		return 0
	}
	return cacheSizeOf(string(data))
}

// cacheSizeOf parses a sysfs cache size such as "32768K", or returns 0
// where it is not a finite positive size.
func cacheSizeOf(s string) model.Bytes {
	s = strings.TrimSpace(s)
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "K"):
		s, mult = s[:len(s)-1], 1024
	case strings.HasSuffix(s, "M"):
		s, mult = s[:len(s)-1], 1024*1024
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || !(x > 0) || math.IsInf(x*mult, 0) {
		return 0
	}
	return model.Bytes(x * mult)
}
