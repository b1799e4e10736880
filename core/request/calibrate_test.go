package request

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"pipeplan/core/analytic"
	"pipeplan/core/arch"
	"pipeplan/core/model"
)

// gpt2Profile is a profile of the bundled GPT-2 as the analytic estimate on an H100
// costs it (microbatches of 4 sequences of 512 tokens), in pipeplan's native JSON.
func gpt2Profile(t *testing.T) string {
	t.Helper()
	a, _ := arch.Bundled("gpt2")
	tg, _ := analytic.PresetTarget("h100-sxm")
	est, err := analytic.Estimate(a, tg, analytic.Options{Batch: 4, Seq: 512})
	if err != nil {
		t.Fatal(err)
	}
	m := est.Model()
	m.MeasuredOn = &model.MeasuredOn{Name: "h100-sxm"}
	m.MicrobatchSize, m.TokensPerSample = 4, 512
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestCalibrateErrorPaths: calibration's errors name their field, the request's by its
// path and the profile's under "profile", whichever step finds them (loading, validating
// or matching the profile), so that every front end reports them alike.
func TestCalibrateErrorPaths(t *testing.T) {
	prof := gpt2Profile(t)
	const gpt2 = `{"model":{"architecture":{"name":"gpt2"}},"cluster":{"device":"h100-sxm"}}`
	if _, err := CalibrateText(context.Background(), decode(t, gpt2), []byte(prof)); err != nil {
		t.Fatalf("the profile of the estimate does not calibrate: %v", err)
	}
	for _, tc := range []struct {
		name, req, prof, path string
	}{
		{"no architecture", `{"model":{"example":"gpt2-medium"}}`, prof, "model.architecture"},
		{"no profile", gpt2, "", "profile"},
		{"not a profile", gpt2, "this is not a profile", "profile"},
		{"a layer's field", gpt2, strings.Replace(prof, `"forward_seconds":`, `"forward_seconds":-`, 1), "profile.layers[0].forward_seconds"},
		{"cycles", gpt2, `{"time_unit":"cycles","layers":[{"name":"a","forward_cycles":1}]}`, "profile.time_unit"},
		{"two layers of one name", gpt2, strings.Replace(prof, `"block.3"`, `"block.7"`, 1), "profile.layers["},
		{"another model", `{"model":{"architecture":{"name":"gpt2-medium"}},"cluster":{"device":"h100-sxm"}}`, prof, "profile.layers"},
		{"a device that is no preset", `{"model":{"architecture":{"name":"gpt2"}}}`, strings.Replace(prof, `"measured_on":"h100-sxm"`, `"measured_on":"cpu"`, 1), "profile.measured_on.name"},
		{"an unknown framework", `{"model":{"architecture":{"name":"gpt2","framework":"jit"}},"cluster":{"device":"h100-sxm"}}`, prof, "model.architecture.framework"},
	} {
		_, err := CalibrateText(context.Background(), decode(t, tc.req), []byte(tc.prof))
		es, ok := model.AsFieldErrors(err)
		if !ok || len(es) == 0 {
			t.Errorf("%s: %v, want a field error at %s", tc.name, err, tc.path)
			continue
		}
		if !strings.HasPrefix(es[0].Path, tc.path) {
			t.Errorf("%s: error at %q (%v), want %s", tc.name, es[0].Path, err, tc.path)
		}
	}
}
