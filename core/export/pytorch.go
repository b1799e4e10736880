package export

import (
	"fmt"
	"strings"

	"pipeplan/core/request"
	"pipeplan/core/schedule"
	"pipeplan/core/wire"
)

// torchSchedules maps pipeplan's schedules to torch.distributed.pipelining's classes.
var torchSchedules = map[schedule.Kind]string{
	schedule.GPipe:       "ScheduleGPipe",
	schedule.OneFOneB:    "Schedule1F1B",
	schedule.Interleaved: "ScheduleInterleaved1F1B",
	schedule.ZBH1:        "ScheduleInterleavedZeroBubble",
	schedule.Inference:   "ScheduleGPipe",
}

// pytorch writes torch.distributed.pipelining's split_spec (a split point at the
// beginning of each stage's first module), the stages each rank builds and the schedule
// class (PyTorch 2.4 and later).
//
// torch.distributed.pipelining splits a model into stages; it does not split a stage over
// devices. With tensor parallelism (Input.Tensor > 1) the export builds the stages by hand
// instead of with pipeline()'s tracer: each stage's modules are sharded with
// parallelize_module (DTensor) over the "tp" dimension of a (pp, dp, tp) device mesh and
// wrapped in a PipelineStage on the "pp" group, as torchtitan composes them.
func pytorch(j *job) error {
	in := j.in
	mods, fromArch := in.moduleNames()
	parts := in.partModules()
	if !fromArch {
		j.note(wire.NoteModuleNames, "the layer names are used as module paths (as pipeplan_profile.py writes them); for another profile, replace them with the paths of the modules that start each stage")
	}
	graph := in.graph()
	if graph {
		j.graphNote("STAGE_MODULES", "")
		j.note(wire.NoteLayerList, "pipeline()'s split points cut the traced program where a module starts, which makes stages contiguous in the program's order: a graph split is built by hand instead, one module per stage running its STAGE_MODULES in order, taking the tensors of the cut before it (the microbatch on the first stage) and returning those of the cut after it (the output on the last), wrapped in PipelineStage by build_stages")
	}
	switch j.sched.Kind {
	case schedule.IPU, schedule.Overlap:
		j.runSchedule(schedule.Config{Kind: schedule.OneFOneB}, fmt.Sprintf("torch.distributed.pipelining has no %s schedule", j.sched.Kind))
	case schedule.ZBH1:
		j.approximate("torch's ScheduleInterleavedZeroBubble runs the zero-bubble paper's ZB1P schedule, an automatically scheduled cousin of ZB-H1 with the same memory")
	case schedule.Interleaved:
		if !j.sched.PyTorchOrder && j.sched.Microbatches == in.devices() {
			run := j.sched
			run.PyTorchOrder = true
			j.runSchedule(run, "with as many microbatches as ranks, torch's ScheduleInterleaved1F1B still warms up only (v-1)p + 2(p-1-rank) forwards before its first backward, where Megatron-LM's order (the plan's) runs every forward first")
		}
	}
	run := j.ranSchedule()
	if j.tiedAcross() {
		j.note(wire.NoteTied, "the head reuses the embedding matrix, and they are on different stages: each stage holds its copy, so their gradients must be summed each step")
	}
	class := torchSchedules[run.Kind]
	multi := run.Kind == schedule.Interleaved || run.Kind == schedule.ZBH1
	b := j.split()
	p := in.devices()

	dp, tp := orOne(in.Data), orOne(in.Tensor)
	if tp > 1 {
		plan := "ColwiseParallel for the attention's query, key and value and the MLP's input projections, RowwiseParallel for their output projections"
		if in.SequenceParallel {
			plan += ", and with sequence parallelism SequenceParallel for the norms"
		}
		if in.OverlapTensorComm && in.SequenceParallel && in.TensorCommMethod == request.OverlapAsyncTP {
			plan += ". The plan is priced with PyTorch's async tensor parallelism: before compiling each stage with torch.compile, call torch.distributed._symmetric_memory.enable_symm_mem_for_group(mesh[\"tp\"].get_group().group_name) and set torch._inductor.config._micro_pipeline_tp = True (as torchtitan's --parallelism.enable_async_tensor_parallel does)"
		}
		j.note(wire.NoteTensorModules, "torch.distributed.pipelining does not split a stage over devices, and the plan runs every stage tensor-parallel over %d devices: build_tensor_parallel shards each stage with parallelize_module (DTensor) over the \"tp\" dimension of a device mesh and builds its PipelineStage on the \"pp\" group. Split the model by hand (STAGE_MODULES): pipeline()'s traced stages are graphs, not the nn.Linear modules parallelize_module shards. tp_plan is your modules' plan: %s", tp, plan)
	}
	if in.OverlapTensorComm && tp > 1 && in.SequenceParallel && in.TensorCommMethod != request.OverlapAsyncTP {
		j.parallelism("the plan is priced with Transformer Engine's userbuffers tensor-parallel overlap, which parallelize_module (DTensor) does not run: the all-gathers and reduce-scatters it hides run exposed; plan with parallelism.overlap_tensor_comm async-tp (framework compiled: PyTorch's async TP) or off to price what PyTorch runs")
	}

	cp := orOne(in.Context)
	if cp > 1 {
		// PyTorch's context_parallel exchanges by its rotate method: allgather (its
		// default) is what context_method all-gather prices, alltoall passes keys and
		// values around the ring.
		how := "ring attention under torch.distributed.tensor.experimental._attention.set_rotate_method(\"alltoall\"); PyTorch has no all-to-all or hierarchical form of it"
		if in.ContextMethod == "all-gather" {
			how = "its default rotate method, allgather, as planned"
		}
		j.parallelism("the plan splits each sequence over %d devices (context parallelism, %s): device_mesh() has its \"cp\" dimension, but this export does not split the attention: run each stage's forward under torch.distributed.tensor.experimental.context_parallel(mesh[\"cp\"], buffers=..., buffer_seq_dims=...) (%s)", cp, in.ContextMethod, how)
	}
	if in.ZeRO > 0 {
		j.parallelism("the plan shards training state (%s) over the data-parallel devices: wrap each stage with FSDP2's fully_shard over the \"dp\" mesh dimension (reshard_after_forward=%v%s), and for ZeRO-1 and 2 shard the optimizer yourself (torch.distributed.optim.ZeroRedundancyOptimizer)%s", shardingName(in), in.ZeRO == 3 && in.Reshard != "step", fsdp2Policy(in), fsdp2Priced(in))
	}
	if ep, _ := in.expertParallel(); ep > 1 {
		j.parallelism("the plan splits every mixture layer's experts over %d devices (expert parallelism), which torch.distributed.pipelining does not do: shard each stage's experts over an \"ep\" dimension of the device mesh and dispatch tokens with all-to-alls yourself", ep)
	}

	prec, why := pytorchPrecision(in)
	if why != "" {
		j.imprecision("%s", why)
	}

	pl, auto := in.perLayer()
	if auto {
		j.pytorchRecomputeNotes(pl)
	} else if pl = in.globalRecompute(fromArch); pl != nil {
		// Global full: every module of every stage; a profile's whole stages from their
		// input, which per-module wrappers do not express, make it not exact (a note).
		j.pytorchRecomputeNotes(pl)
	} else if pl = in.selectiveOpRecompute(fromArch); pl != nil {
		if !fromArch {
			j.recomputeApprox("the plan prices torchtitan's per-op selective checkpointing on transformer blocks, and a profile's layers are not known to be blocks: apply_recompute wraps every layer's module under the policy; wrap only the blocks (torchtitan wraps model.layers)")
		}
	} else if in.Recompute == "selective" && len(in.RecomputeModules) > 0 {
		j.recomputeApprox("the plan recomputes the parts %s of every block (selective recomputation, Megatron-LM's --recompute-modules), which apply_recompute's checkpoint wrappers do not express: the export recomputes nothing; mlp and moe are the block's MLP submodule (HuggingFace's model.layers.N.mlp), which you can wrap in checkpoint_wrapper; core_attn, layernorm, moe_act, mla_up_proj and shared_experts discard an output inside a module, which no wrapper reaches: rewrite the block's forward, or keep those activations (more memory than planned)", strings.Join(in.RecomputeModules, ", "))
	} else if in.Recompute == "selective" {
		j.recomputeApprox("the plan recomputes every block's attention core (selective recomputation), which a checkpoint wrapper cannot reach (it recomputes whole modules): the export recomputes nothing; run each block's attention core (scaled_dot_product_attention with the math backend, or your eager attention) under torch.utils.checkpoint.checkpoint in the block's forward, or keep those activations (more memory than planned)")
	}

	var w strings.Builder
	what := "PyTorch torch.distributed.pipelining (PyTorch 2.4 or later)"
	if tp > 1 {
		// PipelineStage infers the stages' shapes from 2.6; 2.4 and 2.5 need input_args.
		what = "PyTorch torch.distributed.pipelining and tensor parallel (PyTorch 2.6 or later)"
	}
	header(&w, "python", j, what)
	w.WriteString("import torch\n")
	if dp*cp*tp > 1 {
		w.WriteString("from torch.distributed.device_mesh import init_device_mesh\n")
	}
	if tp > 1 && graph {
		fmt.Fprintf(&w, "from torch.distributed.pipelining import PipelineStage, %s\nfrom torch.distributed.tensor.parallel import parallelize_module\n\n", class)
	} else if tp > 1 {
		fmt.Fprintf(&w, "from torch.distributed.pipelining import PipelineStage, SplitPoint, %s\nfrom torch.distributed.tensor.parallel import parallelize_module\n\n", class)
	} else if graph {
		fmt.Fprintf(&w, "from torch.distributed.pipelining import PipelineStage, %s\n\n", class)
	} else {
		fmt.Fprintf(&w, "from torch.distributed.pipelining import SplitPoint, pipeline, %s\n\n", class)
	}
	fmt.Fprintf(&w, "NUM_RANKS = %d  # pipeline ranks (devices) of one pipeline\nNUM_STAGES = %d\n", p, len(b)-1)
	fmt.Fprintf(&w, "DATA_PARALLEL = %d  # replicas of the pipeline\n", dp)
	if cp > 1 {
		fmt.Fprintf(&w, "CONTEXT_PARALLEL = %d  # devices of one pipeline rank, splitting each sequence\n", cp)
	}
	fmt.Fprintf(&w, "TENSOR_PARALLEL = %d  # devices of one pipeline rank, splitting its blocks\n", tp)
	if in.SequenceParallel {
		w.WriteString("SEQUENCE_PARALLEL = True  # norms, dropout and residuals split along the sequence too\n")
	}
	for _, l := range prec {
		w.WriteString(l + "\n")
	}
	if !auto && in.Recompute == "selective" && len(in.RecomputeModules) > 0 {
		fmt.Fprintf(&w, "# Selective recomputation as planned (each block's %s) is not expressed:\n", strings.Join(in.RecomputeModules, ", "))
		w.WriteString("# a checkpoint wrapper recomputes whole modules; see the notes.\n")
	} else if !auto && in.Recompute == "selective" {
		w.WriteString("# Selective recomputation as planned (each block's attention core) is not expressed:\n")
		w.WriteString("# a checkpoint wrapper recomputes whole modules; see the notes.\n")
	}
	fmt.Fprintf(&w, "N_MICROBATCHES = %d\nMICROBATCH_SIZE = %d  # samples per microbatch\n\n", run.Microbatches, orOne(in.MicrobatchSize))
	if graph {
		w.WriteString("# No SPLIT_SPEC: the stages are not contiguous in the model's program order, which\n")
		w.WriteString("# pipeline()'s split points cut; build each stage by hand (STAGE_MODULES, build_stages).\n\n")
	} else {
		w.WriteString("# A split point at the beginning of the first module of every stage after the first.\n")
		if tp > 1 {
			w.WriteString("# (pipeline()'s tracer takes it; with tensor parallelism, split by hand: STAGE_MODULES.)\n")
		}
		w.WriteString("SPLIT_SPEC = {\n")
		for i, s := range stagesOf(b) {
			if i == 0 {
				continue
			}
			fmt.Fprintf(&w, "    %s: SplitPoint.BEGINNING,  # stage %d: %s\n", pyStr(mods[s[0]]), i, commentText(layerSpan(in.LayerNames, s)))
		}
		w.WriteString("}\n\n")
	}
	w.WriteString("# Each stage's modules, for splitting by hand (PipelineStage on a model holding only these).\n")
	if fromArch && hasSublayers(in.LayerNames) {
		w.WriteString("# A stage that starts or ends inside a block needs that block's forward split by hand.\n")
	}
	w.WriteString("STAGE_MODULES = [\n")
	for _, s := range stagesOf(b) {
		w.WriteString("    [")
		for l := s[0]; l <= s[1]; l++ {
			for k, m := range parts[l] {
				if l > s[0] || k > 0 {
					w.WriteString(", ")
				}
				w.WriteString(pyStr(m))
			}
		}
		w.WriteString("],\n")
	}
	w.WriteString("]\n\n")
	if graph {
		writeCutTensors(&w, in)
	}
	if pl != nil {
		writeTorchRecompute(&w, pl, mods)
	}
	if multi {
		fmt.Fprintf(&w, "\ndef stage_indices(rank):\n    \"\"\"The stages a rank runs: rank, rank + NUM_RANKS, ... (looped, as %s expects).\"\"\"\n    return list(range(rank, NUM_STAGES, NUM_RANKS))\n\n", class)
	} else {
		w.WriteString("\ndef stage_indices(rank):\n    \"\"\"The stage a rank runs: one per rank.\"\"\"\n    return [rank]\n\n")
	}
	if dp*cp*tp > 1 {
		writeDeviceMesh(&w, p, dp, cp, tp)
	}
	param, lossArg := ", loss_fn=None", ", loss_fn=loss_fn"
	lossDoc := "loss_fn(output, target) is the training loss"
	if run.Kind == schedule.Inference {
		param, lossArg = "", ""
		lossDoc = "there is no loss_fn: the schedule runs forward passes only (inference)"
	}
	stagesArg := "stages[0]"
	if multi {
		stagesArg = "stages"
	}
	if tp > 1 {
		doc := []string{
			`stage_modules holds one module per stage of stage_indices(mesh["pp"].get_local_rank()), each holding only that stage's STAGE_MODULES (split by hand).`,
			`tp_plan maps module paths inside a stage module (wildcards allowed) to ColwiseParallel(), RowwiseParallel() or SequenceParallel() (torch.distributed.tensor.parallel).`,
		}
		dpParam, dpCall := "", ""
		if dp > 1 {
			dpParam = ", data_parallel=None"
			doc = append(doc, `data_parallel(module, dp_mesh) wraps each sharded stage module for the gradient all-reduce over the DATA_PARALLEL replicas (FSDP's fully_shard, or replicate).`)
			dpCall = `
        if data_parallel is not None:
            module = data_parallel(module, mesh["dp"])`
		}
		doc = append(doc, lossDoc+".", "Then every step: schedule.step(batch) on the first pipeline rank, schedule.step(target=target, losses=losses) on the last, schedule.step() elsewhere.")
		fmt.Fprintf(&w, "\ndef build_tensor_parallel(stage_modules, mesh, device, tp_plan%s%s):\n", dpParam, param)
		w.WriteString("    \"\"\"Shards this rank's stages over mesh[\"tp\"] and returns the schedule that runs them.\n\n")
		for _, line := range wrap(strings.Join(doc, " "), 84) {
			fmt.Fprintf(&w, "    %s\n", line)
		}
		fmt.Fprintf(&w, `    """
    pp = mesh["pp"]
    indices = stage_indices(pp.get_local_rank())
    if len(stage_modules) != len(indices):
        raise ValueError("pipeline rank %%d runs stages %%s, got %%d modules" %% (pp.get_local_rank(), indices, len(stage_modules)))
    stages = []
    for i, module in zip(indices, stage_modules):
        parallelize_module(module, mesh["tp"], tp_plan)%s
        stages.append(PipelineStage(module, i, NUM_STAGES, device, group=pp.get_group()))
    return %s(%s, n_microbatches=N_MICROBATCHES%s)
`, dpCall, class, stagesArg, lossArg)
	} else if graph {
		recomputeDoc := ""
		if pl != nil {
			recomputeDoc = "\n    Run apply_recompute(model) (the planned recomputation) before taking the stage\n    modules out of the model."
		}
		fmt.Fprintf(&w, `
def build_stages(stage_modules, rank, device, group=None%s):
    """Returns the schedule that runs this rank's stages, built by hand.

    stage_modules holds one module per stage of stage_indices(rank): stage i's runs the
    modules STAGE_MODULES[i] in that order, its forward taking the tensors CUT_TENSORS[i - 1]
    (the microbatch on stage 0) as positional arguments and returning those of
    CUT_TENSORS[i] as a tuple (the output on the last stage).
    %s.%s
    Then every step: schedule.step(batch) on the first rank,
    schedule.step(target=target, losses=losses) on the last, schedule.step() elsewhere.
    """
    indices = stage_indices(rank)
    if len(stage_modules) != len(indices):
        raise ValueError("rank %%d runs stages %%s, got %%d modules" %% (rank, indices, len(stage_modules)))
    stages = [PipelineStage(m, i, NUM_STAGES, device, group=group) for i, m in zip(indices, stage_modules)]
    return %s(%s, n_microbatches=N_MICROBATCHES%s)
`, param, lossDoc, recomputeDoc, class, stagesArg, lossArg)
	} else {
		applyRecompute := ""
		if pl != nil {
			applyRecompute = "\n    model = apply_recompute(model)  # the planned per-layer recomputation"
		}
		fmt.Fprintf(&w, `
def build(model, example_microbatch, rank, device, group=None%s):
    """Splits model as planned and returns the schedule that runs this rank's stages.

    example_microbatch is one microbatch of inputs (a tuple of model(*args) arguments);
    %s. Then every step: schedule.step(batch) on the first rank,
    schedule.step(target=target, losses=losses) on the last, schedule.step() elsewhere.
    """
    if not isinstance(example_microbatch, tuple):
        example_microbatch = (example_microbatch,)%s
    pipe = pipeline(model, mb_args=example_microbatch, split_spec=SPLIT_SPEC)
    if pipe.num_stages != NUM_STAGES:
        raise ValueError("the split gave %%d stages, the plan has %%d" %% (pipe.num_stages, NUM_STAGES))
`, param, lossDoc, applyRecompute)
		if multi {
			fmt.Fprintf(&w, "    stages = [pipe.build_stage(i, device, group) for i in stage_indices(rank)]\n    return %s(stages, n_microbatches=N_MICROBATCHES%s)\n", class, lossArg)
		} else {
			fmt.Fprintf(&w, "    stage = pipe.build_stage(rank, device, group)\n    return %s(stage, n_microbatches=N_MICROBATCHES%s)\n", class, lossArg)
		}
	}
	j.ex.Filename, j.ex.Language, j.ex.Text = "pipeplan_pytorch.py", "python", w.String()
	return nil
}

// writeDeviceMesh writes device_mesh(), the ranks of p pipeline ranks times dp replicas
// times cp context-parallel times tp tensor-parallel devices as a torch DeviceMesh:
// ("pp", "dp", "cp", "tp"), leaving out a dimension of size 1. The last dimension varies
// fastest, so a tensor-parallel group is on neighbouring ranks, inside a node, and the
// context group beside it, as Megatron-LM places them (tp, cp, dp, pp from the fastest;
// the planner places a stage's tensor x context devices as one group).
func writeDeviceMesh(w *strings.Builder, p, dp, cp, tp int) {
	var shape, names []string
	for _, d := range []struct {
		name, size string
		n          int
	}{{"pp", "NUM_RANKS", p}, {"dp", "DATA_PARALLEL", dp}, {"cp", "CONTEXT_PARALLEL", cp}, {"tp", "TENSOR_PARALLEL", tp}} {
		if d.name == "pp" || d.n > 1 {
			shape = append(shape, d.size)
			names = append(names, pyStr(d.name))
		}
	}
	fmt.Fprintf(w, "\ndef device_mesh(device_type=\"cuda\"):\n    \"\"\"All %d ranks as a (%s) device mesh.\n\n", p*dp*cp*tp, strings.Join(names, ", "))
	var doc []string
	if tp > 1 {
		doc = append(doc, `The last dimension varies fastest: a tensor-parallel group, mesh["tp"], is on neighbouring ranks (inside a node).`)
	}
	if tp > 1 {
		doc = append(doc, `A rank's pipeline rank is mesh["pp"].get_local_rank() and its pipeline group mesh["pp"].get_group().`)
	} else {
		doc = append(doc, `A rank's pipeline rank is mesh["pp"].get_local_rank() and its pipeline group mesh["pp"].get_group(): build's rank and group.`)
	}
	if cp > 1 {
		doc = append(doc, `A sequence is split over mesh["cp"] (context parallelism): its ranks hold the same layers and reduce their gradients together with mesh["dp"]'s (mesh["dp", "cp"]).`)
	}
	if dp > 1 {
		doc = append(doc, `Its stages' replicas are mesh["dp"]: wrap the stage modules for the gradient all-reduce (FSDP's fully_shard, or replicate).`)
	}
	for _, line := range wrap(strings.Join(doc, " "), 84) {
		fmt.Fprintf(w, "    %s\n", line)
	}
	fmt.Fprintf(w, "    \"\"\"\n    return init_device_mesh(device_type, (%s), mesh_dim_names=(%s))\n\n", strings.Join(shape, ", "), strings.Join(names, ", ")+"")
}

// layerSpan writes a stage's layers "first .. last".
func layerSpan(names []string, s [2]int) string {
	if s[0] == s[1] {
		return names[s[0]]
	}
	return names[s[0]] + " .. " + names[s[1]]
}

// header writes the comment block every snippet starts with: what was planned, what is
// expressed, and the notes, in the comments of lang (python or shell). A Python file
// starts by declaring its encoding: Python reads a coding declaration on either of the
// first two lines (PEP 263), and a model named "x -*- coding: utf-7 -*-" on the second
// would otherwise make Python decode the rest as UTF-7, in which "+AAo-" is a line break.
func header(w *strings.Builder, lang string, j *job, what string) {
	in := j.in
	const c = "#"
	if lang == "python" {
		w.WriteString("# -*- coding: utf-8 -*-\n")
	}
	name := in.Model
	if name == "" {
		name = "model"
	}
	comment(w, c, fmt.Sprintf("pipeplan export (version %d): %s", wire.ExportVersion, what))
	sp := ""
	if in.SequenceParallel {
		sp = " with sequence parallelism"
	}
	if cp := orOne(in.Context); cp > 1 {
		sp += fmt.Sprintf(", context parallel %d (%s)", cp, in.ContextMethod)
	}
	if in.ZeRO > 0 {
		sp += ", sharding " + shardingName(in)
	}
	comment(w, c, fmt.Sprintf("model %s: %d layers; %d pipeline devices, data parallel %d, tensor parallel %d%s",
		name, len(in.LayerNames), in.devices(), orOne(in.Data), orOne(in.Tensor), sp))
	if pc := precisionComment(in); pc != "" {
		comment(w, c, pc)
	}
	comment(w, c, fmt.Sprintf("planned: %s, %d microbatches of %d; %s", j.sched, j.sched.Microbatches, orOne(in.MicrobatchSize), costLine(j.ex.Planned)))
	j.settle()
	if !j.ex.Exact {
		comment(w, c, fmt.Sprintf("NOT EXACT: this runs %s, split %v; %s", j.ranSchedule(), j.split(), costLine(j.ex.Expressed)))
		if j.unsharded {
			comment(w, c, "(and shards or splits the sequence otherwise than planned: see the notes)")
		}
		if j.imprecise {
			comment(w, c, "(and runs another precision than planned: see the notes)")
		}
	}
	for _, n := range j.ex.Notes {
		for i, line := range wrap(n.Message, 88) {
			lead := "note: "
			if i > 0 {
				lead = "      "
			}
			comment(w, c, lead+line)
		}
	}
	w.WriteString("\n")
}

// wrap breaks text into lines of at most width runes at spaces.
func wrap(s string, width int) []string {
	var lines []string
	var cur strings.Builder
	for _, word := range strings.Fields(s) {
		if cur.Len() > 0 && cur.Len()+1+len(word) > width {
			lines = append(lines, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(word)
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}

// fsdp2Policy is the fully_shard argument that gives a ZeRO-3 or HSDP plan's reduce dtype
// (Input.ReduceDType): FSDP2's MixedPrecisionPolicy with reduce_dtype=torch.float32 where
// the plan reduced gradients in fp32, else nothing (the policy's default reduces in the
// gradients' own type, as priced).
func fsdp2Policy(in *Input) string {
	if in.ZeRO == 3 && in.ReduceDType == "fp32" {
		return ", mp_policy=MixedPrecisionPolicy(param_dtype=PARAM_DTYPE, reduce_dtype=torch.float32), as priced"
	}
	return ""
}

// fsdp2Priced says what of fully_shard a ZeRO-3 or HSDP plan priced without
// Input.FullyShard left out: the copy-out of every all-gather and the copy-in of every
// reduce-scatter, which fully_shard runs on the compute stream ("" where priced, or
// without weight sharding).
func fsdp2Priced(in *Input) string {
	if in.ZeRO < 3 || in.FullyShard {
		return ""
	}
	return "; the plan did not price fully_shard's copies of every all-gather's output into the parameters and of the gradients into every reduce-scatter's input (plan with parallelism.fully_shard to price them)"
}
