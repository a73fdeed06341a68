package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

const hardwareSynopsis = `perfsim hardware list [--format table|json|csv]
       perfsim hardware show NAME|FILE [--format table|json|csv]

list prints the embedded catalog: name, vendor, memory, bandwidth and the
dense bf16 (or fp16) and fp8 peaks. show prints every field of one device,
a catalog name or alias (h100, a100, mi300x) or a hardware TOML file, with
its units, the source of each number, and the ridge point (dense peak over
memory bandwidth, FLOP per byte) of each precision. Tables are scaled for
reading; json and csv carry base SI units, with the unit in the key
(memory_bandwidth_bytes_per_s). The schema is in docs/hardware.md.`

const hardwareExamples = `  perfsim hardware list
  perfsim hardware list --format csv > catalog.csv
  perfsim hardware show h100
  perfsim hardware show my-accelerator.toml --format json
`

// runHardwareCmd runs "perfsim hardware list|show".
func runHardwareCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var opts struct{ format string }
	fs := newFlagSet("hardware", hardwareSynopsis, hardwareExamples, stderr)
	addFormatFlag(fs, &opts.format)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	f, err := parseFormat(opts.format)
	if err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return usagef("hardware: give a subcommand: list or show NAME|FILE")
	}
	switch rest[0] {
	case "list":
		if len(rest) > 1 {
			return usagef("hardware list takes no arguments, got %q", rest[1:])
		}
		return hardwareList(stdout, f, hardware.Catalog())
	case "show":
		if len(rest) != 2 {
			return usagef("hardware show takes one device (a catalog name or a .toml file), got %d arguments", len(rest)-1)
		}
		d, err := resolveHardwareArg(rest[1], "")
		if err != nil {
			return err
		}
		return hardwareShow(stdout, f, d)
	}
	return usagef("hardware: unknown subcommand %q (want list or show)", rest[0])
}

// densePeak returns d's dense peak for t (matrix, else vector), if any.
func densePeak(d *hardware.Device, t model.DType) (model.FLOPRate, bool) {
	if r, ok := d.Matrix[t]; ok {
		return r, true
	}
	r, ok := d.Vector[t]
	return r, ok
}

// halfPeak returns the bf16 peak, or the fp16 peak on a device without
// bf16 (V100), naming which.
func halfPeak(d *hardware.Device) (model.FLOPRate, model.DType, bool) {
	for _, t := range []model.DType{model.BF16, model.FP16} {
		if r, ok := densePeak(d, t); ok {
			return r, t, true
		}
	}
	return 0, model.Invalid, false
}

// listRow is one device in "hardware list --format json".
type listRow struct {
	Name          string   `json:"name"`
	Vendor        string   `json:"vendor"`
	Kind          string   `json:"kind"`
	Aliases       []string `json:"aliases"`
	Capacity      int64    `json:"memory_capacity_bytes"`
	Usable        int64    `json:"memory_usable_bytes"`
	Bandwidth     float64  `json:"memory_bandwidth_bytes_per_s"`
	BF16          *float64 `json:"bf16_dense_flop_per_s"`
	FP16          *float64 `json:"fp16_dense_flop_per_s"`
	FP8           *float64 `json:"fp8_dense_flop_per_s"`
	BF16RidgeFlop *float64 `json:"bf16_ridge_flop_per_byte"`
}

func peakPtr(d *hardware.Device, t model.DType) *float64 {
	if r, ok := densePeak(d, t); ok {
		v := float64(r)
		return &v
	}
	return nil
}

func hardwareList(w io.Writer, f format, devs []*hardware.Device) error {
	switch f {
	case formatJSON:
		rows := make([]listRow, 0, len(devs))
		for _, d := range devs {
			r := listRow{Name: d.Name, Vendor: d.Vendor, Kind: d.Kind, Aliases: d.Aliases,
				Capacity: whole(float64(d.Memory.Capacity)), Usable: whole(float64(d.Memory.Limit())), Bandwidth: float64(d.Memory.Bandwidth),
				BF16: peakPtr(d, model.BF16), FP16: peakPtr(d, model.FP16), FP8: peakPtr(d, model.FP8)}
			if r.BF16 != nil {
				v := float64(model.Ridge(model.FLOPRate(*r.BF16), d.Memory.Bandwidth))
				r.BF16RidgeFlop = &v
			}
			rows = append(rows, r)
		}
		return writeJSON(w, struct {
			Schema  string    `json:"schema"`
			Devices []listRow `json:"devices"`
		}{"perfsim.hardware-list/v1", rows})
	case formatCSV:
		header := []string{"name", "vendor", "kind", "aliases", "memory_capacity_bytes", "memory_usable_bytes", "memory_bandwidth_bytes_per_s", "bf16_dense_flop_per_s", "fp16_dense_flop_per_s", "fp8_dense_flop_per_s"}
		var rows [][]string
		for _, d := range devs {
			row := []string{d.Name, d.Vendor, d.Kind, strings.Join(d.Aliases, " "), num(float64(d.Memory.Capacity)), num(float64(d.Memory.Limit())), num(float64(d.Memory.Bandwidth))}
			for _, t := range []model.DType{model.BF16, model.FP16, model.FP8} {
				cell := ""
				if r, ok := densePeak(d, t); ok {
					cell = num(float64(r))
				}
				row = append(row, cell)
			}
			rows = append(rows, row)
		}
		return writeCSV(w, header, rows)
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tVENDOR\tKIND\tMEMORY (USABLE)\tBANDWIDTH\tBF16/FP16\tFP8\tALIASES")
	for _, d := range devs {
		half, fp8 := "-", "-"
		if r, t, ok := halfPeak(d); ok {
			half = r.String()
			if t != model.BF16 {
				half += " (" + t.String() + ")"
			}
		}
		if r, ok := densePeak(d, model.FP8); ok {
			fp8 = r.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.Name, d.Vendor, d.Kind, memoryText(d.Memory), d.Memory.Bandwidth, half, fp8, strings.Join(d.Aliases, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\nPeaks are dense (no sparsity); show a device for its other precisions and the sources.")
	return err
}

// A field is one line of "hardware show": a dotted key, its value and
// the source of the number.
type field struct {
	key    string  // dotted TOML key, "memory.bandwidth"
	unit   string  // base-unit suffix for json/csv keys: "bytes_per_s", "" for none
	shown  string  // human-scaled value for the table
	num    float64 // the value in base units, when text is ""
	text   string  // a string value
	list   []string
	source string
}

// jsonKey is the key of f in json and csv: the dotted key with
// underscores, and the unit.
func (f field) jsonKey() string {
	k := strings.ReplaceAll(f.key, ".", "_")
	if f.unit != "" {
		k += "_" + f.unit
	}
	return k
}

// showFields lists every field of d in schema order.
func showFields(d *hardware.Device) []field {
	var fs []field
	src := func(k string) string { return d.Sources[k] }
	str := func(k, v string) {
		if v != "" {
			fs = append(fs, field{key: k, text: v, shown: v})
		}
	}
	quantity := func(k, unit string, v float64, shown string, always bool) {
		if v != 0 || always {
			fs = append(fs, field{key: k, unit: unit, num: v, shown: shown, source: src(k)})
		}
	}
	count := func(k string, n int) {
		if n != 0 {
			fs = append(fs, field{key: k, num: float64(n), shown: strconv.Itoa(n), source: src(k)})
		}
	}
	str("name", d.Name)
	str("vendor", d.Vendor)
	str("kind", d.Kind)
	str("architecture", d.Architecture)
	if len(d.Aliases) > 0 {
		fs = append(fs, field{key: "aliases", text: strings.Join(d.Aliases, " "), list: d.Aliases, shown: strings.Join(d.Aliases, ", ")})
	}
	str("file", d.File)
	str("calibration", d.CalibrationLabel())
	count("compute_units", d.ComputeUnits)
	quantity("clock", "hz", float64(d.Clock), d.Clock.String(), false)
	quantity("tdp", "w", float64(d.TDP), d.TDP.String(), false)
	quantity("launch_overhead", "s", float64(d.Launch), d.Launch.String(), true)
	for _, kind := range []struct {
		name string
		m    map[model.DType]model.FLOPRate
	}{{"matrix", d.Matrix}, {"vector", d.Vector}, {"sparse", d.Sparse}} {
		for _, t := range sortedDTypes(kind.m) {
			r := kind.m[t]
			quantity("peak."+kind.name+"."+t.String(), "flop_per_s", float64(r), r.String(), true)
		}
	}
	m := d.Memory
	str("memory.type", m.Type)
	quantity("memory.capacity", "bytes", float64(m.Capacity), sizeString(m.Capacity), true)
	usable := sizeString(m.Limit())
	if sizeString(m.Capacity) == m.Capacity.BinaryString() {
		usable = m.Limit().BinaryString() // in the capacity's units, to compare at a glance
	}
	quantity("memory.usable", "bytes", float64(m.Limit()), usable, true)
	quantity("memory.bandwidth", "bytes_per_s", float64(m.Bandwidth), m.Bandwidth.String(), true)
	quantity("memory.l2", "bytes", float64(m.L2), sizeString(m.L2), false)
	quantity("memory.reserve", "bytes", float64(m.Reserve), sizeString(m.Reserve), true)
	// Ridge points: the intensity at which each dense peak meets the
	// memory bandwidth.
	for _, kind := range []struct {
		name string
		m    map[model.DType]model.FLOPRate
	}{{"matrix", d.Matrix}, {"vector", d.Vector}} {
		for _, t := range sortedDTypes(kind.m) {
			if m.Bandwidth > 0 {
				r := model.Ridge(kind.m[t], m.Bandwidth)
				fs = append(fs, field{key: "ridge." + kind.name + "." + t.String(), unit: "flop_per_byte", num: float64(r), shown: r.String(),
					source: "peak." + kind.name + "." + t.String() + " / memory.bandwidth"})
			}
		}
	}
	fs = append(fs, efficiencyFields("efficiency", reflect.ValueOf(d.Eff), d.Sources)...)
	for _, n := range []struct {
		tier string
		n    hardware.Network
	}{{"intra", d.Intra}, {"inter", d.Inter}, {"host", d.Host}} {
		if n.n == (hardware.Network{}) {
			continue
		}
		k := "interconnect." + n.tier
		str(k+".name", n.n.Name)
		quantity(k+".bandwidth", "bytes_per_s", float64(n.n.Bandwidth), n.n.Bandwidth.String()+" per direction", true)
		quantity(k+".latency", "s", float64(n.n.Latency), n.n.Latency.String(), true)
		quantity(k+".efficiency", "", n.n.Efficiency, strconv.FormatFloat(n.n.Efficiency, 'g', -1, 64), false)
		// The collective model's calibrated keys, when set (fitted links).
		quantity(k+".base_latency", "s", float64(n.n.Base), n.n.Base.String(), false)
		quantity(k+".allreduce_latency", "s", float64(n.n.AllReduceLatency), n.n.AllReduceLatency.String(), false)
		quantity(k+".allreduce_efficiency", "", n.n.AllReduceEfficiency, strconv.FormatFloat(n.n.AllReduceEfficiency, 'g', -1, 64), false)
		quantity(k+".efficiency_half_size", "bytes", float64(n.n.EfficiencyHalf), sizeString(n.n.EfficiencyHalf), false)
		quantity(k+".efficiency_slope", "", n.n.EfficiencySlope, strconv.FormatFloat(n.n.EfficiencySlope, 'g', -1, 64), false)
		quantity(k+".efficiency_rank_factor", "", n.n.RankFactor, strconv.FormatFloat(n.n.RankFactor, 'g', -1, 64), false)
		count(k+".devices_per_node", n.n.DevicesPerNode)
		str(k+".topology", n.n.Topology)
		if r := n.n.Reduction; r != "" {
			// A fact of the hardware, with its source (not given: none
			// is counted, hardware.Network.SHARP).
			fs = append(fs, field{key: k + ".in_network_reduction", text: r, shown: r, source: src(k + ".in_network_reduction")})
		}
	}
	return fs
}

// efficiencyFields lists the set (non-zero) efficiency parameters by
// reflection, so that parameters added to model.Efficiency show up.
func efficiencyFields(path string, v reflect.Value, sources map[string]string) []field {
	var fs []field
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("toml"), ",")
			if name == "" || name == "-" || name == "source" {
				continue
			}
			fs = append(fs, efficiencyFields(path+"."+name, v.Field(i), sources)...)
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].Uint() < keys[j].Uint() })
		for _, k := range keys {
			fs = append(fs, efficiencyFields(path+"."+fmt.Sprint(k.Interface()), v.MapIndex(k), sources)...)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			fs = append(fs, field{key: path, text: "set", shown: "set", source: sources[path]})
		}
	case reflect.Float64:
		x := v.Float()
		if x == 0 {
			return nil
		}
		f := field{key: path, num: x, source: sources[path]}
		switch q := v.Interface().(type) {
		case model.Seconds:
			f.unit, f.shown = "s", q.String()
			if math.Abs(x) < 1e-15 {
				f.shown = "< 1 fs" // a fitted cost that is zero in effect (6e-38 s), not an exponent
			}
		case model.Bytes:
			f.unit, f.shown = "bytes", q.String()
		case fmt.Stringer: // a rate with its unit: "4.87 TFLOP/s", not 4.87e+12
			f.shown = q.String()
		default:
			f.shown = strconv.FormatFloat(x, 'g', -1, 64)
		}
		fs = append(fs, f)
	case reflect.Int:
		if v.Int() != 0 {
			fs = append(fs, field{key: path, num: float64(v.Int()), shown: strconv.FormatInt(v.Int(), 10), source: sources[path]})
		}
	case reflect.String:
		if s := v.String(); s != "" {
			fs = append(fs, field{key: path, text: s, shown: s})
		}
	}
	return fs
}

// memoryText is a device's memory in the list: the physical capacity, and
// what programs get of it when that differs: "80 GiB (79.11 GiB)".
func memoryText(m hardware.Memory) string {
	if m.Limit() == m.Capacity {
		return sizeString(m.Capacity)
	}
	return sizeString(m.Capacity) + " (" + m.Limit().BinaryString() + ")"
}

// sizeString prints a size as it was most likely written: with a binary
// prefix when it is a whole number of MiB but not of MB ("32 GiB" on a
// TPU), else with a decimal one ("80 GB").
func sizeString(b model.Bytes) string {
	v := float64(b)
	if v >= 1<<20 && math.Mod(v, 1e6) != 0 && math.Mod(v, 1<<20) == 0 {
		return b.BinaryString()
	}
	return b.String()
}

func sortedDTypes(m map[model.DType]model.FLOPRate) []model.DType {
	out := make([]model.DType, 0, len(m))
	for t := range m {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func hardwareShow(w io.Writer, f format, d *hardware.Device) error {
	fields := showFields(d)
	switch f {
	case formatJSON:
		var b bytes.Buffer
		b.WriteString("{\n  \"schema\": \"perfsim.hardware/v1\",\n")
		for _, fl := range fields {
			k, _ := json.Marshal(fl.jsonKey())
			var v []byte
			if fl.list != nil {
				v, _ = json.Marshal(fl.list)
			} else if fl.text != "" {
				v, _ = json.Marshal(fl.text)
			} else {
				v = []byte(num(fl.num))
			}
			fmt.Fprintf(&b, "  %s: %s,\n", k, v)
		}
		srcs, err := json.MarshalIndent(d.Sources, "  ", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "  \"sources\": %s\n}\n", srcs)
		_, err = w.Write(b.Bytes())
		return err
	case formatCSV:
		var rows [][]string
		for _, fl := range fields {
			v := fl.text
			if v == "" {
				v = num(fl.num)
			}
			rows = append(rows, []string{fl.jsonKey(), v, fl.source})
		}
		return writeCSV(w, []string{"field", "value", "source"}, rows)
	}
	// The table: values, with sources as numbered notes below.
	var notes []string
	noteOf := map[string]int{}
	tw := newTable(w)
	fmt.Fprintln(tw, "FIELD\tVALUE\tSOURCE")
	for _, fl := range fields {
		ref := ""
		if fl.source != "" {
			if strings.HasPrefix(fl.key, "ridge.") {
				ref = fl.source
			} else {
				n, ok := noteOf[fl.source]
				if !ok {
					notes = append(notes, fl.source)
					n = len(notes)
					noteOf[fl.source] = n
				}
				ref = "[" + strconv.Itoa(n) + "]"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", fl.key, fl.shown, ref)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "\nSources (codes such as N6 or M2 are listed with titles and URLs in docs/sources.md):")
		for i, s := range notes {
			fmt.Fprintf(w, "  [%d] %s\n", i+1, s)
		}
	}
	return nil
}
