package hardware

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// FuzzLoad checks that Load never panics, and that what it accepts
// validates. It is seeded with the catalog and the bad files:
//
//	go test -fuzz=FuzzLoad ./hardware
func FuzzLoad(f *testing.F) {
	for _, glob := range []string{"devices/*.toml", "testdata/bad/*.toml", "testdata/good/*.toml"} {
		files, err := filepath.Glob(glob)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Load(bytes.NewReader(data), "fuzz.toml")
		if err != nil {
			return
		}
		if err := d.Validate(); err != nil {
			t.Errorf("Load accepted a device that does not validate: %v", err)
		}
		// What hardware show derives from an accepted device is finite.
		for _, peaks := range []map[model.DType]model.FLOPRate{d.Matrix, d.Vector} {
			for dt, p := range peaks {
				if r := float64(model.Ridge(p, d.Memory.Bandwidth)); math.IsNaN(r) || math.IsInf(r, 0) {
					t.Errorf("%v ridge point of an accepted device is %v", dt, r)
				}
			}
		}
	})
}
