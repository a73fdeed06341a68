package sim

import "github.com/perfsim/perfsim/hardware"

// System returns the system the pricer prices on (its device, and the
// devices and interconnect of a node), for callers that size what an
// engine allocates by the hardware (package serve: NCCL's NVLink SHARP
// buffers).
func (p *Pricer) System() *hardware.System { return p.r.sys }
