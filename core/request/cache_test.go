package request

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"pipeplan/core/arch"
	"pipeplan/core/wire"
)

// A cache changes how fast, never what: every request gives through a shared cache the
// result (or the error) it gives alone, including when a cached estimate is used again by
// a request with another label, another ZeRO sharding or another device.
func TestCacheSameResults(t *testing.T) {
	cfg, ok := arch.BundledConfig("gpt2-medium")
	if !ok {
		t.Fatal("gpt2-medium is not bundled")
	}
	var reqs []*wire.Request
	for _, rc := range []string{"none", "selective", "full"} {
		for _, par := range []wire.Parallelism{{Pipeline: 2}, {Pipeline: 2, Data: 2}, {Pipeline: 2, Data: 2, ZeRO: 1}, {Pipeline: 1, Data: 4, ZeRO: 1}, {Pipeline: 4, Tensor: 2}} {
			for _, b := range []int{1, 4} {
				for _, label := range []string{"", "renamed"} {
					reqs = append(reqs, &wire.Request{
						Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: "gpt2-medium", Seq: 1024}, Name: label},
						Cluster:     wire.ClusterSpec{Device: "a100-80gb", DevicesPerNode: 4},
						Parallelism: par, Training: wire.Training{Recompute: rc},
						Schedule: wire.Schedule{Name: "1f1b", Microbatches: 8, MicrobatchSize: b},
					})
				}
			}
		}
	}
	reqs = append(reqs,
		&wire.Request{Model: wire.ModelSpec{Architecture: &wire.Architecture{Config: cfg, Seq: 512}}, Cluster: wire.ClusterSpec{Device: "h100-sxm", Count: 2}},
		&wire.Request{Model: wire.ModelSpec{Architecture: &wire.Architecture{Config: cfg, Seq: 512, MatmulEfficiency: 0.5}}, Cluster: wire.ClusterSpec{Device: "h100-sxm", Count: 2}},
		&wire.Request{Model: wire.ModelSpec{Architecture: &wire.Architecture{Name: "gpt2-medium", Seq: 512}}, Cluster: wire.ClusterSpec{Device: "mi300x", Count: 2}},
		&wire.Request{Model: wire.ModelSpec{Architecture: &wire.Architecture{Name: "no-such-model"}}, Cluster: wire.ClusterSpec{Device: "h100-sxm", Count: 2}},
		&wire.Request{Model: wire.ModelSpec{Architecture: &wire.Architecture{Config: json.RawMessage(`{"model_type": "nope"}`)}}, Cluster: wire.ClusterSpec{Device: "h100-sxm", Count: 2}},
		&wire.Request{Model: wire.ModelSpec{Example: "gpt2-medium"}, Cluster: wire.ClusterSpec{Device: "a100-80gb", Count: 4}},
	)
	c := NewCache()
	errs := 0
	for round := range 2 {
		for i, r := range reqs {
			name := fmt.Sprintf("round %d request %d", round, i)
			want, werr := Run(context.Background(), r)
			got, gerr := cacheRun(c, r)
			if werr != nil {
				errs++
			}
			if fmt.Sprint(werr) != fmt.Sprint(gerr) {
				t.Fatalf("%s: error %v, alone %v", name, gerr, werr)
			}
			if !reflect.DeepEqual(mustJSON(t, got), mustJSON(t, want)) {
				t.Errorf("%s: the cached result differs", name)
			}
		}
	}
	if errs != 2*2 {
		t.Errorf("%d requests failed, want the 2 bad ones in each of 2 rounds", errs)
	}
	if len(c.estimates) == 0 || len(c.arches) == 0 {
		t.Errorf("nothing was cached: %d estimates, %d architectures", len(c.estimates), len(c.arches))
	}
	// Requests share the cached models' layers: none may have changed them.
	for k, e := range c.estimates {
		if e.err == nil && !reflect.DeepEqual(e.model, e.est.Model()) {
			t.Errorf("the cached model of %s (%v) was changed by a request", e.est.Name, k.opts)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCacheKeysFramework: two requests that differ only in their framework get their
// own estimates (host times, temporaries and fixed memory differ).
func TestCacheKeysFramework(t *testing.T) {
	c := NewCache()
	get := func(fw string) *wire.Result {
		res, err := cacheRun(c, decode(t, `{"model": {"architecture": {"name": "gpt2", "seq": 256, "framework": "`+fw+`"}},
			"cluster": {"device": "h100-sxm", "count": 2}}`))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	eager, graphs := get("eager"), get("cuda-graphs")
	if eager.Step.StepSeconds == graphs.Step.StepSeconds || eager.Plan.Stages[0].MemoryBytes == graphs.Plan.Stages[0].MemoryBytes {
		t.Errorf("eager and cuda-graphs: step %v and %v s, stage 0 %d and %d bytes: the cache gave one estimate to both",
			eager.Step.StepSeconds, graphs.Step.StepSeconds, eager.Plan.Stages[0].MemoryBytes, graphs.Plan.Stages[0].MemoryBytes)
	}
}

// cacheRun prepares the request with the cache and plans it.
func cacheRun(c *Cache, r *wire.Request) (*wire.Result, error) {
	p, err := c.Prepare(r)
	if err != nil {
		return nil, err
	}
	return p.Run(context.Background())
}
