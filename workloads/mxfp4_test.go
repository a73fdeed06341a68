package workloads

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestWeightBytes_mxfp4Checkpoint: gpt-oss ships its experts in MXFP4, one
// E8M0 scale byte per block of 32 fp4 values (OCP Microscaling Formats
// v1.0; 1/16 of the packed weights), not NVFP4's fp8 scale per 16 (1/8).
// Its model card lists the checkpoint at 60.8 GiB (gpt-oss-120b) and
// 12.8 GiB (gpt-oss-20b): the MXFP4 experts plus the rest in bf16. With
// NVFP4's scales the catalog had priced 64.05 and 13.37 GiB. Loaded from
// the catalog and from the config.json, the weights must round to the card.
func TestWeightBytes_mxfp4Checkpoint(t *testing.T) {
	for _, tt := range []struct {
		name, config string
		gib          float64 // model card, to 0.1 GiB
	}{
		{"gpt-oss-120b", "gpt-oss-120b.json", 60.8},
		{"gpt-oss-20b", "", 12.8},
	} {
		models := []*Model{}
		m, err := Resolve(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		models = append(models, m)
		if tt.config != "" {
			p := filepath.Join("testdata", "hf", "today", tt.config)
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			h, err := LoadHF(f, p)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			models = append(models, h)
		}
		for _, m := range models {
			got := float64(m.WeightBytes(model.BF16)) / (1 << 30)
			if math.Round(got*10)/10 != tt.gib {
				t.Errorf("%s (%s): weights %.3f GiB in bf16 with MXFP4 experts, want the model card's %.1f GiB", tt.name, m.Name(), got, tt.gib)
			}
		}
	}
}
