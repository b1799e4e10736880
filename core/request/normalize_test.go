package request

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/wire"
)

// Requests the tests build on: the bundled GPT-2 profile (native, measured on an A100
// with microbatches of 8), and the bundled GPT-2 architecture.
const (
	example = `"model":{"example":"gpt2-medium"}`
	gpt2    = `"model":{"architecture":{"name":"gpt2"}}`
	a100x4  = `"cluster":{"device":"a100-80gb","count":4}`
)

// twoDevices is a cluster document of two A100s joined by NVLink 3's figures.
const twoDevices = `{"devices":[{"name":"a100-80gb"},{"name":"a100-80gb"}],"links":[{"latency_seconds":3e-6,"bytes_per_second":300e9}]}`

// TestNormalizeDefaults checks each default that Normalize's doc comment lists, one case
// per default: the value a request without the field gets.
func TestNormalizeDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   string
		get  func(r *wire.Request) any
		want any
	}{
		{"version", `{` + example + `,` + a100x4 + `}`,
			func(r *wire.Request) any { return r.Version }, 1},
		{"training.mode: training", `{` + example + `,` + a100x4 + `}`,
			func(r *wire.Request) any { return r.Training.Mode }, wire.ModeTraining},
		{"training.mode: inference with the inference schedule", `{` + example + `,` + a100x4 + `,"schedule":{"name":"inference"}}`,
			func(r *wire.Request) any { return r.Training.Mode }, wire.ModeInference},
		{"training.optimizer: adamw for an architecture", `{` + gpt2 + `,` + a100x4 + `}`,
			func(r *wire.Request) any { return r.Training.Optimizer }, "adamw"},
		{"training.optimizer: adamw for a PipeDream profile", `{"model":{"document":` + vgg16(t) + `},` + a100x4 + `}`,
			func(r *wire.Request) any { return r.Training.Optimizer }, "adamw"},
		{"training.optimizer: none for a profile that states its state", `{` + example + `,` + a100x4 + `}`,
			func(r *wire.Request) any { return r.Training.Optimizer }, ""},
		{"training.optimizer: none for inference", `{` + gpt2 + `,` + a100x4 + `,"training":{"mode":"inference"}}`,
			func(r *wire.Request) any { return r.Training.Optimizer }, ""},
		{"training.precision: mixed for a 16-bit architecture", `{` + gpt2 + `,` + a100x4 + `}`,
			func(r *wire.Request) any { return r.Training.Precision }, "mixed"},
		{"training.precision: pure for an fp32 architecture", `{"model":{"architecture":{"name":"gpt2","dtype":"fp32"}},` + a100x4 + `}`,
			func(r *wire.Request) any { return r.Training.Precision }, "pure"},
		{"training.precision: pure for a PipeDream profile", `{"model":{"document":` + vgg16(t) + `},` + a100x4 + `}`,
			func(r *wire.Request) any { return r.Training.Precision }, "pure"},
		{"training.recompute: none", `{` + example + `,` + a100x4 + `}`,
			func(r *wire.Request) any { return r.Training.Recompute }, "none"},
		{"training.recompute: none for inference", `{` + example + `,` + a100x4 + `,"training":{"mode":"inference"}}`,
			func(r *wire.Request) any { return r.Training.Recompute }, "none"},
		{"cluster.count: pipeline x data", `{` + example + `,"cluster":{"device":"a100-80gb"},"parallelism":{"pipeline":4,"data":2}}`,
			func(r *wire.Request) any { return r.Cluster.Count }, 8},
		{"cluster.link: the device preset's", `{` + example + `,"cluster":{"device":"h100-sxm","count":4}}`,
			func(r *wire.Request) any { return r.Cluster.Link }, "nvlink4"},
		{"parallelism.data", `{` + example + `,` + a100x4 + `}`,
			func(r *wire.Request) any { return r.Parallelism.Data }, 1},
		{"parallelism.pipeline: the devices of a cluster document", `{` + example + `,"cluster":{"document":` + twoDevices + `}}`,
			func(r *wire.Request) any { return r.Parallelism.Pipeline }, 2},
		{"parallelism.pipeline: cluster.count / data", `{` + example + `,"cluster":{"device":"a100-80gb","count":8},"parallelism":{"data":2}}`,
			func(r *wire.Request) any { return r.Parallelism.Pipeline }, 4},
		{"schedule.name: 1f1b for training", `{` + example + `,` + a100x4 + `}`,
			func(r *wire.Request) any { return r.Schedule.Name }, "1f1b"},
		{"schedule.name: inference for inference", `{` + example + `,` + a100x4 + `,"training":{"mode":"inference"}}`,
			func(r *wire.Request) any { return r.Schedule.Name }, "inference"},
		{"schedule.microbatches: 4 per pipeline device", `{` + example + `,"cluster":{"device":"a100-80gb","count":6},"parallelism":{"data":2}}`,
			func(r *wire.Request) any { return r.Schedule.Microbatches }, 12},
		{"schedule.microbatches: the most the simulator takes on 1,024 devices", `{` + example + `,"cluster":{"device":"a100-80gb","count":1024}}`,
			func(r *wire.Request) any { return r.Schedule.Microbatches }, 1024},
		{"schedule.microbatches: the most the simulator takes on 4,000 devices, fewer than the devices", `{` + example + `,"cluster":{"device":"a100-80gb","count":4000}}`,
			func(r *wire.Request) any { return r.Schedule.Microbatches }, 262},
		{"schedule.microbatches: 4 per device on 512, just within the simulator", `{` + example + `,"cluster":{"device":"a100-80gb","count":512}}`,
			func(r *wire.Request) any { return r.Schedule.Microbatches }, 2048},
		{"schedule.microbatches: a multiple of the devices for interleaved:2 on 384", `{` + example + `,"cluster":{"device":"a100-80gb","count":384},"schedule":{"name":"interleaved:2"}}`,
			func(r *wire.Request) any { return r.Schedule.Microbatches }, 1152},
		{"schedule.microbatch_size: the profile's own", `{` + example + `,` + a100x4 + `}`,
			func(r *wire.Request) any { return r.Schedule.MicrobatchSize }, 8},
		{"schedule.microbatch_size: 1 when the profile does not say", `{"model":{"document":` + vgg16(t) + `},` + a100x4 + `}`,
			func(r *wire.Request) any { return r.Schedule.MicrobatchSize }, 1},
		{"schedule.microbatch_size: 1 sequence for an architecture", `{` + gpt2 + `,` + a100x4 + `}`,
			func(r *wire.Request) any { return r.Schedule.MicrobatchSize }, 1},
		{"schedule.weight_grad_fraction: 0.5 for zb-h1", `{` + example + `,` + a100x4 + `,"schedule":{"name":"zb-h1"}}`,
			func(r *wire.Request) any { return r.Schedule.WeightGradFraction }, 0.5},
		{"schedule.weight_grad_fraction: none for 1f1b", `{` + example + `,` + a100x4 + `}`,
			func(r *wire.Request) any { return r.Schedule.WeightGradFraction }, 0.0},
		{"model.architecture.seq: the context", `{` + gpt2 + `,` + a100x4 + `}`,
			func(r *wire.Request) any { return r.Model.Architecture.Seq }, 1024},
		{"model.architecture.seq: at most 4096", `{"model":{"architecture":{"name":"llama-3.2-1b"}},` + a100x4 + `}`,
			func(r *wire.Request) any { return r.Model.Architecture.Seq }, 4096},
		{"model.architecture.dtype", `{` + gpt2 + `,` + a100x4 + `}`,
			func(r *wire.Request) any { return r.Model.Architecture.DType }, "bf16"},
		{"model.architecture.attention", `{` + gpt2 + `,` + a100x4 + `}`,
			func(r *wire.Request) any { return r.Model.Architecture.Attention }, "flash"},
		{"model.architecture.split", `{` + gpt2 + `,` + a100x4 + `}`,
			func(r *wire.Request) any { return r.Model.Architecture.Split }, "block"},
		{"model.architecture.tie", `{` + gpt2 + `,` + a100x4 + `}`,
			func(r *wire.Request) any { return r.Model.Architecture.Tie }, "copy"},
		{"objective", `{` + example + `,` + a100x4 + `}`,
			func(r *wire.Request) any { return r.Objective }, "compute"},
		{"memory_proportion", `{` + example + `,` + a100x4 + `}`,
			func(r *wire.Request) any { return r.MemoryProportion }, 1.0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := decode(t, tt.in)
			before := *r
			n, err := Normalize(r)
			if err != nil {
				t.Fatal(err)
			}
			if got := tt.get(n); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
			if !reflect.DeepEqual(*r, before) {
				t.Errorf("Normalize changed its receiver")
			}
			// Normalizing a normalized request changes nothing.
			again, err := Normalize(n)
			if err != nil {
				t.Fatalf("normalizing the normalized request: %v", err)
			}
			if !reflect.DeepEqual(again, n) {
				t.Errorf("Normalize is not idempotent:\n%+v\n%+v", n, again)
			}
		})
	}
}

// TestNormalizeNames: preset, example and schedule names are read in any case, and the
// normalized request spells them as the presets do.
func TestNormalizeNames(t *testing.T) {
	n, err := Normalize(decode(t, `{"model":{"example":"GPT2-Medium"},"cluster":{"device":"A100-80GB","count":4,"link":"NVLink3"},"schedule":{"name":"1F1B"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if n.Model.Example != "gpt2-medium" || n.Cluster.Device != "a100-80gb" || n.Cluster.Link != "nvlink3" || n.Schedule.Name != "1f1b" {
		t.Errorf("names %q %q %q %q, want the presets' spelling", n.Model.Example, n.Cluster.Device, n.Cluster.Link, n.Schedule.Name)
	}
	n, err = Normalize(decode(t, `{"model":{"architecture":{"name":"GPT2"}},"cluster":{"document":`+twoDevices+`,"data_link":"IB-HDR"},"parallelism":{"data":2}}`))
	if err != nil {
		t.Fatal(err)
	}
	if n.Model.Architecture.Name != "gpt2" || n.Cluster.DataLink != "ib-hdr" {
		t.Errorf("names %q %q, want gpt2 and ib-hdr", n.Model.Architecture.Name, n.Cluster.DataLink)
	}
}

// TestNormalizeRefuses: every setting that does not apply, or contradicts another, is an
// error naming its field, never ignored.
func TestNormalizeRefuses(t *testing.T) {
	inference := `"training":{"mode":"inference"}`
	tests := []struct {
		name, in, path, reason string
	}{
		{"optimizer with inference", `{` + gpt2 + `,` + a100x4 + `,"training":{"mode":"inference","optimizer":"adamw"}}`,
			"training.optimizer", "applies to training"},
		{"precision with inference", `{` + gpt2 + `,` + a100x4 + `,"training":{"mode":"inference","precision":"mixed"}}`,
			"training.precision", "applies to training"},
		{"recompute with inference", `{` + gpt2 + `,` + a100x4 + `,"training":{"mode":"inference","recompute":"full"}}`,
			"training.recompute", "applies to training"},
		{"optimizer with the inference schedule", `{` + gpt2 + `,` + a100x4 + `,"schedule":{"name":"inference"},"training":{"optimizer":"sgd"}}`,
			"training.optimizer", "applies to training"},
		{"zero=1 without data parallelism", `{` + example + `,` + a100x4 + `,"parallelism":{"zero":1}}`,
			"parallelism.zero", "needs parallelism.data >= 2"},
		{"zero=2", `{` + example + `,"cluster":{"device":"a100-80gb","count":8},"parallelism":{"data":2,"zero":2}}`,
			"parallelism.zero", "must be 0 or 1"},
		{"zero=1 with inference", `{` + example + `,"cluster":{"device":"a100-80gb","count":8},"parallelism":{"data":2,"zero":1},` + inference + `}`,
			"parallelism.zero", "inference does not have"},
		{"selective recompute on a profile", `{` + example + `,` + a100x4 + `,"training":{"recompute":"selective"}}`,
			"training.recompute", "needs an architecture"},
		{"selective recompute on a PipeDream profile", `{"model":{"document":` + vgg16(t) + `},` + a100x4 + `,"training":{"recompute":"selective"}}`,
			"training.recompute", "needs an architecture"},
		{"selective-op recompute on a profile", `{` + example + `,` + a100x4 + `,"training":{"recompute":"selective-op"}}`,
			"training.recompute", "selective-op recomputation needs an architecture"},
		{"unknown recompute", `{` + gpt2 + `,` + a100x4 + `,"training":{"recompute":"some"}}`,
			"training.recompute", "must be none, selective, selective-op, full or auto"},
		{"optimizer on a profile that states optimizer_bytes", `{` + example + `,` + a100x4 + `,"training":{"optimizer":"adamw"}}`,
			"training.optimizer", "states its optimizer state"},
		{"precision on a profile that states optimizer_bytes", `{` + example + `,` + a100x4 + `,"training":{"precision":"mixed"}}`,
			"training.precision", "states its optimizer state"},
		{"mixed precision on a PipeDream profile", `{"model":{"document":` + vgg16(t) + `},` + a100x4 + `,"training":{"precision":"mixed"}}`,
			"training.precision", "must be pure for a PipeDream profile"},
		{"unknown optimizer", `{` + gpt2 + `,` + a100x4 + `,"training":{"optimizer":"lion"}}`,
			"training.optimizer", "must be adamw, adam or sgd"},
		{"unknown precision", `{` + gpt2 + `,` + a100x4 + `,"training":{"precision":"half"}}`,
			"training.precision", "must be mixed, mixed-fp32-grads, amp, pure or deepspeed-bf16"},
		{"mixed precision with fp32", `{"model":{"architecture":{"name":"gpt2","dtype":"fp32"}},` + a100x4 + `,"training":{"precision":"mixed"}}`,
			"training.precision", "mixed keeps fp32 weights or master weights"},
		{"unknown mode", `{` + example + `,` + a100x4 + `,"training":{"mode":"serving"}}`,
			"training.mode", "must be training or inference"},
		{"weight_grad_fraction on 1f1b", `{` + example + `,` + a100x4 + `,"schedule":{"weight_grad_fraction":0.4}}`,
			"schedule.weight_grad_fraction", "applies to zb-h1"},
		{"weight_grad_fraction above 1", `{` + example + `,` + a100x4 + `,"schedule":{"name":"zb-h1","weight_grad_fraction":1.5}}`,
			"schedule.weight_grad_fraction", "must be in [0, 1]"},
		{"schedule inference with mode training", `{` + example + `,` + a100x4 + `,"training":{"mode":"training"},"schedule":{"name":"inference"}}`,
			"schedule.name", "but training.mode is training"},
		{"training schedule with mode inference", `{` + example + `,` + a100x4 + `,"training":{"mode":"inference"},"schedule":{"name":"gpipe"}}`,
			"schedule.name", "training.mode is inference"},
		{"unknown schedule", `{` + example + `,` + a100x4 + `,"schedule":{"name":"2f2b"}}`,
			"schedule.name", "unknown schedule"},
		{"negative microbatches", `{` + example + `,` + a100x4 + `,"schedule":{"microbatches":-1}}`,
			"schedule.microbatches", "must be >= 1"},
		{"interleaved microbatches not a multiple of the devices", `{` + example + `,` + a100x4 + `,"schedule":{"name":"interleaved:2","microbatches":6}}`,
			"schedule.microbatches", "multiple of the 4 devices"},
		{"overlap on 4 devices", `{` + example + `,` + a100x4 + `,"schedule":{"name":"overlap"}}`,
			"parallelism.pipeline", "exactly 2 stages"},
		{"cluster.count too small", `{` + example + `,"cluster":{"device":"a100-80gb","count":6},"parallelism":{"pipeline":4,"data":2}}`,
			"cluster.count", "cannot hold 4 pipeline stages times 2 replicas"},
		{"cluster.count missing", `{` + example + `,"cluster":{"device":"a100-80gb"}}`,
			"cluster.count", "give the number of devices"},
		{"cluster.count negative", `{` + example + `,"cluster":{"device":"a100-80gb","count":-4}}`,
			"cluster.count", "must be between 1 and"},
		{"data not dividing cluster.count", `{` + example + `,"cluster":{"device":"a100-80gb","count":6},"parallelism":{"data":4}}`,
			"parallelism.data", "do not divide the 6 devices"},
		{"count with a document", `{` + example + `,"cluster":{"document":` + twoDevices + `,"count":2}}`,
			"cluster.count", "goes with cluster.device"},
		{"link with a document", `{` + example + `,"cluster":{"document":` + twoDevices + `,"link":"nvlink3"}}`,
			"cluster.link", "goes with cluster.device"},
		{"data_link with a preset", `{` + example + `,"cluster":{"device":"a100-80gb","count":8,"data_link":"ib-hdr"},"parallelism":{"data":2}}`,
			"cluster.data_link", "goes with a cluster document"},
		{"unknown data_link", `{` + example + `,"cluster":{"document":` + twoDevices + `,"data_link":"smoke"},"parallelism":{"data":2}}`,
			"cluster.data_link", "unknown link"},
		{"pipeline not matching a document's devices", `{` + example + `,"cluster":{"document":` + twoDevices + `},"parallelism":{"pipeline":4}}`,
			"parallelism.pipeline", "must be 2, the devices of the cluster document"},
		{"microbatch_size other than the profile's", `{` + example + `,` + a100x4 + `,"schedule":{"microbatch_size":4}}`,
			"schedule.microbatch_size", "must be 8, the samples per microbatch the profile was measured with"},
		{"model with two sources", `{"model":{"example":"gpt2-medium","architecture":{"name":"gpt2"}},` + a100x4 + `}`,
			"model", "exactly one of example, document and architecture, got 2"},
		{"model with no source", `{"model":{"name":"nameless"},` + a100x4 + `}`,
			"model", "exactly one of example, document and architecture, got 0"},
		{"architecture with name and config", `{"model":{"architecture":{"name":"gpt2","config":{"model_type":"gpt2"}}},` + a100x4 + `}`,
			"model.architecture", "exactly one of name"},
		{"cluster with device and document", `{` + example + `,"cluster":{"device":"a100-80gb","document":` + twoDevices + `}}`,
			"cluster", "exactly one of device"},
		{"cluster with neither", `{` + example + `,"cluster":{"count":4}}`,
			"cluster", "exactly one of device"},
		{"unknown example", `{"model":{"example":"gpt5"},` + a100x4 + `}`,
			"model.example", "unknown example"},
		{"unknown architecture", `{"model":{"architecture":{"name":"gpt5"}},` + a100x4 + `}`,
			"model.architecture.name", "gpt5"},
		{"unknown device", `{` + example + `,"cluster":{"device":"a99","count":4}}`,
			"cluster.device", "unknown device"},
		{"unknown link", `{` + example + `,"cluster":{"device":"a100-80gb","count":4,"link":"smoke"}}`,
			"cluster.link", "unknown link"},
		{"unknown objective", `{` + example + `,` + a100x4 + `,"objective":"speed"}`,
			"objective", "must be"},
		{"memory_proportion above 1", `{` + example + `,` + a100x4 + `,"memory_proportion":1.5}`,
			"memory_proportion", "must be in (0, 1]"},
		{"memory_proportion negative", `{` + example + `,` + a100x4 + `,"memory_proportion":-0.5}`,
			"memory_proportion", "must be in (0, 1]"},
		{"version 2", `{"version":2,` + example + `,` + a100x4 + `}`,
			"version", "must be 1"},
		{"architecture seq beyond its positions", `{"model":{"architecture":{"name":"gpt2","seq":2048}},` + a100x4 + `}`,
			"model.architecture.seq", "must be at most 1024"},
		{"document neither object nor string", `{"model":{"document":[1,2]},` + a100x4 + `}`,
			"model.document", "must be a JSON object or a string"},
		{"document field errors", `{"model":{"document":{"layers":[{"name":"a","forward_seconds":-1}]}},` + a100x4 + `}`,
			"model.document.layers[0].forward_seconds", "must be >= 0"},
		{"tokens per step beyond int64", `{"model":{"document":{"tokens_per_sample":4611686018427387904,"microbatch_size":8,"layers":[{"name":"a","forward_seconds":1}]}},"cluster":{"device":"a100-80gb","count":1}}`,
			"model.document.tokens_per_sample", "more than the 4611686018427387904 tokens a step may count"},
		{"measured_on an unknown device", `{"model":{"document":{"measured_on":"z80","layers":[{"name":"a","forward_seconds":1}]}},"cluster":{"device":"a100-80gb","count":1}}`,
			"model.document.measured_on", "unknown device"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := decode(t, tt.in)
			n, err := Normalize(r)
			if err == nil {
				t.Fatalf("Normalize accepted it: %+v", n)
			}
			if n != nil {
				t.Errorf("Normalize returned a request with its error")
			}
			if !hasFieldError(err, tt.path, tt.reason) {
				t.Errorf("error %q, want one at %q with %q", err, tt.path, tt.reason)
			}
			if err2 := Validate(r); err2 == nil || err2.Error() != err.Error() {
				t.Errorf("Validate: %v, want Normalize's error", err2)
			}
		})
	}
}

// TestNormalizeOneErrorPerField: a wrong microbatch count is reported once, by the
// request's check or the schedule's, not by both.
func TestNormalizeOneErrorPerField(t *testing.T) {
	_, err := Normalize(decode(t, `{`+example+`,`+a100x4+`,"schedule":{"microbatches":-3}}`))
	es, ok := model.AsFieldErrors(err)
	if !ok {
		t.Fatalf("error %v is not field errors", err)
	}
	n := 0
	for _, e := range es {
		if e.Path == "schedule.microbatches" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d errors at schedule.microbatches, want 1: %v", n, err)
	}
}

// TestScaleUpDomain: a node of devices_per_node on a preset's own link holds no more
// devices than the preset's scale-up domain (72 in an NVL72 rack, 8 on an HGX board),
// and a tensor-parallel group of up to 72 fits in an NVL72 node.
func TestScaleUpDomain(t *testing.T) {
	tests := []struct {
		device      string
		perNode, tp int
		want        string // error, "" for none
	}{
		{"gb200", 72, 8, ""},
		{"gb200", 72, 72, ""},
		{"gb200", 144, 8, "cluster.devices_per_node: must be at most 72, the scale-up domain of gb200"},
		{"h100-sxm", 16, 8, "cluster.devices_per_node: must be at most 8, the scale-up domain of h100-sxm"},
		{"h100-sxm", 8, 16, "parallelism.tensor: must divide cluster.devices_per_node (8)"},
	}
	for _, tt := range tests {
		r := &wire.Request{
			Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-2-7b", Seq: 1024}},
			Cluster:     wire.ClusterSpec{Device: tt.device, DevicesPerNode: tt.perNode, Count: 144},
			Parallelism: wire.Parallelism{Pipeline: 2, Tensor: tt.tp},
		}
		if tt.tp == 72 {
			r.Model.Architecture = &wire.Architecture{Config: []byte(`{"model_type": "gpt2", "n_embd": 4608, "n_head": 72, "n_layer": 4, "n_positions": 1024, "vocab_size": 51200}`)}
		}
		_, err := Normalize(r)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s, %d per node, tp %d: %v", tt.device, tt.perNode, tt.tp, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s, %d per node, tp %d: error %v, want %q", tt.device, tt.perNode, tt.tp, err, tt.want)
		}
	}
}

// TestBeyondScaleUpWarns: 16 H100s on their NVLink preset, without nodes, are planned
// as one NVLink fabric; the result warns that NVLink joins 8.
func TestBeyondScaleUpWarns(t *testing.T) {
	for _, tt := range []struct {
		count, perNode int
		warn           bool
	}{{16, 0, true}, {8, 0, false}, {16, 8, false}} {
		r := &wire.Request{
			Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.2-1b", Seq: 1024}},
			Cluster:     wire.ClusterSpec{Device: "h100-sxm", Count: tt.count, DevicesPerNode: tt.perNode},
			Parallelism: wire.Parallelism{Pipeline: 2},
		}
		res, err := Run(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		warned := false
		for _, d := range res.Diagnostics {
			warned = warned || d.Code == wire.CodeBeyondScaleUp && d.Field == "cluster.devices_per_node"
		}
		if warned != tt.warn {
			t.Errorf("%d devices, %d per node: warned %v, want %v (%v)", tt.count, tt.perNode, warned, tt.warn, res.Diagnostics)
		}
	}
}
