package sim

import (
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestGraphGEMMs checks the remembered launch-capped GEMM tables: one is
// reused while its source is unchanged, rebuilt when the source changes
// in place, and the source itself is returned when nothing needs a cap.
func TestGraphGEMMs(t *testing.T) {
	src := map[model.DType]model.GEMMParams{
		model.BF16: {Compute: 0.8, Launch: 5e-6},
		model.FP8:  {Compute: 0.7, Launch: 0.5e-6},
	}
	a := graphGEMMs(src)
	if a[model.BF16].Launch != GraphLaunch || a[model.FP8].Launch != 0.5e-6 || a[model.BF16].Compute != 0.8 {
		t.Fatalf("capped table %v", a)
	}
	if src[model.BF16].Launch != 5e-6 {
		t.Fatal("the source was modified")
	}
	b := graphGEMMs(src)
	b[model.Invalid] = model.GEMMParams{} // visible in a only when the table was reused
	if len(a) != 3 {
		t.Error("an unchanged source rebuilt its table")
	}
	delete(b, model.Invalid)

	g := src[model.BF16]
	g.Compute = 0.9 // changed in place: the remembered table is stale
	src[model.BF16] = g
	if c := graphGEMMs(src); c[model.BF16].Compute != 0.9 || c[model.BF16].Launch != GraphLaunch {
		t.Errorf("after an in-place change: %v", c[model.BF16])
	}
	src[model.FP16] = model.GEMMParams{Launch: 3e-6} // a new entry
	if c := graphGEMMs(src); c[model.FP16].Launch != GraphLaunch || len(c) != 3 {
		t.Errorf("after adding an entry: %v", c)
	}

	small := map[model.DType]model.GEMMParams{model.BF16: {Launch: 0.2e-6}}
	if c := graphGEMMs(small); len(c) != 1 {
		t.Errorf("uncapped table %v", c)
	} else {
		c[model.FP8] = model.GEMMParams{}
		if len(small) != 2 {
			t.Error("a table needing no cap was copied")
		}
	}
}
