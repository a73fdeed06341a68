package main

// perfsim serve --dp-attention's layout: a data-parallel attention
// group's replicas (--dp, or --ep / --tp), and the groups --gpus makes
// behind the round-robin router, as plan serve's 'dp-attn d × tpT epE
// pp1 × dp G' deployments are.

import (
	"github.com/spf13/pflag"

	"github.com/perfsim/perfsim/serve"
)

// checkDPAttention checks --dp-attention's layout and sets o.dp to a
// group's replicas and o.groups to the groups: a group is --dp replicas
// of --tp GPUs (without --dp, --ep / --tp; without either, one group of
// the --gpus given, as before groups), --ep is dp × tp (one
// expert-parallel group over every replica's GPUs), and --gpus, a
// multiple of dp × tp, gives GPUs / (dp × tp) groups behind the
// round-robin router (one without it). Refused: what it is not modelled
// with (--disagg, --users, another router than round-robin, --pp), and
// --router with one replica in all.
func (o *serveOptions) checkDPAttention(fs *pflag.FlagSet) []error {
	o.groups = 1
	if !o.dpAttn {
		return nil
	}
	var errs []error
	if o.deploy.disagg != "" {
		errs = append(errs, usagef("--dp-attention: not with --disagg (data-parallel attention in a disaggregated deployment is not modelled)"))
	}
	if o.deploy.users > 0 {
		errs = append(errs, usagef("--dp-attention: not with --users (a closed loop over data-parallel attention is not modelled)"))
	}
	r, rerr := serve.ParseRouter(o.deploy.router)
	if rerr == nil && r != serve.RoundRobin {
		errs = append(errs, usagef("--router: %s with --dp-attention is not modelled: its replicas and groups take requests round-robin (SGLang's data-parallel controller's default, --load-balance-method round_robin)", r))
	}
	if o.pp > 1 {
		errs = append(errs, usagef("--pp: %d pipeline stages with --dp-attention are not modelled", o.pp))
	}
	if o.tp < 1 || o.dp < 1 || o.ep < 1 || o.pp < 1 || o.deploy.disagg != "" {
		return errs // the degrees' own errors are said elsewhere
	}
	gpus := fs.Changed("gpus") && o.deploy.gpus >= 1
	switch {
	case fs.Changed("dp"):
	case fs.Changed("ep"):
		if o.ep%o.tp != 0 {
			return append(errs, usagef("--ep: %d is not a multiple of --tp %d: --dp-attention spreads each MoE layer's experts over a group of replicas of tp GPUs (--ep = replicas × --tp; or give --dp)", o.ep, o.tp))
		}
		o.dp = o.ep / o.tp
	case gpus && o.deploy.gpus%o.tp == 0:
		o.dp = o.deploy.gpus / o.tp // one group of them all, as before groups
	}
	if o.ep != o.dp*o.tp {
		errs = append(errs, usagef("--ep: %d, but --dp-attention spreads each MoE layer's experts over every replica's GPUs: --ep must be --dp %d × --tp %d = %d", o.ep, o.dp, o.tp, o.dp*o.tp))
		return errs
	}
	if per := o.dp * o.tp * o.pp; gpus {
		if o.deploy.gpus%per != 0 {
			errs = append(errs, usagef("--gpus: %d GPUs do not divide into data-parallel attention groups of --dp %d × --tp %d (%d GPUs each, --ep %d): give a multiple of %d", o.deploy.gpus, o.dp, o.tp, per, o.ep, per))
			return errs
		}
		o.groups = o.deploy.gpus / per
	}
	if fs.Changed("router") && o.dp*o.groups == 1 {
		errs = append(errs, usagef("--router: one replica has nothing to route (give --dp or --gpus for more, or --disagg)"))
	}
	return errs
}
