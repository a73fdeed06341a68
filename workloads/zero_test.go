package workloads

import (
	"strings"
	"testing"
)

// TestLoad_givenZero: a model file that gives a required size as 0 is
// told its value ("layers: got 0"), not that the key is "missing" (the
// key is on its line); a key left out is still "missing"; and a size the
// loader derives when it is 0 (kv_heads, ssm_conv, a layer's groups) is an
// error when the file gives 0, not a silent default.
func TestLoad_givenZero(t *testing.T) {
	const dense = "name = \"z\"\nkind = \"decoder\"\nd_model = 64\nheads = 4\nvocab = 100\nnorm = \"rmsnorm\"\n"
	const cnn = "name = \"c\"\nkind = \"cnn\"\nimage_size = 8\nchannels = 3\n[[layer]]\nname = \"c1\"\nop = \"conv\"\nkernel = 3\n"
	for _, tt := range []struct {
		name, src string
		want      []string
	}{
		{"required zero", dense + "layers = 0\nffn = 0\n",
			[]string{"z.toml:7: layers: got 0: want a positive size", "z.toml:8: ffn: got 0: want a positive size"}},
		{"required absent", dense + "ffn = 128\n",
			[]string{"layers: missing: want a positive size"}},
		{"empty name", strings.Replace(dense, `name = "z"`, `name = ""`, 1) + "layers = 2\nffn = 128\n",
			[]string{`z.toml:1: name: got "": a model needs a name`}},
		{"defaulted zero", dense + "layers = 2\nffn = 128\nkv_heads = 0\nhead_dim = 0\n",
			[]string{"z.toml:9: kv_heads: got 0: want a positive size (leave the key out for heads)",
				"z.toml:10: head_dim: got 0: want a positive size (leave the key out for d_model / heads, or qk_nope_head_dim + qk_rope_head_dim with latent attention)"}},
		{"layer zero", cnn + "out = 0\ngroups = 0\n",
			[]string{"z.toml:9: layer[0].out: got 0: a conv needs its output channels",
				"z.toml:10: layer[0].groups: got 0: want a positive size (leave the key out for 1)"}},
		{"layer absent", cnn,
			[]string{"layer[0].out: missing: a conv needs its output channels"}},
		// A rope decoder's max_context left out is no limit; given as 0
		// it had meant the same without a word. With learned positions it
		// is required: said once, not once as given and once as missing.
		{"max_context zero", dense + "layers = 2\nffn = 128\nmax_context = 0\n",
			[]string{"z.toml:9: max_context: got 0: want a positive size"}},
		{"max_context zero learned", strings.Replace(dense, `norm = "rmsnorm"`, `norm = "layernorm"`, 1) + "layers = 2\nffn = 128\nmax_context = 0\n",
			[]string{"z.toml:9: max_context: got 0: want a positive size"}},
	} {
		_, err := Load(strings.NewReader(tt.src), "z.toml")
		for _, w := range tt.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error\n%v\nlacks %q", tt.name, err, w)
			}
		}
		if err != nil && strings.Count(err.Error(), "max_context") > 1 {
			t.Errorf("%s: max_context reported more than once:\n%v", tt.name, err)
		}
		if err != nil && strings.Contains(tt.name, "zero") && strings.Contains(err.Error(), "missing") {
			t.Errorf("%s: a value the file gives is called missing:\n%v", tt.name, err)
		}
	}
}
