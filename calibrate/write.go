package calibrate

import (
	"bytes"
	"encoding"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/internal/fileio"
	"github.com/perfsim/perfsim/model"
)

// WriteDevice writes d as a hardware TOML file in the schema of
// hardware/doc.go, which hardware.Load reads back: the device, its peaks,
// memory, efficiency (all of it, by the toml tags of model.Efficiency, so
// that new fields are written too) and interconnect, each table with the
// sources d carries. Zero numbers and empty strings are left out (the
// loader reads them as unset). comment lines open the file.
func WriteDevice(w io.Writer, d *hardware.Device, comment []string) error {
	var b bytes.Buffer
	for _, c := range comment {
		fmt.Fprintf(&b, "# %s\n", c)
	}
	src := func(prefix string, keys ...string) {
		var kv []string
		for _, k := range keys {
			if s, ok := d.Sources[join(prefix, k)]; ok && s != "" {
				kv = append(kv, k+" = "+quote(s))
			}
		}
		if len(kv) > 0 {
			fmt.Fprintf(&b, "sources = { %s }\n", strings.Join(kv, ", "))
		}
	}
	str := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%s = %s\n", k, quote(v))
		}
	}
	qty := func(k string, v encoding.TextMarshaler, zero bool) {
		if zero {
			return
		}
		t, _ := v.MarshalText()
		fmt.Fprintf(&b, "%s = %s\n", k, quote(string(t)))
	}
	str("name", d.Name)
	str("vendor", d.Vendor)
	str("kind", d.Kind)
	if len(d.Aliases) > 0 {
		q := make([]string, len(d.Aliases))
		for i, a := range d.Aliases {
			q[i] = quote(a)
		}
		fmt.Fprintf(&b, "aliases = [%s]\n", strings.Join(q, ", "))
	}
	str("architecture", d.Architecture)
	fmt.Fprintf(&b, "compute_units = %d\n", d.ComputeUnits)
	qty("clock", d.Clock, d.Clock == 0)
	qty("tdp", d.TDP, d.TDP == 0)
	qty("launch_overhead", d.Launch, d.Launch == 0)
	src("", "compute_units", "clock", "tdp", "launch_overhead")

	for _, kind := range []struct {
		name string
		m    map[model.DType]model.FLOPRate
	}{{"matrix", d.Matrix}, {"vector", d.Vector}, {"sparse", d.Sparse}} {
		if len(kind.m) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n[peak.%s]\n", kind.name)
		var keys []string
		for _, dt := range sortedDTypes(kind.m) {
			qty(dt.String(), kind.m[dt], false)
			keys = append(keys, dt.String())
		}
		src("peak."+kind.name, keys...)
	}

	b.WriteString("\n[memory]\n")
	str("type", d.Memory.Type)
	qty("capacity", d.Memory.Capacity, false)
	qty("usable", d.Memory.Usable, d.Memory.Usable == 0)
	qty("bandwidth", d.Memory.Bandwidth, false)
	qty("l2", d.Memory.L2, d.Memory.L2 == 0)
	qty("reserve", d.Memory.Reserve, d.Memory.Reserve == 0)
	src("memory", "capacity", "usable", "bandwidth", "l2", "reserve")

	writeStruct(&b, "efficiency", reflect.ValueOf(d.Eff))

	for _, n := range []struct {
		tier string
		n    hardware.Network
	}{{"intra", d.Intra}, {"inter", d.Inter}, {"host", d.Host}} {
		if n.n.Bandwidth <= 0 {
			continue
		}
		fmt.Fprintf(&b, "\n[interconnect.%s]\n", n.tier)
		str("name", n.n.Name)
		qty("bandwidth", n.n.Bandwidth, false)
		qty("latency", n.n.Latency, n.n.Latency == 0)
		if n.n.Efficiency > 0 {
			fmt.Fprintf(&b, "efficiency = %s\n", num(n.n.Efficiency))
		}
		qty("base_latency", n.n.Base, n.n.Base == 0)
		qty("allreduce_latency", n.n.AllReduceLatency, n.n.AllReduceLatency == 0)
		if n.n.AllReduceEfficiency > 0 {
			fmt.Fprintf(&b, "allreduce_efficiency = %s\n", num(n.n.AllReduceEfficiency))
		}
		qty("efficiency_half_size", n.n.EfficiencyHalf, n.n.EfficiencyHalf == 0)
		if n.n.EfficiencySlope > 0 {
			fmt.Fprintf(&b, "efficiency_slope = %s\n", num(n.n.EfficiencySlope))
		}
		if n.n.RankFactor > 0 {
			fmt.Fprintf(&b, "efficiency_rank_factor = %s\n", num(n.n.RankFactor))
		}
		if n.tier == "intra" {
			fmt.Fprintf(&b, "devices_per_node = %d\n", n.n.DevicesPerNode)
			str("topology", n.n.Topology)
			str("in_network_reduction", n.n.Reduction)
		}
		src("interconnect."+n.tier, "bandwidth", "latency", "efficiency", "base_latency", "allreduce_latency", "allreduce_efficiency", "efficiency_half_size", "efficiency_slope", "efficiency_rank_factor", "devices_per_node", "in_network_reduction")
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Fitted reports whether d carries anything a fit produced: an efficiency
// table with fitted points, or an interconnect key whose source says
// "fitted".
func Fitted(d *hardware.Device) bool {
	var b bytes.Buffer
	return writeFittedTables(&b, d)
}

// WriteFitted writes the fitted part of d as a catalog overlay
// (hardware/devices/fitted/<stem>.toml, applied by hardware.Lookup; see
// hardware.ApplyFitted): every efficiency table with fitted points
// (gemm.<dtype>, attention, mla, moe, memory), whole, and the interconnect keys
// whose source says "fitted", with their sources. from names the fitted
// device file it was made from, in the header. The output depends on d
// alone: the same fit gives the same bytes.
func WriteFitted(w io.Writer, d *hardware.Device, from string) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s: fitted parameters, generated by perfsim calibrate merge from\n", d.Name)
	fmt.Fprintf(&b, "# %s. Do not edit: regenerate with calibrate/fitted/regen.sh.\n", from)
	b.WriteString("# Applied on top of the hand-written device file of the same name: each\n")
	b.WriteString("# table here replaces that table whole, each interconnect key that key.\n")
	if !writeFittedTables(&b, d) {
		return fmt.Errorf("calibrate: %s: nothing fitted to merge (no efficiency table with points, no interconnect key with a fitted source)", d.Name)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// writeFittedTables writes the fitted tables of d to b and reports
// whether there were any.
func writeFittedTables(b *bytes.Buffer, d *hardware.Device) bool {
	n := b.Len()
	for _, dt := range sortedDTypes(d.Eff.GEMM) {
		if g := d.Eff.GEMM[dt]; g.Points > 0 {
			writeStruct(b, "efficiency.gemm."+dt.String(), reflect.ValueOf(g))
		}
	}
	if d.Eff.Attention.Points > 0 {
		writeStruct(b, "efficiency.attention", reflect.ValueOf(d.Eff.Attention))
	}
	if d.Eff.MLA.Points > 0 {
		writeStruct(b, "efficiency.mla", reflect.ValueOf(d.Eff.MLA))
	}
	if d.Eff.MoE.Points > 0 {
		writeStruct(b, "efficiency.moe", reflect.ValueOf(d.Eff.MoE))
	}
	if d.Eff.Memory.Points > 0 {
		writeStruct(b, "efficiency.memory", reflect.ValueOf(d.Eff.Memory))
	}
	for _, t := range []struct {
		tier string
		n    hardware.Network
	}{{"intra", d.Intra}, {"inter", d.Inter}, {"host", d.Host}} {
		type kv struct{ k, v, src string }
		var kvs []kv
		add := func(k string, v encoding.TextMarshaler, x float64, plain bool) {
			src := d.Sources["interconnect."+t.tier+"."+k]
			if x == 0 || !strings.Contains(src, "fitted") {
				return
			}
			s := num(x)
			if !plain {
				text, _ := v.MarshalText()
				s = quote(string(text))
			}
			kvs = append(kvs, kv{k, s, src})
		}
		add("latency", t.n.Latency, float64(t.n.Latency), false)
		add("efficiency", nil, t.n.Efficiency, true)
		add("base_latency", t.n.Base, float64(t.n.Base), false)
		add("allreduce_latency", t.n.AllReduceLatency, float64(t.n.AllReduceLatency), false)
		add("allreduce_efficiency", nil, t.n.AllReduceEfficiency, true)
		add("efficiency_half_size", t.n.EfficiencyHalf, float64(t.n.EfficiencyHalf), false)
		add("efficiency_slope", nil, t.n.EfficiencySlope, true)
		add("efficiency_rank_factor", nil, t.n.RankFactor, true)
		if len(kvs) == 0 {
			continue
		}
		fmt.Fprintf(b, "\n[interconnect.%s]\n", t.tier)
		same := true
		for _, x := range kvs {
			same = same && x.src == kvs[0].src
		}
		if same {
			fmt.Fprintf(b, "source = %s\n", quote(kvs[0].src))
		}
		var srcs []string
		for _, x := range kvs {
			fmt.Fprintf(b, "%s = %s\n", x.k, x.v)
			srcs = append(srcs, x.k+" = "+quote(x.src))
		}
		if !same {
			fmt.Fprintf(b, "sources = { %s }\n", strings.Join(srcs, ", "))
		}
	}
	return b.Len() > n
}

// WriteFittedFile writes the overlay of d to path atomically.
func WriteFittedFile(path string, d *hardware.Device, from string) error {
	var b bytes.Buffer
	if err := WriteFitted(&b, d, from); err != nil {
		return err
	}
	return WriteFile(path, b.Bytes())
}

// writeStruct writes the struct v as the table path and its sub-tables.
func writeStruct(b *bytes.Buffer, path string, v reflect.Value) {
	t := v.Type()
	var subs []func()
	header := false
	open := func() {
		if !header {
			fmt.Fprintf(b, "\n[%s]\n", path)
			header = true
		}
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		k := strings.Split(f.Tag.Get("toml"), ",")[0]
		if k == "" || k == "-" {
			continue
		}
		fv := v.Field(i)
		if m, ok := fv.Interface().(encoding.TextMarshaler); ok && fv.Kind() == reflect.Float64 {
			if fv.Float() != 0 {
				open()
				s, _ := m.MarshalText()
				fmt.Fprintf(b, "%s = %s\n", k, quote(string(s)))
			}
			continue
		}
		switch fv.Kind() {
		case reflect.Float64:
			if fv.Float() != 0 {
				open()
				fmt.Fprintf(b, "%s = %s\n", k, num(fv.Float()))
			}
		case reflect.Int:
			if fv.Int() != 0 {
				open()
				fmt.Fprintf(b, "%s = %d\n", k, fv.Int())
			}
		case reflect.String:
			if fv.String() != "" {
				open()
				fmt.Fprintf(b, "%s = %s\n", k, quote(fv.String()))
			}
		case reflect.Slice:
			if fv.Len() > 0 && fv.Type().Elem().Kind() == reflect.Float64 {
				open()
				xs := make([]string, fv.Len())
				for j := range xs {
					xs[j] = num(fv.Index(j).Float())
				}
				// A string of numbers, not a TOML array: the residual
				// tables hold thousands, and the TOML package reads a
				// string of them about five times faster than an array
				// (the hardware loader accepts either).
				fmt.Fprintf(b, "%s = \"%s\"\n", k, strings.Join(xs, " "))
			}
		case reflect.Struct:
			sub := path + "." + k
			subs = append(subs, func() { writeStruct(b, sub, fv) })
		case reflect.Pointer:
			if !fv.IsNil() && fv.Elem().Kind() == reflect.Struct {
				sub := path + "." + k
				subs = append(subs, func() { writeStruct(b, sub, fv.Elem()) })
			}
		case reflect.Map:
			keys := fv.MapKeys()
			sort.Slice(keys, func(a, c int) bool { return keys[a].Uint() < keys[c].Uint() })
			for _, mk := range keys {
				sub := path + "." + k + "." + fmt.Sprint(mk.Interface())
				mv := fv.MapIndex(mk)
				subs = append(subs, func() { writeStruct(b, sub, mv) })
			}
		}
	}
	for _, s := range subs {
		s()
	}
}

// WriteDeviceFile writes d to path atomically: to a temporary file in the
// same directory, then renamed over path, so that path holds the whole
// file or what it held before.
func WriteDeviceFile(path string, d *hardware.Device, comment []string) error {
	var b bytes.Buffer
	if err := WriteDevice(&b, d, comment); err != nil {
		return err
	}
	return WriteFile(path, b.Bytes())
}

// WriteFile writes data to path as fileio.WriteFile does: atomically
// over a regular file, through a symlink, directly to a pipe or terminal.
func WriteFile(path string, data []byte) error {
	if err := fileio.WriteFile(path, data); err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	return nil
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

// quote writes s as a TOML basic string.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// num writes a float in its shortest exact form, as TOML reads it.
func num(x float64) string {
	s := strconv.FormatFloat(x, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") { // a whole number: keep it a float
		s += ".0"
	}
	return s
}

func sortedDTypes[V any](m map[model.DType]V) []model.DType {
	ds := make([]model.DType, 0, len(m))
	for d := range m {
		ds = append(ds, d)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds
}
