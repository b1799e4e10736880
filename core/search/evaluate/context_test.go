package evaluate

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"pipeplan/core/request"
	"pipeplan/core/search"
	"pipeplan/core/wire"
)

// TestLongContextMethodsSearch: a long sequence's default grid (Llama-3.2-1B, s =
// 32,768, on 8 H100s in one node) tries context parallelism in every form core has
// (ring, all-to-all, hierarchical), leaving out the splits core refuses. Checked:
//
//   - Refuses says what core says: with every configuration of the grid (Refuses asked
//     of each), a refused one's request is an error when core runs it, and a kept one's
//     plans;
//   - the search finds exhaustive enumeration's best and Pareto front with no bound
//     broken, and the best's request replans to the same throughput;
//   - feasible candidates use all three forms, so that the grid really mixes them.
func TestLongContextMethodsSearch(t *testing.T) {
	base := &wire.Request{
		Model:   wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.2-1b", Seq: 32768}},
		Cluster: wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 8},
	}
	ev, err := New(base)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ev.Space(wire.SearchKnobs{MaxDevices: 8, GlobalBatch: 8, MaxMicrobatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.Contexts, []int{1, 2, 4, 8}) || !reflect.DeepEqual(s.ContextMethods, []string{"ring", "all-to-all", "hierarchical"}) {
		t.Fatalf("contexts %v in forms %v, want 1, 2, 4, 8 in ring, all-to-all and hierarchical", s.Contexts, s.ContextMethods)
	}
	s.Pipelines, s.ZeROs, s.ShardGroups, s.Recomputes = []int{1, 2}, []int{0, 1}, nil, []string{"none", "full"}

	// Refuses against core, context split by context split (one microbatch of one
	// sample each: the split decides).
	refused, kept := 0, 0
	seen := map[refuseKey]bool{}
	for _, g := range contextSplits(s) {
		if g.Context <= 1 || seen[refuseKey{g.Tensor, g.Context, g.ContextMethod}] {
			continue
		}
		seen[refuseKey{g.Tensor, g.Context, g.ContextMethod}] = true
		q, err := ev.Request(search.Candidate{Config: g, MicrobatchSize: 1})
		if err != nil {
			t.Fatal(err)
		}
		_, runErr := request.Run(context.Background(), q)
		switch no := ev.Refuses(g); {
		case no && runErr == nil:
			t.Errorf("%s: refused, but core plans its request", search.Candidate{Config: g, MicrobatchSize: 1}.String())
		case !no && runErr != nil:
			t.Errorf("%s: kept, but core refuses its request: %v", search.Candidate{Config: g, MicrobatchSize: 1}.String(), runErr)
		case no:
			refused++
		default:
			kept++
		}
	}
	if refused == 0 || kept == 0 {
		t.Errorf("%d context splits refused, %d kept: the grid does not exercise Refuses", refused, kept)
	}

	got, ex := prunedAndExhaustive(t, s, ev)
	if got.Best == nil || ex.Best == nil || got.Best.Candidate != ex.Best.Candidate {
		t.Fatalf("best %v, exhaustive %v", got.Best, ex.Best)
	}
	if got.Stats.BoundViolations+ex.Stats.BoundViolations != 0 || len(got.Pareto) != len(ex.Pareto) {
		t.Errorf("bound violations %d, %d; Pareto %d, exhaustive %d", got.Stats.BoundViolations, ex.Stats.BoundViolations, len(got.Pareto), len(ex.Pareto))
	}
	for i := range min(len(got.Pareto), len(ex.Pareto)) {
		if got.Pareto[i].Candidate != ex.Pareto[i].Candidate {
			t.Errorf("Pareto[%d]: %s, exhaustive %s", i, got.Pareto[i].Candidate, ex.Pareto[i].Candidate)
		}
	}
	forms := map[string]int{}
	for _, o := range ex.Evaluated {
		if o.Feasible && o.Context > 1 {
			forms[o.ContextMethod]++
		}
		if ev.Refuses(o.Config) {
			t.Errorf("%s: planned, but Refuses leaves it out", o.Candidate)
		}
	}
	for _, m := range s.ContextMethods {
		if forms[m] == 0 {
			t.Errorf("no feasible candidate splits the context by %s (feasible by form: %v)", m, forms)
		}
	}
	t.Logf("%d context splits kept, %d refused; feasible by form %v; best %s: %.0f tokens/s; planned %d of %d",
		kept, refused, forms, got.Best.Candidate, got.Best.TokensPerSecond, got.Stats.Evaluated, ex.Stats.Evaluated)
	replan(t, ev, got.Best)
}

// contextSplits are the space's context splits (c >= 2, each method, each tensor degree
// whose stage fits the node's devices as the grid requires), each as a configuration of
// one stage and one replica.
func contextSplits(s search.Space) []search.Config {
	var out []search.Config
	for _, c := range s.Contexts {
		if c <= 1 {
			continue
		}
		for _, m := range s.ContextMethods {
			for _, tt := range s.Tensors {
				if c*tt > s.MaxDevices || (s.StageGroup > 0 && s.StageGroup%(c*tt) != 0 && (c*tt)%s.StageGroup != 0) {
					continue
				}
				out = append(out, search.Config{Pipeline: 1, Data: 1, Tensor: tt, Context: c, ContextMethod: m,
					Schedule: "1f1b", Recompute: "none", MemoryProportion: 1})
			}
		}
	}
	return out
}

// TestExplicitContextMethodsSearch: context degrees given to the search (a sequence
// below the long sequences' default, Llama-3.2-1B with s = 8,192 on 8 H100s in one
// node) are tried in every form core has, as the long sequences' own are, or in the one
// the base request names; each candidate's label and wire form carry its method. The
// search finds exhaustive enumeration's best and Pareto front with no bound broken, and
// the best's request replans to the same throughput.
func TestExplicitContextMethodsSearch(t *testing.T) {
	for _, tc := range []struct {
		name    string
		knobs   wire.SearchKnobs
		method  string // the base request's context_method
		methods []string
	}{
		{"degrees", wire.SearchKnobs{MaxDevices: 8, GlobalBatch: 8, MaxMicrobatchSize: 2, Contexts: []int{1, 2, 4, 8}}, "", searchedContextMethods()},
		{"one degree", wire.SearchKnobs{MaxDevices: 8, GlobalBatch: 8, MaxMicrobatchSize: 2, Context: 4}, "", searchedContextMethods()},
		{"named all-gather", wire.SearchKnobs{MaxDevices: 8, GlobalBatch: 8, MaxMicrobatchSize: 2, Contexts: []int{1, 2, 4}}, "all-gather", []string{"all-gather"}},
		{"named", wire.SearchKnobs{MaxDevices: 8, GlobalBatch: 8, MaxMicrobatchSize: 2, Contexts: []int{1, 2, 4}}, "all-to-all", []string{"all-to-all"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := &wire.Request{
				Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.2-1b", Seq: 8192}},
				Cluster:     wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 8},
				Parallelism: wire.Parallelism{ContextMethod: tc.method},
			}
			ev, err := New(base)
			if err != nil {
				t.Fatal(err)
			}
			s, err := ev.Space(tc.knobs)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s.ContextMethods, tc.methods) {
				t.Fatalf("context degrees %v in forms %v, want %v", s.Contexts, s.ContextMethods, tc.methods)
			}
			s.Pipelines, s.ZeROs, s.ShardGroups, s.Recomputes = []int{1, 2}, []int{0, 1}, nil, []string{"none", "full"}
			got, ex := prunedAndExhaustive(t, s, ev)
			if got.Best == nil || ex.Best == nil || got.Best.Candidate != ex.Best.Candidate {
				t.Fatalf("best %v, exhaustive %v", got.Best, ex.Best)
			}
			if got.Stats.BoundViolations+ex.Stats.BoundViolations != 0 || len(got.Pareto) != len(ex.Pareto) {
				t.Errorf("bound violations %d, %d; Pareto %d, exhaustive %d", got.Stats.BoundViolations, ex.Stats.BoundViolations, len(got.Pareto), len(ex.Pareto))
			}
			for i := range min(len(got.Pareto), len(ex.Pareto)) {
				if got.Pareto[i].Candidate != ex.Pareto[i].Candidate {
					t.Errorf("Pareto[%d]: %s, exhaustive %s", i, got.Pareto[i].Candidate, ex.Pareto[i].Candidate)
				}
			}
			forms := map[string]int{}
			for _, o := range ex.Evaluated {
				if !o.Feasible || o.Context <= 1 {
					continue
				}
				forms[o.ContextMethod]++
				if label := o.Candidate.String(); !strings.Contains(label, fmt.Sprintf(" c%d:%s ", o.Context, o.ContextMethod)) {
					t.Errorf("%s: the label does not name the context method %q", label, o.ContextMethod)
				}
			}
			for _, m := range tc.methods {
				if forms[m] == 0 {
					t.Errorf("no feasible candidate splits the context by %s (feasible by form: %v)", m, forms)
				}
			}
			if len(forms) != len(tc.methods) {
				t.Errorf("feasible candidates by form %v, want only %v", forms, tc.methods)
			}
			answer, err := json.Marshal(got.Best)
			if err != nil {
				t.Fatal(err)
			}
			if got.Best.Context > 1 && !strings.Contains(string(answer), `"context_method":"`+got.Best.ContextMethod+`"`) {
				t.Errorf("the best's answer does not name its context method: %s", answer)
			}
			t.Logf("feasible by form %v; best %s: %.0f tokens/s; planned %d of %d",
				forms, got.Best.Candidate, got.Best.TokensPerSecond, got.Stats.Evaluated, ex.Stats.Evaluated)
			replan(t, ev, got.Best)
		})
	}
}

// TestContextInnerSearch: the base request's parallelism.context_inner is checked by
// core's rule (a group that does not divide the context degree, or without the
// hierarchical method, is refused naming the field under "request"), and its
// hierarchical candidates take it: on 8 H100s in a node with 8-way hierarchical context
// parallelism, every candidate's request states the given group, and groups of 2 and 4
// (rings of 4 and 2 steps) give different best throughputs. A given context degree core
// never takes (3 devices, which do not divide the node) is refused naming "context".
func TestContextInnerSearch(t *testing.T) {
	query := func(c, inner int, method string) *wire.SearchQuery {
		return &wire.SearchQuery{
			Request: &wire.Request{
				Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.2-1b", Seq: 8192}},
				Cluster:     wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 8},
				Parallelism: wire.Parallelism{Context: c, ContextMethod: method, ContextInner: inner},
			},
			SearchKnobs: wire.SearchKnobs{MaxDevices: 8, Context: c, Tensor: 1, MaxMicrobatchSize: 2},
		}
	}
	for _, tc := range []struct {
		name          string
		c, inner      int
		method, field string
	}{
		{"inner does not divide", 4, 3, "hierarchical", "request.parallelism.context_inner"},
		{"inner without hierarchical", 4, 2, "ring", "request.parallelism.context_inner"},
		{"degree never applies", 3, 0, "", "context"},
	} {
		_, err := RunQuery(context.Background(), query(tc.c, tc.inner, tc.method), search.Options{})
		if err == nil || !strings.HasPrefix(err.Error(), tc.field+":") {
			t.Errorf("%s: error %v, want one naming %s", tc.name, err, tc.field)
		}
	}
	best := map[int]float64{}
	for _, inner := range []int{2, 4} {
		q := query(8, inner, "hierarchical")
		ev, err := New(q.Request)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ev.Space(q.SearchKnobs)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := search.Run(context.Background(), s, ev, search.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Best == nil {
			t.Fatalf("inner %d: nothing fits", inner)
		}
		for _, o := range rep.Evaluated {
			r, err := ev.Request(o.Candidate)
			if err != nil {
				t.Fatal(err)
			}
			if r.Parallelism.ContextInner != inner {
				t.Fatalf("inner %d: %s's request has context_inner %d", inner, o.Candidate, r.Parallelism.ContextInner)
			}
		}
		best[inner] = rep.Best.SamplesPerSecond
	}
	if best[2] == best[4] {
		t.Errorf("groups of 2 and 4 both give %v samples/s: the group is not used", best[2])
	}
	t.Logf("best samples/s by all-to-all group: %v", best)
}
