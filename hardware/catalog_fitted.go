package hardware

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"reflect"
	"strconv"
	"strings"

	"github.com/perfsim/perfsim/model"
)

// Fitted overlays.
//
// A catalog device file (devices/<stem>.toml) is written by hand: datasheet
// numbers, their sources, the conflicts between sources, and default
// efficiencies. When the device has been calibrated (perfsim calibrate
// fit, see calibrate/fitted/README.md), the fitted parameters live beside
// it in devices/fitted/<stem>.toml, a generated file that Lookup and
// Catalog apply on top of the hand-written one. The rule:
//
//   - each [efficiency.gemm.<dtype>], [efficiency.attention],
//     [efficiency.mla], [efficiency.moe] and [efficiency.memory] table of
//     the overlay replaces the device's table
//     of that name whole (with its sub-tables, such as residual); tables
//     the overlay does not name keep the hand-written defaults;
//   - each key of an [interconnect.<tier>] table of the overlay (latency,
//     efficiency, base_latency, allreduce_latency, allreduce_efficiency,
//     efficiency_half_size, efficiency_slope, efficiency_rank_factor: the
//     calibrated ones)
//     replaces that key of the device's tier; the
//     datasheet keys (name, bandwidth, devices_per_node, topology) may not
//     appear in an overlay;
//   - the overlay's sources replace those of the keys it sets.
//
// An overlay is read as strictly as a device file: unknown keys, values of
// the wrong type and numbers without a source are errors with file:line.
// A device file loaded by path (LoadFile) is the hand-written entry alone.

// fittedNetworkKeys are the keys an overlay may set in an interconnect
// tier: those a fit calibrates.
var fittedNetworkKeys = []string{"source", "latency", "efficiency", "base_latency", "allreduce_latency", "allreduce_efficiency", "efficiency_half_size", "efficiency_slope", "efficiency_rank_factor"}

// loadFitted applies devices/fitted/<stem>.toml to d when there is one.
func loadFitted(d *Device, stem string) error {
	data, err := devicesFS.ReadFile(path.Join("devices", "fitted", stem+".toml"))
	if err != nil {
		if isNotExist(err) {
			return nil
		}
		return err
	}
	return ApplyFitted(d, bytes.NewReader(data), "hardware/devices/fitted/"+stem+".toml")
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// ApplyFitted applies the fitted overlay read from r (file names it in
// messages) to d, by the rule above. On an error d is left as it was.
func ApplyFitted(d *Device, r io.Reader, file string) error {
	root, dec, err := parse(r, file)
	if err != nil {
		return err
	}
	var eff model.Efficiency
	if e := root.sub("efficiency", fieldKeys(reflect.TypeOf(eff)), false); e != nil {
		dec.decodeStruct(e, reflect.ValueOf(&eff).Elem())
		e.close()
	}
	intra, inter, host := d.Intra, d.Inter, d.Host
	if ic := root.sub("interconnect", icKeys, false); ic != nil {
		for _, tier := range []struct {
			name string
			n    *Network
		}{{"intra", &intra}, {"inter", &inter}, {"host", &host}} {
			t := ic.sub(tier.name, fittedNetworkKeys, false)
			if t == nil {
				continue
			}
			if tier.n.Bandwidth <= 0 {
				dec.fail(t.line, t.path, fmt.Errorf("%s has no [%s] to calibrate", d.Name, t.path))
			}
			t.linkKeys(tier.n)
			t.close()
		}
		ic.close()
	}
	root.close()

	// The merged device, validated with the overlay's positions so that a
	// bad fitted value is reported at its line in the overlay.
	m := *d
	m.Eff = d.Eff
	m.Eff.GEMM = make(map[model.DType]model.GEMMParams, len(d.Eff.GEMM)+len(eff.GEMM))
	for dt, g := range d.Eff.GEMM {
		m.Eff.GEMM[dt] = g
	}
	var replaced []string // tables whose old sources go
	for dt, g := range eff.GEMM {
		key := "efficiency.gemm." + dt.String()
		if _, set := dec.lines[key+".launch"]; !set && g.Launch == 0 {
			g.Launch = d.Launch
			dec.srcs[key+".launch"] = "default: launch_overhead"
		}
		m.Eff.GEMM[dt] = g
		replaced = append(replaced, key)
	}
	if _, ok := dec.lines["efficiency.attention"]; ok {
		m.Eff.Attention = eff.Attention
		replaced = append(replaced, "efficiency.attention")
	}
	if _, ok := dec.lines["efficiency.mla"]; ok {
		m.Eff.MLA = eff.MLA
		replaced = append(replaced, "efficiency.mla")
	}
	if _, ok := dec.lines["efficiency.moe"]; ok {
		m.Eff.MoE = eff.MoE
		replaced = append(replaced, "efficiency.moe")
	}
	if _, ok := dec.lines["efficiency.memory"]; ok {
		m.Eff.Memory = eff.Memory
		replaced = append(replaced, "efficiency.memory")
	}
	if _, ok := dec.lines["efficiency.vector"]; ok {
		m.Eff.Vector = eff.Vector
	}
	m.Intra, m.Inter, m.Host = intra, inter, host
	m.File, m.pos = file, dec.lines
	if err := dec.finish(&m); err != nil {
		return err
	}

	// The replaced tables' sources and lines go: their keys are the
	// overlay's now (which Validate has checked at the overlay's lines).
	in := func(k string) bool {
		for _, p := range replaced {
			if k == p || strings.HasPrefix(k, p+".") {
				return true
			}
		}
		return false
	}
	src := make(map[string]string, len(d.Sources)+len(dec.srcs))
	for k, v := range d.Sources {
		if !in(k) {
			src[k] = v
		}
	}
	for k, v := range dec.srcs {
		src[k] = v
	}
	pos := make(map[string]int, len(d.pos))
	for k, l := range d.pos {
		if !in(k) {
			pos[k] = l
		}
	}
	m.Sources, m.File, m.pos = src, d.File, pos
	*d = m
	return nil
}

// CatalogFitSources returns, for each catalog device with a fitted
// overlay, in catalog order, its name and the sources of the overlay's
// tables, read from the overlay's text without loading the device (the
// overlay's sources are the ones a fit writes). perfsim version lists the
// dates of the fits from them; TestCatalogFitSources checks them against
// the sources of the loaded devices.
func CatalogFitSources() ([]FitSources, error) {
	var out []FitSources
	for _, stem := range catalogOrder {
		data, err := devicesFS.ReadFile(path.Join("devices", "fitted", stem+".toml"))
		if err != nil {
			if isNotExist(err) {
				continue
			}
			return nil, err
		}
		head, err := catalogHead(stem)
		if err != nil {
			return nil, err
		}
		fs := FitSources{Name: head.Name}
		for line := range strings.Lines(string(data)) {
			v, ok := strings.CutPrefix(strings.TrimSpace(line), "source")
			if !ok {
				continue
			}
			v, ok = strings.CutPrefix(strings.TrimSpace(v), "=")
			if !ok {
				continue
			}
			s, err := strconv.Unquote(strings.TrimSpace(v))
			if err != nil {
				// Not a plain string: load the device to read it.
				d, err := loadCatalogFileOnly(stem)
				if err != nil {
					return nil, err
				}
				fs.Sources = fs.Sources[:0]
				for _, s := range d.Sources {
					fs.Sources = append(fs.Sources, s)
				}
				break
			}
			fs.Sources = append(fs.Sources, s)
		}
		out = append(out, fs)
	}
	return out, nil
}

// FitSources are a calibrated catalog device's name and the sources of
// its fitted tables.
type FitSources struct {
	Name    string
	Sources []string
}
