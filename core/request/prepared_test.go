package request

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"pipeplan/core/load"
	"pipeplan/core/wire"
)

// TestWithIsRun: a variant of a prepared request (With) plans to the same result, id
// included, as the request with those knobs prepared from nothing; its Request replays
// to it alone; Plan gives the same result without the id.
func TestWithIsRun(t *testing.T) {
	tests := []struct {
		name, base string
		knobs      func(k Knobs) Knobs
	}{
		{"profile, more stages", `{"model":{"example":"gpt2-medium"},"cluster":{"device":"h100-sxm","count":2}}`,
			func(k Knobs) Knobs {
				k.Parallelism = wire.Parallelism{Pipeline: 4, Data: 2}
				k.Count, k.Schedule = 0, wire.Schedule{Name: "gpipe"}
				return k
			}},
		{"profile scaled to 4 samples", `{"model":{"example":"gpt2-medium"},"cluster":{"device":"h100-sxm","count":2}}`,
			func(k Knobs) Knobs { k.Schedule = wire.Schedule{MicrobatchSize: 4}; return k }},
		{"profile document, full recomputation", `{"model":{"document":` + vgg16(t) + `},"cluster":{"device":"a100-80gb","count":4}}`,
			func(k Knobs) Knobs { k.Recompute, k.MemoryProportion = "full", 0.5; return k }},
		{"PipeDream profile scaled to 8 samples, zero1", `{"model":{"document":` + vgg16(t) + `},"cluster":{"device":"a100-80gb","count":4}}`,
			func(k Knobs) Knobs {
				k.Parallelism, k.Count, k.Schedule = wire.Parallelism{Pipeline: 2, Data: 2, Sharding: "zero1"}, 0, wire.Schedule{MicrobatchSize: 8}
				return k
			}},
		{"architecture, tensor parallel and zero3", `{"model":{"architecture":{"name":"llama-3.2-1b"}},"cluster":{"device":"h100-sxm","count":4}}`,
			func(k Knobs) Knobs {
				k.Parallelism = wire.Parallelism{Pipeline: 2, Data: 2, Tensor: 2, Sharding: "zero3"}
				k.Count = 0
				return k
			}},
		{"architecture, a given split", `{"model":{"architecture":{"name":"gpt2"}},"cluster":{"device":"a100-80gb","count":4}}`,
			func(k Knobs) Knobs { k.Boundaries = []int{0, 3, 7, 10, 15}; return k }},
		{"cluster document", `{"model":{"example":"gpt2-medium"},"cluster":{"document":` + twoDevices + `}}`,
			func(k Knobs) Knobs { k.Schedule.Name, k.Schedule.Microbatches = "zb-h1", 6; return k }},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, err := Prepare(decode(t, tt.base))
			if err != nil {
				t.Fatal(err)
			}
			k := tt.knobs(base.Knobs())
			v, err := base.With(k)
			if err != nil {
				t.Fatal(err)
			}
			got, err := v.Run(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// The same request, built from the base's normalized form and prepared anew.
			q := base.Request()
			q.Parallelism, q.Cluster.Count, q.Schedule, q.Training.Recompute = k.Parallelism, k.Count, k.Schedule, k.Recompute
			q.MemoryProportion, q.Boundaries, q.Partition, q.Events = k.MemoryProportion, k.Boundaries, k.Partition, k.Events
			if k.Schedule.MicrobatchSize != base.Knobs().Schedule.MicrobatchSize {
				q = v.Request() // a scaled profile: its request holds the scaled document
			}
			want := run(t, q)
			replay := run(t, v.Request())
			a, b, c := mustJSON(t, got), mustJSON(t, want), mustJSON(t, replay)
			if a != b || a != c {
				t.Errorf("With:\n%.600s\nthe request prepared anew:\n%.600s\nits Request replayed:\n%.600s", a, b, c)
			}
			if id, _ := ID(v.Request()); got.ID != id || got.ID == "" {
				t.Errorf("the variant's id %q, its request's %q", got.ID, id)
			}
			planned, err := v.Plan(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if planned.ID != "" {
				t.Errorf("Plan gave the id %q", planned.ID)
			}
			planned.ID = got.ID
			if mustJSON(t, planned) != a {
				t.Errorf("Plan differs from Run but for the id")
			}
			// The base is as it was: its variants share what it built.
			again, err := Run(ctx, decode(t, tt.base))
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := base.Run(ctx); mustJSON(t, b) != mustJSON(t, again) {
				t.Errorf("the base plans differently after a variant")
			}
		})
	}
}

// TestScaledProfileRequest: a profile planned at another microbatch size is scaled to it,
// and the variant's request states the scaled profile (its microbatch_size and times).
func TestScaledProfileRequest(t *testing.T) {
	base, err := Prepare(decode(t, `{"model":{"example":"gpt2-medium"},"cluster":{"device":"h100-sxm","count":2}}`))
	if err != nil {
		t.Fatal(err)
	}
	b0 := base.Knobs().Schedule.MicrobatchSize
	v, err := base.With(Knobs{Parallelism: wire.Parallelism{Pipeline: 2}, Schedule: wire.Schedule{MicrobatchSize: 3 * b0}})
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Model().MicrobatchSize; got != 3*b0 {
		t.Errorf("the variant's model states microbatch size %d, want %d", got, 3*b0)
	}
	if f0, f := base.Model().Layers[1].ForwardSeconds, v.Model().Layers[1].ForwardSeconds; f != 3*f0 {
		t.Errorf("layer 1's forward: %g at %d samples, %g at %d: want 3 times", f0, b0, f, 3*b0)
	}
	r := v.Request()
	if r.Model.Example != "" || len(r.Model.Document) == 0 {
		t.Fatalf("the variant's request names its model %+v, want the scaled document", r.Model)
	}
	// Back to the profile's own size: the example again.
	w, err := v.With(Knobs{Parallelism: wire.Parallelism{Pipeline: 2}, Schedule: wire.Schedule{MicrobatchSize: b0}})
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Request().Model.Example; got != "gpt2-medium" {
		t.Errorf("at the profile's own size the request names %q, want the example", got)
	}
}

// TestPreparedIdentity: a Prepared's canonical form and id are Canonical's and ID's, in
// either order of asking, a large model document (hashed while it is prepared) included.
func TestPreparedIdentity(t *testing.T) {
	for _, tt := range []struct {
		name string
		r    *wire.Request
	}{
		{"example", decode(t, `{"model":{"example":"gpt2-medium"},"cluster":{"device":"h100-sxm","count":2}}`)},
		{"architecture", decode(t, `{"model":{"architecture":{"name":"gpt2"}},"cluster":{"device":"a100-80gb","count":4}}`)},
		{"large document", &wire.Request{Model: wire.ModelSpec{Document: bigProfile(6000)}, Cluster: wire.ClusterSpec{Device: "a100-80gb", Count: 4}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantC, err := Canonical(tt.r)
			if err != nil {
				t.Fatal(err)
			}
			wantID, err := ID(tt.r)
			if err != nil {
				t.Fatal(err)
			}
			for _, idFirst := range []bool{true, false} {
				p, err := Prepare(tt.r)
				if err != nil {
					t.Fatal(err)
				}
				var id string
				if idFirst {
					id, _ = p.ID()
				}
				c, err := p.Canonical()
				if err != nil {
					t.Fatal(err)
				}
				if !idFirst {
					id, _ = p.ID()
				}
				if string(c) != string(wantC) || id != wantID {
					t.Errorf("id first %v: id %s, canonical %.80s; want %s, %.80s", idFirst, id, c, wantID, wantC)
				}
			}
		})
	}
}

// TestWithConcurrent: variants of one Prepared planned at once (they share its loaded
// documents and its cache) plan as they do one at a time. Run with -race.
func TestWithConcurrent(t *testing.T) {
	for _, base := range []string{
		`{"model":{"example":"gpt2-medium"},"cluster":{"document":` + twoDevices + `}}`,
		`{"model":{"architecture":{"name":"gpt2"}},"cluster":{"device":"a100-80gb","count":4}}`,
	} {
		p, err := Prepare(decode(t, base))
		if err != nil {
			t.Fatal(err)
		}
		knobs := func(i int) Knobs {
			k := p.Knobs()
			k.Schedule = wire.Schedule{Name: []string{"1f1b", "gpipe", "zb-h1"}[i%3], Microbatches: 4 + i%5, MicrobatchSize: 1 + i%3}
			k.Recompute = []string{"none", "full"}[i%2]
			k.Parallelism.Data, k.Parallelism.Sharding = 1+i%2, []string{"none", "zero1"}[i%2]
			if k.Parallelism.Data > 1 && p.Request().Cluster.Device != "" {
				k.Count = 0
			}
			return k
		}
		const n = 24
		want := make([]string, n)
		planned := 0
		for i := range n {
			v, err := p.With(knobs(i))
			if err != nil {
				want[i] = err.Error()
				continue
			}
			res, err := v.Run(context.Background())
			want[i] = fmt.Sprint(err) + mustJSON(t, res)
			if err == nil && res.Feasible {
				planned++
			}
		}
		if planned < n/2 {
			t.Fatalf("%.60s: %d of %d variants have a plan: %v", base, planned, n, want)
		}
		got := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				v, err := p.With(knobs(i))
				if err != nil {
					got[i] = err.Error()
					return
				}
				res, err := v.Run(context.Background())
				b, _ := json.Marshal(res)
				got[i] = fmt.Sprint(err) + string(b)
			})
		}
		wg.Wait()
		for i := range n {
			if got[i] != want[i] {
				t.Errorf("%.60s, variant %d: at once\n%.300s\none at a time\n%.300s", base, i, got[i], want[i])
			}
		}
	}
}

// TestAsNative: a Graphcore profile written as native JSON (AsNative) states the
// microbatch size it is planned at and the format it came in (converted_from), and is
// planned as the Graphcore profile is: in training, by Graphcore's auto-pipeline tool's
// one-microbatch rule, to the same result.
func TestAsNative(t *testing.T) {
	doc := `{"layerName": ["a", "b", "c", "d"], "layerType": ["x", "x", "x", "x"], "layerInfo": [` +
		strings.Repeat(`{"cycle": {"forward": 1000, "backward": 2000}, "memory": {"shared": {}, "exclusive": {"code": 1000},
			"inputs": 100, "outputs": 100, "maxTemporary": 100, "curCarryOver": 0, "curActivation": 5000}},`, 3) +
		`{"cycle": {"forward": 1000, "backward": 2000}, "memory": {"shared": {}, "exclusive": {"code": 1000},
			"inputs": 100, "outputs": 100, "maxTemporary": 100, "curCarryOver": 0, "curActivation": 5000}}]}`
	p, err := Prepare(decode(t, `{"model":{"document":`+doc+`},"cluster":{"device":"gc200","count":2}}`))
	if err != nil {
		t.Fatal(err)
	}
	n, err := p.AsNative()
	if err != nil {
		t.Fatal(err)
	}
	r := n.Request()
	if f := load.DetectModel(r.Model.Document); f != load.Native || !strings.Contains(string(r.Model.Document), `"microbatch_size":1`) ||
		!strings.Contains(string(r.Model.Document), `"converted_from":"graphcore"`) {
		t.Errorf("AsNative's document is %s: %.200s", f, r.Model.Document)
	}
	rule := func(pr *Prepared) bool {
		res, err := pr.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(res.Diagnostics, func(d wire.Diagnostic) bool { return d.Code == wire.CodeGraphcoreMemoryRule })
	}
	if !rule(p) || !rule(n) {
		t.Errorf("the tool's memory rule: Graphcore profile %v, its native form %v; want true, true", rule(p), rule(n))
	}
	a, err := p.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, err := n.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	mem := func(r *wire.Result) (out []int64) {
		for _, s := range r.Plan.Stages {
			out = append(out, s.MemoryBytes)
		}
		return out
	}
	if !a.Feasible || a.Step.SamplesPerSecond != b.Step.SamplesPerSecond || !slices.Equal(mem(a), mem(b)) ||
		!slices.Equal(a.Plan.Boundaries, b.Plan.Boundaries) {
		t.Errorf("the Graphcore profile and its native form plan differently: %v %v %v; %v %v %v", a.Step.SamplesPerSecond, mem(a), a.Plan.Boundaries,
			b.Step.SamplesPerSecond, mem(b), b.Plan.Boundaries)
	}
	if again, _ := n.AsNative(); again != n {
		t.Error("AsNative of a native profile is not the same Prepared")
	}
}

// TestScaledKeepsFormat: a variant of a Graphcore or PipeDream profile at another
// microbatch size (With) is planned by the format's rules, as the profile is at its own
// size (Graphcore's auto-pipeline tool's one-microbatch memory rule in training; PipeDream's
// weights only, to which training adds gradients and optimizer state), and says that it
// is scaled; its request's native document states both (converted_from, scaled_from).
// A native document converted from PipeDream's format that states optimizer state is
// refused.
func TestScaledKeepsFormat(t *testing.T) {
	gc := `{"layerName": ["a", "b", "c", "d"], "layerInfo": [` +
		strings.Repeat(`{"cycle": {"forward": 1000, "backward": 2000}, "memory": {"exclusive": {"code": 1000},
			"inputs": 100, "outputs": 100, "maxTemporary": 100, "curActivation": 5000}},`, 3) +
		`{"cycle": {"forward": 1000, "backward": 2000}, "memory": {"exclusive": {"code": 1000},
			"inputs": 100, "outputs": 100, "maxTemporary": 100, "curActivation": 5000}}]}`
	for _, tt := range []struct {
		name, base, from string
		codes            []string
	}{
		{"graphcore", `{"model":{"document":` + gc + `},"cluster":{"device":"gc200","count":2}}`, "graphcore",
			[]string{wire.CodeGraphcoreMemoryRule, wire.CodeProfileScaled}},
		{"pipedream", `{"model":{"document":` + vgg16(t) + `},"cluster":{"device":"a100-80gb","count":2}}`, "pipedream",
			[]string{wire.CodeStateAdded, wire.CodeProfileScaled}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base, err := Prepare(decode(t, tt.base))
			if err != nil {
				t.Fatal(err)
			}
			k := base.Knobs()
			k.Schedule.MicrobatchSize = 4
			v, err := base.With(k)
			if err != nil {
				t.Fatal(err)
			}
			doc := string(v.Request().Model.Document)
			for _, want := range []string{`"converted_from":"` + tt.from + `"`, `"scaled_from":1`, `"microbatch_size":4`} {
				if !strings.Contains(doc, want) {
					t.Errorf("the scaled request's document has no %s: %.300s", want, doc)
				}
			}
			res := run(t, v.Request())
			for _, code := range tt.codes {
				if !slices.ContainsFunc(res.Diagnostics, func(d wire.Diagnostic) bool { return d.Code == code }) {
					t.Errorf("the scaled profile's plan has no %s note: %+v", code, res.Diagnostics)
				}
			}
			if res.Model.Format != tt.from {
				t.Errorf("the scaled profile is planned as %q, want %q", res.Model.Format, tt.from)
			}
		})
	}
	_, err := Prepare(decode(t, `{"model":{"document":{"converted_from":"pipedream","layers":[{"name":"a","forward_seconds":1,"param_bytes":8,"optimizer_bytes":16}]}},"cluster":{"device":"a100-80gb"}}`))
	if !hasFieldError(err, "model.document", "layers[0] states grad_bytes or optimizer_bytes") {
		t.Errorf("a PipeDream conversion with optimizer state: %v", err)
	}
}
