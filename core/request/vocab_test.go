package request

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"pipeplan/core/analytic"
	"pipeplan/core/arch"
	"pipeplan/core/cluster"
	"pipeplan/core/model"
	"pipeplan/core/partition"
	"pipeplan/core/schedule"
	"pipeplan/core/wire"
)

// TestVocabularyIsThePlanners: core/wire's lists, which the front ends offer, are the
// planner's own constants, and every value in them is accepted by Normalize at its field
// while a made-up one is refused there.
func TestVocabularyIsThePlanners(t *testing.T) {
	strs := func(xs ...fmt.Stringer) []string {
		var s []string
		for _, x := range xs {
			s = append(s, x.String())
		}
		return s
	}
	kinds := func() []string {
		var s []string
		for _, k := range schedule.Kinds {
			s = append(s, string(k))
		}
		return s
	}
	recipes := func() []string {
		var s []string
		for _, r := range analytic.FP8Recipes {
			s = append(s, string(r))
		}
		return s
	}
	// request builds a request on an architecture with the field (a JSON path) set to v.
	arch := func(extra string) string {
		return `{"model":{"architecture":{"name":"llama-2-7b"` + extra + `}},"cluster":{"device":"b200","count":8},"parallelism":{"data":2}`
	}
	tests := []struct {
		field   string
		list    []string
		planner []string
		build   func(v string) string
	}{
		{"model.architecture.dtype", wire.DTypes(), []string{string(analytic.BF16), string(analytic.FP16), string(analytic.FP32), string(analytic.FP8)},
			func(v string) string { return arch(`,"dtype":"`+v+`"`) + `}` }},
		{"training.fp8_recipe", wire.FP8Recipes(), recipes(),
			func(v string) string { return arch(`,"dtype":"fp8"`) + `,"training":{"fp8_recipe":"` + v + `"}}` }},
		{"model.architecture.attention", wire.Attentions(), []string{string(analytic.Flash), string(analytic.Flash3), string(analytic.CuDNN), string(analytic.FlashTriton), string(analytic.Flash1), string(analytic.Eager)},
			func(v string) string {
				return strings.Replace(arch(`,"attention":"`+v+`"`), "b200", "h100-sxm", 1) + `}`
			}},
		{"model.architecture.split", wire.Splits(), []string{string(analytic.Blocks), string(analytic.Sublayers)},
			func(v string) string { return arch(`,"split":"`+v+`"`) + `}` }},
		{"model.architecture.tie", wire.Ties(), []string{string(analytic.TieCopy), string(analytic.TieStage)},
			func(v string) string {
				return strings.Replace(arch(`,"tie":"`+v+`"`), "llama-2-7b", "gpt2", 1) + `}`
			}},
		{"training.mode", wire.Modes(), []string{wire.ModeTraining, wire.ModeInference},
			func(v string) string {
				return strings.Replace(arch(""), `"data":2`, ``, 1) + `,"training":{"mode":"` + v + `"}}`
			}},
		{"training.precision", wire.Precisions(), []string{string(analytic.Mixed), string(analytic.MixedFP32Grads), string(analytic.AMP), string(analytic.Pure), string(analytic.DeepSpeedBF16)},
			func(v string) string { return arch("") + `,"training":{"precision":"` + v + `"}}` }},
		{"training.optimizer", wire.Optimizers(), []string{string(analytic.AdamW), string(analytic.Adam), string(analytic.SGD)},
			func(v string) string { return arch("") + `,"training":{"optimizer":"` + v + `"}}` }},
		{"training.recompute", wire.RecomputeModes(), []string{string(analytic.NoRecompute), string(analytic.Selective), string(analytic.SelectiveOp), string(analytic.Full), RecomputeAuto},
			func(v string) string { return arch("") + `,"training":{"recompute":"` + v + `"}}` }},
		{"parallelism.sharding", wire.ShardingModes(), []string{string(analytic.NoSharding), string(analytic.ZeRO1), string(analytic.ZeRO2), string(analytic.ZeRO3), string(analytic.HSDP)},
			func(v string) string {
				return strings.Replace(arch(""), `"data":2`, `"data":2,"sharding":"`+v+`"`, 1) + `}`
			}},
		{"parallelism.context_method", wire.ContextMethods(), []string{string(analytic.Ring), string(analytic.AllToAll), string(analytic.Hierarchical), string(analytic.AllGather)},
			func(v string) string {
				return strings.Replace(arch(""), `"data":2`, `"context":2,"context_method":"`+v+`"`, 1) + `}`
			}},
		{"parallelism.expert_dispatcher", wire.ExpertDispatchers(), []string{string(analytic.DispatchAllToAll), string(analytic.DispatchDeepEP), string(analytic.DispatchDeepEPFP8), string(analytic.DispatchHybridEP)}, nil},
		{"parallelism.prefetch", wire.PrefetchModes(), []string{PrefetchNextLayer, PrefetchNone},
			func(v string) string {
				return strings.Replace(arch(""), `"data":2`, `"data":2,"sharding":"zero3","prefetch":"`+v+`"`, 1) + `}`
			}},
		{"parallelism.reshard", wire.ReshardModes(), []string{ReshardLayer, ReshardStep},
			func(v string) string {
				return strings.Replace(arch(""), `"data":2`, `"data":2,"sharding":"zero3","reshard":"`+v+`"`, 1) + `}`
			}},
		{"parallelism.reduce_dtype", wire.ReduceDTypes(), []string{ReduceFP32},
			func(v string) string {
				return strings.Replace(arch(""), `"data":2`, `"data":2,"sharding":"zero3","reduce_dtype":"`+v+`"`, 1) + `}`
			}},
		{"model.architecture.framework", wire.Frameworks(), []string{cluster.Eager, cluster.Compiled, cluster.CUDAGraphs, cluster.Megatron, cluster.DeepSpeed, cluster.NoFramework},
			func(v string) string { return arch(`,"framework":"`+v+`"`) + `}` }},
		{"model.architecture.cross_entropy", wire.CrossEntropies(), cluster.CrossEntropyKinds(),
			func(v string) string { return arch(`,"cross_entropy":"`+v+`"`) + `}` }},
		{"parallelism.overlap_grad_reduce", wire.OverlapModes(), []string{OverlapOn, OverlapOff},
			func(v string) string {
				return strings.Replace(arch(""), `"data":2`, `"data":2,"overlap_grad_reduce":"`+v+`"`, 1) + `}`
			}},
		{"parallelism.overlap_param_gather", wire.OverlapModes(), []string{OverlapOn, OverlapOff},
			func(v string) string {
				return strings.Replace(arch(""), `"data":2`, `"data":2,"sharding":"zero1","overlap_param_gather":"`+v+`"`, 1) + `}`
			}},
		{"parallelism.overlap_tensor_comm", wire.TensorOverlapModes(), []string{OverlapOn, OverlapOff, OverlapUserbuffers, OverlapAsyncTP},
			func(v string) string {
				return strings.Replace(arch(`,"framework":"compiled"`), `"data":2`, `"data":2,"tensor":2,"sequence_parallel":true,"overlap_tensor_comm":"`+v+`"`, 1) + `}`
			}},
		{"training.moe_aux_loss", wire.MoEAuxLosses(), []string{string(analytic.AuxLossNone), string(analytic.AuxLossMicrobatch), string(analytic.AuxLossSequence)},
			func(v string) string {
				return `{"model":{"architecture":{"name":"mixtral-8x7b-v0.1","framework":"megatron"}},"cluster":{"device":"b200","count":8},"training":{"moe_aux_loss":"` + v + `"}}`
			}},
		// Each tuned config is of one model's shape, which Normalize checks: the list is
		// held to the planner's table; its refusals are TestTPCommOverlapConfig's.
		{"parallelism.tp_comm_overlap_config", wire.TPCommOverlapConfigs(), analytic.UserbuffersConfigNames(), nil},
		{"schedule.name", wire.ScheduleKinds(), kinds(), nil},
		{"schedule.name", wire.Schedules(), nil,
			func(v string) string {
				mode := "training"
				if v == "inference" {
					mode = "inference"
				}
				return `{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":4},"training":{"mode":"` + mode + `"},"schedule":{"name":"` + v + `"}}`
			}},
		{"objective", wire.Objectives(), strs(partition.MaxCompute, partition.MaxComputePlusTransfer),
			func(v string) string { return arch("") + `,"objective":"` + v + `"}` }},
		{"partition", wire.Partitions(), []string{wire.PartitionLayers, wire.PartitionGraph},
			func(v string) string { return arch("") + `,"partition":"` + v + `"}` }},
	}
	// Every framework mode core knows is listed (FrameworkNames is sorted).
	if got, want := slices.Sorted(slices.Values(wire.Frameworks())), cluster.FrameworkNames(); !slices.Equal(got, want) {
		t.Errorf("model.architecture.framework: core/wire lists %q, core/cluster has %q", got, want)
	}
	if got, want := wire.RecomputeModules(), analytic.ModuleNames(); !slices.Equal(got, want) {
		t.Errorf("training.recompute_modules: core/wire lists %q, the planner %q", got, want)
	}
	for _, tc := range tests {
		if tc.planner != nil && !slices.Equal(tc.list, tc.planner) {
			t.Errorf("%s: core/wire lists %q, the planner %q", tc.field, tc.list, tc.planner)
		}
		if tc.build == nil {
			continue
		}
		for _, v := range append(slices.Clone(tc.list), "made-up") {
			_, err := Normalize(decode(t, tc.build(v)))
			var at []string
			if es, ok := model.AsFieldErrors(err); ok {
				for _, fe := range es {
					if fe.Path == tc.field {
						at = append(at, fe.Reason)
					}
				}
			} else if err != nil {
				t.Errorf("%s = %q: %v, not a field error", tc.field, v, err)
			}
			switch {
			case v == "made-up" && len(at) == 0:
				t.Errorf("%s = %q: accepted (err %v); the test's request does not reach the field", tc.field, v, err)
			case v != "made-up" && len(at) > 0:
				t.Errorf("%s = %q (core/wire's list): refused: %s", tc.field, v, strings.Join(at, "; "))
			}
		}
	}
	// Every order core/schedule runs is offered: each kind, and interleaved in both
	// Megatron-LM's and PyTorch's order (ScheduleInterleaved1F1B's, interleaved-pytorch:V)
	// with 2 and 4 chunks, written as Config.String writes them (the page's picker had
	// no PyTorch order).
	for _, k := range schedule.Kinds {
		cs := []schedule.Config{{Kind: k}}
		if k == schedule.Interleaved {
			cs = nil
			for _, pt := range []bool{false, true} {
				for _, v := range []int{2, 4} {
					cs = append(cs, schedule.Config{Kind: k, Chunks: v, PyTorchOrder: pt})
				}
			}
		}
		for _, c := range cs {
			if !slices.Contains(wire.Schedules(), c.String()) {
				t.Errorf("schedule.name: core/schedule runs %s, core/wire's list %q lacks it", c, wire.Schedules())
			}
		}
	}
	// The expert imbalance's bound, at the bound and past it.
	moe := func(field string, v float64) string {
		return fmt.Sprintf(`{"model":{"architecture":{"name":"mixtral-8x7b","%s":%v}},"cluster":{"device":"h100-sxm","count":8},"parallelism":{"data":8,"expert":8}}`, field, v)
	}
	for _, field := range []string{"expert_imbalance", "capacity_factor"} {
		if _, err := Normalize(decode(t, moe(field, wire.MaxExpertImbalance))); err != nil {
			t.Errorf("%s = wire.MaxExpertImbalance (%d): refused: %v", field, wire.MaxExpertImbalance, err)
		}
		if _, err := Normalize(decode(t, moe(field, 2*wire.MaxExpertImbalance))); err == nil {
			t.Errorf("%s = 2 x wire.MaxExpertImbalance: accepted", field)
		}
	}
	if wire.MaxDevices != cluster.MaxStages {
		t.Errorf("wire.MaxDevices = %d, cluster.MaxStages = %d", wire.MaxDevices, cluster.MaxStages)
	}
}

// TestPresetsAreThePlanners: the presets core/wire lists (the page's pickers) are
// core/cluster's devices with their usual links, its links, and core/arch's bundled
// architectures, and each device is planned by name.
func TestPresetsAreThePlanners(t *testing.T) {
	var names []string
	for _, d := range wire.DevicePresets() {
		names = append(names, d.Name)
		p, err := cluster.LookupDevice(d.Name)
		if err != nil {
			t.Errorf("device %s: %v", d.Name, err)
			continue
		}
		if d.Link != p.Link || d.Network != p.Network {
			t.Errorf("device %s: core/wire's usual links %q and %q, core/cluster's %q and %q", d.Name, d.Link, d.Network, p.Link, p.Network)
		}
		r := `{"model":{"example":"gpt2-medium"},"cluster":{"device":"` + d.Name + `","count":2}}`
		if _, err := Normalize(decode(t, r)); err != nil {
			t.Errorf("device %s: %v", d.Name, err)
		}
	}
	if !slices.Equal(names, cluster.DeviceNames()) {
		t.Errorf("core/wire's devices %q, core/cluster's %q", names, cluster.DeviceNames())
	}
	if !slices.Equal(wire.LinkPresets(), cluster.LinkNames()) {
		t.Errorf("core/wire's links %q, core/cluster's %q", wire.LinkPresets(), cluster.LinkNames())
	}
	if !slices.Equal(wire.Architectures(), arch.BundledNames()) {
		t.Errorf("core/wire's architectures %q, core/arch's %q", wire.Architectures(), arch.BundledNames())
	}
}
