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
	"interconnect.intra.in_network_reduction",
}

// kernelNeutral lists the keys of SetKeys that no kernel's time reads:
// the model's kernels see a device through Device.Processor (compute
// units, peaks, memory bandwidth, L2, launch cost, efficiencies), and
// Transfer's ratios read the clock, the compute units and the bf16 peak.
// The capacity changes what fits (the max batch, the KV cache); the link
// bandwidths change the collectives, whose fitted fractions and
// latencies are the link's, not the chip's (Transfer carries them as
// they are). The scale-up switch's in-network reduction changes what a
// serving engine's communicators allocate (package serve), not a kernel.
var kernelNeutral = map[string]bool{
	"memory.capacity":                         true,
	"interconnect.intra.bandwidth":            true,
	"interconnect.inter.bandwidth":            true,
	"interconnect.intra.in_network_reduction": true,
}

// KernelNeutral reports whether a SetKeys key changes no kernel's time
// (memory.capacity, interconnect.intra.bandwidth,
// interconnect.inter.bandwidth and interconnect.intra.in_network_reduction):
// a what-if that changes only such keys keeps its base's calibration.
func KernelNeutral(key string) bool { return kernelNeutral[key] }

// Derive returns a hypothetical device: base with the datasheet numbers
// that sets ("key=value", SetKeys) change. Where base is calibrated (or a
// what-if of a calibrated device, its root), each kernel is priced as its
// roofline reads the changes (model.Processor.Reads): one that reads none
// of the changed numbers keeps the root's own fitted tables, residual
// tables and held-out figures included, and takes the time it takes on
// the root; one that reads a changed number (its compute type's peak, the
// L2 for a GEMM, the bandwidth, compute units or clock for any kernel)
// takes the root's efficiencies carried as by Transfer (fractions as they
// are, per-unit times by the clock ratio, the measured transfer band as
// its error) with the root's residual tables kept (transferSameChip): it
// is the same chip, and a what-if is continuous and monotone about its
// root. A change that every kernel reads carries them all; one
// that no kernel reads (KernelNeutral) keeps them all; a setting equal to
// the base's own value changes nothing, and when every one is, Derive
// returns base itself, unnamed as a what-if. When base is transferred or
// uncalibrated its efficiencies are its own either way. The device names
// base in its name and its calibration label. Every problem with sets
// comes back at once, each naming the flag.
func Derive(base *Device, sets []string) (*Device, error) {
	return derive(base, sets, "--set ", func(k, v string, err error) error { return fmt.Errorf("--set %s=%s: %w", k, v, err) })
}

// derive is Derive; flag prefixes each setting in the device's sources
// and in a malformed or repeated one's message, and wrap places a bad
// value's error (the flag, or a derived file's line and key).
func derive(base *Device, sets []string, flag string, wrap func(k, v string, err error) error) (*Device, error) {
	if base == nil {
		return nil, errors.New("hardware: no base device to derive from")
	}
	d := cloneDevice(base)
	var errs []error
	var applied []string
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
		derivedSources(d, base, k, "what-if: "+flag+k+"="+v)
		applied = append(applied, k+"="+v)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if sameDatasheet(d, base) {
		// Every setting gives base's own value: nothing changes, and the
		// output is base's, byte for byte.
		return cloneDevice(base), nil
	}
	root := base.root
	if root == nil && base.Calibration().Kind == "calibrated" {
		root = base
	}
	if root != nil {
		// Kept or carried from the calibrated root, as the changes from
		// it (base's own included, for a what-if of a what-if) reach
		// each kernel.
		d.root = root
		d.Eff, d.TransferredFrom, d.Kept, d.Changed = cloneEff(root.Eff), "", nil, model.Changes{}
		switch ch := changes(root, d); {
		case ch.Every():
			transferSameChip(d, root)
		case ch.Any():
			transferSameChip(d, root)
			kept := cloneEff(root.Eff)
			d.Kept, d.Changed = &kept, ch
		}
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

// sameDatasheet reports whether a and b hold the same values of every
// number a setting (SetKeys) changes.
func sameDatasheet(a, b *Device) bool {
	return maps.Equal(a.Matrix, b.Matrix) && maps.Equal(a.Vector, b.Vector) && maps.Equal(a.Sparse, b.Sparse) &&
		a.Memory == b.Memory && a.ComputeUnits == b.ComputeUnits && a.Clock == b.Clock &&
		a.Intra.Bandwidth == b.Intra.Bandwidth && a.Inter.Bandwidth == b.Inter.Bandwidth &&
		a.Intra.Reduction == b.Intra.Reduction
}

// changes returns the numbers of d that a kernel's time reads and that
// differ from root's (model.Changes): the peak each compute type runs at
// (after Supported's fallback), the vector peaks, the L2, the bandwidth,
// and the compute units, clock, launch cost and what follows from them,
// the shared memory's and the special-function units' rates and
// Transfer's clock ratio (from the bf16 peak per unit where a device
// gives no clock), which scale every kernel.
func changes(root, d *Device) model.Changes {
	pr, pd := root.Processor(), d.Processor()
	sr, _ := SoftmaxRate(root)
	sd, _ := SoftmaxRate(d)
	c := model.Changes{
		Bandwidth: pr.Bandwidth != pd.Bandwidth,
		L2:        pr.L2 != pd.L2,
		Vector:    !maps.Equal(root.Vector, d.Vector),
		Units: pr.ComputeUnits != pd.ComputeUnits || root.Clock != d.Clock || pr.Launch != pd.Launch || pr.CPU != pd.CPU ||
			pr.SharedBandwidth != pd.SharedBandwidth || sr != sd || clockRatio(d, root) != 1,
	}
	for _, t := range model.DTypes {
		a, _ := pr.Supported(t)
		b, _ := pd.Supported(t)
		ra, _ := pr.Peak(a)
		rb, _ := pd.Peak(b)
		if a != b || ra != rb {
			c.Peaks |= model.PeakBit(t)
		}
	}
	return c
}

// cloneEff deep-copies the map of e.
func cloneEff(e model.Efficiency) model.Efficiency {
	e.GEMM = maps.Clone(e.GEMM)
	if e.GEMM == nil {
		e.GEMM = map[model.DType]model.GEMMParams{}
	}
	return e
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

// derivedSources gives the numbers setting k derived in d from base's
// (the 2:4 sparse peak of a matrix type, kept at its ratio to the dense
// one; the usable memory, kept at base's share of the capacity) the
// source src, the setting, with how they follow from it: base's sources
// cite a datasheet or a measurement for base's own numbers.
func derivedSources(d, base *Device, k, src string) {
	if t, ok := strings.CutPrefix(k, "peak.matrix."); ok {
		if dt, err := model.ParseDType(t); err == nil {
			if dt == model.MXFP4 {
				dt = model.FP4
			}
			if d.Sparse[dt] != base.Sparse[dt] {
				d.Sources["peak.sparse."+dt.String()] = src + " (the 2:4 sparse peak kept at its ratio to the dense one)"
			}
		}
	}
	if k == "memory.capacity" && d.Memory.Usable != base.Memory.Usable {
		d.Sources["memory.usable"] = fmt.Sprintf("%s (at the base's usable share, %s of %s)", src, base.Memory.Usable, base.Memory.Capacity)
	}
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
		if base.Intra.Bandwidth <= 0 {
			// Half a link (a bandwidth, no name, topology or devices)
			// had failed the what-if's validation key by key.
			return fmt.Errorf("%s has no scale-up link (interconnect.intra) to change: give it one in a hardware file", base.Name)
		}
		return rate(&d.Intra.Bandwidth)
	case "interconnect.inter.bandwidth":
		if base.Inter.Bandwidth <= 0 {
			return fmt.Errorf("%s has no scale-out network (interconnect.inter) to change: give it one in a hardware file", base.Name)
		}
		return rate(&d.Inter.Bandwidth)
	case "interconnect.intra.in_network_reduction":
		switch {
		case base.Intra.Bandwidth <= 0:
			return fmt.Errorf("%s has no scale-up link (interconnect.intra) to change: give it one in a hardware file", base.Name)
		case !slices.Contains(Reductions, v):
			return badReduction(v)
		case v == ReductionNVLinkSHARP && base.Intra.Topology != "switch":
			return fmt.Errorf("%q is done in an NVSwitch, but %s's scale-up link is a %s, not a switch", v, base.Name, base.Intra.Topology)
		}
		d.Intra.Reduction = v
		return nil
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
		// The usable share of the capacity stays the base's (the base's
		// own usable memory where the capacity is its own).
		if base.Memory.Usable > 0 && base.Memory.Capacity > 0 && x != base.Memory.Capacity {
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
		if dt == model.MXFP4 { // a storage format: its peak is fp4's
			dt = model.FP4
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
		if old := p.m[dt]; p.prefix == "peak.matrix." && old > 0 && x != old && d.Sparse[dt] > 0 {
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
	c.Eff = cloneEff(d.Eff)
	if d.Kept != nil {
		k := cloneEff(*d.Kept)
		c.Kept = &k
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
// top-level key base, of any type (loadDerived refuses one that is not a
// string, which is not taken for a device file without a base).
func isDerived(data []byte) bool {
	var top struct {
		Base any `toml:"base"`
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
	name, ok := doc["name"].(string)
	if _, given := doc["name"]; given && !ok {
		return nil, &ParseError{File: file, Line: line("name"), Key: "name", Err: fmt.Errorf("expected a string, the what-if's name, not %v", doc["name"])}
	}
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
	d, err := derive(base, sets, "", func(k, v string, err error) error {
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

// partialLabel is the calibration label of a what-if device whose
// changes reach only some kernels: which kernels carry the calibration
// and with what measured error, and the held-out figure of the others.
func (d *Device) partialLabel() string {
	held, h := labelGEMMIn(d.Kept.GEMM, func(g model.GEMMParams) bool { return g.Points > 0 })
	band := TransferBands(d, d)["gemm"]
	if d.root != nil {
		band = TransferBands(d, d.root)["gemm"]
	}
	return fmt.Sprintf("what-if of %s: %s transferred (measured transfer error: GEMM median %.0f%%, p90 %.0f%%), the others as calibrated (%s GEMM held out: median %.1f%%, p90 %.1f%%); changed: %s",
		d.TransferredFrom, d.TransferredKernels(), 100*band.Median, 100*band.P90, held, 100*h.ErrMedian, 100*h.ErrP90, changed(d.WhatIfChanges))
}

// TransferredKernels says which kernels of a what-if device carry its
// calibrated base's efficiencies rather than keep them (Kept): "fp8
// kernels", "GEMMs (L2)", "elementwise kernels", or "every kernel" where
// all do; "" for a device that is not a what-if carrying any. The type of
// a kernel is the one it computes in on d, after the fallback of a type
// without a peak of its own (an fp4 GEMM on an H100 runs at fp8).
func (d *Device) TransferredKernels() string {
	if d.root == nil || d.TransferredFrom == "" {
		return ""
	}
	if d.Kept == nil {
		return "every kernel"
	}
	c := d.Changed
	p := d.Processor()
	var types, parts []string
	for _, t := range model.DTypes {
		if c.Peaks&model.PeakBit(t) == 0 {
			continue
		}
		s, _ := p.Supported(t)
		if s == model.Invalid {
			s = t
		}
		if !slices.Contains(types, s.String()) {
			types = append(types, s.String())
		}
	}
	if len(types) > 0 {
		parts = append(parts, strings.Join(types, ", ")+" kernels")
	}
	if c.L2 {
		parts = append(parts, "GEMMs (L2)")
	}
	if c.Vector {
		parts = append(parts, "elementwise kernels")
	}
	return strings.Join(parts, " and ")
}
