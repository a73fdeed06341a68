package hardware

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/perfsim/perfsim/internal/errlist"
	"github.com/perfsim/perfsim/internal/fileio"
)

// maxDevices bounds a system's device count, so that no product of counts
// overflows: 2^24 is over a hundred times today's largest training
// clusters (about 100,000 GPUs).
const maxDevices = 1 << 24

// NewSystem returns nodes nodes of devicesPerNode devices d, joined by the
// device's own networks. devicesPerNode 0 means the device's intra-node
// domain (interconnect.intra.devices_per_node, or 1 without one).
func NewSystem(d *Device, devicesPerNode, nodes int) (*System, error) {
	if d == nil {
		return nil, errors.New("hardware: system without a device")
	}
	devicesPerNode, probs := systemProblems(d, devicesPerNode, nodes)
	var errs []error
	for _, p := range probs {
		errs = append(errs, fmt.Errorf("hardware: %s: %w", d.Name, p.err))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &System{Device: d, DevicesPerNode: devicesPerNode, Nodes: nodes, Intra: d.Intra, Inter: d.Inter}, nil
}

// A systemProblem is one thing wrong with a system's counts: the system
// file's key it is about (devices_per_node or nodes) and what is wrong.
type systemProblem struct {
	key string
	err error
}

// systemProblems returns devicesPerNode as NewSystem reads it (0 is the
// device's own domain) and what is wrong with nodes of that many d.
func systemProblems(d *Device, devicesPerNode, nodes int) (int, []systemProblem) {
	var probs []systemProblem
	bad := func(key, format string, args ...any) {
		probs = append(probs, systemProblem{key, fmt.Errorf(format, args...)})
	}
	if devicesPerNode == 0 {
		devicesPerNode = max(1, d.Intra.DevicesPerNode)
	}
	if devicesPerNode < 0 {
		bad("devices_per_node", "devices per node must be positive, not %d", devicesPerNode)
	}
	if nodes < 1 {
		bad("nodes", "nodes must be at least 1, not %d", nodes)
	}
	if devicesPerNode > 1 {
		switch {
		case d.Intra.Bandwidth <= 0:
			bad("devices_per_node", "%d devices per node, but the device has no intra-node network (interconnect.intra)", devicesPerNode)
		case devicesPerNode > d.Intra.DevicesPerNode:
			bad("devices_per_node", "%d devices per node, but its %s joins at most %d (interconnect.intra.devices_per_node)", devicesPerNode, d.Intra.Name, d.Intra.DevicesPerNode)
		}
	}
	if devicesPerNode > 0 && nodes > maxDevices/devicesPerNode {
		bad("nodes", "%d nodes of %d devices is more than %d devices", nodes, devicesPerNode, maxDevices)
	}
	if nodes > 1 && d.Inter.Bandwidth <= 0 {
		bad("nodes", "%d nodes, but the device has no inter-node network (interconnect.inter)", nodes)
	}
	return devicesPerNode, probs
}

// LoadSystemFile reads the system file at path.
func LoadSystemFile(path string) (*System, error) {
	f, err := fileio.Open(path, maxFileSize, "system file")
	if err != nil {
		return nil, fmt.Errorf("hardware: %w", err)
	}
	defer f.Close()
	return LoadSystem(f, path)
}

// LoadSystem reads a system from the TOML in r: a device (a catalog name
// or a device file, relative to file's directory), devices per node,
// nodes, and optional [intra] and [inter] tables whose keys override the
// device's interconnect.intra and interconnect.inter.
func LoadSystem(r io.Reader, file string) (*System, error) {
	t, d, err := parse(r, file)
	if err != nil {
		return nil, err
	}
	name, ok := t.str("device", true)
	if ok && strings.TrimSpace(name) == "" {
		d.fail(t.lines["device"], "device", errors.New("empty: want a catalog name such as h100, or a .toml file"))
	}
	perNode, perNodeGiven := t.integer("devices_per_node", false)
	nodes, ok := t.integer("nodes", false)
	if !ok && !d.bad["nodes"] {
		nodes = 1
	}
	if ok && nodes < 1 {
		d.fail(t.lines["nodes"], "nodes", fmt.Errorf("must be at least 1, not %d", nodes))
	}
	var dev *Device
	if strings.TrimSpace(name) != "" {
		arg := name
		if strings.HasSuffix(strings.ToLower(arg), ".toml") && !filepath.IsAbs(arg) {
			arg = filepath.Join(filepath.Dir(file), arg)
		}
		dev, err = resolve(arg)
		// A device file's own problems are said at their own
		// file:line:key, as a derived file's base's are (loadDerived); an
		// unknown name or a file that cannot be opened at this file's
		// device key. Both had been said under it, with the package twice:
		// "s.toml:1: device: hardware: unknown device".
		for _, e := range errlist.Flatten(err) {
			var pe *ParseError
			if errors.As(e, &pe) {
				d.errs = append(d.errs, pe)
			} else {
				d.fail(t.lines["device"], "device", e)
			}
		}
	}
	// NewSystem reads 0 as the device's own domain, which is what leaving
	// the key out means; a file that writes 0 (or less) is told so.
	if perNodeGiven && perNode < 1 {
		own := ""
		if dev != nil {
			own = fmt.Sprintf(" (leave the key out for the device's own, %d)", max(1, dev.Intra.DevicesPerNode))
		}
		d.fail(t.lines["devices_per_node"], "devices_per_node", fmt.Errorf("must be at least 1, not %d%s", perNode, own))
	}
	var intra, inter Network
	if dev != nil {
		intra, inter = dev.Intra, dev.Inter
	}
	override(t, "intra", intraKeys, &intra)
	override(t, "inter", networkKeys, &inter)
	t.close()
	if len(d.errs) > 0 || dev == nil {
		return nil, joinSorted(d.errs)
	}
	if err := checkTiers(d, file, intra, inter); err != nil {
		return nil, err
	}
	dev.Intra, dev.Inter = intra, inter
	for k, s := range d.srcs {
		dev.Sources["system."+k] = s
	}
	if err := dev.Validate(); err != nil {
		return nil, err
	}
	// What is wrong with the counts is said at their keys, as the file's
	// other problems are (NewSystem's own messages name no file).
	if _, probs := systemProblems(dev, perNode, nodes); len(probs) > 0 {
		for _, p := range probs {
			d.fail(t.lines[p.key], p.key, fmt.Errorf("%s: %w", dev.Name, p.err))
		}
		return nil, joinSorted(d.errs)
	}
	return NewSystem(dev, perNode, nodes)
}

// checkTiers checks the network tiers a system file's [intra] and
// [inter] tables make (Validate's network rules), saying each problem at
// the system file's line and key, not at the device file's.
func checkTiers(d *decoder, file string, intra, inter Network) error {
	v := validator{d: &Device{File: file, pos: map[string]int{}}}
	for _, tier := range []struct {
		name  string
		n     Network
		intra bool
	}{{"intra", intra, true}, {"inter", inter, false}} {
		if _, given := d.lines[tier.name]; !given {
			continue
		}
		for k, l := range d.lines {
			if k == tier.name || strings.HasPrefix(k, tier.name+".") {
				v.d.pos["interconnect."+k] = l
			}
		}
		v.network("interconnect."+tier.name, tier.n, tier.intra)
	}
	for _, e := range v.errs {
		e.Key = strings.TrimPrefix(e.Key, "interconnect.")
	}
	return joinSorted(v.errs)
}

// override applies the keys of the [tier] table of a system file to n.
func override(t *table, tier string, known []string, n *Network) {
	o := t.sub(tier, known, false)
	if o == nil {
		return
	}
	if s, ok := o.str("name", false); ok {
		n.Name = s
	}
	o.quantity("bandwidth", &n.Bandwidth, false)
	o.linkKeys(n)
	if tier == "intra" {
		if k, ok := o.integer("devices_per_node", false); ok {
			n.DevicesPerNode = k
		}
		if s, ok := o.str("topology", false); ok {
			n.Topology = s
		}
		if s, ok := o.fact("in_network_reduction"); ok {
			n.Reduction = s
		}
	}
	o.close()
}
