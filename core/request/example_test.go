package request_test

import (
	"context"
	"fmt"

	"pipeplan/core/request"
	"pipeplan/core/wire"
)

// A front end turns what its user gave into a request and runs it: here the bundled
// GPT-2 medium profile on four A100s under 1F1B with 16 microbatches of 8 sequences.
func ExampleRun() {
	r, err := request.Decode([]byte(`{
		"version": 1,
		"model": {"example": "gpt2-medium"},
		"cluster": {"device": "a100-80gb", "count": 4},
		"schedule": {"name": "1f1b", "microbatches": 16}
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := request.Run(context.Background(), r)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("feasible:", res.Feasible)
	fmt.Println("boundaries:", res.Plan.Boundaries)
	for i, s := range res.Plan.Stages {
		fmt.Printf("stage %d: %s .. %s, %.2f ms, %.1f GiB of %.1f\n", i, s.FirstName, s.LastName,
			s.ComputeSeconds*1e3, float64(s.MemoryBytes)/(1<<30), float64(s.LimitBytes)/(1<<30))
	}
	st := res.Step
	fmt.Printf("step: %.1f ms pipeline + %.1f ms optimizer update = %.1f ms\n",
		st.PipelineSeconds*1e3, st.OptimizerSeconds*1e3, st.StepSeconds*1e3)
	fmt.Printf("%d samples per step: %.1f samples/s, %.0f tokens/s\n", st.SamplesPerStep, st.SamplesPerSecond, st.TokensPerSecond)
	for _, d := range res.Diagnostics {
		fmt.Printf("%s %s: %s\n", d.Severity, d.Code, d.Message)
	}
	// Output:
	// feasible: true
	// boundaries: [0 8 15 22 26]
	// stage 0: embed .. block.6, 36.20 ms, 27.1 GiB of 76.0
	// stage 1: block.7 .. block.13, 36.08 ms, 20.0 GiB of 76.0
	// stage 2: block.14 .. block.20, 36.08 ms, 13.8 GiB of 76.0
	// stage 3: block.21 .. head, 33.53 ms, 5.6 GiB of 76.0
	// step: 683.0 ms pipeline + 2.4 ms optimizer update = 685.5 ms
	// 128 samples per step: 186.7 samples/s, 191220 tokens/s
	// note times_scaled: the profile was measured on a100-80gb, the cluster's device: times as measured
}

// A request's id names the plan it asks for: a request that spells out its defaults, or
// writes names in another case, has the id of one that leaves them out. A cache or a
// shared-plan link keys on it.
func ExampleID() {
	short := &wire.Request{
		Model:   wire.ModelSpec{Example: "gpt2-medium"},
		Cluster: wire.ClusterSpec{Device: "a100-80gb", Count: 4},
	}
	long := &wire.Request{
		Version:     1,
		Model:       wire.ModelSpec{Example: "GPT2-Medium"},
		Cluster:     wire.ClusterSpec{Device: "A100-80GB", Count: 4, Link: "NVLink3"},
		Parallelism: wire.Parallelism{Pipeline: 4, Data: 1},
		Training:    wire.Training{Mode: wire.ModeTraining, Recompute: "none"},
		Schedule:    wire.Schedule{Name: "1F1B", Microbatches: 16, MicrobatchSize: 8},
		Objective:   "compute", MemoryProportion: 1,
	}
	other := &wire.Request{
		Model:    wire.ModelSpec{Example: "gpt2-medium"},
		Cluster:  wire.ClusterSpec{Device: "a100-80gb", Count: 4},
		Schedule: wire.Schedule{Name: "gpipe"},
	}
	a, _ := request.ID(short)
	b, _ := request.ID(long)
	c, _ := request.ID(other)
	fmt.Println(len(a), "hex digits")
	fmt.Println("spelled out, same id:", a == b)
	fmt.Println("another schedule, same id:", a == c)

	canonical, _ := request.Canonical(short)
	fmt.Println(string(canonical))
	// Output:
	// 64 hex digits
	// spelled out, same id: true
	// another schedule, same id: false
	// {"version":1,"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":4,"link":"nvlink3"},"parallelism":{"pipeline":4,"data":1},"training":{"mode":"training","recompute":"none"},"schedule":{"name":"1f1b","microbatches":16,"microbatch_size":8},"objective":"compute","memory_proportion":1}
}

// Errors name the request's field, for a front end to show beside the input.
func ExampleNormalize() {
	r, _ := request.Decode([]byte(`{
		"model": {"example": "gpt2-medium"},
		"cluster": {"device": "a100-80gb", "count": 4},
		"training": {"mode": "inference", "optimizer": "adamw"},
		"parallelism": {"zero": 1}
	}`))
	_, err := request.Normalize(r)
	fmt.Println(err)
	// Output:
	// parallelism.zero: ZeRO-1 shards optimizer state over data-parallel replicas: it needs parallelism.data >= 2, got 1
	// parallelism.zero: shards optimizer state, which inference does not have
	// training.optimizer: applies to training: inference has no optimizer
}

// Decode reads a request strictly: a misspelt key is an error at its path, not a
// default.
func ExampleDecode() {
	_, err := request.Decode([]byte(`{"model": {"example": "gpt2-medium"}, "schedule": {"microbatchs": 32}}`))
	fmt.Println(err)
	// Output:
	// schedule.microbatchs: is not a field of the request (docs/request.md lists them)
}

// A caller that plans one request with several knobs (the search, an exporter's
// alternatives) prepares it once and plans its variants: each With reuses the loaded
// model and cluster, and Plan skips the content id that only a reported plan needs.
func ExamplePrepared_With() {
	p, err := request.Prepare(&wire.Request{
		Model:   wire.ModelSpec{Example: "gpt2-medium"},
		Cluster: wire.ClusterSpec{Device: "a100-80gb", Count: 4},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range []string{"gpipe", "1f1b", "zb-h1"} {
		k := p.Knobs()
		k.Schedule = wire.Schedule{Name: name, Microbatches: 16}
		v, err := p.With(k)
		if err != nil {
			fmt.Println(err)
			return
		}
		res, err := v.Plan(context.Background())
		if err != nil {
			fmt.Println(err)
			return
		}
		if !res.Feasible {
			fmt.Printf("%s: %s\n", name, res.FirstError().Message)
			continue
		}
		fmt.Printf("%s: %.1f samples/s, bubble %.1f%%\n", name, res.Step.SamplesPerSecond, 100*res.Step.BubbleFraction)
	}
	// Output:
	// gpipe: no plan fits: every layer fits a device alone, but every split of 26 layers into 4 stages puts more on some stage than its device holds: use more stages, devices with more memory, a larger memory proportion or recomputation
	// 1f1b: 186.7 samples/s, bubble 16.9%
	// zb-h1: 207.6 samples/s, bubble 7.6%
}

// WithModel keeps what the new model takes (here the framework) and says why it left
// the rest out: a dense model has no experts to split.
func ExampleWithModel() {
	r := &wire.Request{Version: wire.Version, Cluster: wire.ClusterSpec{Device: "h100-sxm", Count: 8},
		Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: "qwen1.5-moe-a2.7b", Framework: "megatron"}},
		Parallelism: wire.Parallelism{Expert: 2}}
	out, dropped := request.WithModel(r, wire.ModelSpec{Architecture: &wire.Architecture{Name: "meta-llama-3-8b"}})
	fmt.Println(out.Model.Architecture.Name, out.Model.Architecture.Framework)
	for _, d := range dropped {
		fmt.Println(d.Path+":", d.Reason)
	}
	// Output:
	// meta-llama-3-8b megatron
	// parallelism.expert: splits the experts of a mixture-of-experts architecture; the model has none
}

// A model change (WithModel) to a measured profile leaves out the former architecture's
// knobs, which LeftOut's notice gives on one line.
func ExampleLeftOut() {
	r := &wire.Request{Version: wire.Version, Cluster: wire.ClusterSpec{Device: "h100-sxm", Count: 8},
		Model: wire.ModelSpec{Architecture: &wire.Architecture{Name: "meta-llama-3-8b", Seq: 8192, DType: "fp8"}}}
	m := wire.ModelSpec{Example: "gpt2-medium"}
	_, dropped := request.WithModel(r, m)
	fmt.Println(request.LeftOut(m, dropped))
	// Output:
	// Left out for this measured profile: model.architecture's dtype and seq (each applies to architectures; the model is a measured profile)
}
