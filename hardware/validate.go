package hardware

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"

	"github.com/perfsim/perfsim/model"
)

// Validate checks d and reports every problem at once (errors.Join of
// *ParseError): missing names, non-positive or non-finite rates and
// capacities, a sparse peak below the dense one, fractions outside their
// range, a network without bandwidth. A device loaded from a file has
// its problems positioned at the lines of their keys.
func (d *Device) Validate() error {
	v := validator{d: d}
	v.text("name", d.Name)
	v.text("vendor", d.Vendor)
	if d.Kind != "" && !contains(Kinds, d.Kind) {
		v.bad("kind", "%q is not a kind of device (want %s)%s", d.Kind, strings.Join(Kinds, ", "), didYouMean(d.Kind, Kinds))
	} else {
		v.text("kind", d.Kind)
	}
	for i, a := range d.Aliases {
		if strings.TrimSpace(a) == "" || strings.ContainsAny(a, " \t/") {
			v.bad("aliases", "alias %d (%q) must be a word without spaces or slashes", i+1, a)
		}
	}
	if d.ComputeUnits <= 0 {
		v.bad("compute_units", "must be positive, not %d", d.ComputeUnits)
	}
	v.positive("clock", float64(d.Clock), d.Clock.String(), false)
	v.positive("tdp", float64(d.TDP), d.TDP.String(), false)
	v.nonNegative("launch_overhead", float64(d.Launch), d.Launch.String())

	if len(d.Matrix)+len(d.Vector) == 0 {
		v.bad("peak", "no dense peak: give [peak.matrix] or [peak.vector] rates")
	}
	for _, kind := range []struct {
		name string
		m    map[model.DType]model.FLOPRate
	}{{"matrix", d.Matrix}, {"vector", d.Vector}, {"sparse", d.Sparse}} {
		for _, dt := range sortedDTypes(kind.m) {
			r := kind.m[dt]
			v.positive("peak."+kind.name+"."+dt.String(), float64(r), r.String(), true)
		}
	}
	for _, dt := range sortedDTypes(d.Sparse) {
		key := "peak.sparse." + dt.String()
		dense, ok := d.Matrix[dt]
		if !ok {
			v.bad(key, "a sparse peak needs a dense one: peak.matrix.%s is not given", dt)
			continue
		}
		if d.Sparse[dt] < dense {
			v.bad(key, "%s is below the dense peak.matrix.%s, %s (sparse peaks are the 2:4 structured-sparsity rates, usually twice the dense)", d.Sparse[dt], dt, dense)
		}
	}

	m := d.Memory
	v.positive("memory.capacity", float64(m.Capacity), m.Capacity.String(), true)
	v.positive("memory.bandwidth", float64(m.Bandwidth), m.Bandwidth.String(), true)
	v.positive("memory.l2", float64(m.L2), m.L2.String(), false)
	v.positive("memory.usable", float64(m.Usable), m.Usable.String(), false)
	if m.Capacity > 0 && m.Usable > m.Capacity {
		v.bad("memory.usable", "%s is more than the capacity, %s (usable is what programs get of the physical memory)", m.Usable.BinaryString(), m.Capacity.BinaryString())
	}
	v.nonNegative("memory.reserve", float64(m.Reserve), m.Reserve.String())
	if lim := m.Limit(); lim > 0 && m.Reserve >= lim {
		v.bad("memory.reserve", "%s leaves nothing of the usable memory, %s", m.Reserve, lim)
	}

	v.efficiency("efficiency", reflect.ValueOf(d.Eff))

	v.network("interconnect.intra", d.Intra, true)
	v.network("interconnect.inter", d.Inter, false)
	v.network("interconnect.host", d.Host, false)
	v.power(d)
	return joinSorted(v.errs)
}

type validator struct {
	d    *Device
	errs []*ParseError
}

// bad records a problem with key.
func (v *validator) bad(key, format string, args ...any) {
	v.errs = append(v.errs, &ParseError{File: v.d.File, Line: v.line(key), Key: key, Err: fmt.Errorf(format, args...)})
}

// line returns the line of key, or of the nearest enclosing table.
func (v *validator) line(key string) int {
	for k := key; k != ""; {
		if l, ok := v.d.pos[k]; ok && l > 0 {
			return l
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return 0
}

// set reports whether the file gave key (always false for a device built
// in Go, whose zero values mean "not given").
func (v *validator) set(key string) bool {
	_, ok := v.d.pos[key]
	return ok
}

func (v *validator) text(key, s string) {
	if strings.TrimSpace(s) == "" {
		v.bad(key, "must not be empty")
	}
}

// The range of a quantity in base units (FLOP/s, B/s, bytes, hertz,
// watts, seconds) and the smallest fraction of a peak that Validate
// accepts. Real devices sit far inside them (a ridge point of 1e24 FLOP/B
// or a 1e-6 efficiency is a typo); outside them a ratio such as the
// ridge point or a kernel's time can overflow to +Inf.
const (
	minQuantity = 1
	maxQuantity = 1e24
	minFraction = 1e-6
)

// positive checks a quantity that must be positive and finite. Optional
// quantities may be zero (absent) unless the file gave them.
func (v *validator) positive(key string, x float64, shown string, required bool) {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		v.bad(key, "must be a finite number, not %v", x)
	case x < 0, x == 0 && (required || v.set(key)):
		v.bad(key, "must be positive, not %s", shown)
	case x != 0 && (x < minQuantity || x > maxQuantity):
		v.bad(key, "%s is outside the range perfsim accepts, %g to %g in base units", shown, float64(minQuantity), maxQuantity)
	}
}

func (v *validator) nonNegative(key string, x float64, shown string) {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		v.bad(key, "must be a finite number, not %v", x)
	case x < 0:
		v.bad(key, "must not be negative, not %s", shown)
	case x > maxQuantity:
		v.bad(key, "%s is above the largest value perfsim accepts, %g in base units", shown, maxQuantity)
	}
}

// MaxRelErr bounds the error figures of an efficiency table (err_median,
// err_p90: |predicted/measured − 1|). A held-out p90 above 100% means the
// model misses by more than the time itself: not a calibration, and an
// interval built from it says nothing.
const MaxRelErr = 1.0

// relErrs are the efficiency keys that are relative errors.
var relErrs = map[string]bool{"err_median": true, "err_p90": true}

// fractions are the efficiency keys that are fractions of a peak: at
// most 1, and positive when given (zero means "not given", i.e. 1).
var fractions = map[string]bool{"compute": true, "memory": true, "efficiency": true, "vector": true, "compute_fp4": true, "decode_compute_fp8": true}

// efficiency checks the efficiency parameters by reflection, so that
// fields added to model.Efficiency are checked too: every number finite
// and non-negative, fractions in (0, 1], exponents 0 or at least 1.
func (v *validator) efficiency(path string, x reflect.Value) {
	switch x.Kind() {
	case reflect.Struct:
		for i := 0; i < x.NumField(); i++ {
			if k := tomlName(x.Type().Field(i)); k != "" {
				v.efficiency(path+"."+k, x.Field(i))
			}
		}
	case reflect.Map:
		keys := x.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].Uint() < keys[j].Uint() })
		for _, k := range keys {
			name := fmt.Sprint(k.Interface())
			v.efficiency(path+"."+name, x.MapIndex(k))
		}
	case reflect.Pointer:
		if !x.IsNil() {
			v.efficiency(path, x.Elem())
		}
	case reflect.Slice:
		for i := 0; i < x.Len(); i++ {
			if e := x.Index(i); e.Kind() == reflect.Float64 {
				if f := e.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
					v.bad(path, "element %d must be a finite number, not %v", i+1, f)
				}
			}
		}
	case reflect.Float64:
		f := x.Float()
		last := path[strings.LastIndexByte(path, '.')+1:]
		switch {
		case math.IsNaN(f) || math.IsInf(f, 0):
			v.bad(path, "must be a finite number, not %v", f)
		case f < 0:
			v.bad(path, "must not be negative, not %v", f)
		case fractions[last] && f > 1:
			v.bad(path, "is a fraction of the peak: %v is above 1", f)
		case fractions[last] && f == 0 && v.set(path):
			v.bad(path, "is a fraction of the peak: 0 is not in (0, 1]")
		case relErrs[last] && f > MaxRelErr:
			v.bad(path, "is a relative error: %v is above %g (a model that misses by more than the time itself)", f, MaxRelErr)
		case fractions[last] && f > 0 && f < minFraction:
			v.bad(path, "is a fraction of the peak: %v is below %g", f, minFraction)
		case f > maxQuantity:
			v.bad(path, "%v is above the largest value perfsim accepts, %g", f, maxQuantity)
		case last == "overlap_exponent" && f != 0 && f < 1:
			v.bad(path, "must be 0 (plain maximum) or at least 1, not %v", f)
		}
	case reflect.Int:
		if x.Int() < 0 {
			v.bad(path, "must not be negative, not %d", x.Int())
		}
	case reflect.String:
		// The one word-valued parameter: anything but its two words
		// would be priced as whole waves without a word said.
		if w := x.String(); strings.HasSuffix(path, ".waves") && w != "" && w != model.WavesWhole && w != model.WavesFractional {
			v.bad(path, "%q is not a wave model (want %q or %q)", w, model.WavesWhole, model.WavesFractional)
		}
	}
}

// network checks one interconnect tier, if the device has it.
func (v *validator) network(key string, n Network, intra bool) {
	if n == (Network{}) {
		return
	}
	v.text(key+".name", n.Name)
	v.positive(key+".bandwidth", float64(n.Bandwidth), n.Bandwidth.String(), true)
	v.nonNegative(key+".latency", float64(n.Latency), n.Latency.String())
	switch e := n.Efficiency; {
	case math.IsNaN(e) || math.IsInf(e, 0):
		v.bad(key+".efficiency", "must be a finite number, not %v", e)
	case e < 0 || e == 0 && v.set(key+".efficiency"):
		v.bad(key+".efficiency", "must be positive, not %v", e)
	case e > 0 && e < minFraction:
		v.bad(key+".efficiency", "%v is below %g of the link rate", e, minFraction)
	case e > 2:
		// NCCL bus bandwidth with in-switch reduction (NVLS) reaches 1.07
		// of the link rate; twice it is a mistake.
		v.bad(key+".efficiency", "%v is more than twice the link rate", e)
	}
	// γ enters the ring efficiency as (1+γ)·f/(f+γ) (model.Link
	// RankFactor): infinite it is NaN, negative it divides by zero.
	v.nonNegative(key+".efficiency_rank_factor", n.RankFactor, fmt.Sprint(n.RankFactor))
	if intra {
		if n.DevicesPerNode < 1 {
			v.bad(key+".devices_per_node", "must be at least 1, not %d", n.DevicesPerNode)
		}
		if !contains(Topologies, n.Topology) {
			v.bad(key+".topology", "%q is not a topology (want %s)%s", n.Topology, strings.Join(Topologies, ", "), didYouMean(n.Topology, Topologies))
		}
		v.reduction(key, n)
	}
}

// reduction checks a scale-up tier's in_network_reduction: one of
// Reductions, or not given; NVLink SHARP is done in a switch, so it needs
// topology "switch".
func (v *validator) reduction(key string, n Network) {
	k := key + ".in_network_reduction"
	switch {
	case n.Reduction == "" && v.set(k):
		v.bad(k, "empty: want %s (or leave the key out when not known)", strings.Join(Reductions, " or "))
	case n.Reduction != "" && !contains(Reductions, n.Reduction):
		v.bad(k, "%s", badReduction(n.Reduction))
	case n.Reduction == ReductionNVLinkSHARP && n.Topology != "switch" && contains(Topologies, n.Topology):
		v.bad(k, "%q is done in an NVSwitch, but the topology is %q, not switch", n.Reduction, n.Topology)
	}
}

// badReduction is the error for an in_network_reduction that is not one
// of Reductions, suggesting the closest (NVLink SHARP by its other names,
// "NVLS" and "SHARP", too).
func badReduction(s string) error {
	hint := didYouMean(s, Reductions)
	if l := strings.ToLower(s); strings.Contains(l, "nvls") || strings.Contains(l, "sharp") {
		hint = fmt.Sprintf("; did you mean %q?", ReductionNVLinkSHARP)
	}
	return fmt.Errorf("%q is not an in-network reduction (want %s)%s", s, strings.Join(Reductions, ", "), hint)
}

func didYouMean(s string, cands []string) string {
	if m := suggest(s, cands); m != "" {
		return fmt.Sprintf("; did you mean %q?", m)
	}
	return ""
}

func sortedDTypes[V any](m map[model.DType]V) []model.DType {
	out := make([]model.DType, 0, len(m))
	for d := range m {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
