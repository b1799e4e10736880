package request

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/wire"
)

// TestPipelineStageBufferBytes: PyTorch's PipelineStage holds beside its activations m
// input receive buffers (f of them already the kept inputs), m output-gradient receive
// buffers and its f outputs awaiting their backward: (m - f) + m + f = 2m boundary
// tensors, whatever f.
func TestPipelineStageBufferBytes(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		m        int
		boundary int64
		want     int64
	}{
		{8, 128 * mib, 2 << 30}, // torchtitan's 405B, Table 5: 4 x 8,192 tokens x 16,384 x 2 B over TP 8
		{1, 32 * mib, 64 * mib},
		{0, 32 * mib, 0},
		{8, 0, 0},
	} {
		if got := cluster.PipelineStageBufferBytes(c.m, c.boundary); got != c.want {
			t.Errorf("PipelineStageBufferBytes(%d, %d) = %d, want %d", c.m, c.boundary, got, c.want)
		}
		// The closed form against counting the tensors at every f a 1F1B stage may hold.
		for f := 1; f <= c.m; f++ {
			inputs, grads, outputs := int64(c.m-f), int64(c.m), int64(f)
			if got := cluster.PipelineStageBufferBytes(c.m, c.boundary); got != (inputs+grads+outputs)*c.boundary {
				t.Errorf("m %d, f %d: %d, counted %d", c.m, f, got, (inputs+grads+outputs)*c.boundary)
			}
		}
	}
}

// TestPipelineStageBuffersPlanned: a training step on pipeline stages under eager
// PyTorch or torch.compile holds, on every stage (every chunk of an interleaved device),
// the buffers of its microbatches' boundary (Llama 3 8B, 4,096 tokens of 4,096 values
// in 16 bits: 32 MiB a sample), shown as its own part of the stage's memory; Megatron-LM's
// runtime, one stage and inference hold none. Each is planned the same through a Cache
// shared by the cases.
func TestPipelineStageBuffersPlanned(t *testing.T) {
	const boundary = 4096 * 4096 * 2
	cache := NewCache()
	for _, c := range []struct {
		name string
		mod  func(r *wire.Request)
		want int64
	}{
		{"eager, 1f1b, m 8", func(r *wire.Request) {}, 2 * 8 * boundary},
		{"eager, 1f1b, m 16", func(r *wire.Request) { r.Schedule.Microbatches = 16 }, 2 * 16 * boundary},
		{"eager, microbatches of 2", func(r *wire.Request) { r.Schedule.MicrobatchSize = 2 }, 2 * 8 * 2 * boundary},
		{"compiled", func(r *wire.Request) { r.Model.Architecture.Framework = cluster.Compiled }, 2 * 8 * boundary},
		{"eager, interleaved-pytorch:2", func(r *wire.Request) { r.Schedule.Name = "interleaved-pytorch:2" }, 2 * 8 * boundary},
		{"megatron", func(r *wire.Request) { r.Model.Architecture.Framework = cluster.Megatron }, 0},
		{"one stage", func(r *wire.Request) { r.Parallelism.Pipeline, r.Parallelism.Tensor = 1, 4 }, 0},
		{"inference", func(r *wire.Request) { r.Training.Mode = wire.ModeInference; r.Schedule.Name = "inference" }, 0},
	} {
		r := llamaRequest(4, 1, 1)
		r.Model.Architecture.Seq = 4096
		c.mod(r)
		res := run(t, r)
		// Planned through one cache twice (the second time on the layers it keeps for
		// this estimate and size, Cache.bufferedLayers, after the other cases' sizes):
		// the same result as without it (but for the id, which a Prepared's plan leaves
		// empty).
		want, _ := json.Marshal(res)
		for range 2 {
			pr, err := cache.Prepare(r)
			if err != nil {
				t.Fatal(err)
			}
			cached, err := pr.Plan(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			cached.ID = res.ID
			if got, _ := json.Marshal(cached); !bytes.Equal(got, want) {
				t.Errorf("%s: planned through a cache:\n%s\nwithout:\n%s", c.name, got, want)
			}
		}
		if res.Plan == nil || len(res.Plan.Stages) == 0 {
			t.Errorf("%s: no stages (%v)", c.name, res.Diagnostics)
			continue
		}
		for i, st := range res.Plan.Stages {
			if got := st.Memory.PipelineBufferBytes; got != c.want || st.Memory.OtherBytes != 0 {
				t.Errorf("%s: stage %d holds %d bytes of pipeline buffers (other memory %d), want %d", c.name, i, got, st.Memory.OtherBytes, c.want)
			}
			if st.Memory.Total() != st.MemoryBytes {
				t.Errorf("%s: stage %d breakdown adds up to %d, not its %d", c.name, i, st.Memory.Total(), st.MemoryBytes)
			}
		}
	}
}
