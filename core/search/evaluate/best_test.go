package evaluate

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"pipeplan/core/request"
	"pipeplan/core/search"
	"pipeplan/core/wire"
)

// graphcoreTraining is a ModelInfo profile (Graphcore's auto-pipeline tool's format) of 8
// layers for training, measured at microbatch size 1, whose activations (curActivation)
// weigh enough beside an IPU's memory that counting one microbatch of them, as the tool
// does, or the microbatches 1F1B keeps in flight gives other splits and other sizes.
func graphcoreTraining() json.RawMessage {
	var names, infos []string
	for i := range 8 {
		names = append(names, fmt.Sprintf("%q", fmt.Sprint("l", i)))
		infos = append(infos, fmt.Sprintf(`{"cycle": {"forward": %d, "backward": %d}, "memory": {"shared": {}, "exclusive": {"code": %d},
			"inputs": %d, "outputs": %d, "maxTemporary": %d, "curCarryOver": 0, "curActivation": %d}}`,
			30000*(1+i%3), 60000*(1+i%3), 40<<20, 1<<20, 1<<20, (2+i%3)<<20, (4+i%2)<<20))
	}
	return json.RawMessage(fmt.Sprintf(`{"layerName": [%s], "layerInfo": [%s]}`, strings.Join(names, ","), strings.Join(infos, ",")))
}

// TestBestRequestPlansAsBest: the search's best is exactly what planning its
// best_request alone gives (request.Run, as pipeplan plan does): the same throughput,
// step, split and memory headroom, for a Graphcore profile in training (planned by
// Graphcore's auto-pipeline tool's one-microbatch memory rule at every microbatch size),
// a PipeDream profile (weights only, to which training adds gradients and optimizer
// state) and a profile in pipeplan's native JSON. Each query goes through RunQuery, the
// doorway of pipeplan search, and its best is the exhaustive enumeration's. Each best is
// at another microbatch size than the profile's, so its request holds the profile scaled
// (and says so: profile_scaled), in native JSON that keeps the format's rules.
func TestBestRequestPlansAsBest(t *testing.T) {
	alexnet, err := os.ReadFile("../../load/testdata/pipedream/alexnet.graph.txt")
	if err != nil {
		t.Fatal(err)
	}
	pd, _ := json.Marshal(string(alexnet))
	for _, c := range []struct {
		name  string
		query string
		// codes are notes the best's plan must hold: the format's rules, the scaling.
		// The scaled cases fix the microbatch size: the best prefers headroom within 1% of
		// the fastest (search.NearTie), which a profile's own size, flat in throughput, has.
		codes []string
	}{
		{"graphcore", `{"request": {"model": {"document": ` + string(graphcoreTraining()) + `}, "cluster": {"device": "gc200"}},
			"max_devices": 4, "replicas": 1, "microbatches": 8, "microbatch_size": 4}`,
			[]string{wire.CodeGraphcoreMemoryRule, wire.CodeProfileScaled}},
		// At the profile's own size, the best's request holds the profile as the user gave it.
		{"graphcore at its own size", `{"request": {"model": {"document": ` + string(graphcoreTraining()) + `}, "cluster": {"device": "gc200"}},
			"max_devices": 4, "replicas": 1, "microbatches": 8, "microbatch_size": 1}`,
			[]string{wire.CodeGraphcoreMemoryRule}},
		{"pipedream", `{"request": {"model": {"document": ` + string(pd) + `}, "cluster": {"device": "a100-40gb"}},
			"max_devices": 4, "microbatches_per_stage": [1, 2, 4, 8], "microbatch_size": 8}`,
			[]string{wire.CodeStateAdded, wire.CodeProfileScaled}},
		{"native", `{"request": {"model": {"example": "gpt2-medium"}, "cluster": {"device": "a100-40gb"}},
			"max_devices": 4, "replicas": 1, "schedule": "1f1b", "microbatch_size": 16}`,
			[]string{wire.CodeProfileScaled}},
	} {
		t.Run(c.name, func(t *testing.T) {
			q, err := search.DecodeQuery([]byte(c.query))
			if err != nil {
				t.Fatal(err)
			}
			a, err := RunQuery(context.Background(), q, search.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if a.Best == nil || a.BestRequest == nil {
				t.Fatalf("no best: %+v", a.Stats)
			}
			q.Exhaustive = true
			ex, err := RunQuery(context.Background(), q, search.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if a.Stats.BoundViolations != 0 || ex.Stats.BoundViolations != 0 {
				t.Errorf("bound violations: %d, exhaustive %d", a.Stats.BoundViolations, ex.Stats.BoundViolations)
			}
			if ex.Best.SearchCandidate != a.Best.SearchCandidate || ex.Best.SamplesPerSecond != a.Best.SamplesPerSecond {
				t.Errorf("best %s (%.6g/s), exhaustive %s (%.6g/s)", a.Best.SearchCandidate, a.Best.SamplesPerSecond, ex.Best.SearchCandidate, ex.Best.SamplesPerSecond)
			}
			res, err := request.Run(context.Background(), a.BestRequest)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Feasible || res.Step == nil {
				t.Fatalf("best_request plans infeasible: %v", res.FirstError())
			}
			head := int64(math.MaxInt64)
			for _, s := range res.Plan.Stages {
				head = min(head, s.LimitBytes-s.MemoryBytes)
			}
			b := a.Best
			if b.SamplesPerSecond != res.Step.SamplesPerSecond || b.StepSeconds != res.Step.StepSeconds ||
				!slices.Equal(b.Boundaries, res.Plan.Boundaries) || b.HeadroomBytes != head || b.Devices != res.Step.Devices {
				t.Errorf("the search's best %s: %.9g samples/s, step %.9g s, split %v, headroom %d B, %d devices;\nplanning best_request: %.9g samples/s, step %.9g s, split %v, headroom %d B, %d devices",
					b.SearchCandidate, b.SamplesPerSecond, b.StepSeconds, b.Boundaries, b.HeadroomBytes, b.Devices,
					res.Step.SamplesPerSecond, res.Step.StepSeconds, res.Plan.Boundaries, head, res.Step.Devices)
			}
			if b.MicrobatchSize == 1 && !slices.Equal(a.BestRequest.Model.Document, q.Request.Model.Document) {
				t.Errorf("at the profile's own microbatch size the best's request holds another document than the query's: %.200s", a.BestRequest.Model.Document)
			}
			if a.BestID != res.ID {
				t.Errorf("best_id %s, planned %s", a.BestID, res.ID)
			}
			for _, code := range c.codes {
				if !slices.ContainsFunc(res.Diagnostics, func(d wire.Diagnostic) bool { return d.Code == code }) {
					t.Errorf("the best's plan (%s) has no %s note", b.SearchCandidate, code)
				}
			}
			t.Logf("best %s: %.6g samples/s, split %v, headroom %d B", b.SearchCandidate, b.SamplesPerSecond, b.Boundaries, b.HeadroomBytes)
		})
	}
}
