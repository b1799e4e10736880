package request

// Tests of the wrong results that issue 7 names: each planned differently in each front
// end before the request was the one doorway (main before 552b0f1), and each test
// asserts the one right answer, computed independently of the code under test where a
// formula says what it is.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"pipeplan/core/arch"
	"pipeplan/core/cluster"
	"pipeplan/core/examples"
	"pipeplan/core/load"
	"pipeplan/core/model"
	"pipeplan/core/wire"
)

// gpt2Layers returns the bundled GPT-2 profile's layers, as the example file states them.
func gpt2Layers(t *testing.T) []model.Layer {
	t.Helper()
	e, err := examples.Lookup("gpt2-medium")
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := load.Model(e.ModelJSON())
	if err != nil {
		t.Fatal(err)
	}
	return m.Layers
}

// ring is the time of a ring all-reduce of n bytes among k peers over a link of latency
// lat and bandwidth bw: 2(k-1) steps, each moving n/k bytes (Patarasuk and Yuan 2009).
func ring(k int, n int64, lat, bw float64) float64 {
	steps := float64(2 * (k - 1))
	return steps/float64(k)*float64(n)/bw + steps*lat
}

func preset(t *testing.T, name string) cluster.DevicePreset {
	t.Helper()
	d, err := cluster.LookupDevice(name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func link(t *testing.T, name string) cluster.Link {
	t.Helper()
	l, err := cluster.LookupLink(name)
	if err != nil {
		t.Fatal(err)
	}
	return l.Link
}

// Throughput counts samples: a microbatch of the GPT-2 profile holds 8 sequences of 1024
// tokens, so a step of m microbatches on d replicas is 8 m d samples, not m.
func TestThroughputCountsSamples(t *testing.T) {
	for _, d := range []int{1, 2} {
		res := runJSON(t, `{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":`+itoa(4*d)+`},
			"parallelism":{"data":`+itoa(d)+`},"schedule":{"name":"1f1b","microbatches":16}}`)
		st := res.Step
		if res.Model.MicrobatchSize != 8 || res.Model.TokensPerSample != 1024 {
			t.Errorf("d=%d: model microbatch_size %d, tokens_per_sample %d; want 8 and 1024", d, res.Model.MicrobatchSize, res.Model.TokensPerSample)
		}
		if want := int64(8 * 16 * d); st.SamplesPerStep != want {
			t.Errorf("d=%d: samples_per_step %d, want 8 x 16 x %d = %d", d, st.SamplesPerStep, d, want)
		}
		if want := st.SamplesPerStep * 1024; st.TokensPerStep != want {
			t.Errorf("d=%d: tokens_per_step %d, want %d", d, st.TokensPerStep, want)
		}
		if want := float64(st.SamplesPerStep) / st.StepSeconds; st.SamplesPerSecond != want {
			t.Errorf("d=%d: samples_per_second %v, want samples_per_step / step_seconds = %v", d, st.SamplesPerSecond, want)
		}
		if want := st.SamplesPerSecond * 1024; !near(st.TokensPerSecond, want) {
			t.Errorf("d=%d: tokens_per_second %v, want 1024 x samples_per_second = %v", d, st.TokensPerSecond, want)
		}
		if want := st.PipelineSeconds + st.TiedAllReduceSeconds + st.DataParallelAllReduceSeconds + st.OptimizerSeconds; st.StepSeconds != want {
			t.Errorf("d=%d: step_seconds %v, want the sum of its parts %v", d, st.StepSeconds, want)
		}
		if st.PipelineSeconds != res.Schedule.MakespanSeconds || st.Devices != 4*d {
			t.Errorf("d=%d: pipeline_seconds %v (makespan %v), devices %d", d, st.PipelineSeconds, res.Schedule.MakespanSeconds, st.Devices)
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// Times scale from the device a profile was measured on to the device planned on: the
// GPT-2 profile was measured on an A100 (312 TFLOP/s), so on an H100 (989 TFLOP/s) every
// stage's compute takes 312/989 of its A100 time.
func TestTimesScaleFromMeasuredOn(t *testing.T) {
	bounds := `"boundaries":[0,7,14,21,26]`
	a100 := runJSON(t, `{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":4},`+bounds+`}`)
	h100 := runJSON(t, `{"model":{"example":"gpt2-medium"},"cluster":{"device":"h100-sxm","count":4},`+bounds+`}`)
	f := preset(t, "a100-80gb").FLOPSPerSecond / preset(t, "h100-sxm").FLOPSPerSecond
	if f != 312.0/989.0 {
		t.Fatalf("preset ratio %v, want 312/989", f)
	}
	for i := range a100.Plan.Stages {
		a, h := a100.Plan.Stages[i].ComputeSeconds, h100.Plan.Stages[i].ComputeSeconds
		if !near(h, a*f) {
			t.Errorf("stage %d: %v s on h100-sxm, want 312/989 x %v s = %v", i, h, a, a*f)
		}
	}
	if d := diagnostic(h100, wire.CodeTimesScaled); d == nil || d.Field != "model.example" {
		t.Errorf("no times_scaled note on h100-sxm: %+v", h100.Diagnostics)
	}
	if diagnostic(a100, wire.CodeTimesNotScaled) != nil || diagnostic(h100, wire.CodeTimesNotScaled) != nil {
		t.Errorf("times_not_scaled note with measured_on")
	}
}

// Without measured_on, a profile's times are taken as they are, and the result says so.
func TestTimesNotScaledWithoutMeasuredOn(t *testing.T) {
	var doc map[string]any
	e, _ := examples.Lookup("gpt2-medium")
	if err := json.Unmarshal(e.ModelJSON(), &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc["measured_on"]; !ok {
		t.Fatal("the example no longer states measured_on")
	}
	delete(doc, "measured_on")
	b, _ := json.Marshal(doc)
	bounds := `"boundaries":[0,7,14,21,26]`
	a100 := runJSON(t, `{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":4},`+bounds+`}`)
	h100 := runJSON(t, `{"model":{"document":`+string(b)+`},"cluster":{"device":"h100-sxm","count":4},`+bounds+`}`)
	d := diagnostic(h100, wire.CodeTimesNotScaled)
	if d == nil || d.Severity != wire.Note || d.Field != "model.document.measured_on" {
		t.Errorf("no times_not_scaled note: %+v", h100.Diagnostics)
	}
	if diagnostic(h100, wire.CodeTimesScaled) != nil {
		t.Errorf("times_scaled note without measured_on")
	}
	for i := range a100.Plan.Stages {
		if a, h := a100.Plan.Stages[i].ComputeSeconds, h100.Plan.Stages[i].ComputeSeconds; a != h {
			t.Errorf("stage %d: %v s on h100-sxm, want the profile's %v s", i, h, a)
		}
	}
}

// On a mixed cluster, each stage scales from the profile's device to its own, not to
// device 0's: with an H100 first and an A100 second, the A100's stage keeps the times the
// profile measured on an A100.
func TestTimesScaleEachDeviceOfAMixedCluster(t *testing.T) {
	bounds := `"boundaries":[0,13,26]`
	mixed := runJSON(t, `{"model":{"example":"gpt2-medium"},"cluster":{"document":{"devices":[{"name":"h100-sxm"},{"name":"a100-80gb"}],
		"links":[{"latency_seconds":3e-6,"bytes_per_second":300e9}]}},`+bounds+`}`)
	a100 := runJSON(t, `{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":2},`+bounds+`}`)
	f := 312.0 / 989.0
	if got, want := mixed.Plan.Stages[0].ComputeSeconds, a100.Plan.Stages[0].ComputeSeconds*f; !near(got, want) {
		t.Errorf("stage 0 (h100-sxm): %v s, want 312/989 of the A100's = %v s", got, want)
	}
	if got, want := mixed.Plan.Stages[1].ComputeSeconds, a100.Plan.Stages[1].ComputeSeconds; !near(got, want) {
		t.Errorf("stage 1 (a100-80gb): %v s, want the A100's %v s", got, want)
	}
}

// A PipeDream profile gives fp32 weights only; training holds their gradients and Adam's
// two moments too (pure fp32: no master copy), and the stage memory the partitioner
// charges is what the simulated 1F1B schedule peaks at on that device.
func TestPipeDreamTrainingHoldsGradientsAndState(t *testing.T) {
	data, err := os.ReadFile("../load/testdata/pipedream/vgg16.graph.txt")
	if err != nil {
		t.Fatal(err)
	}
	text, _, err := load.Model(data)
	if err != nil {
		t.Fatal(err)
	}
	res := runJSON(t, `{"model":{"document":`+vgg16(t)+`},"cluster":{"device":"a100-80gb","count":4},"schedule":{"name":"1f1b"}}`)
	if res.Model.Format != string(load.PipeDream) {
		t.Fatalf("format %q", res.Model.Format)
	}
	if diagnostic(res, wire.CodeStateAdded) == nil {
		t.Errorf("no state_added note")
	}
	for i, s := range res.Plan.Stages {
		var w int64
		for l := s.FirstLayer; l <= s.LastLayer; l++ {
			w += text.Layers[l].ParamBytes
		}
		if s.ParamBytes != 2*w || s.OptimizerBytes != 2*w {
			t.Errorf("stage %d: param_bytes %d, optimizer_bytes %d; want 2 x the %d bytes of weights for both", i, s.ParamBytes, s.OptimizerBytes, w)
		}
		if peak := res.Schedule.PeakMemoryBytes[i]; s.MemoryBytes != peak {
			t.Errorf("stage %d: memory_bytes %d, the schedule's peak on its device %d", i, s.MemoryBytes, peak)
		}
		if want := res.Plan.Stages[i].ParamBytes / 2; res.Devices[i].GradBytes != want {
			t.Errorf("device %d: grad_bytes %d, want the weights' %d", i, res.Devices[i].GradBytes, want)
		}
	}
}

// Data parallelism changes the step: d replicas run d times the samples; with free
// transfers the gradient all-reduce costs nothing, so the throughput is exactly d times.
func TestDataParallelFreeTransfers(t *testing.T) {
	one := runJSON(t, `{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":4,"free_transfers":true}}`)
	two := runJSON(t, `{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":8,"free_transfers":true},"parallelism":{"data":2}}`)
	if two.Step.DataParallelAllReduceSeconds != 0 || one.Step.DataParallelAllReduceSeconds != 0 {
		t.Errorf("all-reduce %v s with d=2, %v s with d=1; want 0 with free transfers", two.Step.DataParallelAllReduceSeconds, one.Step.DataParallelAllReduceSeconds)
	}
	for _, d := range two.Devices {
		if d.AllReduceSeconds != 0 {
			t.Errorf("device %d: all-reduce %v s with free transfers", d.Device, d.AllReduceSeconds)
		}
	}
	if two.Step.StepSeconds != one.Step.StepSeconds {
		t.Errorf("step %v s with d=2, %v s with d=1: replicas run in parallel", two.Step.StepSeconds, one.Step.StepSeconds)
	}
	if two.Step.SamplesPerSecond != 2*one.Step.SamplesPerSecond {
		t.Errorf("samples/s %v with d=2, want exactly 2 x %v", two.Step.SamplesPerSecond, one.Step.SamplesPerSecond)
	}
	if two.Step.Devices != 8 || two.Step.SamplesPerStep != 2*one.Step.SamplesPerStep {
		t.Errorf("d=2: %d devices, %d samples per step", two.Step.Devices, two.Step.SamplesPerStep)
	}
}

// With a real link, each device all-reduces its stages' gradients over the replicas in a
// ring: 2(d-1)/d x bytes / bandwidth + 2(d-1) x latency, and the step waits for the
// slowest device. The profile gives no grad_bytes, so gradients are half of param_bytes.
func TestDataParallelRingAllReduce(t *testing.T) {
	const d = 4
	res := runJSON(t, `{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":16},"parallelism":{"data":4}}`)
	layers := gpt2Layers(t)
	nv := link(t, "nvlink3")
	var slowest float64
	for i, s := range res.Plan.Stages {
		var grads int64
		for l := s.FirstLayer; l <= s.LastLayer; l++ {
			grads += layers[l].ParamBytes / 2
		}
		dev := res.Devices[i]
		if dev.GradBytes != grads {
			t.Errorf("device %d: grad_bytes %d, want half of param_bytes, %d", i, dev.GradBytes, grads)
		}
		want := ring(d, grads, nv.LatencySeconds, nv.BytesPerSecond)
		if !near(dev.AllReduceSeconds, want) {
			t.Errorf("device %d: all-reduce %v s, want 2(d-1)/d x %d B / %g B/s + 2(d-1) x %g s = %v s", i, dev.AllReduceSeconds, grads, nv.BytesPerSecond, nv.LatencySeconds, want)
		}
		slowest = max(slowest, dev.AllReduceSeconds)
	}
	if res.Step.DataParallelAllReduceSeconds != slowest || slowest == 0 {
		t.Errorf("step all-reduce %v s, want the slowest device's %v s", res.Step.DataParallelAllReduceSeconds, slowest)
	}
	if diagnostic(res, wire.CodeGradBytesAssumed) == nil {
		t.Errorf("no grad_bytes_assumed note")
	}
}

// A cluster document's replicas all-reduce over cluster.data_link when it names one, and
// over the slowest link between the stages otherwise (with a note).
func TestDataParallelDocumentLinks(t *testing.T) {
	cl := `{"devices":[{"name":"a100-80gb"},{"name":"a100-80gb"}],"links":[{"latency_seconds":1e-6,"bytes_per_second":100e9}]}`
	named := runJSON(t, `{"model":{"example":"gpt2-medium"},"cluster":{"document":`+cl+`,"data_link":"ib-hdr"},"parallelism":{"data":2}}`)
	assumed := runJSON(t, `{"model":{"example":"gpt2-medium"},"cluster":{"document":`+cl+`},"parallelism":{"data":2}}`)
	ib := link(t, "ib-hdr")
	for i := range named.Devices {
		g := named.Devices[i].GradBytes
		if want := ring(2, g, ib.LatencySeconds, ib.BytesPerSecond); !near(named.Devices[i].AllReduceSeconds, want) {
			t.Errorf("data_link ib-hdr, device %d: %v s, want %v s", i, named.Devices[i].AllReduceSeconds, want)
		}
		if want := ring(2, g, 1e-6, 100e9); !near(assumed.Devices[i].AllReduceSeconds, want) {
			t.Errorf("no data_link, device %d: %v s, want %v s over the document's link", i, assumed.Devices[i].AllReduceSeconds, want)
		}
	}
	if diagnostic(assumed, wire.CodeDataLinkAssumed) == nil || diagnostic(named, wire.CodeDataLinkAssumed) != nil {
		t.Errorf("data_link_assumed note: %v without data_link, %v with", diagnostic(assumed, wire.CodeDataLinkAssumed), diagnostic(named, wire.CodeDataLinkAssumed))
	}
}

// The optimizer update is part of the step: a memory-bound pass that reads the weights
// and gradients (param_bytes), reads and writes the optimizer state and the shared items,
// at the device's memory bandwidth times the preset's memory efficiency. The step waits
// for the slowest device. Inference has no update.
func TestOptimizerUpdateInTheStep(t *testing.T) {
	res := runJSON(t, `{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":4}}`)
	a100 := preset(t, "a100-80gb")
	bw := a100.Perf.MemoryBytesPerSecond * a100.Perf.MemoryEfficiency
	var slowest float64
	for i, s := range res.Plan.Stages {
		want := float64(s.ParamBytes+2*s.OptimizerBytes+s.SharedBytes) / bw
		if got := res.Devices[i].OptimizerSeconds; got != want {
			t.Errorf("device %d: optimizer update %v s, want (param + 2 x optimizer + shared) / (%g B/s x %g) = %v s", i, got, a100.Perf.MemoryBytesPerSecond, a100.Perf.MemoryEfficiency, want)
		}
		slowest = max(slowest, res.Devices[i].OptimizerSeconds)
	}
	if res.Step.OptimizerSeconds != slowest || !(slowest > 0) {
		t.Errorf("step optimizer %v s, want the slowest device's %v s > 0", res.Step.OptimizerSeconds, slowest)
	}
	inf := runJSON(t, `{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":4},"training":{"mode":"inference"}}`)
	if inf.Step.OptimizerSeconds != 0 {
		t.Errorf("inference: optimizer update %v s, want 0", inf.Step.OptimizerSeconds)
	}
	for _, d := range inf.Devices {
		if d.OptimizerSeconds != 0 || d.GradBytes != 0 || d.AllReduceSeconds != 0 {
			t.Errorf("inference, device %d: %+v, want no update, gradients or all-reduce", d.Device, d)
		}
	}
}

// A tied embedding copied to the first and the last stage has its two gradients
// all-reduced between them once per step: a ring of 2 over the link between stages. On
// one stage there is one copy and nothing to all-reduce.
func TestTiedEmbeddingAllReduce(t *testing.T) {
	a, err := arch.Bundled("gpt2")
	if err != nil {
		t.Fatal(err)
	}
	if !a.TiedEmbeddings {
		t.Fatal("gpt2 no longer ties its embeddings")
	}
	bytes := int64(a.VocabSize) * int64(a.HiddenSize) * 2 // bf16 gradients
	nv := link(t, "nvlink3")
	two := runJSON(t, `{"model":{"architecture":{"name":"gpt2","tie":"copy"}},"cluster":{"device":"a100-80gb","count":2}}`)
	if want := ring(2, bytes, nv.LatencySeconds, nv.BytesPerSecond); !(two.Step.TiedAllReduceSeconds > 0) || !near(two.Step.TiedAllReduceSeconds, want) {
		t.Errorf("2 stages: tied all-reduce %v s, want %d B / %g B/s + 2 x %g s = %v s", two.Step.TiedAllReduceSeconds, bytes, nv.BytesPerSecond, nv.LatencySeconds, want)
	}
	one := runJSON(t, `{"model":{"architecture":{"name":"gpt2","tie":"copy"}},"cluster":{"device":"a100-80gb","count":1}}`)
	if one.Step.TiedAllReduceSeconds != 0 {
		t.Errorf("1 stage: tied all-reduce %v s, want 0", one.Step.TiedAllReduceSeconds)
	}
	inf := runJSON(t, `{"model":{"architecture":{"name":"gpt2"}},"cluster":{"device":"a100-80gb","count":2},"training":{"mode":"inference"}}`)
	if inf.Step.TiedAllReduceSeconds != 0 {
		t.Errorf("inference: tied all-reduce %v s, want 0", inf.Step.TiedAllReduceSeconds)
	}
}

// ZeRO-1 shards the optimizer state over the d replicas: each holds 1/d of it, for an
// architecture and for a profile alike.
func TestZeRO1DividesOptimizerState(t *testing.T) {
	const d = 4
	t.Run("architecture", func(t *testing.T) {
		base := `{"model":{"architecture":{"name":"gpt2"}},"cluster":{"device":"a100-80gb","count":8},"parallelism":{"data":4,"zero":%d},"boundaries":[0,7,15]}`
		none := runJSON(t, strings.Replace(base, "%d", "0", 1))
		zero := runJSON(t, strings.Replace(base, "%d", "1", 1))
		for i := range none.Plan.Stages {
			n, z := none.Plan.Stages[i], zero.Plan.Stages[i]
			if z.OptimizerBytes*d != n.OptimizerBytes || n.OptimizerBytes == 0 {
				t.Errorf("stage %d: optimizer_bytes %d with ZeRO-1, want %d / %d", i, z.OptimizerBytes, n.OptimizerBytes, d)
			}
			if z.ParamBytes != n.ParamBytes {
				t.Errorf("stage %d: param_bytes %d with ZeRO-1, want %d (weights and gradients are not sharded)", i, z.ParamBytes, n.ParamBytes)
			}
		}
	})
	t.Run("profile", func(t *testing.T) {
		base := `{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":16},"parallelism":{"data":4,"zero":%d},"boundaries":[0,7,14,21,26]}`
		none := runJSON(t, strings.Replace(base, "%d", "0", 1))
		zero := runJSON(t, strings.Replace(base, "%d", "1", 1))
		layers := gpt2Layers(t)
		for i := range none.Plan.Stages {
			n, z := none.Plan.Stages[i], zero.Plan.Stages[i]
			var want int64
			for l := n.FirstLayer; l <= n.LastLayer; l++ {
				want += (layers[l].OptimizerBytes + d - 1) / d // each layer's share, rounded up
			}
			if z.OptimizerBytes != want || n.OptimizerBytes <= z.OptimizerBytes {
				t.Errorf("stage %d: optimizer_bytes %d with ZeRO-1 (%d without), want 1/%d: %d", i, z.OptimizerBytes, n.OptimizerBytes, d, want)
			}
			if z.ParamBytes != n.ParamBytes {
				t.Errorf("stage %d: param_bytes %d with ZeRO-1, want %d", i, z.ParamBytes, n.ParamBytes)
			}
		}
		if !(zero.Step.OptimizerSeconds < none.Step.OptimizerSeconds) {
			t.Errorf("optimizer update %v s with ZeRO-1, %v s without: each device updates its shard", zero.Step.OptimizerSeconds, none.Step.OptimizerSeconds)
		}
	})
}

// Links: a cluster document whose stages pass activations needs a link with a bandwidth
// between them, unless transfers are free.
func TestLinksBetweenStages(t *testing.T) {
	tests := []struct {
		name, cluster, path string
	}{
		{"no links", `{"devices":[{"name":"a100-80gb"},{"name":"a100-80gb"}]}`, "cluster.document.links"},
		{"a link of 0 bytes/s", `{"devices":[{"name":"a100-80gb"},{"name":"a100-80gb"}],"links":[{"latency_seconds":1e-6,"bytes_per_second":0}]}`, "cluster.document.links[0]"},
		{"the second of three links missing", `{"devices":[{"name":"a100-80gb"},{"name":"a100-80gb"},{"name":"a100-80gb"}],"links":[{"latency_seconds":1e-6,"bytes_per_second":1e9}]}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := decode(t, `{"model":{"example":"gpt2-medium"},"cluster":{"document":`+tt.cluster+`}}`)
			_, err := Run(context.Background(), r)
			if tt.path == "" {
				if err != nil {
					t.Errorf("one link for every pair: %v", err)
				}
			} else if !hasFieldError(err, tt.path, "") {
				t.Errorf("error %v, want one at %s", err, tt.path)
			}
			free := decode(t, `{"model":{"example":"gpt2-medium"},"cluster":{"document":`+tt.cluster+`,"free_transfers":true}}`)
			res := run(t, free)
			if !res.Feasible {
				t.Fatalf("free transfers: no plan: %+v", res.Diagnostics)
			}
			for i, s := range res.Plan.Stages {
				if s.TransferSeconds != 0 {
					t.Errorf("free transfers: stage %d transfers for %v s", i, s.TransferSeconds)
				}
			}
		})
	}
}

// Recomputation has one meaning per kind of model. Full recomputation of a profile
// stashes each stage's input for the other microbatches in flight (the schedule rebuilds
// the rest); of an architecture, each block keeps its input and the stash is of those.
// Selective recomputation needs an architecture.
func TestRecomputeOneNotion(t *testing.T) {
	t.Run("profile", func(t *testing.T) {
		none := runJSON(t, `{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":4},"boundaries":[0,7,14,21,26]}`)
		full := runJSON(t, `{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":4},"boundaries":[0,7,14,21,26],"training":{"recompute":"full"}}`)
		if !full.Schedule.Recompute || none.Schedule.Recompute {
			t.Errorf("schedule recompute %v with full, %v without", full.Schedule.Recompute, none.Schedule.Recompute)
		}
		for i, s := range full.Plan.Stages {
			if want := int64(s.InFlight-1) * s.RecvBytes; s.StashBytes != want {
				t.Errorf("stage %d: stash %d, want (in flight - 1) x stage input = %d x %d", i, s.StashBytes, s.InFlight-1, s.RecvBytes)
			}
			if s.InFlight > 1 && !(s.MemoryBytes < none.Plan.Stages[i].MemoryBytes) {
				t.Errorf("stage %d: %d bytes with full recomputation, %d without", i, s.MemoryBytes, none.Plan.Stages[i].MemoryBytes)
			}
			if s.MemoryBytes != full.Schedule.PeakMemoryBytes[i] {
				t.Errorf("stage %d: memory_bytes %d, the schedule's peak %d", i, s.MemoryBytes, full.Schedule.PeakMemoryBytes[i])
			}
		}
	})
	t.Run("architecture", func(t *testing.T) {
		// Stages 1 and 2 hold blocks only: each keeps its input, the tensor the stage receives.
		full := runJSON(t, `{"model":{"architecture":{"name":"gpt2"}},"cluster":{"device":"a100-80gb","count":4},"boundaries":[0,4,8,12,15],"training":{"recompute":"full"}}`)
		if full.Schedule.Recompute {
			t.Errorf("the schedule recomputes stages of an architecture whose blocks already keep only their inputs")
		}
		for _, i := range []int{1, 2} {
			s := full.Plan.Stages[i]
			blocks := int64(s.LastLayer - s.FirstLayer + 1)
			if !strings.HasPrefix(s.FirstName, "block.") || !strings.HasPrefix(s.LastName, "block.") {
				t.Fatalf("stage %d holds %s .. %s", i, s.FirstName, s.LastName)
			}
			if s.ActivationBytes != blocks*s.RecvBytes {
				t.Errorf("stage %d: activations %d, want %d blocks x their input %d", i, s.ActivationBytes, blocks, s.RecvBytes)
			}
			if want := int64(s.InFlight-1) * s.ActivationBytes; s.StashBytes != want {
				t.Errorf("stage %d: stash %d, want (in flight - 1) x the blocks' inputs = %d", i, s.StashBytes, want)
			}
		}
	})
	t.Run("selective on a profile", func(t *testing.T) {
		_, err := Run(context.Background(), decode(t, `{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":4},"training":{"recompute":"selective"}}`))
		if !hasFieldError(err, "training.recompute", "needs an architecture") {
			t.Errorf("error %v, want one at training.recompute", err)
		}
	})
}

// Inference has one meaning: a native profile's param_bytes hold weights and gradients
// (half each, without grad_bytes), so inference holds half of them and no optimizer
// state. The inference schedule alone implies inference: the same request.
func TestInferenceOneNotion(t *testing.T) {
	bounds := `"boundaries":[0,7,14,21,26]`
	inf := runJSON(t, `{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":4},"training":{"mode":"inference"},`+bounds+`}`)
	layers := gpt2Layers(t)
	for i, s := range inf.Plan.Stages {
		var want int64
		for l := s.FirstLayer; l <= s.LastLayer; l++ {
			want += layers[l].ParamBytes - layers[l].ParamBytes/2
		}
		if s.ParamBytes != want || s.OptimizerBytes != 0 {
			t.Errorf("stage %d: param_bytes %d, optimizer_bytes %d; want the weights' %d and 0", i, s.ParamBytes, s.OptimizerBytes, want)
		}
		if s.StashBytes != 0 || s.InFlight != 1 {
			t.Errorf("stage %d: stash %d for %d in flight: inference keeps nothing for a backward pass", i, s.StashBytes, s.InFlight)
		}
	}
	if diagnostic(inf, wire.CodeStateRemoved) == nil {
		t.Errorf("no state_removed note")
	}
	sched := decode(t, `{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":4},"schedule":{"name":"inference"},`+bounds+`}`)
	n, err := Normalize(sched)
	if err != nil {
		t.Fatal(err)
	}
	if n.Training.Mode != wire.ModeInference {
		t.Errorf("schedule inference: mode %q, want inference", n.Training.Mode)
	}
	if res := run(t, sched); res.ID != inf.ID {
		t.Errorf("schedule inference and mode inference: ids %s and %s, want one request", res.ID, inf.ID)
	}
}

// Run never panics on what a front end may hand it: no request, boundaries that do not
// split the model, a valid request that fits nothing.
func TestRunRefusesWithoutPanicking(t *testing.T) {
	if res, err := Run(context.Background(), nil); err == nil || res != nil {
		t.Errorf("Run(nil): %v, %v", res, err)
	}
	var noContext context.Context
	if _, err := Run(noContext, decode(t, `{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":2}}`)); err != nil {
		t.Errorf("Run without a context: %v", err)
	}
	var zero wire.Request
	if _, err := Run(context.Background(), &zero); !hasFieldError(err, "model", "exactly one") {
		t.Errorf("Run(zero request): %v", err)
	}
	for _, b := range []struct{ bounds, path string }{
		{`[0,26]`, "boundaries"},
		{`[0,7,14,21,26,26]`, "boundaries"},
		{`[0,7,14,21,30]`, "boundaries"},
		{`[1,7,14,21,26]`, "boundaries"},
		{`[0,14,7,21,26]`, "boundaries[2]"},
		{`[0,7,7,21,26]`, "boundaries[2]"},
		{`[0,-7,14,21,26]`, "boundaries[1]"},
	} {
		r := decode(t, `{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":4},"boundaries":`+b.bounds+`}`)
		if _, err := Run(context.Background(), r); !hasFieldError(err, b.path, "") {
			t.Errorf("boundaries %s: %v, want an error at %s", b.bounds, err, b.path)
		}
	}
}

// A valid request that fits nothing is a result, not an error: Feasible false and a
// diagnostic that says why; a given split over memory is planned and flagged.
func TestRunInfeasible(t *testing.T) {
	res := run(t, decode(t, `{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":4},"memory_proportion":0.01}`))
	if res.Feasible || res.Plan != nil || res.Step != nil {
		t.Errorf("feasible %v, plan %v, step %v", res.Feasible, res.Plan, res.Step)
	}
	var found bool
	for _, d := range res.Diagnostics {
		found = found || (d.Severity == wire.Error && d.Code != "" && d.BytesNeeded > d.CapacityBytes)
	}
	if !found {
		t.Errorf("no error diagnostic with bytes needed over capacity: %+v", res.Diagnostics)
	}
	res = run(t, decode(t, `{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":2},"boundaries":[0,25,26],"schedule":{"name":"gpipe","microbatches":16}}`))
	d := diagnostic(res, wire.CodeStageOverMemory)
	if res.Feasible || res.Plan == nil || d == nil || d.Stage == nil || *d.Stage != 0 || d.BytesNeeded <= d.CapacityBytes {
		t.Errorf("split over memory: feasible %v, diagnostic %+v", res.Feasible, d)
	}
	if res := run(t, decode(t, `{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":30}}`)); res.Feasible || diagnostic(res, "too_few_layers") == nil {
		t.Errorf("30 stages for 26 layers: %+v", res.Diagnostics)
	} else if d := diagnostic(res, "too_few_layers"); d.Field != "parallelism.pipeline" {
		t.Errorf("too_few_layers names %q, want parallelism.pipeline", d.Field)
	}
}

// The data-parallel all-reduce moves every gradient, a tied embedding's included: it
// lives in the stage's shared item, not in a layer's grad_bytes. On one stage the model's
// gradients are 2 bytes per parameter (bf16); with the matrix copied to both ends of two
// stages, each copy's gradients are all-reduced by the device holding it.
func TestDataParallelAllReducesTiedGradients(t *testing.T) {
	a, err := arch.Bundled("gpt2")
	if err != nil {
		t.Fatal(err)
	}
	tied := int64(a.VocabSize) * int64(a.HiddenSize) * 2
	one := runJSON(t, `{"model":{"architecture":{"name":"gpt2"}},"cluster":{"device":"a100-80gb","count":2},"parallelism":{"pipeline":1,"data":2}}`)
	if want := 2 * one.Model.Params; one.Devices[0].GradBytes != want {
		t.Errorf("1 stage: grad_bytes %d, want 2 x %d parameters = %d", one.Devices[0].GradBytes, one.Model.Params, want)
	}
	nv := link(t, "nvlink3")
	// Eager PyTorch's DDP buckets (cluster.DDPBucketBytes): each a ring all-reduce's
	// latency, 2 steps of the link's for two members.
	buckets := cluster.BucketCount(2*one.Model.Params, cluster.DDPFirstBucketBytes, cluster.DDPBucketBytes)
	if want := ring(2, 2*one.Model.Params, nv.LatencySeconds, nv.BytesPerSecond) + float64(buckets-1)*2*nv.LatencySeconds; !near(one.Step.DataParallelAllReduceSeconds, want) {
		t.Errorf("1 stage: all-reduce %v s, want %v s", one.Step.DataParallelAllReduceSeconds, want)
	}
	two := runJSON(t, `{"model":{"architecture":{"name":"gpt2"}},"cluster":{"device":"a100-80gb","count":4},"parallelism":{"pipeline":2,"data":2}}`)
	if got, want := two.Devices[0].GradBytes+two.Devices[1].GradBytes, 2*two.Model.Params+tied; got != want {
		t.Errorf("2 stages: grad_bytes %d + %d, want the model's %d plus the copy's %d", two.Devices[0].GradBytes, two.Devices[1].GradBytes, 2*two.Model.Params, tied)
	}
}

// An architecture's memory_efficiency overrides the preset's for every memory-bound
// kernel, the optimizer update included: each device's update is the analytic
// estimate's for its stage's layers (analytic.Result.OptimizerSeconds), and a lower
// efficiency makes its memory-bound pass longer.
func TestOptimizerUpdateUsesMemoryEfficiencyOverride(t *testing.T) {
	const q = `{"model":{"architecture":{"name":"gpt2","memory_efficiency":%v}},"cluster":{"device":"a100-80gb","count":2}}`
	slow, fast := runJSON(t, fmt.Sprintf(q, 0.4)), runJSON(t, fmt.Sprintf(q, 0.8))
	est, err := Estimate(context.Background(), decode(t, fmt.Sprintf(q, 0.4)))
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range slow.Plan.Stages {
		device, host := est.OptimizerSeconds(s.FirstLayer, s.LastLayer)
		if want := max(device, host); slow.Devices[i].OptimizerSeconds != want {
			t.Errorf("device %d: optimizer update %v s, want the estimate's %v s at 0.4 of the bandwidth", i, slow.Devices[i].OptimizerSeconds, want)
		}
		if !(slow.Devices[i].OptimizerSeconds > fast.Devices[i].OptimizerSeconds) {
			t.Errorf("device %d: update %v s at 0.4 of the bandwidth, not longer than %v s at 0.8", i, slow.Devices[i].OptimizerSeconds, fast.Devices[i].OptimizerSeconds)
		}
	}
}

// TestPrecisionAllReduce: with fp32 gradients (Megatron-LM's main_grad, or PyTorch AMP's
// fp32 parameters) the data-parallel all-reduce moves twice mixed precision's bytes.
func TestPrecisionAllReduce(t *testing.T) {
	req := func(precision string) *wire.Result {
		return runJSON(t, `{"model": {"architecture": {"name": "llama-3.2-1b", "seq": 1024}},
			"cluster": {"device": "h100-sxm", "count": 4}, "parallelism": {"pipeline": 2, "data": 2},
			"training": {"precision": "`+precision+`"}}`)
	}
	mixed := req("mixed")
	for _, p := range []string{"mixed-fp32-grads", "amp"} {
		res := req(p)
		for i, d := range res.Devices {
			if want := 2 * mixed.Devices[i].GradBytes; d.GradBytes != want {
				t.Errorf("%s: device %d all-reduces %d bytes, want twice mixed's: %d", p, i, d.GradBytes, want)
			}
		}
		if !(res.Step.DataParallelAllReduceSeconds > mixed.Step.DataParallelAllReduceSeconds) {
			t.Errorf("%s: all-reduce %v s, not longer than mixed's %v s", p, res.Step.DataParallelAllReduceSeconds, mixed.Step.DataParallelAllReduceSeconds)
		}
	}
}
