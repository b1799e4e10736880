package evaluate

import (
	"context"
	"testing"

	"pipeplan/core/request"
	"pipeplan/core/search"
)

// TestSearchKeepsUserbuffersConfig: the base request's parallelism.tp_comm_overlap_config
// reaches every candidate with tensor parallelism, of its name's tensor degree or not
// (core takes a config at another degree: Transformer Engine gets its per-GEMM
// settings, not the name's shape, and Megatron-Bridge's GB300 Llama 3.1 405B recipes
// run a tp4 config at TP 2), none is left out for it (Refuses), and the best's request
// names it where it has tensor parallelism and plans the search's step.
func TestSearchKeepsUserbuffersConfig(t *testing.T) {
	const cfg = "ub_cfg_h100_h6144_tp2_mbs2_seqlen2048"
	q, err := search.DecodeQuery([]byte(`{"request": {"model": {"architecture": {"config": {"model_type": "gpt2", "n_embd": 6144, "n_head": 48, "n_layer": 4, "n_positions": 2048, "vocab_size": 50257},
		"seq": 2048, "framework": "megatron"}},
		"cluster": {"device": "h100-sxm", "devices_per_node": 8},
		"parallelism": {"sequence_parallel": true, "overlap_tensor_comm": "userbuffers", "tp_comm_overlap_config": "` + cfg + `"}},
		"max_devices": 8, "zero": 1, "microbatches": 8, "microbatch_size": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := New(q.Request)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tensor int
		refuse bool
	}{{1, false}, {2, false}, {4, false}, {8, false}} {
		if got := ev.Refuses(search.Config{Pipeline: 1, Data: 8 / c.tensor, Tensor: c.tensor}); got != c.refuse {
			t.Errorf("tensor %d: Refuses %v, want %v", c.tensor, got, c.refuse)
		}
	}
	a, err := RunQuery(context.Background(), q, search.Options{Exhaustive: true})
	if err != nil {
		t.Fatal(err)
	}
	if a.Best == nil {
		t.Fatalf("no best: %+v", a.Stats)
	}
	p := a.BestRequest.Parallelism
	if p.Tensor > 1 && p.TPCommOverlapConfig != cfg || p.Tensor == 1 && p.TPCommOverlapConfig != "" {
		t.Errorf("the best's tensor %d with config %q", p.Tensor, p.TPCommOverlapConfig)
	}
	res, err := request.Run(context.Background(), a.BestRequest)
	if err != nil || res.Step == nil || res.Step.StepSeconds != a.Best.StepSeconds {
		t.Errorf("best_request plans %v (%v), the search's best %v s", res, err, a.Best.StepSeconds)
	}
}
