package request

import (
	"bytes"
	"context"
	"encoding/json"
	"pipeplan/core/wire"
	"regexp"
	"strconv"
	"testing"
)

// TestCanonicalDefaultsSpelledOut: a request that spells out every default and one that
// leaves them out mean the same plan, so they give the same bytes and the same id.
func TestCanonicalDefaultsSpelledOut(t *testing.T) {
	pairs := []struct{ name, short, long string }{
		{"profile",
			`{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":4}}`,
			`{"version":1,"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":4,"link":"nvlink3"},
			  "parallelism":{"pipeline":4,"data":1,"zero":0},"training":{"mode":"training","recompute":"none"},
			  "schedule":{"name":"1f1b","microbatches":16,"microbatch_size":8},"objective":"compute","memory_proportion":1}`},
		{"architecture",
			`{"model":{"architecture":{"name":"gpt2"}},"cluster":{"device":"h100-sxm","count":2}}`,
			`{"version":1,"model":{"architecture":{"name":"gpt2","seq":1024,"dtype":"bf16","attention":"flash","split":"block","tie":"copy"}},
			  "cluster":{"device":"h100-sxm","count":2,"link":"nvlink4"},"parallelism":{"pipeline":2,"data":1},
			  "training":{"mode":"training","optimizer":"adamw","precision":"mixed","recompute":"none"},
			  "schedule":{"name":"1f1b","microbatches":8,"microbatch_size":1},"objective":"compute","memory_proportion":1}`},
		{"inference",
			`{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":2},"schedule":{"name":"inference"}}`,
			`{"version":1,"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":2,"link":"nvlink3"},
			  "parallelism":{"pipeline":2,"data":1},"training":{"mode":"inference","recompute":"none"},
			  "schedule":{"name":"inference","microbatches":8,"microbatch_size":8},"objective":"compute","memory_proportion":1}`},
		{"names in other cases",
			`{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":4,"link":"nvlink3"},"schedule":{"name":"zb-h1"}}`,
			`{"model":{"example":"GPT2-medium"},"cluster":{"device":"A100-80GB","count":4,"link":"NVLINK3"},"schedule":{"name":" ZB-H1 ","weight_grad_fraction":0.5}}`},
	}
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			short, long := decode(t, p.short), decode(t, p.long)
			cs, err := Canonical(short)
			if err != nil {
				t.Fatal(err)
			}
			cl, err := Canonical(long)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(cs, cl) {
				t.Errorf("canonical forms differ:\n%s\n%s", cs, cl)
			}
			is, _ := ID(short)
			il, _ := ID(long)
			if is != il {
				t.Errorf("ids differ: %s, %s", is, il)
			}
			// The canonical form is itself a request, which normalizes to itself.
			again, err := Canonical(decode(t, string(cs)))
			if err != nil || !bytes.Equal(again, cs) {
				t.Errorf("the canonical form's canonical form differs (%v):\n%s\n%s", err, cs, again)
			}
		})
	}
}

// TestCanonicalDocuments: the key order and the whitespace of embedded documents (model,
// cluster, architecture config) do not change the id.
func TestCanonicalDocuments(t *testing.T) {
	model1 := `{"name":"toy","layers":[{"name":"a","forward_seconds":0.001,"param_bytes":1024},{"name":"b","forward_seconds":0.002}]}`
	model2 := `{
	  "layers": [ { "param_bytes": 1024, "forward_seconds": 0.001, "name": "a" },
	              { "forward_seconds": 0.002, "name": "b" } ],
	  "name": "toy"
	}`
	cluster1 := `{"devices":[{"name":"a100-80gb"},{"name":"a100-80gb"}],"links":[{"latency_seconds":3e-6,"bytes_per_second":300e9}]}`
	cluster2 := "{ \"links\" : [ {\"bytes_per_second\": 300e9, \"latency_seconds\": 3e-6} ],\n\t\"devices\": [{\"name\": \"a100-80gb\"}, {\"name\": \"a100-80gb\"}] }"
	config1 := `{"model_type":"gpt2","n_embd":256,"n_head":4,"n_layer":2,"n_positions":512,"vocab_size":1000}`
	config2 := `{ "vocab_size": 1000, "n_positions": 512,
	  "n_layer": 2, "n_head": 4, "n_embd": 256, "model_type": "gpt2" }`
	pairs := []struct{ name, a, b string }{
		{"model and cluster documents",
			`{"model":{"document":` + model1 + `},"cluster":{"document":` + cluster1 + `}}`,
			`{"model":{"document":` + model2 + `},"cluster":{"document":` + cluster2 + `}}`},
		{"architecture config",
			`{"model":{"architecture":{"config":` + config1 + `}},"cluster":{"device":"a100-80gb","count":2}}`,
			`{"model":{"architecture":{"config":` + config2 + `}},"cluster":{"device":"a100-80gb","count":2}}`},
		{"a document as an object or as the text of one",
			`{"model":{"document":` + model1 + `},"cluster":{"document":` + cluster1 + `}}`,
			`{"model":{"document":` + strconv.Quote(model2) + `},"cluster":{"document":` + strconv.Quote(cluster2) + `}}`},
		{"request keys and whitespace",
			`{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":4}}`,
			"{\n  \"cluster\": {\"count\": 4, \"device\": \"a100-80gb\"},\n  \"model\": {\"example\": \"gpt2-medium\"}\n}\n"},
	}
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			ia, err := ID(decode(t, p.a))
			if err != nil {
				t.Fatal(err)
			}
			ib, err := ID(decode(t, p.b))
			if err != nil {
				t.Fatal(err)
			}
			if ia != ib {
				t.Errorf("ids differ: %s, %s", ia, ib)
			}
		})
	}
}

// TestIDDiffers: a request that would plan differently has another id.
func TestIDDiffers(t *testing.T) {
	base := `{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":4}`
	variants := []string{
		base + `}`,
		base + `,"schedule":{"microbatches":32}}`,
		base + `,"schedule":{"name":"gpipe"}}`,
		base + `,"training":{"recompute":"full"}}`,
		base + `,"memory_proportion":0.9}`,
		base + `,"objective":"compute+transfer"}`,
		base + `,"boundaries":[0,7,14,21,26]}`,
		base + `,"events":true}`,
		base + `,"training":{"mode":"inference"}}`,
		`{"model":{"example":"gpt2-medium"},"cluster":{"device":"h100-sxm","count":4}}`,
		`{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":4,"link":"pcie4"}}`,
		`{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":5}}`,
		`{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":8},"parallelism":{"data":2}}`,
		`{"model":{"example":"gpt2-medium","name":"renamed"},"cluster":{"device":"a100-80gb","count":4}}`,
	}
	seen := map[string]int{}
	for i, v := range variants {
		id, err := ID(decode(t, v))
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(id) {
			t.Errorf("id %q is not 64 hex digits", id)
		}
		if j, ok := seen[id]; ok {
			t.Errorf("requests %d and %d have the same id:\n%s\n%s", j, i, variants[j], v)
		}
		seen[id] = i
	}
}

// TestIDIsRunsID: the result carries the request's id, and the id hashes the canonical
// bytes with the planner's version.
func TestIDIsRunsID(t *testing.T) {
	r := decode(t, `{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":4}}`)
	id, err := ID(r)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Canonical(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := contentID(c); id != want {
		t.Errorf("ID %s, want contentID of the canonical bytes %s", id, want)
	}
	if res := run(t, r); res.ID != id || res.PlannerVersion != PlannerVersion || res.Version != wire.Version {
		t.Errorf("result id %s, planner %s, version %d; want %s, %s, %d", res.ID, res.PlannerVersion, res.Version, id, PlannerVersion, wire.Version)
	}
}

// TestInvalidHasNoID: an invalid request has no canonical form and no id.
func TestInvalidHasNoID(t *testing.T) {
	r := decode(t, `{"model":{"example":"gpt2-medium"}}`)
	if c, err := Canonical(r); err == nil {
		t.Errorf("Canonical of an invalid request: %s", c)
	}
	if id, err := ID(r); err == nil {
		t.Errorf("ID of an invalid request: %s", id)
	}
}

// TestRunNormalizedIsRun: a request and its normalized form have one id, so a cache
// keyed by it may hold the result of either: they must give the same result, byte for
// byte, notes included.
func TestRunNormalizedIsRun(t *testing.T) {
	requests := []string{
		`{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":4}}`,
		`{"model":{"example":"gpt2-medium"},"cluster":{"device":"h100-sxm","count":9},"parallelism":{"pipeline":4,"data":2,"zero":1}}`,
		`{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":2},"schedule":{"name":"inference"}}`,
		`{"model":{"document":` + vgg16(t) + `},"cluster":{"device":"a100-80gb","count":4}}`,
		`{"model":{"document":` + vgg16(t) + `},"cluster":{"device":"a100-80gb","count":4},"training":{"mode":"inference"}}`,
		`{"model":{"architecture":{"name":"gpt2"}},"cluster":{"device":"a100-80gb","count":4},"schedule":{"name":"interleaved:2"}}`,
		`{"model":{"architecture":{"name":"gpt2"}},"cluster":{"device":"a100-80gb","count":4},"schedule":{"name":"Interleaved-PyTorch:2","microbatches":4}}`,
		`{"model":{"architecture":{"name":"llama-3.2-1b"}},"cluster":{"device":"h100-sxm","count":4},"schedule":{"name":"zb-h1"},"training":{"recompute":"selective"}}`,
		`{"model":{"example":"gpt2-medium"},"cluster":{"document":` + twoDevices + `},"parallelism":{"data":2}}`,
	}
	for _, s := range requests {
		r := decode(t, s)
		n, err := Normalize(r)
		if err != nil {
			t.Fatalf("%.100s: %v", s, err)
		}
		a, err := json.Marshal(run(t, r))
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(run(t, n))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%.100s: the request and its normalized form give different results:\n%s\n%s", s, a, b)
		}
	}
}

// TestRunChecksContext: Run stops before planning when its context is done.
func TestRunChecksContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := decode(t, `{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":4}}`)
	if res, err := Run(ctx, r); err != context.Canceled || res != nil {
		t.Errorf("Run on a cancelled context: %v, %v", res, err)
	}
}
