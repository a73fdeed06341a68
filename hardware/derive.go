package hardware

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/perfsim/perfsim/internal/errlist"
	"github.com/perfsim/perfsim/internal/fileio"
	"github.com/perfsim/perfsim/model"
)

// What-if devices: a catalog device with some datasheet numbers changed
// (perfsim's --set key=value, or a derived TOML file naming its base),
// keeping the base's calibrated behaviour carried as in transfer.go.

// SetKeys lists the keys Derive accepts; <dtype> is a data type (bf16,
// fp8, ...).
var SetKeys = []string{
	"memory.bandwidth", "memory.capacity", "memory.l2",
	"peak.matrix.<dtype>", "peak.vector.<dtype>",
	"compute_units", "clock",
	"interconnect.intra.bandwidth", "interconnect.inter.bandwidth",
}

// kernelNeutral lists the keys of SetKeys that no kernel's time reads:
// the model's kernels see a device through Device.Processor (compute
// units, peaks, memory bandwidth, L2, launch cost, efficiencies), and
// Transfer's ratios read the clock, the compute units and the bf16 peak.
// The capacity changes what fits (the max batch, the KV cache); the link
// bandwidths change the collectives, whose fitted fractions and
// latencies are the link's, not the chip's (Transfer carries them as
// they are).
var kernelNeutral = map[string]bool{
	"memory.capacity":              true,
	"interconnect.intra.bandwidth": true,
	"interconnect.inter.bandwidth": true,
}

// KernelNeutral reports whether a SetKeys key changes no kernel's time
// (memory.capacity, interconnect.intra.bandwidth and
// interconnect.inter.bandwidth): a what-if that changes only such keys
// keeps its base's calibration.
func KernelNeutral(key string) bool { return kernelNeutral[key] }

// Derive returns a hypothetical device: base with the datasheet numbers
// that sets ("key=value", SetKeys) change. When a change reaches a
// kernel (any key but the KernelNeutral ones) and base is calibrated,
// its efficiencies are base's fitted ones carried by Transfer (fractions
// as they are, per-unit times by the clock ratio, the measured transfer
// band as its error); when none does, they are base's own, residual
// tables, held-out figures and label included, so that every kernel
// takes the time it takes on base; when base is itself transferred or
// uncalibrated, they are base's own either way. It names base in its
// name and its calibration label. Every problem with sets comes back at
// once, each naming the flag.
func Derive(base *Device, sets []string) (*Device, error) {
	return derive(base, sets, "--set ", false, func(k, v string, err error) error { return fmt.Errorf("--set %s=%s: %w", k, v, err) })
}

// DeriveCarried is Derive, but a calibrated base's efficiencies are
// carried by Transfer whatever sets change, none included: the reference
// against which what-ifs that do change kernels are compared with their
// own kind of pricing (plan.Sensitivity's bandwidth and peak rows).
func DeriveCarried(base *Device, sets []string) (*Device, error) {
	return derive(base, sets, "--set ", true, func(k, v string, err error) error { return fmt.Errorf("--set %s=%s: %w", k, v, err) })
}

// derive is Derive; flag prefixes each setting in the device's sources
// and in a malformed or repeated one's message, carry transfers a
// calibrated base's efficiencies even when no change reaches a kernel,
// and wrap places a bad value's error (the flag, or a derived file's line
// and key).
func derive(base *Device, sets []string, flag string, carry bool, wrap func(k, v string, err error) error) (*Device, error) {
	if base == nil {
		return nil, errors.New("hardware: no base device to derive from")
	}
	d := cloneDevice(base)
	var errs []error
	var applied []string
	kernels := carry
	given := map[string]string{}
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			errs = append(errs, fmt.Errorf("%s%q: want key=value with a unit, e.g. memory.bandwidth=8TB/s", flag, s))
			continue
		}
		if prev, ok := given[k]; ok {
			errs = append(errs, fmt.Errorf("%s%s=%s: %s is set twice (also %s=%s)", flag, k, v, k, k, prev))
			continue
		}
		given[k] = v
		if err := setKey(d, base, k, v); err != nil {
			errs = append(errs, wrap(k, v, err))
			continue
		}
		d.Sources[k] = "what-if: " + flag + k + "=" + v
		applied = append(applied, k+"="+v)
		kernels = kernels || !KernelNeutral(k)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if base.Calibration().Kind == "calibrated" && kernels {
		// Transfer reads the datasheet ratios of d against base: restore
		// base's tables first (cloneDevice copied them) and carry them.
		Transfer(d, base)
	} else if base.TransferredFrom != "" {
		d.TransferredFrom = base.TransferredFrom
	}
	d.WhatIfChanges = applied
	d.Name = base.Name + " what-if (" + strings.Join(applied, ", ") + ")"
	d.Aliases = nil
	d.File = "what-if:" + base.File
	d.WhatIfBase = base.Name
	if err := d.Validate(); err != nil {
		return nil, placeInvalid(err, given, wrap)
	}
	return d, nil
}

// derivedFrom names the setting a what-if device's invalid key comes
// from, where it is not the key itself: the usable memory and its
// reserve follow the capacity.
var derivedFrom = map[string]string{
	"memory.reserve": "memory.capacity",
	"memory.usable":  "memory.capacity",
}

// placeInvalid rewrites the problems Validate finds in a what-if device
// at the setting that made them (wrap: the --set flag, or a derived
// file's line and key): they had named the device "what-if:catalog:h100-sxm"
// and neither the flag nor the file. A problem no setting made is kept.
func placeInvalid(err error, given map[string]string, wrap func(k, v string, err error) error) error {
	var out []error
	for _, e := range errlist.Flatten(err) {
		var pe *ParseError
		if !errors.As(e, &pe) {
			out = append(out, e)
			continue
		}
		k := pe.Key
		if from, ok := derivedFrom[k]; ok {
			if _, set := given[k]; !set {
				k = from
			}
		}
		v, ok := given[k]
		if !ok {
			out = append(out, e)
			continue
		}
		msg := pe.Err
		if k != pe.Key {
			msg = fmt.Errorf("%s: %w", pe.Key, pe.Err)
		}
		out = append(out, wrap(k, v, msg))
	}
	return errors.Join(out...)
}

// inRange is an error naming the value when x is outside what a hardware
// file may give (1 to 1e24 in base units): checked before the value is
// set, so that the --set flag is named, not the what-if device's key,
// and a 2:4 sparse peak scaled from it is not reported as well.
func inRange(x float64, v string) error {
	if x < minQuantity || x > maxQuantity {
		return fmt.Errorf("%s is outside the range perfsim accepts, %g to %g in base units", v, float64(minQuantity), maxQuantity)
	}
	return nil
}

// setKey sets one key of d.
func setKey(d, base *Device, k, v string) error {
	rate := func(dst *model.ByteRate) error {
		x, err := model.ParseByteRate(v)
		if err == nil && !(x > 0) {
			err = fmt.Errorf("want a positive bandwidth, not %s", v)
		}
		if err == nil {
			err = inRange(float64(x), v)
		}
		if err == nil {
			*dst = x
		}
		return err
	}
	switch k {
	case "memory.bandwidth":
		return rate(&d.Memory.Bandwidth)
	case "interconnect.intra.bandwidth":
		return rate(&d.Intra.Bandwidth)
	case "interconnect.inter.bandwidth":
		return rate(&d.Inter.Bandwidth)
	case "memory.capacity", "memory.l2":
		x, err := model.ParseBytes(v)
		if err == nil && !(x > 0) {
			err = fmt.Errorf("want a positive size, not %s", v)
		}
		if err == nil {
			err = inRange(float64(x), v)
		}
		if err != nil {
			return err
		}
		if k == "memory.l2" {
			d.Memory.L2 = x
			return nil
		}
		// The usable share of the capacity stays the base's.
		if base.Memory.Usable > 0 && base.Memory.Capacity > 0 {
			d.Memory.Usable = model.Bytes(float64(x) * float64(base.Memory.Usable) / float64(base.Memory.Capacity))
		}
		d.Memory.Capacity = x
		return nil
	case "compute_units":
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return fmt.Errorf("want a positive whole number of compute units, not %q", v)
		}
		d.ComputeUnits = n
		return nil
	case "clock":
		x, err := model.ParseHertz(v)
		if err == nil && !(x > 0) {
			err = fmt.Errorf("want a positive clock, not %s", v)
		}
		if err == nil {
			err = inRange(float64(x), v)
		}
		if err == nil {
			d.Clock = x
		}
		return err
	}
	for _, p := range []struct {
		prefix string
		m      map[model.DType]model.FLOPRate
	}{{"peak.matrix.", d.Matrix}, {"peak.vector.", d.Vector}} {
		t, ok := strings.CutPrefix(k, p.prefix)
		if !ok {
			continue
		}
		dt, err := model.ParseDType(t)
		if err != nil {
			return err
		}
		x, err := model.ParseFLOPRate(v)
		if err == nil && (!(x > 0) || math.IsInf(float64(x), 0)) {
			err = fmt.Errorf("want a positive compute rate, not %s", v)
		}
		if err == nil {
			err = inRange(float64(x), v)
		}
		if err != nil {
			return err
		}
		if old := p.m[dt]; p.prefix == "peak.matrix." && old > 0 && d.Sparse[dt] > 0 {
			// The 2:4 sparse peak keeps its ratio to the dense one.
			d.Sparse[dt] = model.FLOPRate(float64(d.Sparse[dt]) * float64(x) / float64(old))
		}
		p.m[dt] = x
		return nil
	}
	return fmt.Errorf("unknown key %q (want one of %s)", k, strings.Join(SetKeys, ", "))
}

// cloneDevice deep-copies the maps of d.
func cloneDevice(d *Device) *Device {
	c := *d
	c.Matrix, c.Vector, c.Sparse = cloneRates(d.Matrix), cloneRates(d.Vector), cloneRates(d.Sparse)
	c.Eff.GEMM = maps.Clone(d.Eff.GEMM)
	if c.Eff.GEMM == nil {
		c.Eff.GEMM = map[model.DType]model.GEMMParams{}
	}
	c.Sources = maps.Clone(d.Sources)
	if c.Sources == nil {
		c.Sources = map[string]string{}
	}
	c.Aliases = slices.Clone(d.Aliases)
	c.WhatIfChanges = slices.Clone(d.WhatIfChanges)
	c.pos = nil
	return &c
}

func cloneRates(m map[model.DType]model.FLOPRate) map[model.DType]model.FLOPRate {
	if m == nil {
		return map[model.DType]model.FLOPRate{}
	}
	return maps.Clone(m)
}

// flattenSets turns the keys of a derived device file (one with a
// top-level base) into Derive's key=value settings, sorted.
func flattenSets(prefix string, m map[string]any, out *[]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "source" || k == "sources" {
			continue
		}
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		switch v := m[k].(type) {
		case map[string]any:
			flattenSets(key, v, out)
		case string:
			*out = append(*out, key+"="+v)
		default:
			*out = append(*out, fmt.Sprintf("%s=%v", key, v))
		}
	}
}

// isDerived reports whether a device file names a base device: a
// top-level key base = "...".
func isDerived(data []byte) bool {
	var top struct {
		Base *string `toml:"base"`
	}
	_, err := toml.Decode(string(data), &top)
	return err == nil && top.Base != nil
}

// maxDerivedDepth bounds a chain of derived files naming derived files.
const maxDerivedDepth = 8

// loadDerived loads a derived device file: base (a catalog name, or a
// .toml file relative to this one), an optional name, and datasheet keys
// (SetKeys) with units, e.g.
//
//	base = "h100"
//	name = "H100 with HBM4"
//	[memory]
//	bandwidth = "8 TB/s"
//	[peak.matrix]
//	fp8 = "4 PFLOP/s"
func loadDerived(data []byte, file string, depth int) (*Device, error) {
	var doc map[string]any
	_, err := toml.Decode(string(data), &doc)
	if err != nil {
		return nil, tomlError(file, err)
	}
	lines := scanKeyLines(data)
	line := func(key string) int { return lines[key] }
	baseName, ok := doc["base"].(string)
	if !ok || strings.TrimSpace(baseName) == "" {
		return nil, &ParseError{File: file, Line: line("base"), Key: "base", Err: errors.New("expected the name of a catalog device or a .toml file")}
	}
	name, _ := doc["name"].(string)
	self := filepath.Clean(file)
	if (name != "" && normName(name) == normName(baseName)) || (strings.HasSuffix(strings.ToLower(baseName), ".toml") && filepath.Clean(filepath.Join(filepath.Dir(file), baseName)) == self) {
		return nil, &ParseError{File: file, Line: line("base"), Key: "base", Err: fmt.Errorf("the file names itself (%q) as its base", baseName)}
	}
	if depth >= maxDerivedDepth {
		return nil, &ParseError{File: file, Line: line("base"), Key: "base", Err: fmt.Errorf("more than %d derived files in a chain (a cycle?)", maxDerivedDepth)}
	}
	var base *Device
	if strings.HasSuffix(strings.ToLower(baseName), ".toml") {
		p := filepath.Join(filepath.Dir(file), baseName)
		b, rerr := fileio.ReadFile(p, maxFileSize, "hardware file")
		if rerr != nil {
			return nil, &ParseError{File: file, Line: line("base"), Key: "base", Err: rerr}
		}
		if isDerived(b) {
			base, err = loadDerived(b, p, depth+1)
		} else {
			base, err = Load(bytes.NewReader(b), p)
		}
	} else {
		base, err = lookup(baseName)
	}
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			// A base file's own problems, each at its file:line:key: wrapped
			// under this file's base key they read "hardware: a.toml:1:
			// base: hardware: b.toml:3: ...", and a joined list lost the
			// wrapping after its first line.
			return nil, err
		}
		return nil, &ParseError{File: file, Line: line("base"), Key: "base", Err: err}
	}
	delete(doc, "base")
	delete(doc, "name")
	var sets []string
	flattenSets("", doc, &sets)
	d, err := derive(base, sets, "", false, func(k, v string, err error) error {
		return &ParseError{File: file, Line: line(k), Key: k, Err: err}
	})
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			return nil, err // each setting's own file:line:key
		}
		return nil, &ParseError{File: file, Err: err}
	}
	if name != "" {
		d.Name = name + " (what-if of " + base.Name + ")"
	}
	d.File = file
	return d, nil
}
