package analytic

import (
	"math"
	"reflect"
	"testing"
	"unsafe"
)

// TestSameLayersEveryField holds SameLayers to reflect.DeepEqual, its oracle: two
// layers alike, then each of Layer's fields (its exported and unexported ones, each of
// Terms' fields, MegatronParams' length, elements and nil-ness) changed in turn on one
// of them, then a NaN in both; and lists of different lengths and nil-ness. A field added
// to Layer and not to SameLayers fails here.
func TestSameLayersEveryField(t *testing.T) {
	base := func() Layer {
		var l Layer
		n := 0
		setLeaves(reflect.ValueOf(&l).Elem(), func(v reflect.Value) {
			n++
			change(v, n)
		})
		l.MegatronParams = []ParamTensor{{Elements: 7, Product: true}, {Elements: 9}}
		return l
	}
	check := func(name string, a, b []Layer) {
		t.Helper()
		if got, want := SameLayers(a, b), reflect.DeepEqual(a, b); got != want {
			t.Errorf("%s: SameLayers %v, reflect.DeepEqual %v", name, got, want)
		}
	}
	check("alike", []Layer{base(), base()}, []Layer{base(), base()})
	fields := 0
	typ := reflect.TypeOf(Layer{})
	for i := range typ.NumField() {
		leaves := 0
		setLeaves(settable(reflect.ValueOf(&Layer{}).Elem().Field(i)), func(reflect.Value) { leaves++ })
		for j := range leaves {
			b := base()
			k := 0
			setLeaves(settable(reflect.ValueOf(&b).Elem().Field(i)), func(v reflect.Value) {
				if k == j {
					change(v, 1000)
				}
				k++
			})
			check(typ.Field(i).Name, []Layer{base(), base()}, []Layer{base(), b})
			fields++
		}
	}
	if fields < typ.NumField() {
		t.Fatalf("changed %d leaves of %d fields", fields, typ.NumField())
	}
	for _, mp := range [][]ParamTensor{nil, {}, {{Elements: 7, Product: true}}, {{Elements: 7}, {Elements: 9}}} {
		b := base()
		b.MegatronParams = mp
		check("MegatronParams", []Layer{base()}, []Layer{b})
	}
	nan := base()
	nan.FwdSeconds = math.NaN()
	check("NaN", []Layer{nan}, []Layer{nan})
	check("lengths", []Layer{base()}, []Layer{base(), base()})
	check("nil and empty", nil, []Layer{})
	check("nil and nil", nil, nil)
}

// settable is v, writable even where it is an unexported field.
func settable(v reflect.Value) reflect.Value {
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
}

// setLeaves calls f on each scalar leaf of v (struct fields recursively; a slice is
// one leaf, changed as a whole).
func setLeaves(v reflect.Value, f func(reflect.Value)) {
	if v.Kind() == reflect.Struct {
		for i := range v.NumField() {
			setLeaves(settable(v.Field(i)), f)
		}
		return
	}
	f(v)
}

// change sets leaf v to a value of its kind that n picks.
func change(v reflect.Value, n int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Int, reflect.Int64:
		v.SetInt(v.Int() + int64(n))
	case reflect.Float64:
		v.SetFloat(v.Float() + float64(n))
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Slice:
		v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
	default:
		panic("change: kind " + v.Kind().String())
	}
}
