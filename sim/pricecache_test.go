package sim

import (
	"maps"
	"reflect"
	"testing"

	"github.com/perfsim/perfsim/model"
)

var testResiduals = [2]*model.Residual{{}, {}}

// testProcessor returns a processor with every field set (its residual
// tables the same ones at every call).
func testProcessor() model.Processor {
	return model.Processor{
		Name: "p", ComputeUnits: 100, Bandwidth: 3e12, L2: 50e6, Launch: 4e-6, CPU: false,
		Matrix: map[model.DType]model.FLOPRate{model.BF16: 1e15, model.FP8: 2e15},
		Vector: map[model.DType]model.FLOPRate{model.FP32: 60e12},
		Eff: model.Efficiency{
			GEMM:      map[model.DType]model.GEMMParams{model.BF16: {Compute: 0.8, Memory: 0.8, Residual: testResiduals[0]}},
			Memory:    model.MemoryParams{Efficiency: 0.9},
			Attention: model.AttentionParams{Compute: 0.5, DecodeResidual: testResiduals[1]},
			Vector:    0.7,
		},
	}
}

// perturb changes v (settable) to another value of its type, reporting
// false for a kind it does not know.
func perturb(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Int8, reflect.Uint8:
		if v.CanInt() {
			v.SetInt(v.Int() + 1)
		} else {
			v.SetUint(v.Uint() + 1)
		}
	case reflect.Float64:
		v.SetFloat(v.Float()*2 + 1)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem())) // another address
	case reflect.Struct:
		for i := range v.NumField() {
			if perturb(v.Field(i)) {
				return true
			}
		}
		return false
	default:
		return false
	}
	return true
}

// TestSameProcessor changes each field of a processor in turn (each
// field of its efficiencies, each entry of its tables) and checks that
// sameProcessor tells the two apart, so that a field added to
// model.Processor or model.Efficiency and not compared fails here, before
// a cached price is served for the wrong processor.
func TestSameProcessor(t *testing.T) {
	a := testProcessor()
	b := testProcessor()
	if !sameProcessor(&a, &b) {
		t.Fatal("equal processors differ")
	}
	check := func(name string, change func(p *model.Processor) bool) {
		t.Helper()
		p := testProcessor()
		p.Matrix, p.Vector, p.Eff.GEMM = maps.Clone(p.Matrix), maps.Clone(p.Vector), maps.Clone(p.Eff.GEMM)
		if !change(&p) {
			t.Errorf("%s: cannot change a field of this kind; teach perturb and sameProcessor", name)
			return
		}
		if sameProcessor(&a, &p) {
			t.Errorf("%s changed, and sameProcessor still says the processors are the same", name)
		}
	}
	pt := reflect.TypeOf(model.Processor{})
	for i := range pt.NumField() {
		f := pt.Field(i)
		switch {
		case f.Name == "Eff":
			et := f.Type
			for j := range et.NumField() {
				ef := et.Field(j)
				if ef.Type.Kind() == reflect.Map {
					check("Eff."+ef.Name, func(p *model.Processor) bool { return changeMap(reflect.ValueOf(p).Elem().Field(i).Field(j)) })
					continue
				}
				if ef.Type.Kind() == reflect.Struct {
					// Every field of a parameter struct.
					for k := range ef.Type.NumField() {
						check("Eff."+ef.Name+"."+ef.Type.Field(k).Name, func(p *model.Processor) bool {
							return perturb(reflect.ValueOf(p).Elem().Field(i).Field(j).Field(k))
						})
					}
					continue
				}
				check("Eff."+ef.Name, func(p *model.Processor) bool { return perturb(reflect.ValueOf(p).Elem().Field(i).Field(j)) })
			}
		case f.Type.Kind() == reflect.Map:
			check(f.Name, func(p *model.Processor) bool { return changeMap(reflect.ValueOf(p).Elem().Field(i)) })
		default:
			check(f.Name, func(p *model.Processor) bool { return perturb(reflect.ValueOf(p).Elem().Field(i)) })
		}
	}
	// A GEMM parameter changed in an entry, and an entry added.
	check("Eff.GEMM[bf16].Compute", func(p *model.Processor) bool {
		g := p.Eff.GEMM[model.BF16]
		g.Compute = 0.81
		p.Eff.GEMM[model.BF16] = g
		return true
	})
	check("Matrix[fp16] added", func(p *model.Processor) bool {
		p.Matrix[model.FP16] = 1
		return true
	})
	// A key replaced by another, the count and the values kept.
	check("Matrix key replaced", func(p *model.Processor) bool {
		for d, v := range p.Matrix {
			for e := model.DType(0); e < 32; e++ {
				if _, ok := p.Matrix[e]; !ok {
					delete(p.Matrix, d)
					p.Matrix[e] = v
					return true
				}
			}
		}
		return false
	})
}

// changeMap changes the value of one entry of a map (already a copy).
func changeMap(m reflect.Value) bool {
	it := m.MapRange()
	if !it.Next() {
		return false
	}
	v := reflect.New(m.Type().Elem()).Elem()
	v.Set(it.Value())
	if !perturb(v) {
		return false
	}
	m.SetMapIndex(it.Key(), v)
	return true
}

// TestPriceCache_mapChangedInPlace checks that a device's peak changed
// in place between runs (its map shared with the processor) is seen: the
// cache keeps a copy of the maps it compares against.
func TestPriceCache_mapChangedInPlace(t *testing.T) {
	var pc priceCache
	p := testProcessor()
	if pc.use(&p); pc.gen != 1 {
		t.Fatalf("generation %d after first use", pc.gen)
	}
	if pc.use(&p); pc.gen != 1 {
		t.Errorf("the same processor started a new generation")
	}
	p.Matrix[model.BF16] = 2e15 // in place
	if pc.use(&p); pc.gen != 2 {
		t.Errorf("a peak changed in place kept the old prices")
	}
}
