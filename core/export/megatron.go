package export

import (
	"fmt"
	"slices"
	"strings"

	"pipeplan/core/analytic"
	"pipeplan/core/request"
	"pipeplan/core/schedule"
	"pipeplan/core/wire"
)

// megatron writes Megatron-LM's pipeline arguments: --pipeline-model-parallel-layout
// (Megatron-Core's custom layout: stages separated by '|', E the embedding, t a
// transformer layer, L the final norm, output layer and loss; stages listed in order, the
// virtual pipeline size their count over the pipeline size), and, where the split allows,
// the older equivalents --decoder-first/last-pipeline-num-layers or
// --num-layers-per-virtual-pipeline-stage.
//
// Megatron-LM's layers are whole transformer blocks, and its final norm lives on the last
// stage with the output layer: a cut inside a block moves to the block's start, and a cut
// between the final norm and the head moves before the norm.
func megatron(j *job) error {
	in := j.in
	if in.graph() {
		return fmt.Errorf("megatron export: %w: the plan splits the model's graph into convex stages (%s), and Megatron-LM splits a transformer's blocks into contiguous runs by their counts (--pipeline-model-parallel-layout, --decoder-first-pipeline-num-layers): it cannot place a layer after one of a later stage. Plan with partition %q to export to Megatron-LM",
			ErrNotContiguous, in.scattered(), wire.PartitionLayers)
	}
	if in.Arch == nil {
		return fmt.Errorf("megatron export %w", errNeedsArch)
	}
	roles := make([]role, len(in.LayerNames))
	blocks := make([]int, len(in.LayerNames))
	for i, l := range in.LayerNames {
		roles[i], blocks[i] = layerRole(l)
		if roles[i] == other {
			return fmt.Errorf("megatron export: layer %d (%s) is not a transformer layer pipeplan's architectures name (embedding, block.N, final_norm, lm_head)", i, l)
		}
	}
	switch j.sched.Kind {
	case schedule.GPipe, schedule.ZBH1, schedule.IPU, schedule.Overlap:
		j.runSchedule(schedule.Config{Kind: schedule.OneFOneB}, fmt.Sprintf("Megatron-LM trains with 1F1B (or interleaved 1F1B), not %s", j.sched.Kind))
	case schedule.Interleaved:
		if j.sched.PyTorchOrder {
			megatronOrder := j.sched
			megatronOrder.PyTorchOrder = false
			if j.sched.Microbatches == in.devices() {
				j.runSchedule(megatronOrder, "with as many microbatches as ranks, Megatron-LM's interleaved 1F1B runs every forward before the first backward, where PyTorch's ScheduleInterleaved1F1B (the plan's order) warms up only (v-1)p + 2(p-1-rank): the devices hold more activations")
			} else {
				j.note(wire.NoteSchedule, "Megatron-LM orders interleaved 1F1B as PyTorch's ScheduleInterleaved1F1B does when the microbatches are more than the ranks (a multiple of them): the plan's %s runs as %s", j.sched, megatronOrder)
			}
		}
	}
	why := "Megatron-LM cuts only between whole transformer layers, and keeps the final norm with the output layer"
	b, moved := megatronCuts(in.Boundaries, roles)
	if b == nil {
		return fmt.Errorf("megatron export: %s, and %d stages do not fit between the places it can cut", why, len(in.Boundaries)-1)
	}
	if moved {
		j.moveSplit(b, why)
	}
	b = j.split()
	run := j.ranSchedule()
	p := in.devices()

	// Per stage: embedding, blocks, head.
	type stage struct {
		e, l   bool
		blocks int
	}
	var stages []stage
	for _, s := range stagesOf(b) {
		var st stage
		for l := s[0]; l <= s[1]; l++ {
			switch roles[l] {
			case embedding:
				st.e = true
			case head:
				st.l = true
			case block:
				st.blocks++
			case mlp:
				st.blocks++ // a block's MLP closes it (cuts are at block starts)
			}
		}
		stages = append(stages, st)
	}
	var layout []string
	for _, st := range stages {
		var parts []string
		if st.e {
			parts = append(parts, "E")
		}
		switch {
		case st.blocks == 1:
			parts = append(parts, "t")
		case st.blocks > 1:
			parts = append(parts, fmt.Sprintf("t*%d", st.blocks))
		}
		if st.l {
			parts = append(parts, "L")
		}
		layout = append(layout, strings.Join(parts, ","))
	}
	if run.Kind == schedule.Inference {
		j.note(wire.NoteSchedule, "for inference Megatron-LM runs the same layout forward only (forward_only=True)")
	}

	if in.ZeRO > 1 {
		also := "the gradients"
		if in.ZeRO == 3 {
			also += " and the weights"
		}
		j.parallelism("Megatron-LM's distributed optimizer shards the optimizer state only (ZeRO-1); pipeplan planned %s, which also shards %s: the run holds more memory than priced", shardingName(in), also)
	}
	if orOne(in.Context) > 1 && in.ContextMethod == "all-gather" {
		j.parallelism("the plan prices PyTorch's context parallelism (context_method all-gather: keys and values all-gathered, their gradients sent around the ring after every step); Megatron-LM's --cp-comm-type all_gather (Transformer Engine) gathers them too but reduce-scatters the gradients once: the run communicates otherwise than priced")
	}
	prec, why := megatronPrecision(in)
	if why != "" {
		j.imprecision("%s", why)
	}
	if in.Recompute == string(analytic.SelectiveOp) {
		j.recomputeApprox("the plan prices torchtitan's per-op selective checkpointing (recompute selective-op: every other matmul's output and the fused attention's kept, the rest rerun), and Megatron-LM has no per-op policy: the export recomputes every block whole (--recompute-granularity full), keeping less and taking longer than planned")
	}
	var rec strings.Builder // recompute auto's arguments, decided before the header
	if _, ok := in.perLayer(); ok {
		j.megatronRecompute(&rec, func(stage, layer int) int {
			n := 0
			for l := in.Boundaries[stage]; l < layer; l++ {
				if roles[l] == block {
					n++
				}
			}
			return n
		}, func(l int) bool { return roles[l] == block })
	}
	var w strings.Builder
	header(&w, "shell", j, "Megatron-LM arguments (pretrain_gpt.py, Megatron-Core models)")
	mbs := orOne(in.MicrobatchSize)
	dp := orOne(in.Data)
	tp := orOne(in.Tensor)
	cp := orOne(in.Context)
	if cp > 1 {
		fmt.Fprintf(&w, "# Launch on %d GPUs: tensor %d x context %d x pipeline %d x data %d (Megatron-LM derives\n# the data-parallel size from the world size).\n", tp*cp*p*dp, tp, cp, p, dp)
	} else {
		fmt.Fprintf(&w, "# Launch on %d GPUs: tensor %d x pipeline %d x data %d (Megatron-LM derives the\n# data-parallel size from the world size).\n", tp*p*dp, tp, p, dp)
	}
	w.WriteString("PIPEPLAN_ARGS=(\n")
	fmt.Fprintf(&w, "  --num-layers %d\n", in.Arch.NumLayers)
	if in.Seq > 0 {
		fmt.Fprintf(&w, "  --seq-length %d\n", in.Seq)
	}
	fmt.Fprintf(&w, "  --micro-batch-size %d\n", mbs)
	fmt.Fprintf(&w, "  --global-batch-size %d  # %d x %d microbatches x data parallel %d\n", mbs*run.Microbatches*dp, mbs, run.Microbatches, dp)
	fmt.Fprintf(&w, "  --tensor-model-parallel-size %d\n", tp)
	if in.SequenceParallel {
		w.WriteString("  --sequence-parallel\n")
	}
	if in.OverlapTensorComm && tp > 1 && in.SequenceParallel {
		if in.TensorCommMethod == request.OverlapAsyncTP {
			w.WriteString("  --tp-comm-overlap  # priced as PyTorch's async TP, which leaves the backward reduce-scatters of summed gradients exposed; Transformer Engine userbuffers hide them too\n")
		} else {
			w.WriteString("  --tp-comm-overlap  # priced: tensor-parallel all-gathers and reduce-scatters behind the products (Transformer Engine userbuffers)\n")
			if in.TensorCommConfig != "" {
				fmt.Fprintf(&w, "  # --tp-comm-overlap-cfg: a yaml of Megatron-Bridge's %s (comm_overlap.py), as priced\n", in.TensorCommConfig)
			}
		}
	}
	if cp > 1 {
		fmt.Fprintf(&w, "  --context-parallel-size %d\n", cp)
		switch in.ContextMethod {
		case "all-to-all":
			w.WriteString("  --cp-comm-type a2a  # all-to-all (DeepSpeed-Ulysses style), as planned\n")
		case "all-gather":
			w.WriteString("  --cp-comm-type all_gather  # keys and values all-gathered, as planned; the gradients are reduce-scattered here, sent around the ring in the plan\n")
		case "hierarchical":
			g := orOne(in.ContextInner)
			fmt.Fprintf(&w, "  --cp-comm-type a2a+p2p  # all-to-all inside groups of %d, ring between the %d groups, as planned\n", g, cp/g)
			fmt.Fprintf(&w, "  --hierarchical-context-parallel-sizes %d %d\n", g, cp/g)
		}
	}
	if in.Arch != nil && in.Arch.MoE() {
		// Megatron-Core folds expert parallelism into data x tensor (world size divisible
		// by expert tensor x expert x pipeline).
		ep, etp := in.expertParallel()
		fmt.Fprintf(&w, "  --expert-model-parallel-size %d\n", ep)
		fmt.Fprintf(&w, "  --expert-tensor-parallel-size %d\n", etp)
		switch in.ExpertDispatcher {
		case "deepep":
			w.WriteString("  --moe-token-dispatcher-type flex --moe-enable-deepep\n")
		case "deepep-fp8":
			w.WriteString("  --moe-token-dispatcher-type flex --moe-enable-deepep  # priced with fp8 dispatch, which Megatron-Core does not run: it dispatches 16 bits\n")
		case "hybridep":
			w.WriteString("  --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep\n")
		}
		if in.ExpertOverlap {
			w.WriteString("  --overlap-moe-expert-parallel-comm  # combined 1F1B: all-to-alls behind an adjacent microbatch\n")
		}
		switch in.MoEAuxLoss {
		case "aux_loss", "seq_aux_loss":
			// A coefficient above 0 runs the loss (Megatron-Core's default, 0, skips it);
			// the plan prices its kernels whatever the coefficient: Megatron-Bridge's
			// Qwen3 MoE sets 1e-3 with aux_loss, its DeepSeek-V3 1e-4 with seq_aux_loss.
			coeff := "1e-3"
			if in.MoEAuxLoss == "seq_aux_loss" {
				coeff = "1e-4"
			}
			fmt.Fprintf(&w, "  --moe-router-load-balancing-type %s --moe-aux-loss-coeff %s  # the coefficient is not priced: set yours\n", in.MoEAuxLoss, coeff)
			w.WriteString("  --moe-router-fusion  # the fused router the plan priced\n")
		}
		if in.MoEForceLoadBalancing {
			w.WriteString("  --moe-router-force-load-balancing  # random router logits, balanced experts, as planned (a benchmark setting)\n")
		}
	}
	for _, a := range prec {
		fmt.Fprintf(&w, "  %s\n", a)
	}
	if l := megatronLoss(in); l != "" {
		fmt.Fprintf(&w, "  %s\n", l)
	}
	fmt.Fprintf(&w, "  --pipeline-model-parallel-size %d\n", p)
	fmt.Fprintf(&w, "  --pipeline-model-parallel-layout %q\n", strings.Join(layout, "|"))
	switch in.Recompute {
	case "selective":
		if len(in.RecomputeModules) == 0 {
			w.WriteString("  --recompute-activations  # selective: the attention core\n")
		} else {
			mods, _ := analytic.ParseModules(in.RecomputeModules) // checked by Validate
			fmt.Fprintf(&w, "  --recompute-granularity selective --recompute-modules %s\n", strings.Join(mods.Names(), " "))
		}
	case "full":
		w.WriteString("  --recompute-granularity full --recompute-method uniform --recompute-num-layers 1\n")
	case string(analytic.SelectiveOp):
		w.WriteString("  --recompute-granularity full --recompute-method uniform --recompute-num-layers 1  # selective-op has no Megatron-LM form: see the notes\n")
	case "auto":
		w.WriteString(rec.String())
	}
	switch {
	case in.ZeRO == 1:
		w.WriteString("  --use-distributed-optimizer  # optimizer state sharded over data parallel (ZeRO-1)\n")
	case in.ZeRO > 1:
		// Megatron-LM's distributed optimizer shards the optimizer state only.
		w.WriteString("  --use-distributed-optimizer  # ZeRO-1: the closest to the planned sharding (see the note)\n")
	}
	if in.OverlapGradReduce && dp > 1 {
		w.WriteString("  --overlap-grad-reduce  # priced: the gradient reduction during the last backward pass\n")
	}
	if in.OverlapParamGather && dp > 1 && in.ZeRO >= 1 {
		w.WriteString("  --overlap-param-gather  # priced: the distributed optimizer's all-gather during the next forward pass\n")
	}
	if in.DPBucketElements > 0 {
		fmt.Fprintf(&w, "  --ddp-bucket-size %d  # Megatron-Core's bucket_size, as planned\n", in.DPBucketElements)
	}
	// Megatron-LM checks the loss and each gradient bucket for NaN unless told not to
	// (arguments.py: --no-check-for-nan-in-loss-and-grad, action store_false).
	if run.Kind != schedule.Inference {
		if in.CheckForNaNInGrad {
			w.WriteString("  # Megatron-LM's default checks each gradient bucket for NaN and Inf, as planned (its check of each microbatch's loss is not priced)\n")
		} else {
			w.WriteString("  --no-check-for-nan-in-loss-and-grad  # the plan prices no NaN check (training.check_for_nan_in_grad off)\n")
		}
	}
	w.WriteString(")\n")

	// Older Megatron-LM: the same split with the arguments that predate the layout.
	counts := make([]int, len(stages))
	for i, st := range stages {
		counts[i] = st.blocks
	}
	v := len(stages) / p
	alt := ""
	switch {
	case v > 1 && allEqual(counts) && counts[0] > 0:
		alt = fmt.Sprintf("--num-layers-per-virtual-pipeline-stage %d", counts[0])
	case v == 1 && p >= 2 && allEqual(counts[1:len(counts)-1]) && !(p > 2 && counts[1] == 0) &&
		counts[0] > 0 && counts[len(counts)-1] > 0:
		alt = fmt.Sprintf("--decoder-first-pipeline-num-layers %d --decoder-last-pipeline-num-layers %d", counts[0], counts[len(counts)-1])
		if allEqual(counts) {
			alt += "  (or neither: the even split)"
		}
	}
	if alt != "" {
		fmt.Fprintf(&w, "# Megatron-LM without --pipeline-model-parallel-layout, the same split:\n#   replace the layout with %s\n", alt)
	} else {
		w.WriteString("# This split needs --pipeline-model-parallel-layout: the older first/last-stage and\n# virtual-stage arguments cannot express it.\n")
	}
	w.WriteString("# torchrun ... pretrain_gpt.py \"${PIPEPLAN_ARGS[@]}\" ...\n")
	j.ex.Filename, j.ex.Language, j.ex.Text = "pipeplan_megatron.sh", "shell", w.String()
	return nil
}

// megatronCuts returns the split with every cut where Megatron-LM can cut: at a block's
// start, before the final norm, or before the head when there is no final norm. A cut
// before a block's MLP moves to the block's start (or, when that would empty a stage, to
// the next block's start); a cut between the final norm and the head moves before the
// norm. moved reports whether any cut moved; nil means the stages do not fit between the
// places Megatron-LM can cut.
func megatronCuts(b []int, roles []role) (out []int, moved bool) {
	n := len(roles)
	allowed := func(k int) bool {
		switch roles[k] {
		case block, attention, finalNorm:
			return true
		case head:
			return k == 0 || roles[k-1] != finalNorm
		}
		return false
	}
	out = slices.Clone(b)
	for i := 1; i+1 < len(out); i++ {
		if allowed(out[i]) {
			continue
		}
		moved = true
		down := out[i]
		for down > out[i-1] && !allowed(down) {
			down--
		}
		if down > out[i-1] && allowed(down) {
			out[i] = down
			continue
		}
		up := out[i]
		for up < n && !allowed(up) {
			up++
		}
		out[i] = up
	}
	// Moving up may have collided with later cuts: push them on.
	for i := 1; i+1 < len(out); i++ {
		for out[i] <= out[i-1] || (out[i] < n && !allowed(out[i])) {
			out[i]++
		}
	}
	if out[len(out)-2] >= n {
		return nil, true
	}
	return out, moved
}

func allEqual(v []int) bool {
	for _, x := range v {
		if x != v[0] {
			return false
		}
	}
	return true
}

// shardingName is the plan's sharding for people: "ZeRO-2", "ZeRO-3", "HSDP".
func shardingName(in *Input) string {
	if in.Sharding == "hsdp" {
		return "HSDP"
	}
	return fmt.Sprintf("ZeRO-%d", in.ZeRO)
}
