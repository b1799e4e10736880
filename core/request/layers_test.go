package request

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// layers keeps every layer's costs in the result, and only when asked: without it the
// result and the id are what they were before the field existed (the golden result).
func TestLayerCosts(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "gpt2-4xa100.json"))
	if err != nil {
		t.Fatal(err)
	}
	plain := run(t, decode(t, string(in)))
	if plain.Model.LayerCosts != nil || bytes.Contains(marshalResult(t, plain), []byte("layer_costs")) {
		t.Error("a request without layers has layer_costs")
	}
	r := decode(t, string(in))
	r.Layers = true
	res := run(t, r)
	if res.ID == plain.ID {
		t.Error("layers: true has the id of the request without it")
	}
	lc := res.Model.LayerCosts
	n := res.Model.Layers
	if lc == nil || len(lc.ForwardSeconds) != n || len(lc.BackwardSeconds) != n || len(lc.ParamBytes) != n ||
		len(lc.ActivationBytes) != n || len(lc.OutputBytes) != n || lc.ForwardCycles != nil {
		t.Fatalf("layer_costs of %d layers: %+v", n, lc)
	}
	// The lists add up to the plan's stages: compute is forward plus backward, and the
	// parameters are the layers' (this profile shares none).
	for i, s := range res.Plan.Stages {
		var fb float64
		var params int64
		for l := s.FirstLayer; l <= s.LastLayer; l++ {
			fb += lc.ForwardSeconds[l] + lc.BackwardSeconds[l]
			params += lc.ParamBytes[l]
		}
		if d := fb - s.ComputeSeconds; d > 1e-9*s.ComputeSeconds || d < -1e-9*s.ComputeSeconds {
			t.Errorf("stage %d: the layers' forward and backward add to %v s, the stage computes %v s", i, fb, s.ComputeSeconds)
		}
		if params != s.ParamBytes {
			t.Errorf("stage %d: the layers' param_bytes add to %d, the stage holds %d", i, params, s.ParamBytes)
		}
	}
	for i := range n {
		if lc.ForwardSeconds[i] <= 0 || lc.OutputBytes[i] <= 0 {
			t.Errorf("layer %d: forward %v s, output %d bytes", i, lc.ForwardSeconds[i], lc.OutputBytes[i])
		}
	}
	// The JSON is columns, one list per figure.
	b, _ := json.Marshal(res.Model.LayerCosts)
	var cols map[string][]json.Number
	if err := json.Unmarshal(b, &cols); err != nil || len(cols) != 5 {
		t.Errorf("layer_costs JSON: %v, %.200s", err, b)
	}
}

// An architecture's layers are costed on the cluster's device; a profile in cycles gives
// cycles.
func TestLayerCostsArchitecture(t *testing.T) {
	res := run(t, decode(t, `{"model": {"architecture": {"name": "gpt2"}}, "cluster": {"device": "a100-80gb", "count": 2}, "layers": true}`))
	lc := res.Model.LayerCosts
	if lc == nil || len(lc.ForwardSeconds) != res.Model.Layers || lc.ForwardSeconds[1] <= 0 || lc.ActivationBytes[1] <= 0 {
		t.Fatalf("gpt2's layer costs: %+v", lc)
	}
}
