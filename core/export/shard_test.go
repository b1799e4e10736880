package export_test

import (
	"slices"
	"strings"
	"testing"

	"pipeplan/core/export"
	"pipeplan/core/wire"
)

// TestShardingAndContextExports: Megatron-LM states the context-parallel size (and the
// all-to-all or hierarchical exchange) and the distributed optimizer it was priced with,
// exactly; the PyTorch export's device mesh has the context-parallel dimension; a
// sharding or a context split a framework cannot run makes the export not exact, with
// a note that says what it runs instead. PyTorch's note gives fully_shard the plan's
// resharding (reshard_after_forward=False where reshard is step) and reduce dtype
// (MixedPrecisionPolicy's reduce_dtype fp32), and says where the plan did not price
// fully_shard's copies.
func TestShardingAndContextExports(t *testing.T) {
	base := func(sharding string, cp int, method string) *wire.Request {
		return &wire.Request{
			Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: "meta-llama-3-8b", Seq: 16384}},
			Cluster:     wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 8},
			Parallelism: wire.Parallelism{Pipeline: 2, Data: 4, Tensor: 2, Context: cp, ContextMethod: method, Sharding: sharding},
			Schedule:    wire.Schedule{Name: "1f1b", Microbatches: 8},
		}
	}
	for _, c := range []struct {
		name    string
		r       *wire.Request
		format  wire.Format
		exact   bool
		want    []string
		notWant []string
	}{
		{"megatron cp ring zero1", base("zero1", 4, ""), wire.Megatron, true,
			[]string{"--context-parallel-size 4\n", "--use-distributed-optimizer", "# Launch on 64 GPUs: tensor 2 x context 4 x pipeline 2 x data 4"},
			[]string{"--cp-comm-type"}},
		{"megatron cp all-to-all", base("", 2, "all-to-all"), wire.Megatron, true,
			[]string{"--context-parallel-size 2\n", "--cp-comm-type a2a"}, []string{"--use-distributed-optimizer"}},
		{"megatron cp all-gather", base("", 4, "all-gather"), wire.Megatron, false,
			[]string{"--context-parallel-size 4\n", "--cp-comm-type all_gather", "Megatron-LM's --cp-comm-type all_gather"}, nil},
		{"megatron cp hierarchical", base("", 4, "hierarchical"), wire.Megatron, true,
			[]string{"--context-parallel-size 4\n", "--cp-comm-type a2a+p2p", "--hierarchical-context-parallel-sizes 2 2\n"}, nil},
		{"pytorch cp mesh", base("", 4, ""), wire.PyTorch, false,
			[]string{"CONTEXT_PARALLEL = 4", `init_device_mesh(device_type, (NUM_RANKS, DATA_PARALLEL, CONTEXT_PARALLEL, TENSOR_PARALLEL), mesh_dim_names=("pp", "dp", "cp", "tp"))`, "All 64 ranks", "context_parallel(mesh[\"cp\"]"}, nil},
		{"json hierarchical", base("", 4, "hierarchical"), wire.JSON, true, []string{`"context_method": "hierarchical"`, `"context_inner": 2`}, nil},
		{"megatron zero3", base("zero3", 1, ""), wire.Megatron, false,
			[]string{"--use-distributed-optimizer", "NOT EXACT"}, []string{"--context-parallel-size"}},
		{"deepspeed cp", base("zero1", 2, ""), wire.DeepSpeed, false, []string{`"stage": 1`, "DistributedAttention"}, nil},
		// On 2 stages the plan's resharding is core's default, step (request.DefaultReshard:
		// torchtitan's with PP); layer where the request says so.
		{"pytorch zero3", base("zero3", 1, ""), wire.PyTorch, false, []string{"fully_shard", "sharding ZeRO-3", "reshard_after_forward=false",
			"the plan did not price fully_shard's copies"}, []string{"reduce_dtype"}},
		{"pytorch zero3 fsdp2", fsdp2(base("zero3", 1, ""), "fp32", "layer"), wire.PyTorch, false, []string{"reshard_after_forward=true",
			"mp_policy=MixedPrecisionPolicy(param_dtype=PARAM_DTYPE, reduce_dtype=torch.float32), as priced"}, []string{"did not price fully_shard's copies"}},
		{"pytorch zero3 fsdp2 reshard step", fsdp2(base("zero3", 1, ""), "", "step"), wire.PyTorch, false, []string{"reshard_after_forward=false"},
			[]string{"reduce_dtype", "did not price fully_shard's copies"}},
		{"json", base("hsdp", 2, ""), wire.JSON, true, []string{`"sharding": "hsdp"`, `"shard_group": 2`, `"context": 2`, `"context_method": "ring"`, `"zero": 3`}, []string{`"fully_shard"`, `"reduce_dtype"`}},
		{"json fsdp2", fsdp2(base("zero3", 1, ""), "fp32", "step"), wire.JSON, true, []string{`"sharding": "zero3"`, `"reshard": "step"`, `"reduce_dtype": "fp32"`, `"fully_shard": true`}, nil},
	} {
		in := fromRequest(t, c.r)
		ex, err := export.Make(in, c.format)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if ex.Exact != c.exact {
			t.Errorf("%s: exact %v, want %v", c.name, ex.Exact, c.exact)
		}
		var codes []string
		said := ex.Text // the text, and the notes unwrapped
		for _, n := range ex.Notes {
			codes = append(codes, n.Code)
			said += "\n" + n.Message
		}
		if got := slices.Contains(codes, wire.NoteParallelism); got == c.exact {
			t.Errorf("%s: notes %v: a parallelism note %v, want %v", c.name, codes, got, !c.exact)
		}
		for _, w := range c.want {
			if !strings.Contains(said, w) {
				t.Errorf("%s: the export does not say %q:\n%s", c.name, w, ex.Text)
			}
		}
		for _, w := range c.notWant {
			if strings.Contains(said, w) {
				t.Errorf("%s: the export says %q", c.name, w)
			}
		}
	}
}

// fsdp2 is r with PyTorch FSDP2's fully_shard, the reduce dtype and the resharding given.
func fsdp2(r *wire.Request, reduce, reshard string) *wire.Request {
	r.Parallelism.FullyShard, r.Parallelism.ReduceDType, r.Parallelism.Reshard = true, reduce, reshard
	return r
}

// TestGraphcoreRefusesContext: Keras places whole layers on IPUs, so a plan that splits
// the sequence over devices is refused with the reason, as tensor parallelism is; a
// sharded plan exports one pipeline, not exactly, with a note.
func TestGraphcoreRefusesContext(t *testing.T) {
	in := &export.Input{Model: "m", LayerNames: []string{"a", "b"}, Boundaries: []int{0, 1, 2}, Context: 2}
	if _, err := export.Make(in, wire.Graphcore); err == nil || !strings.Contains(err.Error(), "context parallelism") {
		t.Errorf("context 2: %v", err)
	}
	in.Context, in.ZeRO, in.Sharding, in.Data = 0, 3, "zero3", 2
	ex, err := export.Make(in, wire.Graphcore)
	if err != nil || ex.Exact || len(ex.Notes) == 0 || ex.Notes[0].Code != wire.NoteParallelism {
		t.Errorf("zero3: %v, exact %v, notes %+v", err, ex != nil && ex.Exact, ex)
	}
}
