package request

import (
	"math"
	"slices"
	"strings"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/wire"
)

// TestScaleProfileFixedTimes: a layer's measured fixed times stay when a profile is
// scaled to another microbatch size and only the rest of its times scale; activations
// scale whole; without fixed times all of the time scales; a fixed time beyond the
// layer's is refused; the scaled plan's note says which it did.
func TestScaleProfileFixedTimes(t *testing.T) {
	m := &model.Model{Name: "toy", MicrobatchSize: 2, Layers: []model.Layer{
		{Name: "a", ForwardSeconds: 3e-3, BackwardSeconds: 5e-3, ForwardFixedSeconds: 1e-3, BackwardFixedSeconds: 2e-3, ActivationBytes: 100},
		{Name: "b", ForwardSeconds: 4e-3, BackwardSeconds: 6e-3, ActivationBytes: 10},
	}}
	s := ScaleProfile(m, 2, 8)
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"a forward", s.Layers[0].ForwardSeconds, 1e-3 + 2e-3*4},
		{"a backward", s.Layers[0].BackwardSeconds, 2e-3 + 3e-3*4},
		{"b forward", s.Layers[1].ForwardSeconds, 16e-3},
		{"b backward", s.Layers[1].BackwardSeconds, 24e-3},
		{"a activations", float64(s.Layers[0].ActivationBytes), 400},
		{"a fixed forward", s.Layers[0].ForwardFixedSeconds, 1e-3},
	} {
		if math.Abs(c.got-c.want) > 1e-15 {
			t.Errorf("%s: %g, want %g", c.name, c.got, c.want)
		}
	}
	bad := model.Model{Name: "bad", Layers: []model.Layer{{Name: "a", ForwardSeconds: 1e-3, ForwardFixedSeconds: 2e-3}}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "layers[0].forward_fixed_seconds") {
		t.Errorf("a fixed time beyond the layer's: %v", err)
	}
	doc := func(fixed string) string {
		return `{"model":{"document":{"name":"toy","microbatch_size":2,"layers":[` +
			`{"name":"a","forward_seconds":0.003,"backward_seconds":0.005` + fixed + `,"param_bytes":1000,"activation_bytes":100},` +
			`{"name":"b","forward_seconds":0.004,"backward_seconds":0.006,"param_bytes":1000,"activation_bytes":100}]}},` +
			`"cluster":{"device":"a100-80gb","count":2}}`
	}
	for _, c := range []struct{ fixed, want string }{
		{`,"forward_fixed_seconds":0.001,"backward_fixed_seconds":0.002`, "the fixed times 1 of its 2 layers state"},
		{"", "no layer states its fixed times"},
	} {
		base, err := Prepare(decode(t, doc(c.fixed)))
		if err != nil {
			t.Fatal(err)
		}
		k := base.Knobs()
		k.Schedule.MicrobatchSize = 8
		v, err := base.With(k)
		if err != nil {
			t.Fatal(err)
		}
		res := run(t, v.Request())
		if !slices.ContainsFunc(res.Diagnostics, func(d wire.Diagnostic) bool {
			return d.Code == wire.CodeProfileScaled && strings.Contains(d.Message, c.want)
		}) {
			t.Errorf("the scaled plan has no %s note saying %q: %+v", wire.CodeProfileScaled, c.want, res.Diagnostics)
		}
	}
}
