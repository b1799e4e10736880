package export

import (
	"fmt"
	"strings"

	"pipeplan/core/analytic"
	"pipeplan/core/schedule"
	"pipeplan/core/wire"
)

// graphcore writes the split for Graphcore IPUs: the pipeline stage of every layer for
// Keras (model.set_pipeline_stage_assignment, with set_pipelining_options'
// device_mapping), and the IPU of every layer for popxl, where (as popxl's pipelining guide
// describes) the forward of the layers on IPU d runs in pipeline stage d and their backward in stage 2P-2-d.
//
// Graphcore's pipelining runs its own lockstep schedule, pipeplan's ipu schedule; other
// schedules are priced under it. It places whole layers on IPUs, so a plan with tensor
// parallelism cannot be written for it. Keras names layers by their Keras names, which a
// profile of Graphcore's auto-pipeline tool uses as its layer names.
func graphcore(j *job) error {
	in := j.in
	if t := orOne(in.Tensor); t > 1 {
		return fmt.Errorf("graphcore export: the plan splits every block over %d devices (tensor parallelism), and Keras's pipeline stage assignment places whole layers on one IPU each: plan with parallelism.tensor 1 for Graphcore", t)
	}
	if c := orOne(in.Context); c > 1 {
		return fmt.Errorf("graphcore export: the plan splits every sequence over %d devices (context parallelism), and Keras's pipeline stage assignment places whole layers on one IPU each: plan with parallelism.context 1 for Graphcore", c)
	}
	graphcoreRecompute(j)
	if in.ZeRO > 0 {
		j.parallelism("the plan shards training state over the replicas (%s), which this export (one pipeline's stages) does not set up: with replicas, popxl's replicated tensor sharding of the optimizer state comes closest", shardingName(in))
	}
	if why := graphcorePrecision(in); why != "" {
		j.imprecision("%s", why)
	}
	const own = "Graphcore's pipelining runs its own schedule (forward stages on IPUs 0..P-1, backward stages back down on the same IPUs: pipeplan's ipu schedule)"
	switch j.sched.Kind {
	case schedule.IPU, schedule.Inference:
	case schedule.Interleaved:
		if err := j.best(schedule.Config{Kind: schedule.IPU}, own+", with one stage per IPU in pipeplan's pricing"); err != nil {
			return err
		}
	default:
		j.runSchedule(schedule.Config{Kind: schedule.IPU}, own)
	}
	if in.Arch != nil {
		j.note(wire.NoteModuleNames, "STAGE_OF is keyed by pipeplan's layer names, which are not Keras layer names for an architecture: rename them to your model's layers")
	}
	if in.graph() {
		j.note(wire.NoteLayerList, "the plan splits the model's graph into convex stages that are not contiguous in the model's layer order: STAGE_OF gives every layer its stage, and every layer reads only tensors of its own stage or earlier ones, as a pipeline's stages must")
	}
	b := j.split()
	run := j.ranSchedule()
	p := run.Devices(len(b) - 1)
	if run.Kind == schedule.IPU {
		if depth := run.Depth(len(b) - 1); run.Microbatches < 2*depth {
			j.note(wire.NoteMicrobatches, "Graphcore's pipeline has %d stages on %d IPUs; it wants at least twice as many microbatches (gradient accumulation >= %d), has %d", depth, p, 2*depth, run.Microbatches)
		}
	}
	stageOf := make([]int, len(in.LayerNames))
	for i, s := range stagesOf(b) {
		for l := s[0]; l <= s[1]; l++ {
			stageOf[l] = i
		}
	}

	var w strings.Builder
	header(&w, "python", j, "Graphcore IPU: Keras pipeline stages and popxl IPU mapping")
	fmt.Fprintf(&w, "P = %d  # IPUs in the pipeline: stage i on IPU i\nGRADIENT_ACCUMULATION = %d  # microbatches per step\nMICROBATCH_SIZE = %d\n\n", p, run.Microbatches, orOne(in.MicrobatchSize))
	w.WriteString("# The pipeline stage of every layer (all calls of a layer share its stage).\nSTAGE_OF = {\n")
	seen := map[string]bool{}
	for l, name := range in.LayerNames {
		if seen[name] {
			continue // a layer called again: one entry
		}
		seen[name] = true
		fmt.Fprintf(&w, "    %s: %d,\n", pyStr(name), stageOf[l])
	}
	w.WriteString("}\n")
	dm := make([]int, len(b)-1)
	for i := range dm {
		dm[i] = i
	}
	fmt.Fprintf(&w, "DEVICE_MAPPING = %s  # stage i on IPU DEVICE_MAPPING[i]\n\n", pyInts(dm))
	w.WriteString(`
def assign_keras_stages(model):
    """Applies the split to a Keras model built in an IPUStrategy scope (TensorFlow 2 for IPUs)."""
    assignments = model.get_pipeline_stage_assignment()
    for a in assignments:
        if a.layer.name not in STAGE_OF:
            raise KeyError("layer %r is not in pipeplan's plan" % a.layer.name)
        a.pipeline_stage = STAGE_OF[a.layer.name]
    model.set_pipeline_stage_assignment(assignments)
    model.set_pipelining_options(
        gradient_accumulation_steps_per_replica=GRADIENT_ACCUMULATION,
        device_mapping=DEVICE_MAPPING,
    )


# popxl: build each layer's graphs in popxl.ipu(IPU_OF[layer]); inside
# addons.pipelined_execution, run its forward in p.stage(forward_stage(layer)) and its
# backward in p.stage(backward_stage(layer)), on that IPU. The last IPU runs its forward,
# the loss and its backward in one stage: 2P-1 stages in all.
IPU_OF = dict(STAGE_OF)


def forward_stage(layer):
    return IPU_OF[layer]


def backward_stage(layer):
    return 2 * P - 2 - IPU_OF[layer]
`)
	j.ex.Filename, j.ex.Language, j.ex.Text = "pipeplan_graphcore.py", "python", w.String()
	return nil
}

// graphcoreRecompute notes the plan's recomputation, which the export does not set:
// Graphcore's pipelining recomputes a whole stage's forward (IPUConfig's allow_recompute
// with set_pipelining_options' recomputation_mode), keeping the stage's input and the
// recomputation checkpoints placed in the model, which the export cannot place; it has no
// per-layer or per-op policy.
func graphcoreRecompute(j *job) {
	in := j.in
	const yourself = "the export sets no recomputation: recompute in the pipeline yourself (IPUConfig allow_recompute with Keras's set_pipelining_options recomputation_mode, and recomputation checkpoints where the plan keeps activations) or keep the activations (more memory than planned)"
	switch in.Recompute {
	case string(analytic.SelectiveOp):
		j.recomputeApprox("the plan prices torchtitan's per-op selective checkpointing (recompute selective-op: every other matmul's output and the fused attention's kept, the rest rerun), and Graphcore's pipelining has no per-op policy: " + yourself)
	case string(analytic.Selective):
		j.recomputeApprox("the plan recomputes part of every block (recompute selective: %s), and Graphcore's pipelining recomputes whole stages: %s", selectiveParts(in), yourself)
	case string(analytic.Full):
		j.recomputeApprox("the plan recomputes every layer from its input (recompute full), which Graphcore's pipelining runs only with a recomputation checkpoint at each layer's input: %s", yourself)
	case "auto":
		switch pl, _ := in.perLayer(); {
		case pl == nil:
			j.recomputeApprox("the plan's per-layer recomputation (recompute auto) is not at hand: %s; give the plan to say what each stage recomputes", yourself)
		case pl.any():
			j.recomputeApprox("the plan recomputes per stage (%s), and Graphcore's pipelining recomputes whole stages: %s", pl.describe(in.LayerNames), yourself)
		}
	}
}

// selectiveParts names what selective recomputation reruns in every block: the
// request's recompute_modules, or the attention core.
func selectiveParts(in *Input) string {
	if len(in.RecomputeModules) == 0 {
		return "the attention core"
	}
	return strings.Join(in.RecomputeModules, ", ")
}
