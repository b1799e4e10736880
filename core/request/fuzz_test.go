package request

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"testing"

	"pipeplan/core/model"
)

// FuzzRun: whatever bytes a front end passes on, Decode and Run return a result or field
// errors, never panic; a result's figures are finite, and the result encodes as JSON.
func FuzzRun(f *testing.F) {
	for _, s := range []string{
		`{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":4}}`,
		`{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":8},"parallelism":{"data":2,"zero":1},"schedule":{"name":"zb-h1"}}`,
		`{"model":{"architecture":{"name":"gpt2","split":"sublayer"}},"cluster":{"device":"h100-sxm","count":4},"schedule":{"name":"interleaved:2"},"training":{"recompute":"selective"}}`,
		`{"model":{"document":{"measured_on":"a100-80gb","microbatch_size":2,"layers":[{"name":"a","forward_seconds":1,"param_bytes":8},{"name":"b","forward_seconds":2,"backward_seconds":1}]}},"cluster":{"document":{"devices":[{"name":"h100-sxm"},{"name":"a100-80gb"}],"links":[{"latency_seconds":1e-6,"bytes_per_second":1e9}]},"data_link":"pcie4"},"parallelism":{"data":3},"boundaries":[0,1,2]}`,
		`{"model":{"document":"node1 -- Input -- forward_compute_time=1.0, backward_compute_time=2.0, activation_size=8.0, parameter_size=4.0\nnode2 -- Linear -- forward_compute_time=1.0, backward_compute_time=2.0, activation_size=8.0, parameter_size=4.0\n\tnode1 -- node2\n"},"cluster":{"device":"a100-80gb","count":2,"free_transfers":true},"schedule":{"name":"inference"}}`,
		`{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":2},"schedule":{"name":"overlap"},"events":true}`,
		`{"model":{"architecture":{"name":"llama-3.2-1b","seq":8192}},"cluster":{"device":"h100-sxm","count":16,"devices_per_node":8},"parallelism":{"data":4,"context":2,"tensor":2,"sharding":"hsdp","shard_group":2}}`,
		`{"model":{"architecture":{"name":"gpt2","seq":1024}},"cluster":{"device":"a100-80gb","count":8},"parallelism":{"data":2,"context":4,"context_method":"all-to-all","sharding":"zero3","prefetch":"none"}}`,
		`{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":8},"parallelism":{"pipeline":4,"data":2,"sharding":"zero2"}}`,
		`{"model":{"architecture":{"config":{"model_type":"nemotron","hidden_size":64,"intermediate_size":128,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"vocab_size":100,"partial_rotary_factor":0.25},"seq":128,"framework":"eager"}},"cluster":{"device":"h100-sxm","count":2},"parallelism":{"tensor":2}}`,
		`{"model":{"architecture":{"name":"gemma-2b","seq":2048}},"cluster":{"device":"h100-sxm","count":8},"parallelism":{"pipeline":2,"data":4,"sharding":"zero3"}}`,
		`{"model":{"architecture":{"name":"llama-3.1-70b","seq":8192,"framework":"cuda-graphs"}},"cluster":{"device":"h100-sxm","count":32,"devices_per_node":8},"parallelism":{"pipeline":8,"tensor":4,"sequence_parallel":true,"overlap_tensor_comm":"userbuffers","tp_comm_overlap_config":"userbuffers_bf16_h100_h8192_tp4_mbs1_seqlen8192"},"training":{"recompute":"full"}}`,
		`{"model":{"architecture":{"name":"gpt2","seq":1024,"framework":"deepspeed"}},"cluster":{"device":"a100-80gb","count":8},"parallelism":{"pipeline":4,"tensor":2},"schedule":{"microbatches":8}}`,
		`{"model":{"architecture":{"name":"qwen3-30b-a3b","seq":256,"framework":"megatron"}},"cluster":{"device":"h100-sxm","count":8},"parallelism":{"data":8,"expert":8,"sharding":"zero1","dp_bucket_bytes":1048576},"training":{"moe_aux_loss":"seq_aux_loss","moe_force_load_balancing":true}}`,
		`{"model":{"architecture":{"name":"gpt2","seq":1024,"attention":"flash1"}},"cluster":{"device":"a100-80gb","count":4},"parallelism":{"data":4,"dp_bucket_bytes":4096}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Decode(data)
		if err != nil {
			var fe *model.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Decode: %v (%T) is not a field error", err, err)
			}
			return
		}
		// Keep the work of one input small: big clusters and schedules are slow, not wrong.
		if r.Cluster.Count > 64 || r.Parallelism.Pipeline > 64 || r.Parallelism.Data > 64 || r.Parallelism.Context > 64 || r.Schedule.Microbatches > 256 {
			return
		}
		res, err := Run(context.Background(), r)
		if err != nil {
			if _, ok := model.AsFieldErrors(err); !ok {
				t.Fatalf("Run: %v (%T) is not field errors", err, err)
			}
			return
		}
		if _, err := json.Marshal(res); err != nil {
			t.Fatalf("the result does not encode: %v", err)
		}
		if st := res.Step; st != nil {
			for _, v := range []float64{st.StepSeconds, st.SamplesPerSecond, st.TokensPerSecond, st.OptimizerSeconds, st.DataParallelAllReduceSeconds, st.TiedAllReduceSeconds,
				st.DataParallelReduceScatterSeconds, st.DataParallelAllGatherSeconds, st.DataParallelExposedSeconds} {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					t.Fatalf("step figure %v: %+v", v, st)
				}
			}
			if st.TokensPerStep < 0 || st.SamplesPerStep < 1 {
				t.Fatalf("step counts: %+v", st)
			}
		}
	})
}
