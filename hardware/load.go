package hardware

import (
	"bytes"
	"encoding"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/perfsim/perfsim/internal/errlist"
	"github.com/perfsim/perfsim/internal/fileio"
	"github.com/perfsim/perfsim/model"
)

// DefaultReserve is the memory held back for the framework when a file
// gives no memory.reserve: the CUDA (or ROCm) context, library workspaces
// (cuBLAS, NCCL's buffers at more than one device) and allocator slack.
// It is an ASSUMPTION, one figure for every device: no source sizes the
// context by GPU generation (the CUDA programming guide's Lazy Loading
// section says lazy loading reduces it, and gives no size). Measured
// contexts are a small part of it: 287,047,680 B (0.27 GiB) with lazy
// module loading and 666,632,192 B without (pytorch/pytorch#86509, the
// GPU not named); 0.30 GiB under SGLang on an 80 GB GPU (its first free
// reading, 78.81 GiB, against the H100's 79.11: serve.SGLangContext).
// The rest stands for what a run priced without an engine does not size:
// NCCL's communicators alone take 1.79 GiB at two GPUs in vLLM V0's own
// profile (serve.VLLM06CommBase), and NVLink SHARP's buffers grow with
// the GPUs (serve.NVLSBuffers). A context-only figure would drop those,
// so it is not used here. The serving presets replace the reserve with
// their engine's own accounting (package serve: VLLMNonTorch,
// VLLM06NonTorch, SGLangKeptBack), or count their buffers apart from it
// (TRTLLMBuffers).
const DefaultReserve = model.Bytes(2 << 30)

// GPUUsableFraction is the share of a GPU's physical memory that programs
// get when its file gives no memory.usable: the median of the measured
// NVIDIA parts in the catalog (A100 80GB SXM 79.15 of 80 GiB, H100 SXM
// 79.11 of 80 GiB, H200 139.81 of 141 GiB, each from the CUDA total
// PyTorch reports; see their files' sources). The driver and ECC keep the
// rest.
const GPUUsableFraction = 79.15 / 80

// defaultUsable returns the usable memory of a device whose file gives
// none, and the source that says so: GPUUsableFraction of a GPU's
// capacity, all of any other kind's (a CPU's operating system takes its
// share from the reserve).
func defaultUsable(kind string, capacity model.Bytes) (model.Bytes, string) {
	if kind == "gpu" {
		return capacity * GPUUsableFraction, fmt.Sprintf("default: %.2f%% of the capacity, the median of the measured NVIDIA GPUs (A100 80GB 79.15, H100 79.11, H200 139.81 GiB usable); no driver-reported total given", 100*GPUUsableFraction)
	}
	return capacity, "default: the capacity (no program-visible total given)"
}

// MaxFileSize bounds what Load reads: a hardware file is a few kilobytes.
const MaxFileSize = 1 << 20

const maxFileSize = MaxFileSize

// The values kind and topology may take.
var (
	Kinds      = []string{"gpu", "cpu", "tpu", "accelerator"}
	Topologies = []string{"switch", "ring", "mesh", "torus"}
)

// The keys of each table of a device file; doc.go documents them.
var (
	peakKeys    = []string{"source", "matrix", "vector", "sparse"}
	memoryKeys  = []string{"source", "type", "capacity", "usable", "bandwidth", "l2", "reserve"}
	icKeys      = []string{"source", "intra", "inter", "host"}
	networkKeys = []string{"source", "name", "bandwidth", "latency", "efficiency", "base_latency", "allreduce_latency", "allreduce_efficiency", "efficiency_half_size", "efficiency_slope", "efficiency_rank_factor"}
	intraKeys   = append(append([]string(nil), networkKeys...), "devices_per_node", "topology", "in_network_reduction")
)

// LoadFile reads and validates the hardware file at path.
func LoadFile(path string) (*Device, error) {
	return named(loadFile(path))
}

// named gives an error that is not a file's own (an unknown name, a file
// that cannot be opened) the package's prefix; a file's own problems are
// *ParseErrors, which name it already.
func named(d *Device, err error) (*Device, error) {
	var pe *ParseError
	if err != nil && !errors.As(err, &pe) {
		return nil, fmt.Errorf("hardware: %w", err)
	}
	return d, err
}

// loadFile is LoadFile with an error opening the file not naming the
// package (resolve).
func loadFile(path string) (*Device, error) {
	f, err := fileio.Open(path, maxFileSize, "hardware file")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Load(f, path)
}

// Load reads a device from the TOML in r; file names it in messages. It
// reports every problem at once, joined with errors.Join, each a
// *ParseError naming the file, the line and the key.
func Load(r io.Reader, file string) (*Device, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return nil, &ParseError{File: file, Err: err}
	}
	if isDerived(data) {
		return loadDerived(data, file, 0)
	}
	root, d, err := parse(bytes.NewReader(data), file)
	if err != nil {
		return nil, err
	}
	dev := d.device(root)
	return dev, d.finish(dev)
}

// parse reads r as TOML and opens its top-level table.
func parse(r io.Reader, file string) (*table, *decoder, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return nil, nil, &ParseError{File: file, Err: err}
	}
	if len(data) > maxFileSize {
		return nil, nil, &ParseError{File: file, Err: fmt.Errorf("file larger than %d bytes", maxFileSize)}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, &ParseError{File: file, Err: errors.New("empty file")}
	}
	data, lists := stashLists(data)
	var keys map[string]toml.Primitive
	md, err := toml.Decode(string(data), &keys)
	if err != nil {
		return nil, nil, tomlError(file, err)
	}
	if len(keys) == 0 {
		return nil, nil, &ParseError{File: file, Err: errors.New("no keys: the file has only comments")}
	}
	d := newDecoder(&md, file)
	d.keyLines = scanKeyLines(data)
	d.lists = lists
	return d.open("", 1, keys, nil, ""), d, nil
}

var redefined = regexp.MustCompile(`^Key '(.*)' has already been defined\.?$`)

// tomlError turns the TOML parser's error into a positioned one.
func tomlError(file string, err error) error {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		return &ParseError{File: file, Err: fmt.Errorf("not valid TOML: %w", err)}
	}
	msg := strings.TrimSuffix(pe.Message, ".")
	if m := redefined.FindStringSubmatch(pe.Message); m != nil {
		msg = fmt.Sprintf("%q is defined twice (a duplicate table or key)", m[1])
		return &ParseError{File: file, Line: pe.Position.Line, Err: errors.New(msg)}
	}
	return &ParseError{File: file, Line: pe.Position.Line, Err: fmt.Errorf("not valid TOML: %s", msg)}
}

// finish validates dev and joins the decoding and validation errors; a
// key that failed to decode is not reported again by validation.
func (d *decoder) finish(dev *Device) error {
	if err := dev.Validate(); err != nil {
		for _, e := range errlist.Flatten(err) {
			var pe *ParseError
			if errors.As(e, &pe) && d.reported(pe.Key) {
				continue
			}
			if pe != nil {
				d.errs = append(d.errs, pe)
			}
		}
	}
	return joinSorted(d.errs)
}

// reported says whether key, or a table enclosing it, already has an
// error from decoding.
func (d *decoder) reported(key string) bool {
	for k := key; k != ""; {
		if d.bad[k] {
			return true
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return false
}

// device decodes the top-level table of a device file.
func (d *decoder) device(t *table) *Device {
	dev := &Device{File: d.file, Sources: d.srcs, pos: d.lines}
	dev.Name, _ = t.str("name", true)
	dev.Vendor, _ = t.str("vendor", true)
	dev.Kind, _ = t.str("kind", true)
	dev.Aliases = t.strs("aliases")
	dev.Architecture, _ = t.str("architecture", false)
	dev.ComputeUnits, _ = t.integer("compute_units", true)
	t.quantity("clock", &dev.Clock, false)
	t.quantity("tdp", &dev.TDP, false)
	if !t.quantity("launch_overhead", &dev.Launch, false) && !d.bad["launch_overhead"] {
		// Said, not silent: a file without it prices kernels with no launch cost.
		d.srcs["launch_overhead"] = "default: 0 (not given: kernels are priced without a launch overhead)"
	}

	if p := t.sub("peak", peakKeys, true); p != nil {
		dev.Matrix = d.peaks(p, "matrix")
		dev.Vector = d.peaks(p, "vector")
		dev.Sparse = d.peaks(p, "sparse")
		p.close()
	}
	if m := t.sub("memory", memoryKeys, true); m != nil {
		dev.Memory.Type, _ = m.str("type", false)
		m.quantity("capacity", &dev.Memory.Capacity, true)
		if !m.quantity("usable", &dev.Memory.Usable, false) && !d.bad["memory.usable"] && dev.Memory.Capacity > 0 {
			dev.Memory.Usable, d.srcs["memory.usable"] = defaultUsable(dev.Kind, dev.Memory.Capacity)
		}
		// Whole bytes: "79.11 GiB" is a figure to 0.01 GiB, not a
		// fraction of a byte.
		dev.Memory.Usable = model.Bytes(math.Round(float64(dev.Memory.Usable)))
		m.quantity("bandwidth", &dev.Memory.Bandwidth, true)
		m.quantity("l2", &dev.Memory.L2, false)
		if !m.quantity("reserve", &dev.Memory.Reserve, false) && !d.bad["memory.reserve"] {
			dev.Memory.Reserve = DefaultReserve
			d.srcs["memory.reserve"] = "default: " + DefaultReserve.BinaryString() + " (assumed: framework context, workspaces and allocator slack)"
		}
		m.close()
	}
	if e := t.sub("efficiency", fieldKeys(reflect.TypeOf(dev.Eff)), false); e != nil {
		d.decodeStruct(e, reflect.ValueOf(&dev.Eff).Elem())
		e.close()
	}
	d.defaultLaunch(dev)
	if ic := t.sub("interconnect", icKeys, false); ic != nil {
		dev.Intra = d.network(ic, "intra", intraKeys)
		dev.Inter = d.network(ic, "inter", networkKeys)
		dev.Host = d.network(ic, "host", networkKeys)
		ic.close()
	}
	d.power(t, dev)
	t.close()
	return dev
}

// defaultLaunch gives GEMM parameters without a launch cost the device's
// launch overhead, so that a hardware file states it once.
func (d *decoder) defaultLaunch(dev *Device) {
	for dt, g := range dev.Eff.GEMM {
		key := "efficiency.gemm." + dt.String() + ".launch"
		if _, set := d.lines[key]; set || g.Launch != 0 {
			continue
		}
		g.Launch = dev.Launch
		dev.Eff.GEMM[dt] = g
		d.srcs[key] = "default: launch_overhead"
	}
}

// peaks decodes one [peak.<kind>] table of rates keyed by data type.
func (d *decoder) peaks(p *table, kind string) map[model.DType]model.FLOPRate {
	t := p.sub(kind, nil, false)
	if t == nil {
		return nil
	}
	m := map[model.DType]model.FLOPRate{}
	keys := t.dtypeKeys()
	for _, k := range keys {
		var r model.FLOPRate
		if t.quantity(k.key, &r, true) {
			m[k.d] = r
		}
	}
	t.close()
	// A type written by an alias ("bfloat16") is known by its canonical
	// name ("bf16") in Sources and in validation messages.
	for _, k := range keys {
		written, canon := t.join(k.key), t.join(k.d.String())
		if written == canon {
			continue
		}
		d.lines[canon] = t.lines[k.key]
		if s, ok := d.srcs[written]; ok {
			d.srcs[canon] = s
			delete(d.srcs, written)
		}
		d.bad[canon] = d.bad[written]
	}
	return m
}

// network decodes one [interconnect.<tier>] table.
// linkKeys sets the keys of a network table that describe how its link
// performs (latency, efficiency and the collective model's terms) on n,
// each only where t has it: a device file's tiers, a fitted overlay and a
// system file's overrides read them alike.
func (t *table) linkKeys(n *Network) {
	t.quantity("latency", &n.Latency, false)
	if x, ok := t.float("efficiency", false); ok {
		n.Efficiency = x
	}
	t.quantity("base_latency", &n.Base, false)
	t.quantity("allreduce_latency", &n.AllReduceLatency, false)
	if x, ok := t.float("allreduce_efficiency", false); ok {
		n.AllReduceEfficiency = x
	}
	t.quantity("efficiency_half_size", &n.EfficiencyHalf, false)
	if x, ok := t.float("efficiency_slope", false); ok {
		n.EfficiencySlope = x
	}
	if x, ok := t.float("efficiency_rank_factor", false); ok {
		n.RankFactor = x
	}
}

func (d *decoder) network(ic *table, tier string, known []string) Network {
	t := ic.sub(tier, known, false)
	if t == nil {
		return Network{}
	}
	var n Network
	n.Name, _ = t.str("name", true)
	t.quantity("bandwidth", &n.Bandwidth, true)
	t.linkKeys(&n)
	if tier == "intra" {
		n.DevicesPerNode, _ = t.integer("devices_per_node", true)
		n.Topology, _ = t.str("topology", true)
		n.Reduction, _ = t.fact("in_network_reduction")
	}
	t.close()
	return n
}

var textUnmarshaler = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()

// tomlName returns a struct field's TOML key, or "" when it has none.
func tomlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if name == "-" || !f.IsExported() {
		return ""
	}
	return name
}

// fieldKeys lists the TOML keys of a struct type's fields.
func fieldKeys(t reflect.Type) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		if n := tomlName(t.Field(i)); n != "" {
			keys = append(keys, n)
		}
	}
	return append(keys, "source")
}

// decodeStruct fills the struct v from t by its fields' toml tags. It is
// how the efficiency parameters of model/cost.go are read, so that a field
// added there is read from hardware files without a change here.
func (d *decoder) decodeStruct(t *table, v reflect.Value) {
	typ := v.Type()
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		k := tomlName(f)
		if k == "" {
			continue
		}
		fv := v.Field(i)
		switch {
		case reflect.PointerTo(f.Type).Implements(textUnmarshaler):
			u := fv.Addr().Interface().(encoding.TextUnmarshaler)
			if f.Type.Kind() == reflect.Float64 {
				t.quantity(k, u, false)
			} else if s, ok := t.str(k, false); ok {
				if err := u.UnmarshalText([]byte(s)); err != nil {
					d.fail(t.lines[k], t.join(k), err)
				}
			}
		case f.Type.Kind() == reflect.Float64:
			if x, ok := t.float(k, false); ok {
				fv.SetFloat(x)
			}
		case f.Type.Kind() == reflect.Int:
			if n, ok := t.integer(k, false); ok {
				fv.SetInt(int64(n))
			}
		case f.Type.Kind() == reflect.String:
			if s, ok := t.str(k, false); ok {
				fv.SetString(s)
			} else if k == "source" {
				fv.SetString(t.source) // inherited
			}
		case f.Type.Kind() == reflect.Bool:
			if b, ok := t.boolean(k); ok {
				fv.SetBool(b)
			}
		case f.Type.Kind() == reflect.Struct:
			if s := t.sub(k, fieldKeys(f.Type), false); s != nil {
				d.decodeStruct(s, fv)
				s.close()
			}
		case f.Type.Kind() == reflect.Map && f.Type.Key() == reflect.TypeOf(model.DType(0)) && f.Type.Elem().Kind() == reflect.Struct:
			s := t.sub(k, nil, false)
			if s == nil {
				continue
			}
			m := reflect.MakeMap(f.Type)
			for _, dk := range s.dtypeKeys() {
				// Each [<table>.<dtype>] is named by its canonical type in
				// messages and Sources.
				p := s.keys[dk.key]
				var keys map[string]toml.Primitive
				if err := d.md.PrimitiveDecode(p, &keys); err != nil {
					d.fail(s.lines[dk.key], s.join(dk.key), s.typeErr(dk.key, "a table"))
					continue
				}
				sub := d.open(s.join(dk.d.String()), s.lines[dk.key], keys, fieldKeys(f.Type.Elem()), s.source)
				ev := reflect.New(f.Type.Elem()).Elem()
				d.decodeStruct(sub, ev)
				sub.close()
				m.SetMapIndex(reflect.ValueOf(dk.d), ev)
			}
			s.close()
			fv.Set(m)
		case f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct:
			if s := t.sub(k, fieldKeys(f.Type.Elem()), false); s != nil {
				ev := reflect.New(f.Type.Elem())
				before := len(d.errs)
				d.decodeStruct(s, ev.Elem())
				s.close()
				fv.Set(ev)
				// A table that can check itself (a residual table) is
				// checked once here, so that the cost model need not;
				// not after a problem in its keys, which it would repeat.
				if c, ok := ev.Interface().(interface{ Check() error }); ok && len(d.errs) == before {
					if err := c.Check(); err != nil {
						// At the line of the key at fault where the
						// check names one (a residual's values), else
						// at the table's.
						line, key := t.lines[k], t.join(k)
						var ke *model.KeyError
						if errors.As(err, &ke) {
							if l, ok := d.lines[key+"."+ke.Key]; ok && l > 0 {
								line, key = l, key+"."+ke.Key
							}
						}
						d.fail(line, key, err)
					}
				}
			}
		default:
			// Anything else (arrays of numbers, ...) is decoded by the
			// TOML package itself, at the key's line when it fails.
			p, ok := t.take(k)
			if !ok {
				continue
			}
			// A list of numbers may also be written as one string of
			// space-separated numbers, which reads about five times
			// faster than a TOML array: the fitted residual tables hold
			// thousands of them.
			var list string
			if f.Type == reflect.TypeOf([]float64(nil)) && d.md.PrimitiveDecode(p, &list) == nil {
				if l, ok := d.lists[t.lines[k]]; ok && list == "" {
					list = l // taken out of the text by stashLists
				}
				xs, seen := d.floats[list]
				if !seen {
					var err error
					if xs, err = parseFloats(list); err != nil {
						d.fail(t.lines[k], t.join(k), err)
						continue
					}
					if d.floats == nil {
						d.floats = map[string][]float64{}
					}
					d.floats[list] = xs
				}
				fv.Set(reflect.ValueOf(xs))
				t.numbers = append(t.numbers, k)
				continue
			}
			if err := d.md.PrimitiveDecode(p, fv.Addr().Interface()); err != nil {
				d.fail(t.lines[k], t.join(k), fmt.Errorf("expected %s, found %s", kindName(f.Type), d.tomlType(t.join(k))))
				continue
			}
			t.numbers = append(t.numbers, k)
		}
	}
}

// kindName describes a Go type as TOML would write it, for messages.
func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(kindName(t.Elem()), "a "), "an ") + "s"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	}
	return "a table"
}
