package workloads

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/perfsim/perfsim/internal/errlist"
)

// A Config cannot tell a key left out from one given as 0 (or ""): both
// are its zero value. validate therefore says "missing" for a required
// size that is 0, and fills a default for an optional one. The loaders,
// which see the file, use what follows so that a value the file gives is
// never called missing and never replaced silently.

// missingPrefix starts the message of a required value that is 0 in the
// Config; only a loader knows whether the file left it out.
const missingPrefix = "missing: "

// saidAsGiven rewrites the "missing" error err of a key the file gives,
// with the value v, as the value given: "layers: got 0: want a positive
// size". Other errors come back unchanged.
func saidAsGiven(err error, v any) error {
	rest, ok := strings.CutPrefix(err.Error(), missingPrefix)
	if !ok {
		return err
	}
	if s, isString := v.(string); isString {
		return fmt.Errorf("got %q: %s", s, rest)
	}
	return fmt.Errorf("got %v: %s", v, rest)
}

// zeroDefaults are the sizes New derives when they are 0, each with what
// leaving the key out gives: a model file that writes 0 would otherwise
// get the default without a word.
var zeroDefaults = map[string]string{
	"kv_heads":              "heads",
	"head_dim":              "d_model / heads, or qk_nope_head_dim + qk_rope_head_dim with latent attention",
	"expert_ffn":            "ffn",
	"ssm_head_dim":          "64",
	"ssm_groups":            "1",
	"ssm_conv":              "4",
	"ssm_chunk":             "256",
	"linear_key_heads":      "linear_value_heads",
	"linear_value_head_dim": "linear_key_head_dim",
	"linear_conv":           "4",
	"linear_chunk":          "64",
}

// vitZeroDefaults are zeroDefaults' entries for a vit only (a cnn's
// channels are required; a decoder's max_context 0 is no limit).
var vitZeroDefaults = map[string]string{
	"channels":    "3",
	"max_context": "the patches (image_size / patch_size)², plus the class token",
}

// layerZeroDefaults are the [[layer]] keys the planner reads as their
// default when 0.
var layerZeroDefaults = map[string]string{
	"dilation": "1",
	"groups":   "1",
}

// givenZeros returns an error for every defaulted size the decoded file
// raw gives as 0, at its key (locate fills the line).
func givenZeros(raw map[string]any) []error {
	var errs []error
	zero := func(key, def string) {
		errs = append(errs, &ConfigError{Key: key, Err: fmt.Errorf("got 0: want a positive size (leave the key out for %s)", def)})
	}
	isZero := func(v any) bool { n, ok := v.(int64); return ok && n == 0 }
	for _, k := range slices.Sorted(maps.Keys(zeroDefaults)) {
		if isZero(raw[k]) {
			zero(k, zeroDefaults[k])
		}
	}
	if k := raw["kind"]; (k == string(Decoder) || k == string(Encoder)) && isZero(raw["max_context"]) {
		// Left out, a transformer's max_context is no limit; given as 0
		// it had meant the same without a word. (With learned positions
		// it is required, and New's "missing" said as given is this.)
		errs = append(errs, &ConfigError{Key: "max_context", Err: errors.New("got 0: want a positive size")})
	}
	if raw["kind"] == string(ViT) {
		for _, k := range slices.Sorted(maps.Keys(vitZeroDefaults)) {
			if isZero(raw[k]) {
				zero(k, vitZeroDefaults[k])
			}
		}
	}
	layers, _ := raw["layer"].([]map[string]any)
	for i, l := range layers {
		for _, k := range slices.Sorted(maps.Keys(layerZeroDefaults)) {
			if isZero(l[k]) {
				zero(fmt.Sprintf("layer[%d].%s", i, k), layerZeroDefaults[k])
			}
		}
		if l["op"] == "embedding" && isZero(l["lookups"]) {
			zero(fmt.Sprintf("layer[%d].lookups", i), "1")
		}
	}
	return errs
}

// givenValue returns the value the decoded file raw gives for a
// ConfigError's key ("heads", "layer[3].out"), and whether it gives one.
func givenValue(raw map[string]any, key string) (any, bool) {
	if m := layerKey.FindStringSubmatch(key); m != nil && m[1] != "*" {
		var i int
		fmt.Sscan(m[1], &i)
		layers, _ := raw["layer"].([]map[string]any)
		if i >= len(layers) {
			return nil, false
		}
		v, ok := layers[i][m[2]]
		return v, ok
	}
	v, ok := raw[key]
	return v, ok
}

// sayGiven rewrites the "missing" errors of err whose key the decoded
// file raw gives (saidAsGiven); the rest are kept.
func sayGiven(err error, raw map[string]any) error {
	if err == nil || raw == nil {
		return err
	}
	list := errlist.Flatten(err)
	out := make([]error, len(list))
	for i, e := range list {
		out[i] = e
		var ce *ConfigError
		if !errors.As(e, &ce) {
			continue
		}
		if v, ok := givenValue(raw, ce.Key); ok {
			c := *ce
			c.Err = saidAsGiven(c.Err, v)
			out[i] = &c
		}
	}
	return errors.Join(out...)
}
