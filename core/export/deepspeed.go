package export

import (
	"fmt"
	"strings"

	"pipeplan/core/analytic"
	"pipeplan/core/schedule"
	"pipeplan/core/wire"
)

// deepspeed writes a DeepSpeed PipelineModule subclass that takes the planned partition,
// the topology of the ranks (pipeline x data x tensor parallel), and the config keys that
// set the microbatches. PipelineModule places layers on stages; it does not split them
// over the tensor-parallel ranks, which the layers must do themselves.
//
// DeepSpeed's partition_method takes "parameters", "uniform" or "type:REGEX", none of
// which is a list of boundaries; PipelineModule.__init__ calls _partition_layers, which
// sets self.parts (the boundaries) and this rank's bounds with _set_bounds. The subclass
// overrides it, as DeepSpeed's own derived modules do.
func deepspeed(j *job) error {
	in := j.in
	const engine = "DeepSpeed's PipelineEngine runs one stage per rank under its own 1F1B schedule (TrainSchedule)"
	switch j.sched.Kind {
	case schedule.Interleaved:
		if err := j.best(schedule.Config{Kind: schedule.OneFOneB}, engine+", so an interleaved split cannot run"); err != nil {
			return err
		}
	case schedule.GPipe, schedule.ZBH1, schedule.IPU, schedule.Overlap:
		j.runSchedule(schedule.Config{Kind: schedule.OneFOneB}, engine)
	}
	j.note(wire.NoteLayerList, "the layers list given to PipelineModule must hold one entry (LayerSpec or module) per pipeplan layer, in LAYER_NAMES's order: PARTS counts entries of that list")
	if in.graph() {
		j.graphNote("LAYER_NAMES", ": PipelineModule passes each entry's output to the next entry and each stage's last output to the next stage, so every entry must take and return a tuple holding every tensor a later entry reads, and a stage's last entry return exactly that stage's CUT_TENSORS in their order")
	}
	j.note(wire.NotePrivateAPI, "PlannedPipelineModule overrides PipelineModule._partition_layers, a DeepSpeed internal (deepspeed/runtime/pipe/module.py)")
	interval := 0
	switch in.Recompute {
	case "full":
		interval = 1
		if in.Arch == nil {
			j.note(wire.NoteSchedule, "activation_checkpoint_interval=1 keeps every layer's input, where pipeplan planned to keep only each stage's input: a little more memory")
		}
	case string(analytic.SelectiveOp):
		interval = 1
		j.recomputeApprox("the plan prices torchtitan's per-op selective checkpointing (recompute selective-op: every other matmul's output and the fused attention's kept, the rest rerun), and PipelineModule has no per-op policy: the export checkpoints every layer (activation_checkpoint_interval=1), keeping less and taking longer than planned")
	case "selective":
		j.note(wire.NoteSchedule, "PipelineModule has no selective recomputation: recompute the attention core inside the layers (pipeplan planned selective recomputation)")
	case "auto":
		switch pl, _ := in.perLayer(); {
		case pl == nil:
			j.recomputeApprox("the plan's per-layer recomputation (recompute auto) is not at hand: the export recomputes nothing; give the plan to say what each stage recomputes")
		case pl.any():
			interval = 1
			j.recomputeApprox("PipelineModule checkpoints every layer or every k-th (activation_checkpoint_interval), the same on every stage; the plan recomputes per stage (%s): the export checkpoints every layer, keeping less and taking longer than planned", pl.describe(in.LayerNames))
		}
	}
	b := j.split()
	run := j.ranSchedule()
	if j.tiedAcross() {
		j.note(wire.NoteTied, "the head reuses the embedding matrix on another stage: build both with deepspeed.pipe.TiedLayerSpec under one key, and DeepSpeed all-reduces the tied gradients")
	}
	mbs := orOne(in.MicrobatchSize)
	dp, tp := orOne(in.Data), orOne(in.Tensor)
	topology, axes := "PipeDataParallelTopology(num_pp=NUM_STAGES, num_dp=DATA_PARALLEL)", "NUM_STAGES x DATA_PARALLEL"
	if tp > 1 {
		axes = "NUM_STAGES x DATA_PARALLEL x TENSOR_PARALLEL"
		topology = "PipeModelDataParallelTopology(num_pp=NUM_STAGES, num_mp=TENSOR_PARALLEL, num_dp=DATA_PARALLEL)"
		sp := ""
		if in.SequenceParallel {
			sp = ", and with sequence parallelism split the norms and dropout along the sequence too"
		}
		j.note(wire.NoteTensorModules, "PipelineModule does not split layers, and the plan runs every stage tensor-parallel over %d devices: each entry of the layers list must build a tensor-parallel layer over the %d ranks of the topology's \"model\" axis (as Megatron-DeepSpeed's ColumnParallelLinear and RowParallelLinear do)%s", tp, tp, sp)
	}
	if in.OverlapTensorComm && tp > 1 && in.SequenceParallel {
		j.parallelism("the plan is priced with a tensor-parallel overlap (%s), which Megatron-DeepSpeed's tensor-parallel layers do not run: the all-gathers and reduce-scatters it hides run exposed; plan with parallelism.overlap_tensor_comm off to price what they run", in.TensorCommMethod)
	}

	if ep, _ := in.expertParallel(); ep > 1 {
		j.parallelism("the plan splits every mixture layer's experts over %d devices (expert parallelism): build them with deepspeed.moe.layer.MoE(ep_size=%d) inside the layers", ep, ep)
	}

	var w strings.Builder
	if in.ZeRO > 1 {
		j.parallelism("DeepSpeed's pipeline engine runs ZeRO stage 1 at most; pipeplan planned %s: the run holds more memory than priced", shardingName(in))
	}
	if orOne(in.Context) > 1 {
		j.parallelism("the plan splits each sequence over %d devices (context parallelism, %s), which a PipelineModule does not: DeepSpeed-Ulysses (deepspeed.sequence.layer.DistributedAttention) must be wired into the layers by hand", in.Context, in.ContextMethod)
	}
	prec, why := deepspeedPrecision(in)
	if why != "" {
		j.imprecision("%s", why)
	}
	header(&w, "python", j, "DeepSpeed PipelineModule")
	w.WriteString("from deepspeed.pipe import PipelineModule\n")
	fmt.Fprintf(&w, "from deepspeed.runtime.pipe.topology import %s\n\n", topology[:strings.Index(topology, "(")])
	fmt.Fprintf(&w, "NUM_STAGES = %d\n", len(b)-1)
	fmt.Fprintf(&w, "DATA_PARALLEL = %d  # replicas of the pipeline\nTENSOR_PARALLEL = %d  # devices of one stage, splitting its layers\n", dp, tp)
	w.WriteString("# Stage i holds entries PARTS[i] .. PARTS[i+1]-1 of the layers list.\n")
	fmt.Fprintf(&w, "PARTS = %s\n", pyInts(b))
	w.WriteString("# pipeplan's layers, in order: the layers list must match them one to one.\nLAYER_NAMES = [\n")
	for i, s := range stagesOf(b) {
		fmt.Fprintf(&w, "    # stage %d\n", i)
		for l := s[0]; l <= s[1]; l++ {
			fmt.Fprintf(&w, "    %s,\n", pyStr(in.LayerNames[l]))
		}
	}
	w.WriteString("]\n\n")
	if in.graph() {
		writeCutTensors(&w, in)
	}
	w.WriteString(`
class PlannedPipelineModule(PipelineModule):
    """A PipelineModule split as pipeplan planned, instead of by partition_method."""

    def _partition_layers(self, method="uniform"):
        num_stages = self._topo.get_dim("pipe")
        if num_stages != NUM_STAGES or len(self._layer_specs) != PARTS[-1]:
            raise ValueError(
                "pipeplan planned %d layers on %d stages; this module has %d layers on %d stages"
                % (PARTS[-1], NUM_STAGES, len(self._layer_specs), num_stages))
        self.parts = list(PARTS)
        stage_id = self._topo.get_coord(self.global_rank).pipe
        self._set_bounds(start=self.parts[stage_id], stop=self.parts[stage_id + 1])

`)
	fmt.Fprintf(&w, `
def build(layers, loss_fn=None, **kwargs):
    """The pipeline module: layers holds one LayerSpec (or module) per entry of LAYER_NAMES."""
    if len(layers) != len(LAYER_NAMES):
        raise ValueError("pipeplan planned %%d layers, got %%d" %% (len(LAYER_NAMES), len(layers)))
    kwargs.setdefault("activation_checkpoint_interval", %d)
    # The ranks: %s, the last axis fastest.
    topology = %s
    return PlannedPipelineModule(layers=layers, topology=topology, loss_fn=loss_fn, **kwargs)

`, interval, axes, topology)
	w.WriteString("\n# deepspeed.initialize(model=build(layers, loss_fn), config=DS_CONFIG, ...); then\n")
	if run.Kind == schedule.Inference {
		w.WriteString("# engine.eval_batch(data_iter) runs the microbatches forward only.\n")
	} else {
		w.WriteString("# engine.train_batch(data_iter) runs one step of gradient_accumulation_steps microbatches.\n")
	}
	w.WriteString("DS_CONFIG = {\n")
	fmt.Fprintf(&w, "    \"train_micro_batch_size_per_gpu\": %d,\n", mbs)
	fmt.Fprintf(&w, "    \"gradient_accumulation_steps\": %d,  # the microbatches of one step\n", run.Microbatches)
	fmt.Fprintf(&w, "    \"train_batch_size\": %d,  # %d x %d microbatches x data parallel %d\n", mbs*run.Microbatches*orOne(in.Data), mbs, run.Microbatches, orOne(in.Data))
	for _, e := range prec {
		fmt.Fprintf(&w, "    %s\n", e)
	}
	switch {
	case in.ZeRO == 1:
		w.WriteString("    \"zero_optimization\": {\"stage\": 1},\n")
	case in.ZeRO > 1:
		w.WriteString("    \"zero_optimization\": {\"stage\": 1},  # the stage a PipelineModule takes (see the note)\n")
	}
	w.WriteString("}\n")
	j.ex.Filename, j.ex.Language, j.ex.Text = "pipeplan_deepspeed.py", "python", w.String()
	return nil
}

// pyInts writes a Python list of integers.
func pyInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(s, ", ") + "]"
}
