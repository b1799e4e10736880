package request

import (
	"slices"
	"testing"

	"pipeplan/core/analytic"
	"pipeplan/core/request/spec"
)

// TestVocabulary: the lists the page offers (core/request/spec) are the planner's own
// (core/analytic), default first, and every value plans.
func TestVocabulary(t *testing.T) {
	strs := func(vs ...string) []string { return vs }
	var precisions, recipes []string
	for _, p := range analytic.Precisions {
		precisions = append(precisions, string(p))
	}
	for _, r := range analytic.FP8Recipes {
		recipes = append(recipes, string(r))
	}
	for _, tc := range []struct {
		name       string
		spec, core []string
	}{
		{"precisions", spec.Precisions, precisions},
		{"fp8 recipes", spec.FP8Recipes, recipes},
		{"dtypes", spec.DTypes, strs(string(analytic.BF16), string(analytic.FP16), string(analytic.FP32), string(analytic.FP8))},
	} {
		if !slices.Equal(tc.spec, tc.core) {
			t.Errorf("%s: spec lists %v, core %v", tc.name, tc.spec, tc.core)
		}
	}
	for _, p := range spec.Precisions {
		r := &Request{Model: ModelSpec{Architecture: &Architecture{Name: "llama-3.2-1b"}}, Cluster: ClusterSpec{Device: "h100-sxm", Count: 1},
			Training: Training{Precision: p}}
		if _, err := Normalize(r); err != nil {
			t.Errorf("precision %s: %v", p, err)
		}
	}
}
