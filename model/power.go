package model

import (
	"fmt"
	"math"
)

// Joules is an amount of energy.
type Joules float64

var joulesUnit = unit{"an energy", []string{"J"}, false, true, `"1.2 kJ"`}

// ParseJoules parses an energy such as "3.6 MJ".
func ParseJoules(s string) (Joules, error) { v, err := joulesUnit.parse(s); return Joules(v), err }

func (x Joules) String() string                      { return joulesUnit.format(float64(x)) }
func (x Joules) MarshalText() ([]byte, error)        { return joulesUnit.marshal(float64(x)), nil }
func (x *Joules) UnmarshalText(b []byte) (err error) { *x, err = ParseJoules(string(b)); return }

// Over returns the energy drawn at power w for t.
func (w Watts) Over(t Seconds) Joules { return Joules(float64(w) * float64(t)) }

// Per returns the average power of drawing e over t, 0 when t is 0.
func (e Joules) Per(t Seconds) Watts {
	if t <= 0 {
		return 0
	}
	return Watts(float64(e) / float64(t))
}

// KWh returns e in kilowatt-hours (3.6 MJ each), for prices per kWh.
func (e Joules) KWh() float64 { return float64(e) / 3.6e6 }

// Set and Type make a power a flag (--power-cap 500W).
func (x *Watts) Set(s string) error { return x.UnmarshalText([]byte(s)) }
func (*Watts) Type() string         { return "power" }

// PowerParams are the parameters of a device's power model (Processor.Power).
// The TOML keys are those of a hardware file's [power] table.
//
// While a kernel runs, the device draws
//
//	P = Idle + (Cap − Idle) · min(1, Static + Compute·u_c + Memory·u_m)
//
// where u_c is the fraction of the compute peak the kernel achieves (its
// FLOPs over its time and the peak of its type) and u_m the fraction of the
// memory bandwidth (its bytes over its time and the bandwidth). Static is
// what a busy device draws above idle before any unit does work: clocks
// raised out of the idle state, leakage at the higher voltage, the
// scheduler and caches. Dynamic power is linear in switching activity
// (P_dyn = α·C·V²·f, with α the activity), which u_c and u_m stand for; the
// shares are fitted per device to measured power (calibrate, or the
// sources in the hardware file).
//
// Between kernels a device that is in use waits with its clocks up (the
// host dispatching the next step, a pipeline bubble, a stage waiting for
// another): it draws WaitPower, Idle + Wait·(Cap − Idle). Only a device
// left alone for long (no requests arriving) falls to Idle.
type PowerParams struct {
	Idle    Watts   `toml:"idle"`    // drawn with nothing running
	Cap     Watts   `toml:"cap"`     // the board power limit the peaks were measured under (TDP)
	Static  float64 `toml:"static"`  // share of Cap − Idle drawn by any running kernel
	Compute float64 `toml:"compute"` // share at full compute utilisation
	Memory  float64 `toml:"memory"`  // share at full memory-bandwidth utilisation
	Wait    float64 `toml:"wait"`    // share drawn between kernels while in use
	// Sustained is the share of its compute rate a device keeps when its
	// matrix units run for seconds on end, as in a training step or an
	// MLPerf inference run (Sustain), against
	// the short bursts its kernel tables were timed in: the power limiter
	// lowers the clocks of long runs. 0 means not measured (taken as 1).
	Sustained float64 `toml:"sustained"`
	// Limit is a configured power limit below Cap (nvidia-smi -pl); 0 for
	// Cap. Above it the device lowers its clocks (Processor.Capped).
	Limit Watts `toml:"-"`
	// Held is the share of its boost clock the device's matrix units
	// hold before a limit acts: Sustained in a training step, whose
	// matrix kernels the caller stretches by 1/Held (sim does); 0 for
	// the boost clock. A limit lowers the clock only as far as its power
	// needs, from the clock held (Processor.CappedMatrix).
	Held float64 `toml:"-"`
	// Sustain runs every kernel at the sustained clocks (Processor.Capped:
	// its arithmetic at Sustained of the boost clock's rate, the memory
	// traffic hiding it where it can): set by a run whose kernels follow
	// one another for minutes outside a training step (an MLPerf inference
	// run, sim.Scenario.Sustained). A limit lowers the clock further only
	// where it asks for less: min(Sustained, r) of boost in all.
	Sustain bool `toml:"-"`
}

// ClockExponent κ relates a lowered clock to the dynamic power it saves:
// P_dyn ∝ f·V² and, in the DVFS range, V falls roughly with f, so P_dyn ∝
// f^κ with κ ≈ 3 (the textbook CMOS relation; an assumption until power
// caps are measured against throughput).
const ClockExponent = 3.0

// SustainedShare returns Sustained, or 1 when it is not given.
func (p *PowerParams) SustainedShare() float64 {
	if p.Sustained > 0 && p.Sustained <= 1 {
		return p.Sustained
	}
	return 1
}

// Valid reports whether p can price power: a positive idle and a cap above it.
func (p *PowerParams) Valid() bool { return p.Idle > 0 && p.Cap > p.Idle }

// WaitPower returns what the device draws between kernels while in use,
// Idle + Wait·(Cap − Idle), at most the limit in force: a power limit
// below it (nvidia-smi -pl) bounds the board's draw between kernels as
// well as in them.
func (p *PowerParams) WaitPower() Watts {
	return min(p.Idle+Watts(p.Wait)*(p.Cap-p.Idle), p.limit())
}

// LimitOrCap returns the power limit in force: Limit when it is below
// Cap, else Cap.
func (p *PowerParams) LimitOrCap() Watts { return p.limit() }

// limit returns the power limit in force.
func (p *PowerParams) limit() Watts {
	if p.Limit > 0 && p.Limit < p.Cap {
		return p.Limit
	}
	return p.Cap
}

// Check returns an error when p's numbers cannot describe a device: a
// negative or non-finite number, a cap not above idle, a limit below idle.
// The error names the key.
func (p *PowerParams) Check() error {
	for _, f := range []struct {
		key string
		v   float64
	}{{"idle", float64(p.Idle)}, {"cap", float64(p.Cap)}, {"static", p.Static}, {"compute", p.Compute}, {"memory", p.Memory}, {"wait", p.Wait}, {"sustained", p.Sustained}} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("power.%s: must be a non-negative finite number, got %v", f.key, f.v)
		}
	}
	if p.Cap > 0 && p.Cap <= p.Idle {
		return fmt.Errorf("power.cap: %s must be above power.idle %s", p.Cap, p.Idle)
	}
	if p.Sustained > 1 {
		return fmt.Errorf("power.sustained: a share of the compute rate, at most 1, got %v", p.Sustained)
	}
	if p.Limit != 0 && p.Limit <= p.Idle {
		return fmt.Errorf("power cap %s must be above the device's idle power %s", p.Limit, p.Idle)
	}
	return nil
}

// Utilisation returns the fractions of the compute peak and the memory
// bandwidth that c achieves on p, each in [0, 1].
func (p *Processor) Utilisation(c Cost) (compute, memory float64) {
	if c.Time <= 0 {
		return 0, 0
	}
	pk, ok := p.Peak(c.DType)
	return p.utilisation(c, pk, ok)
}

// utilisation is Utilisation with the peak of c.DType given (ok: the
// device has one).
func (p *Processor) utilisation(c Cost, pk FLOPRate, ok bool) (compute, memory float64) {
	if c.Time <= 0 {
		return 0, 0
	}
	if c.FLOPs > 0 && ok {
		compute = clamp01(float64(c.FLOPs) / (float64(pk) * float64(c.Time)))
	}
	if c.Bytes > 0 && p.Bandwidth > 0 {
		memory = clamp01(float64(c.Bytes) / (float64(p.Bandwidth) * float64(c.Time)))
	}
	return compute, memory
}

func clamp01(x float64) float64 {
	if !(x > 0) {
		return 0
	}
	return math.Min(x, 1)
}

// Power returns the power p draws while c runs, before any limit below
// the cap: Idle for a kernel that takes no time (no load); 0 when p has
// no power model.
func (p *Processor) Power(c Cost) Watts {
	if !p.PowerModel.Valid() {
		return 0
	}
	var pk FLOPRate
	var ok bool
	if c.FLOPs > 0 && c.Time > 0 { // what utilisation reads it for
		pk, ok = p.Peak(c.DType)
	}
	return p.power(c, pk, ok)
}

// power is Power with the peak of c.DType given (ok: the device has one).
func (p *Processor) power(c Cost, pk FLOPRate, ok bool) Watts {
	pw := &p.PowerModel
	if !pw.Valid() {
		return 0
	}
	if c.Time <= 0 {
		return pw.Idle
	}
	uc, um := p.utilisation(c, pk, ok)
	a := math.Min(1, pw.Static+pw.Compute*uc+pw.Memory*um)
	return pw.Idle + Watts(float64(pw.Cap-pw.Idle)*a)
}

// Capped applies the power limit to c and returns it with its Power set:
// when the power c would draw exceeds the limit, the clocks fall by
// r = ((L − Idle − P_mem)/(P − Idle − P_mem))^(1/κ) until the dynamic
// power meets the limit, P_mem being the memory traffic's share (per
// byte moved, which the clocks do not lower), the compute part of c
// stretches by 1/r (a memory-bound kernel hides it under its traffic),
// and the kernel draws the limit; where P_mem alone exceeds L − Idle the
// whole kernel stretches until its draw above idle fits. Without a
// power model, c comes back with Power 0.
func (p *Processor) Capped(c Cost) Cost { return p.cappedHeld(c, 1) }

// CappedMatrix is Capped for a matrix kernel (a GEMM, a grouped GEMM,
// attention) whose caller stretches its time by 1/PowerModel.Held, the
// clock the matrix units hold before any limit (a training step's
// sustained clock): a limit lowers the clock from the held one only as
// far as its power needs, to min(Held, r) of the boost clock in all, so
// the stretch returned is the rest of the way from Held. (The two had
// multiplied, r·Held: under a 350 W limit an H100's training step paid
// its 3.7% sustained slowdown on top of the limit's.) With Held 0 or 1,
// it is Capped.
func (p *Processor) CappedMatrix(c Cost) Cost { return p.cappedHeld(c, p.PowerModel.Held) }

// cappedHeld is Capped from the clock held (CappedMatrix); held outside
// (0, 1) is the boost clock.
func (p *Processor) cappedHeld(c Cost, held float64) Cost {
	var pk FLOPRate
	var ok bool
	if p.PowerModel.Valid() && c.FLOPs > 0 && c.Time > 0 { // what utilisation reads it for
		pk, ok = p.Peak(c.DType)
	}
	return p.capped(c, pk, ok, held)
}

// capped is cappedHeld with the peak of c.DType given (ok: the device
// has one).
func (p *Processor) capped(c Cost, pk FLOPRate, ok bool, held float64) Cost {
	if !(held > 0 && held < 1) {
		held = 1
	}
	w := p.power(c, pk, ok)
	c.Power = w
	pw := &p.PowerModel
	lim := pw.limit()
	sus := 1.0 // the clock Sustain holds, of boost
	if pw.Sustain {
		sus = pw.SustainedShare()
	}
	if w <= lim || w <= pw.Idle {
		return slowed(c, sus)
	}
	// The memory traffic's share of the draw is per byte moved, not per
	// core clock: lowering the clocks saves only the rest. (All of it had
	// been taken as clocked: under a 71 W limit, 1 W above idle, an H100
	// decode of Llama-3 8B streamed 1.1 TB/s "at 71 W".)
	uc, um := p.utilisation(c, pk, ok)
	dyn := float64(w - pw.Idle)
	var mem float64
	if act := pw.Static + pw.Compute*uc + pw.Memory*um; act > 0 {
		mem = dyn * pw.Memory * um / act // its share of a clipped draw too
	}
	avail := float64(lim - pw.Idle)
	if mem >= avail {
		// The traffic alone would draw more than the limit leaves: the
		// whole kernel slows until its draw fits, its traffic's energy
		// per byte kept (and its compute's, which a lower clock would
		// only lower: a bound on the time from below).
		// From the held clock, whose stretch the caller adds: the
		// kernel takes max(dyn/avail, 1/held) of its time in all.
		c.Time = Seconds(float64(c.Time) * math.Max(1, held*dyn/avail))
		c.Power = lim
		return c
	}
	// The clock that meets the limit, of the boost clock, and of the
	// clock held.
	r := math.Pow((avail-mem)/(dyn-mem), 1/ClockExponent)
	c = slowed(c, math.Min(1, math.Min(r, sus)/held))
	c.Power = lim
	return c
}

// slowed returns c with its clocks at r of those it was priced at
// (0 < r < 1): the arithmetic stretches by 1/r, and the kernel by what of
// it its memory traffic does not hide. r of 1 or more, or not positive,
// leaves c as it is.
func slowed(c Cost, r float64) Cost {
	if !(r > 0 && r < 1) || c.Compute <= 0 {
		return c
	}
	stretched := float64(c.Compute) / r
	if over := stretched - math.Max(float64(c.Compute), float64(c.Memory)); over > 0 {
		c.Time += Seconds(over)
		if stretched > float64(c.Memory) && c.Bound == MemoryBound {
			c.Bound = ComputeBound
		}
	}
	return c
}

// Energy returns the energy of c: its power over its time.
func (c Cost) Energy() Joules { return c.Power.Over(c.Time) }
