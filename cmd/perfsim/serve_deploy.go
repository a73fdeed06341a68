package main

import (
	"errors"
	"math"
	"strings"

	"github.com/spf13/pflag"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/internal/errlist"
	"github.com/perfsim/perfsim/internal/fileio"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// deployOptions are serve's flags for the deployment beyond one replica:
// the router, disaggregated pools, a closed loop, prefix caching and a
// GPU count to check the layout against.
type deployOptions struct {
	router             string
	system             string
	disagg             string
	prefillTP, prefill int // prefill pool's TP and PP
	decodeTP, decodePP int
	gpus               int
	users              int
	think              model.Seconds
	prefixHit          float64
}

func (o *deployOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.system, "system", "", "a catalog system instead of --hw ("+strings.Join(hardware.SystemNames(), ", ")+"): its device, its scale-up domain and its NICs, which carry --disagg's KV transfers between nodes")
	fs.StringVar(&o.router, "router", "round-robin", "how requests are spread over replicas (and pool instances): round-robin or least-outstanding")
	fs.StringVar(&o.disagg, "disagg", "", "disaggregated prefill and decode pools, xPyD: x prefill and y decode instances (e.g. 2P1D; docs/serving.md)")
	fs.IntVar(&o.prefillTP, "prefill-tp", 0, "TP of a prefill instance with --disagg (default --tp)")
	fs.IntVar(&o.prefill, "prefill-pp", 0, "PP of a prefill instance with --disagg (default --pp)")
	fs.IntVar(&o.decodeTP, "decode-tp", 0, "TP of a decode instance with --disagg (default --tp)")
	fs.IntVar(&o.decodePP, "decode-pp", 0, "PP of a decode instance with --disagg (default --pp)")
	fs.IntVar(&o.gpus, "gpus", 0, "GPUs of the deployment: without --dp, replicas = GPUs / (tp × pp); with --dp-attention, groups = GPUs / (dp × tp); a layout that does not use exactly this many is an error")
	fs.IntVar(&o.users, "users", 0, "closed loop: N users, each sending its next request when its last finishes (plus --think); instead of --arrival and --rate")
	fs.Var(&o.think, "think", "closed loop: a user's pause between a response and its next request, e.g. 2s (default 0)")
	fs.Float64Var(&o.prefixHit, "prefix-hit", 0, "fraction of each prompt found in the prefix cache (0 to 1): it skips the prefill but holds KV; with a trace's prefix_id, from the second request of an id on a replica")
}

// check reports the deployment flags' usage problems; with --gpus and
// without --dp it sets so.dp to the replicas the GPUs make.
func (o *deployOptions) check(fs *pflag.FlagSet, so *serveOptions) []error {
	var errs []error
	if _, err := serve.ParseRouter(o.router); err != nil {
		errs = append(errs, usagef("--router: %v", err))
	}
	if !(o.prefixHit >= 0 && o.prefixHit <= 1) {
		errs = append(errs, usagef("--prefix-hit: want a fraction from 0 to 1, got %g", o.prefixHit))
	}
	if o.users < 0 {
		errs = append(errs, usagef("--users: must not be negative, got %d", o.users))
	}
	if o.users > 0 {
		for _, f := range []string{"rate", "arrival", "trace"} {
			if fs.Changed(f) {
				errs = append(errs, usagef("--users: a closed loop makes its own arrivals: not with --%s", f))
			}
		}
	}
	if fs.Changed("think") && o.users == 0 {
		errs = append(errs, usagef("--think: only with --users (a closed loop)"))
	}
	if !(o.think >= 0 && o.think <= serve.MaxTime) {
		errs = append(errs, usagef("--think: must be a time from 0 to %g s, got %v", serve.MaxTime, o.think))
	} else if o.users > 0 && so.requests > 0 {
		// Each user thinks once per request it sends: the run spans at
		// least that, which must stay within the clock's horizon.
		if span := float64(o.think) * math.Ceil(float64(so.requests)/float64(o.users)); span > serve.MaxTime {
			errs = append(errs, usagef("--think: %v between each user's %.0f requests spans %.3g s, beyond the %g s a run simulates", o.think, math.Ceil(float64(so.requests)/float64(o.users)), span, serve.MaxTime))
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"prefill-tp", o.prefillTP}, {"prefill-pp", o.prefill}, {"decode-tp", o.decodeTP}, {"decode-pp", o.decodePP}} {
		switch {
		case fs.Changed(f.name) && o.disagg == "":
			errs = append(errs, usagef("--%s: only with --disagg", f.name))
		case fs.Changed(f.name) && f.v < 1:
			errs = append(errs, usagef("--%s: must be at least 1, got %d", f.name, f.v))
		}
	}
	if fs.Changed("gpus") && o.gpus < 1 {
		errs = append(errs, usagef("--gpus: must be at least 1, got %d", o.gpus))
	}
	if o.disagg != "" {
		if x, y, err := serve.ParseDisagg(o.disagg); err != nil {
			errs = append(errs, usagef("--disagg: %v", err))
		} else if x == 1 && y == 1 && fs.Changed("router") {
			errs = append(errs, usagef("--router: one instance in each pool has nothing to route (give --disagg more instances of a pool)"))
		}
		if fs.Changed("dp") {
			errs = append(errs, usagef("--dp: not with --disagg, whose xPyD gives the instances of each pool"))
		}
		if so.static {
			errs = append(errs, usagef("--static: not with --disagg"))
		}
		return errs
	}
	if so.dpAttn {
		return errs // --gpus and --router: checkDPAttention (serve_dpattn.go)
	}
	if per := so.tp * so.pp; fs.Changed("gpus") && o.gpus >= 1 && per >= 1 && so.dp >= 1 {
		switch {
		case fs.Changed("dp") && o.gpus != per*so.dp:
			errs = append(errs, usagef("--gpus: %d GPUs, but --dp %d replicas of tp %d × pp %d use %d", o.gpus, so.dp, so.tp, so.pp, per*so.dp))
		case o.gpus%per != 0:
			errs = append(errs, usagef("--gpus: %d GPUs do not divide into replicas of tp %d × pp %d (%d GPUs each)", o.gpus, so.tp, so.pp, per))
		case !fs.Changed("dp"):
			so.dp = o.gpus / per
		}
	}
	if fs.Changed("router") && so.dp == 1 {
		errs = append(errs, usagef("--router: one replica has nothing to route (give --dp or --gpus for more, or --disagg)"))
	}
	return errs
}

// device resolves --hw, or the device of --system with the system's
// network tiers (its scale-up domain, and its NICs' bandwidth per
// device as the scale-out tier: hardware.LookupSystem), from which
// systemFor builds every system of the run.
func (o *deployOptions) device(hw string) (*hardware.Device, error) {
	if o.system == "" {
		return resolveHardware(hw)
	}
	if strings.TrimSpace(hw) != "" {
		return nil, usagef("--hw, --system: give one (--system names its device)")
	}
	s, err := hardware.LookupSystem(o.system, 1)
	if err != nil {
		return nil, systemError(o.system, err, false)
	}
	return s.Device, nil
}

// lengths parses --input or --output: file:PATH reads an empirical
// distribution, one token count per line.
func lengths(flag, s string) (serve.Lengths, error) {
	if path, ok := strings.CutPrefix(s, "file:"); ok {
		if strings.TrimSpace(path) == "" {
			// It had said "open : no such file or directory".
			return nil, usagef("--%s: file: needs the path of a lengths file (one token count per line): file:PATH", flag)
		}
		f, err := fileio.Open(path, serve.MaxTraceSize, "lengths file")
		if err != nil {
			return nil, usagef("--%s: %v", flag, err)
		}
		defer f.Close()
		e, err := serve.ReadLengths(f, path)
		if err != nil {
			return nil, fileError{linesError{err}}
		}
		return e, nil
	}
	l, err := serve.ParseLengths(s)
	if err != nil {
		return nil, usagef("--%s: %v", flag, err)
	}
	return l, nil
}

// deployment builds the deployment from the flags: replicas of the
// aggregated pricer p and engine e, or the two pools of --disagg and the
// link between them from the system their GPUs make.
func (o *deployOptions) deployment(fs *pflag.FlagSet, so *serveOptions, dev *hardware.Device, w sim.Workload, sc sim.Scenario, p *sim.Pricer, e serve.Engine) (serve.Deployment, error) {
	r, _ := serve.ParseRouter(o.router)
	d := serve.Deployment{Serve: serve.Pool{Pricer: p, Engine: e, Instances: so.dp * max(so.groups, 1)}, Router: r, DPAttention: so.dpAttn}
	if o.disagg == "" {
		return d, nil
	}
	np, nd, _ := serve.ParseDisagg(o.disagg)
	or := func(v, def int) int {
		if v > 0 {
			return v
		}
		return def
	}
	// pool builds one pool; a layout problem names the pool's own flag
	// (--prefill-tp, --decode-pp) where it was given, else the shared one.
	pool := func(role string, tp, pp, n int) (serve.Pool, error) {
		s := sc
		s.TP, s.PP = tp, pp
		if err := checkServeEP("ep", s.EP, role+"-tp", tp); err != nil {
			return serve.Pool{}, err
		}
		sys, err := systemFor(dev, tp*pp)
		if err != nil {
			return serve.Pool{}, usagef("--%s-tp: %d devices: %v", role, tp*pp, err)
		}
		pr, err := sim.NewPricer(sys, w, s)
		if err != nil {
			var out []error
			for _, e := range errlist.Flatten(err) {
				var se *sim.ScenarioError
				if errors.As(e, &se) && (se.Field == "tp" || se.Field == "pp") && fs.Changed(role+"-"+se.Field) {
					e = &sim.ScenarioError{Field: role + "-" + se.Field, Err: se.Err}
				}
				out = append(out, e)
			}
			return serve.Pool{}, scenarioUsage(errors.Join(out...))
		}
		// The preset's defaults at the pool's own TP (sglang's
		// mem_fraction_static), with the flags given over them.
		pe := e
		if tp != so.tp {
			pe, _ = serve.PresetFor(so.engine, dev.Memory.Limit(), tp)
			so.override(fs, &pe)
		}
		return serve.Pool{Pricer: pr, Engine: pe, Instances: n}, nil
	}
	var perr, derr error
	d.Serve, perr = pool("prefill", or(o.prefillTP, so.tp), or(o.prefill, so.pp), np)
	d.Decode, derr = pool("decode", or(o.decodeTP, so.tp), or(o.decodePP, so.pp), nd)
	if err := errors.Join(perr, derr); err != nil {
		return d, err
	}
	total := d.GPUs()
	if fs.Changed("gpus") && o.gpus != total {
		return d, usagef("--gpus: %d GPUs, but --disagg %s of prefill tp %d × pp %d and decode tp %d × pp %d uses %d",
			o.gpus, o.disagg, or(o.prefillTP, so.tp), or(o.prefill, so.pp), or(o.decodeTP, so.tp), or(o.decodePP, so.pp), total)
	}
	sys, err := systemFor(dev, total)
	if err != nil {
		return d, usagef("--disagg: %d GPUs: %v", total, err)
	}
	d.Link = &serve.KVLink{Intra: sys.Link(model.IntraNode), Inter: sys.Link(model.InterNode), PerNode: sys.DevicesPerNode}
	return d, nil
}
