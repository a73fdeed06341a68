package hardware

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/BurntSushi/toml"
)

// devicesFS holds the hand-written device files and, in devices/fitted,
// the generated overlays of calibrated devices (catalog_fitted.go).
//
//go:embed devices/*.toml devices/fitted/*.toml
var devicesFS embed.FS

// catalogOrder is the order of Catalog: NVIDIA data-centre parts by
// generation, NVIDIA PCIe and consumer parts, AMD, Google, Intel, CPUs.
// Each is the stem of a file in devices/.
var catalogOrder = []string{
	"v100-sxm2-32gb",
	"a100-sxm-40gb", "a100-sxm-80gb", "a100-pcie-80gb",
	"h100-sxm", "h100-pcie", "h100-nvl", "h200-sxm",
	"b200", "gb200",
	"t4", "l4", "l40s", "rtx-4090", "a10",
	"mi250x-gcd", "mi300x", "mi325x",
	"tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e",
	"gaudi2", "gaudi3",
	"epyc-7742", "xeon-8480plus",
}

// loadCatalogFile loads one embedded device by its file stem, with its
// fitted overlay (devices/fitted/<stem>.toml) applied when it has one, or
// else with the efficiencies of the nearest calibrated device of its
// family transferred to it (transfer.go) when it has such a device.
func loadCatalogFile(stem string) (*Device, error) {
	d, err := loadCatalogFileOnly(stem)
	if err != nil {
		return nil, err
	}
	// A calibrated device needs no transfer: only the others load the
	// calibrated devices (parsing their fitted tables) to find a base.
	if d.Calibration().Kind != "calibrated" {
		if base := NearestCalibrated(d, calibratedDevices()); base != nil {
			Transfer(d, base)
		}
	}
	return d, nil
}

// loadCatalogFileOnly is loadCatalogFile without the transfer.
func loadCatalogFileOnly(stem string) (*Device, error) {
	data, err := devicesFS.ReadFile(path.Join("devices", stem+".toml"))
	if err != nil {
		return nil, err
	}
	d, err := Load(bytes.NewReader(data), "hardware/devices/"+stem+".toml")
	if err != nil {
		return nil, err
	}
	if err := loadFitted(d, stem); err != nil {
		return nil, err
	}
	d.File = "catalog:" + stem
	return d, nil
}

// Catalog returns every embedded device, freshly loaded (callers may
// change them), in a fixed order. The embedded files are tested to load;
// a broken one is a programmer error and panics.
func Catalog() []*Device {
	out := make([]*Device, 0, len(catalogOrder))
	for _, stem := range catalogOrder {
		d, err := loadCatalogFile(stem)
		if err != nil {
			panic(fmt.Sprintf("hardware: embedded catalog: %v", err))
		}
		out = append(out, d)
	}
	return out
}

// normName folds a device name for matching: case, spaces, hyphens and
// underscores are ignored, so "H100 SXM", "h100-sxm" and "h100sxm" match.
func normName(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.NewReplacer(" ", "", "-", "", "_", "").Replace(s)
}

// names returns every name d answers to: its name, its aliases and its
// catalog file stem.
func (d *Device) names() []string {
	n := append([]string{d.Name}, d.Aliases...)
	if stem, ok := strings.CutPrefix(d.File, "catalog:"); ok {
		n = append(n, stem)
	}
	return n
}

// Lookup returns the catalog device called name, by its name, one of its
// aliases ("h100", "mi300x") or its file stem; case, spaces and hyphens
// are ignored. An unknown name is an error wrapping ErrUnknownDevice,
// with the closest name when one is close.
func Lookup(name string) (*Device, error) {
	d, err := lookup(name)
	if err != nil {
		return nil, fmt.Errorf("hardware: %w", err)
	}
	return d, nil
}

// lookup is Lookup with an error that does not name the package, for a
// caller that positions it (a derived file's base key) under its own
// "hardware: " prefix.
func lookup(name string) (*Device, error) {
	want := normName(name)
	var all []string
	for _, stem := range catalogOrder {
		// Match on the names alone, then load only the device found: a
		// full load (with line positions) costs milliseconds per file.
		head, err := catalogHead(stem)
		if err != nil {
			panic(fmt.Sprintf("hardware: embedded catalog: %s: %v", stem, err))
		}
		for _, n := range append([]string{head.Name, stem}, head.Aliases...) {
			if normName(n) == want {
				d, err := loadCatalogFile(stem)
				if err != nil {
					panic(fmt.Sprintf("hardware: embedded catalog: %v", err))
				}
				return d, nil
			}
			all = append(all, n)
		}
	}
	// The closest name, or else the whole catalog by file stem.
	hint := fmt.Sprintf(": not in the catalog (%s) and not a .toml file", strings.Join(catalogOrder, ", "))
	if s := suggestName(name, all); s != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", s)
	}
	return nil, fmt.Errorf("%w %q%s", ErrUnknownDevice, name, hint)
}

// CatalogAliases returns the short names --hw accepts for the catalog's
// devices: each device's first alias (its file stem when it has none), in
// catalog order, read off the files' heads without loading the devices.
func CatalogAliases() []string {
	out := make([]string, 0, len(catalogOrder))
	for _, stem := range catalogOrder {
		head, err := catalogHead(stem)
		if err != nil {
			panic(fmt.Sprintf("hardware: embedded catalog: %s: %v", stem, err))
		}
		name := stem
		if len(head.Aliases) > 0 {
			name = head.Aliases[0]
		}
		out = append(out, name)
	}
	return out
}

// A deviceHead is what Lookup matches on: a device file's name and
// aliases.
type deviceHead struct {
	Name    string   `toml:"name"`
	Aliases []string `toml:"aliases"`
}

// catalogHead returns the name and aliases of the embedded device stem:
// read off the top of the file when they are written plainly there (as
// in every catalog file: TestCatalogHead checks it against the TOML
// parser), else by parsing the file.
func catalogHead(stem string) (deviceHead, error) {
	data, err := devicesFS.ReadFile(path.Join("devices", stem+".toml"))
	if err != nil {
		return deviceHead{}, err
	}
	if h, ok := scanHead(data); ok {
		return h, nil
	}
	var h deviceHead
	_, err = toml.Decode(string(data), &h)
	return h, err
}

// scanHead reads the top-level keys name and aliases of a device file,
// before its first table, without a TOML parser: name = "..." and
// aliases = ["...", ...] on one line each, strings without escapes. It
// reports false for anything else, and when name is missing.
func scanHead(data []byte) (deviceHead, bool) {
	var h deviceHead
	str := func(v string) (string, bool) {
		if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' || strings.ContainsAny(v[1:len(v)-1], `"\`) {
			return "", false
		}
		return v[1 : len(v)-1], true
	}
	for line := range strings.Lines(string(data)) {
		l := strings.TrimSpace(line)
		if l == "" || l[0] == '#' {
			continue
		}
		if l[0] == '[' {
			break
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			return h, false
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "name", "aliases":
			if h.Name != "" && k == "name" || h.Aliases != nil && k == "aliases" {
				return h, false // twice: the parser's to report
			}
		default:
			continue
		}
		if strings.Contains(v, "#") {
			return h, false
		}
		if k == "name" {
			if h.Name, ok = str(v); !ok {
				return h, false
			}
			continue
		}
		if len(v) < 2 || v[0] != '[' || v[len(v)-1] != ']' {
			return h, false
		}
		h.Aliases = []string{}
		for _, a := range strings.Split(v[1:len(v)-1], ",") {
			a = strings.TrimSpace(a)
			if a == "" {
				continue
			}
			s, ok := str(a)
			if !ok {
				return h, false
			}
			h.Aliases = append(h.Aliases, s)
		}
	}
	return h, h.Name != ""
}

// suggestName finds the closest name ignoring case.
func suggestName(name string, names []string) string {
	lower := make([]string, len(names))
	for i, n := range names {
		lower[i] = strings.ToLower(n)
	}
	s := suggest(strings.ToLower(name), lower)
	for i, l := range lower {
		if l == s && s != "" {
			return names[i]
		}
	}
	return ""
}

// Resolve returns the device arg names: a path to a TOML file (anything
// ending in .toml or containing a path separator) or a catalog name or
// alias. A name not in the catalog that is an existing file is loaded.
func Resolve(arg string) (*Device, error) {
	return named(resolve(arg))
}

// resolve is Resolve with the errors that are not a file's own (an
// unknown name, a file that cannot be opened) not naming the package, for
// a caller that says them under its own "hardware: " prefix (a system
// file's device key); a file's own problems are *ParseErrors, which do.
func resolve(arg string) (*Device, error) {
	if arg == "" {
		return nil, errors.New("no device named (give a catalog name such as h100, or a .toml file)")
	}
	if strings.HasSuffix(strings.ToLower(arg), ".toml") || strings.ContainsAny(arg, `/\`) {
		return loadFile(arg)
	}
	d, err := lookup(arg)
	if err != nil {
		if st, serr := os.Stat(arg); serr == nil && st.Mode().IsRegular() {
			return loadFile(arg)
		}
		return nil, err
	}
	return d, nil
}
