package model

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	neg := int64(-1)
	tests := []struct {
		name  string
		model Model
		want  []string // each must appear in the error; none: valid
	}{
		{"valid chain", Model{Inputs: []Tensor{{"x", 4}}, Layers: []Layer{
			{Name: "a", ForwardSeconds: 1, InputIDs: []string{"x"}, Outputs: []Tensor{{"y", 8}}},
			{Name: "b", ForwardSeconds: 2, InputIDs: []string{"y"}},
		}}, nil},
		{"no layers", Model{}, []string{"layers: must hold at least one layer"}},
		{"bad unit", Model{TimeUnit: "ms", Layers: []Layer{{Name: "a"}}}, []string{`time_unit: must be "seconds" or "cycles", got "ms"`}},
		{"negative time", Model{Layers: []Layer{{Name: "a", ForwardSeconds: -1}}}, []string{"layers[0].forward_seconds: must be >= 0, got -1"}},
		{"negative tensor bytes", Model{Layers: []Layer{{Name: "a"}, {Name: "b", Outputs: []Tensor{{"t", -5}}}}},
			[]string{"layers[1].outputs[0].bytes: must be >= 0, got -5"}},
		{"unknown input", Model{Layers: []Layer{{Name: "a", InputIDs: []string{"nope"}}}},
			[]string{`layers[0].inputs[0]: tensor "nope" is neither a model input nor produced by an earlier layer`}},
		{"consumed before produced", Model{Layers: []Layer{{Name: "a", InputIDs: []string{"y"}}, {Name: "b", Outputs: []Tensor{{"y", 1}}}}},
			[]string{`layers[0].inputs[0]: tensor "y" is neither`}},
		{"duplicate tensor", Model{Layers: []Layer{{Name: "a", Outputs: []Tensor{{"y", 1}}}, {Name: "b", Outputs: []Tensor{{"y", 1}}}}},
			[]string{`layers[1].outputs[0].id: tensor "y" is already produced by layers[0]`}},
		{"cycles in a seconds model", Model{Layers: []Layer{{Name: "a", ForwardCycles: 10}}},
			[]string{"layers[0]: gives times in cycles but the model's time_unit is seconds"}},
		{"seconds in a cycles model", Model{TimeUnit: Cycles, Layers: []Layer{{Name: "a", ForwardSeconds: 1}}},
			[]string{"layers[0]: gives times in seconds but the model's time_unit is cycles"}},
		{"negative override", Model{Layers: []Layer{{Name: "a", RecvBytes: &neg}}}, []string{"layers[0].recv_bytes: must be >= 0, got -1"}},
		{"negative shared", Model{Layers: []Layer{{Name: "a", Shared: map[string]int64{"k": -2}}}}, []string{`layers[0].shared["k"]: must be >= 0, got -2`}},
		{"huge bytes", Model{Layers: []Layer{{Name: "a", ParamBytes: 1 << 62}}}, []string{"layers[0].param_bytes: must be at most 2^60 bytes"}},
		{"converted from a known format", Model{ConvertedFrom: FromPipeDream, MicrobatchSize: 8, ScaledFrom: 1, Layers: []Layer{{Name: "a"}}}, nil},
		{"converted from an unknown format", Model{ConvertedFrom: "onnx", Layers: []Layer{{Name: "a"}}},
			[]string{`converted_from: must be "graphcore" or "pipedream" (or left out), got "onnx"`}},
		{"scaled to no size", Model{ScaledFrom: 2, Layers: []Layer{{Name: "a"}}}, []string{"scaled_from: needs microbatch_size"}},
		{"negative scaled_from", Model{ScaledFrom: -1, MicrobatchSize: 1, Layers: []Layer{{Name: "a"}}}, []string{"scaled_from: must be >= 0, got -1"}},
		{"several errors", Model{Layers: []Layer{{Name: "a", ParamBytes: -1, TemporaryBytes: -2}}},
			[]string{"layers[0].param_bytes", "layers[0].temporary_bytes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.model.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q, want it to contain %q", err, w)
				}
			}
			if _, ok := AsFieldErrors(err); !ok {
				t.Errorf("Validate() error %T is not field errors", err)
			}
		})
	}
}

func TestNativeJSONRoundTrip(t *testing.T) {
	src := `{"name":"m","time_unit":"cycles","inputs":[{"id":"x","bytes":4}],"layers":[` +
		`{"name":"a","kind":"Dense","forward_cycles":10,"param_bytes":3,"shared":{"code":5},"inputs":["x"],"outputs":[{"id":"y","bytes":2}],"send_bytes":0,"tie_group":"g"}]}`
	var m Model
	if err := json.Unmarshal([]byte(src), &m); err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if m.Forward(0) != 10 || m.Unit() != Cycles || *m.Layers[0].SendBytes != 0 || m.Layers[0].RecvBytes != nil {
		t.Fatalf("decoded %+v", m.Layers[0])
	}
	out, err := json.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != src {
		t.Errorf("round trip:\n got %s\nwant %s", out, src)
	}
}

// TestValidateLayerCountBound: MaxLayers layers are valid, one more is refused at once
// (one error, not one per layer).
func TestValidateLayerCountBound(t *testing.T) {
	m := Model{Layers: make([]Layer, MaxLayers)}
	if err := m.Validate(); err != nil {
		t.Fatalf("%d layers: %v", MaxLayers, err)
	}
	m.Layers = append(m.Layers, Layer{ParamBytes: -1})
	err := m.Validate()
	if es, ok := AsFieldErrors(err); !ok || len(es) != 1 || err.Error() != fmt.Sprintf("layers: must hold at most %d layers, got %d", MaxLayers, MaxLayers+1) {
		t.Errorf("%d layers: %v", len(m.Layers), err)
	}
}
