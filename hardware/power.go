package hardware

import (
	"math"

	"github.com/perfsim/perfsim/model"
)

// powerKeys are the keys of a device file's [power] table (doc.go).
var powerKeys = []string{"source", "idle", "cap", "static", "compute", "memory", "wait", "sustained", "node"}

// The power model a device file without a [power] table gets, said in its
// Sources as defaults.
//
// DefaultIdleShare: a device idles at about a tenth of its TDP. Measured:
// A100-80GB 59–62 W of 400 W and RTX 6000 Ada 25–29 W of 300 W
// (github chuyishang/inference-energy results_paste.md @ 6e617d2, idle
// power during 10.5-minute serving runs); H200 about 80 W of 700 W
// (alice GPU energy benchmark, "80.3 W idle", low confidence).
//
// The shares are those fitted for the H100 SXM on ML.ENERGY v3
// (hardware/devices/h100-sxm.toml [power], power_test.go), the nearest
// measured device: a sibling, not a measurement of the device itself.
const DefaultIdleShare = 0.1

// DefaultWaitShare is the share of cap − idle a device in use draws between
// kernels, while the host prepares the next step: fitted to ML.ENERGY v2
// (github ml-energy/leaderboard-v2 @ c3af7f3; vLLM 0.5.4, whose host work
// leaves the GPU waiting for most of each step): 0.181 on the A100-SXM4-40GB
// and 0.196 on the H100 SXM each alone (0.199 and 0.212 when first fitted,
// before the MoE kernels were calibrated), each scored on the other device
// (calibrate/power_v2_test.go, docs/energy.md). It is one figure for every
// device until another is measured.
const DefaultWaitShare = 0.2

const defaultWaitSource = "default: fitted on ML.ENERGY v2 (A100-SXM4-40GB and H100 SXM under vLLM 0.5.4), held out across the two devices"

// DefaultPowerShares are the static, compute and memory shares a device
// without its own fit takes (the H100 SXM's; see DefaultIdleShare).
var DefaultPowerShares = [3]float64{0.554, 1.016, 0.084}

const defaultSharesSource = "default: the H100 SXM's shares fitted on ML.ENERGY v3 (a sibling, not this device)"

// power decodes the optional [power] table into dev, then fills what it
// leaves out with defaults said in Sources.
func (d *decoder) power(t *table, dev *Device) {
	p := &dev.Power
	waitGiven := false
	if pt := t.sub("power", powerKeys, false); pt != nil {
		pt.quantity("idle", &p.Idle, false)
		pt.quantity("cap", &p.Cap, false)
		p.Static, _ = pt.float("static", false)
		p.Compute, _ = pt.float("compute", false)
		p.Memory, _ = pt.float("memory", false)
		p.Wait, waitGiven = pt.float("wait", false)
		p.Sustained, _ = pt.float("sustained", false)
		pt.quantity("node", &dev.NodePower, false)
		pt.close()
	}
	if p.Cap == 0 && dev.TDP > 0 && !d.bad["power.cap"] {
		p.Cap = dev.TDP
		d.srcs["power.cap"] = "default: tdp"
	}
	if p.Idle == 0 && p.Cap > 0 && !d.bad["power.idle"] {
		p.Idle = model.Watts(DefaultIdleShare * float64(p.Cap))
		d.srcs["power.idle"] = "default: a tenth of the cap (measured idle: A100-80GB 59-62 W of 400 W, chuyishang/inference-energy; H200 80 W of 700 W)"
	}
	if p.Static == 0 && p.Compute == 0 && p.Memory == 0 && p.Cap > 0 {
		p.Static, p.Compute, p.Memory = DefaultPowerShares[0], DefaultPowerShares[1], DefaultPowerShares[2]
		for _, k := range []string{"static", "compute", "memory"} {
			d.srcs["power."+k] = defaultSharesSource
		}
	}
	if !waitGiven && p.Cap > 0 && !d.bad["power.wait"] {
		p.Wait = DefaultWaitShare
		d.srcs["power.wait"] = defaultWaitSource
	}
}

// maxShare bounds a power share: a kernel at full utilisation of one unit
// drawing three times the device's dynamic range is not a device.
const maxShare = 3

// power checks the [power] numbers.
func (v *validator) power(d *Device) {
	p := d.Power
	v.nonNegative("power.idle", float64(p.Idle), p.Idle.String())
	v.nonNegative("power.cap", float64(p.Cap), p.Cap.String())
	v.nonNegative("power.node", float64(d.NodePower), d.NodePower.String())
	if s := p.Sustained; math.IsNaN(s) || s < 0 || s > 1 {
		v.bad("power.sustained", "must be a share of the compute rate between 0 and 1, not %v", s)
	}
	if p.Cap > 0 && p.Idle >= p.Cap {
		v.bad("power.cap", "%s must be above power.idle, %s", p.Cap, p.Idle)
	}
	for _, s := range []struct {
		key string
		x   float64
	}{{"power.static", p.Static}, {"power.compute", p.Compute}, {"power.memory", p.Memory}, {"power.wait", p.Wait}} {
		if math.IsNaN(s.x) || math.IsInf(s.x, 0) || s.x < 0 || s.x > maxShare {
			v.bad(s.key, "must be a share of cap − idle between 0 and %d, not %v", maxShare, s.x)
		}
	}
}

// NodeShare returns the node's non-device power (CPUs, memory, NICs,
// fans, power-supply loss) per device of a node of n devices; 0 when the
// file gives none.
func (d *Device) NodeShare(n int) model.Watts {
	if n < 1 || d.NodePower <= 0 {
		return 0
	}
	return d.NodePower / model.Watts(n)
}
