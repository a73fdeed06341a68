package calibrate

import (
	"bytes"
	"encoding"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/perfsim/perfsim/hardware"
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
	qty("bandwidth", d.Memory.Bandwidth, false)
	qty("l2", d.Memory.L2, d.Memory.L2 == 0)
	qty("reserve", d.Memory.Reserve, d.Memory.Reserve == 0)
	src("memory", "capacity", "bandwidth", "l2", "reserve")

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
		if n.tier == "intra" {
			fmt.Fprintf(&b, "devices_per_node = %d\n", n.n.DevicesPerNode)
			str("topology", n.n.Topology)
		}
		src("interconnect."+n.tier, "bandwidth", "latency", "efficiency", "base_latency", "allreduce_latency", "allreduce_efficiency", "devices_per_node")
	}
	_, err := w.Write(b.Bytes())
	return err
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
				fmt.Fprintf(b, "%s = [%s]\n", k, strings.Join(xs, ", "))
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
	return writeAtomic(path, b.Bytes())
}

func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	tmp := f.Name()
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("calibrate: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("calibrate: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("calibrate: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
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
