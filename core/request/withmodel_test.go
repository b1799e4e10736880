package request

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"pipeplan/core/examples"
	"pipeplan/core/wire"
)

// TestWithModel: a model change keeps every field the new model takes and drops what
// Normalize refuses for it, naming the field and giving Normalize's reason; a profile
// takes no architecture knobs; the old model's label and split go; a refusal of a field
// that is not a knob (the cluster) stops nothing and is left; r itself is not changed.
func TestWithModel(t *testing.T) {
	dense := func() *wire.Request {
		r := &wire.Request{Version: wire.Version, Cluster: wire.ClusterSpec{Device: "h100-sxm", Count: 8},
			Model: wire.ModelSpec{Name: "mine", Architecture: &wire.Architecture{Name: "meta-llama-3-8b", Seq: 8192, DType: "fp8",
				Attention: "cudnn", Framework: "megatron", CrossEntropy: "vocab-parallel", Split: "sublayer", Tie: "stage"}},
			Parallelism: wire.Parallelism{Tensor: 2, SequenceParallel: true},
			Training:    wire.Training{FP8AmaxTPOnly: true, FP8ParamGather: true, Recompute: "selective"},
			Schedule:    wire.Schedule{Microbatches: 16},
			Boundaries:  []int{0, 40, 66},
		}
		return r
	}
	moe := func() *wire.Request {
		return &wire.Request{Version: wire.Version, Cluster: wire.ClusterSpec{Device: "h100-sxm", Count: 8},
			Model:       wire.ModelSpec{Architecture: &wire.Architecture{Name: "qwen1.5-moe-a2.7b", Framework: "megatron", ExpertImbalance: 1.5, CapacityFactor: 1.25}},
			Parallelism: wire.Parallelism{Data: 2, Expert: 2, ExpertOverlap: true, ExpertDispatcher: "deepep"}}
	}
	// A profile and an architecture's config as documents: WithModel sets them aside for
	// its rounds (without) and reads the profile once; both come back as given.
	ex, err := examples.Lookup("gpt2-medium")
	if err != nil {
		t.Fatal(err)
	}
	profileDoc := json.RawMessage(ex.ModelJSON())
	gpt2Config := json.RawMessage(`{"model_type":"gpt2","n_embd":768,"n_layer":2,"n_head":12,"vocab_size":50257,"n_positions":1024}`)
	arch := func(name string) wire.ModelSpec { return wire.ModelSpec{Architecture: &wire.Architecture{Name: name}} }
	label := []string{"model.name", "boundaries"}
	for _, c := range []struct {
		name    string
		r       *wire.Request
		m       wire.ModelSpec
		dropped []string
		check   func(out *wire.Request) bool
	}{
		{"another dense architecture takes every knob", dense(), arch("llama-3.2-1b"), label, func(out *wire.Request) bool {
			want := *dense().Model.Architecture
			want.Name = "llama-3.2-1b"
			return reflect.DeepEqual(*out.Model.Architecture, want) && out.Parallelism == dense().Parallelism &&
				out.Training.FP8AmaxTPOnly && out.Training.FP8ParamGather && out.Training.Recompute == "selective" && out.Schedule.Microbatches == 16
		}},
		{"gpt2's learned positions refuse 8,192 tokens", dense(), arch("gpt2"), append(label, "model.architecture.seq"), func(out *wire.Request) bool {
			ar := out.Model.Architecture
			return ar.Seq == 0 && ar.DType == "fp8" && ar.Framework == "megatron" && out.Training.FP8AmaxTPOnly
		}},
		{"the new model's own dtype wins; the fp8 fields go with fp8", dense(), wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-3.2-1b", DType: "bf16"}},
			append(label, "training.fp8_param_gather", "training.fp8_amax_tp_only"), func(out *wire.Request) bool {
				ar := out.Model.Architecture
				return ar.DType == "bf16" && ar.Seq == 8192 && ar.Attention == "cudnn" && !out.Training.FP8AmaxTPOnly && out.Parallelism.Tensor == 2
			}},
		{"a profile takes no architecture knobs nor tensor parallelism", dense(), wire.ModelSpec{Example: "gpt2-medium"},
			append(label, "model.architecture.attention", "model.architecture.cross_entropy", "model.architecture.dtype", "model.architecture.framework",
				"model.architecture.seq", "model.architecture.split", "model.architecture.tie", "parallelism.tensor", "parallelism.sequence_parallel",
				"training.fp8_amax_tp_only", "training.fp8_param_gather", "training.recompute"), func(out *wire.Request) bool {
				return out.Model.Architecture == nil && out.Model.Example == "gpt2-medium" && out.Parallelism == wire.Parallelism{} && out.Schedule.Microbatches == 16
			}},
		{"another mixture takes the expert knobs", moe(), arch("qwen3-30b-a3b"), nil, func(out *wire.Request) bool {
			ar := out.Model.Architecture
			return out.Parallelism == moe().Parallelism && ar.ExpertImbalance == 1.5 && ar.CapacityFactor == 1.25 && ar.Framework == "megatron"
		}},
		{"a dense model takes none", moe(), arch("meta-llama-3-8b"),
			[]string{"parallelism.expert", "parallelism.expert_overlap", "parallelism.expert_dispatcher", "model.architecture.expert_imbalance", "model.architecture.capacity_factor"},
			func(out *wire.Request) bool {
				ar := out.Model.Architecture
				return out.Parallelism == wire.Parallelism{Data: 2} && ar.ExpertImbalance == 0 && ar.CapacityFactor == 0 && ar.Framework == "megatron"
			}},
		{"a profile's document is kept as given, the knobs it refuses dropped", dense(), wire.ModelSpec{Document: profileDoc},
			append(label, "model.architecture.attention", "model.architecture.cross_entropy", "model.architecture.dtype", "model.architecture.framework",
				"model.architecture.seq", "model.architecture.split", "model.architecture.tie", "parallelism.tensor", "parallelism.sequence_parallel",
				"training.fp8_amax_tp_only", "training.fp8_param_gather", "training.recompute"), func(out *wire.Request) bool {
				return string(out.Model.Document) == string(profileDoc) && out.Parallelism == wire.Parallelism{}
			}},
		{"an architecture's config is kept as given", dense(), wire.ModelSpec{Architecture: &wire.Architecture{Config: gpt2Config}}, append(label, "model.architecture.seq"),
			func(out *wire.Request) bool {
				ar := out.Model.Architecture
				return string(ar.Config) == string(gpt2Config) && ar.Seq == 0 && ar.Framework == "megatron" && out.Parallelism.Tensor == 2
			}},
		{"an unknown device is the cluster's refusal, left", func() *wire.Request { r := dense(); r.Cluster.Device = "h100"; return r }(), arch("llama-3.2-1b"), label,
			func(out *wire.Request) bool {
				return out.Cluster.Device == "h100" && out.Parallelism.Tensor == 2 && out.Model.Architecture.Seq == 8192
			}},
	} {
		before, _ := json.Marshal(c.r)
		out, dropped := WithModel(c.r, c.m)
		if after, _ := json.Marshal(c.r); string(after) != string(before) {
			t.Errorf("%s: WithModel changed its request", c.name)
		}
		var got []string
		for _, d := range dropped {
			got = append(got, d.Path)
			if d.Reason == "" {
				t.Errorf("%s: %s dropped without a reason", c.name, d.Path)
			}
		}
		if strings.Join(got, " ") != strings.Join(c.dropped, " ") {
			t.Errorf("%s: dropped\n  %v\nwant\n  %v", c.name, dropped, c.dropped)
		}
		if !c.check(out) {
			t.Errorf("%s: the request kept\n  model %+v\n  parallelism %+v\n  training %+v", c.name, out.Model.Architecture, out.Parallelism, out.Training)
		}
		if _, err := Normalize(out); err != nil && c.r.Cluster.Device == "h100-sxm" {
			t.Errorf("%s: Normalize refuses what WithModel kept: %v", c.name, err)
		}
		if out.Boundaries != nil || out.Model.Name != "" {
			t.Errorf("%s: kept the former model's split %v or label %q", c.name, out.Boundaries, out.Model.Name)
		}
	}
	// Each refusal's reason is Normalize's own.
	_, dropped := WithModel(moe(), arch("meta-llama-3-8b"))
	if d := dropped[0]; d.Reason != "splits the experts of a mixture-of-experts architecture; the model has none" {
		t.Errorf("parallelism.expert's reason %q, want Normalize's", d.Reason)
	}
}

// TestLeftOut: a model change's notice groups the fields that went for one reason on one
// line, by their common parent where they share one, in the order the reasons first came;
// a field alone keeps its path and reason; the notice says whether the model is a
// measured profile; nothing dropped is no notice. The last case is WithModel's own drop
// of an architecture plan's knobs for a profile.
func TestLeftOut(t *testing.T) {
	profile := wire.ModelSpec{Example: "chain"}
	archi := wire.ModelSpec{Architecture: &wire.Architecture{Name: "meta-llama-3-8b"}}
	const knob = "applies to architectures; the model is a measured profile"
	cases := []struct {
		name    string
		m       wire.ModelSpec
		dropped []Dropped
		want    string
	}{
		{"none", profile, nil, ""},
		{"one", archi, []Dropped{{"parallelism.expert", "has no experts"}},
			"Left out for this model: parallelism.expert (has no experts)"},
		{"two under one parent", profile, []Dropped{{"model.architecture.dtype", knob}, {"model.architecture.seq", knob}},
			"Left out for this measured profile: model.architecture's dtype and seq (each " + knob + ")"},
		{"one parent, apart", archi, []Dropped{{"training.optimizer", "r"}, {"parallelism.tensor", "s"}, {"training.precision", "r"}},
			"Left out for this model: training's optimizer and precision (each r); parallelism.tensor (s)"},
		{"parents differ", archi, []Dropped{{"training.optimizer", "r"}, {"parallelism.tensor", "r"}},
			"Left out for this model: training.optimizer and parallelism.tensor (each r)"},
		{"a path without a parent", archi, []Dropped{{"objective", "r"}, {"partition", "r"}, {"model.name", "label"}},
			"Left out for this model: objective and partition (each r); model.name (label)"},
		{"three and a single", profile, []Dropped{{"model.name", "labels the former model"},
			{"model.architecture.attention", knob}, {"model.architecture.dtype", knob}, {"model.architecture.tie", knob},
			{"training.check_for_nan_in_grad", "Megatron-Core only"}},
			"Left out for this measured profile: model.name (labels the former model); model.architecture's attention, dtype and tie (each " + knob +
				"); training.check_for_nan_in_grad (Megatron-Core only)"},
	}
	for _, c := range cases {
		if got := LeftOut(c.m, c.dropped); got != c.want {
			t.Errorf("%s:\n  got  %q\n  want %q", c.name, got, c.want)
		}
	}
	r := &wire.Request{Version: wire.Version, Cluster: wire.ClusterSpec{Device: "h100-sxm", Count: 8},
		Model: wire.ModelSpec{Architecture: &wire.Architecture{Name: "meta-llama-3-8b", Seq: 8192, DType: "fp8", Tie: "stage"}}}
	_, dropped := WithModel(r, profile)
	want := "Left out for this measured profile: model.architecture's dtype, seq and tie (each " + knob + ")"
	if got := LeftOut(profile, dropped); got != want {
		t.Errorf("WithModel's drop for a profile:\n  got  %q\n  want %q", got, want)
	}
}
