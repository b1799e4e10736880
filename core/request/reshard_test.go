package request

import (
	"testing"

	"pipeplan/core/wire"
)

// TestDefaultReshard: parallelism.reshard's default is step exactly where a training
// step of an architecture has pipeline stages (torchtitan's apply_fsdp with
// fsdp_reshard_after_forward "default" and PP on), else layer; the normal form states
// it for zero3 (fsdp) and hsdp only, keeps a given value, and a pipeline laid out from
// cluster.count takes the rule from the stages that follow from it.
func TestDefaultReshard(t *testing.T) {
	for _, c := range []struct {
		stages             int
		architecture, want bool // want: step
	}{{1, true, false}, {2, true, true}, {8, true, true}, {2, false, false}, {0, true, false}} {
		got := DefaultReshard(c.stages, c.architecture, true)
		if want := map[bool]string{true: ReshardStep, false: ReshardLayer}[c.want]; got != want {
			t.Errorf("DefaultReshard(%d, architecture %v, training) = %q, want %q", c.stages, c.architecture, got, want)
		}
		if got := DefaultReshard(c.stages, c.architecture, false); got != ReshardLayer {
			t.Errorf("DefaultReshard(%d, architecture %v, inference) = %q, want layer", c.stages, c.architecture, got)
		}
	}
	profile := func(r *wire.Request) *wire.Request {
		r.Model = wire.ModelSpec{Example: "gpt2-medium"}
		return r
	}
	for _, c := range []struct {
		name string
		req  *wire.Request
		want string
	}{
		{"zero3, one stage", shardedLlama(1, 8, "zero3", ""), ReshardLayer},
		{"zero3, four stages", shardedLlama(4, 8, "zero3", ""), ReshardStep},
		{"fsdp, two stages", shardedLlama(2, 4, "fsdp", ""), ReshardStep},
		{"hsdp, two stages", func() *wire.Request {
			r := shardedLlama(2, 4, "hsdp", "")
			r.Parallelism.ShardGroup = 2
			return r
		}(), ReshardStep},
		{"zero3, four stages, layer given", shardedLlama(4, 8, "zero3", ReshardLayer), ReshardLayer},
		{"zero3, one stage, step given", shardedLlama(1, 8, "zero3", ReshardStep), ReshardStep},
		{"zero3, stages from cluster.count", func() *wire.Request {
			r := shardedLlama(0, 2, "zero3", "")
			r.Cluster.Count = 8
			return r
		}(), ReshardStep},
		{"zero2, four stages", shardedLlama(4, 8, "zero2", ""), ""},
		{"none, four stages", shardedLlama(4, 8, "", ""), ""},
		{"profile, zero3, four stages", profile(shardedLlama(4, 2, "zero3", "")), ReshardLayer},
	} {
		n, err := Normalize(c.req)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := n.Parallelism.Reshard; got != c.want {
			t.Errorf("%s: normal form's reshard %q, want %q", c.name, got, c.want)
		}
		// The normal form plans as the request does: the stated default is a fixed point.
		again, err := Normalize(n)
		if err != nil || again.Parallelism.Reshard != n.Parallelism.Reshard {
			t.Errorf("%s: normalizing the normal form again gives %v, %v", c.name, again, err)
		}
	}
}

// shardedLlama is llamaRequest(p, d, 1) with a sharding and a reshard ("": not given).
func shardedLlama(p, d int, sharding, reshard string) *wire.Request {
	r := llamaRequest(p, d, 1)
	r.Parallelism.Sharding, r.Parallelism.Reshard = sharding, reshard
	return r
}
