package export

import (
	"fmt"
	"strings"

	"pipeplan/core/analytic"
	"pipeplan/core/recompute"
	"pipeplan/core/wire"
)

// perLayer is a plan's per-layer recomputation (training.recompute auto), stage by
// stage of the planned split: the layers recomputed whole and those recomputing only
// some of their parts (attention: the attention core, or any other set of Megatron-LM's
// modules, which part names).
type perLayer struct {
	full, attention [][]int
	// part is what each layer of attention recomputes (recompute.Attention, or
	// Megatron-LM's modules joined by commas).
	part map[int]string
	// whole marks the stages that recompute their whole forward keeping only their input
	// (a profile's global full, or a stage of recompute auto that chose it).
	whole []bool
	// mode is the request's training.recompute the recomputation comes from.
	mode string
}

// globalRecompute is global full recomputation stated per layer, stage by stage of the
// split: every layer recomputed whole; a profile's full keeps only each stage's input
// (whole). nil for none, selective and auto.
func (in *Input) globalRecompute(fromArch bool) *perLayer {
	if in.Recompute != "full" {
		return nil
	}
	p := len(in.Boundaries) - 1
	pl := &perLayer{full: make([][]int, p), attention: make([][]int, p), whole: make([]bool, p), mode: in.Recompute}
	for i := range p {
		for l := in.Boundaries[i]; l < in.Boundaries[i+1]; l++ {
			pl.full[i] = append(pl.full[i], l)
		}
		pl.whole[i] = !fromArch
	}
	return pl
}

// selectiveOpRecompute is torchtitan's per-op selective checkpointing (training.recompute
// selective-op) stated per layer, stage by stage of the split: every transformer block
// (or its attention and MLP sublayers) checkpointed under the policy, listed in full;
// the embedding, final norm and head are not (torchtitan wraps model.layers only, and
// pipeplan prices the policy on transformer layers). A profile's layers are not known
// to be blocks: all of them are listed. nil for another recomputation.
func (in *Input) selectiveOpRecompute(fromArch bool) *perLayer {
	if in.Recompute != string(analytic.SelectiveOp) {
		return nil
	}
	p := len(in.Boundaries) - 1
	pl := &perLayer{full: make([][]int, p), attention: make([][]int, p), whole: make([]bool, p), mode: in.Recompute}
	for i := range p {
		for l := in.Boundaries[i]; l < in.Boundaries[i+1]; l++ {
			switch r, _ := layerRole(in.LayerNames[l]); {
			case !fromArch, r == block, r == attention, r == mlp:
				pl.full[i] = append(pl.full[i], l)
			}
		}
	}
	return pl
}

// perLayer reads the plan's per-layer recomputation. ok is false when the plan is not
// one of recompute auto; pl is nil when it is but the plan (Input.Plan) is not at hand.
func (in *Input) perLayer() (pl *perLayer, ok bool) {
	if in.Recompute != "auto" {
		return nil, false
	}
	p := in.Plan
	if p == nil || len(p.Stages) != len(in.Boundaries)-1 {
		return nil, true
	}
	pl = &perLayer{full: make([][]int, len(p.Stages)), attention: make([][]int, len(p.Stages)), whole: make([]bool, len(p.Stages)), mode: "auto", part: map[int]string{}}
	for i, s := range p.Stages {
		if s.Recompute == nil {
			continue
		}
		pl.whole[i] = s.Recompute.WholeStage
		for _, l := range s.Recompute.Layers {
			at := in.position(l.Layer) // the model's layer, in LayerNames's order
			if l.Part == recompute.Full {
				pl.full[i] = append(pl.full[i], at)
			} else {
				pl.attention[i] = append(pl.attention[i], at)
				pl.part[at] = l.Part
			}
		}
	}
	return pl, true
}

// recomputeApprox records that the framework recomputes other layers than the plan's:
// a NoteRecompute note, and the export is not exact. Call it before the header.
func (j *job) recomputeApprox(format string, args ...any) {
	j.recomputes = true
	j.note(wire.NoteRecompute, format, args...)
}

// describe says stage by stage what the plan recomputes, in the layers' names.
func (pl *perLayer) describe(names []string) string {
	var parts []string
	for i := range pl.full {
		var what []string
		if len(pl.full[i]) > 0 {
			what = append(what, "whole "+layerList(names, pl.full[i]))
		}
		for _, g := range pl.byPart(i) {
			label := "the attention core of "
			if g.part != recompute.Attention {
				label = "the parts " + g.part + " of "
			}
			what = append(what, label+layerList(names, g.layers))
		}
		if len(what) == 0 {
			what = append(what, "nothing")
		}
		parts = append(parts, fmt.Sprintf("stage %d: %s", i, strings.Join(what, " and ")))
	}
	return strings.Join(parts, "; ")
}

// partLayers is the layers of a stage that recompute one set of parts.
type partLayers struct {
	part   string
	layers []int
}

// byPart groups stage i's layers recomputing parts by what they recompute, in the order
// each set first appears.
func (pl *perLayer) byPart(i int) []partLayers {
	var out []partLayers
	for _, l := range pl.attention[i] {
		p := pl.partOf(l)
		k := 0
		for k < len(out) && out[k].part != p {
			k++
		}
		if k == len(out) {
			out = append(out, partLayers{part: p})
		}
		out[k].layers = append(out[k].layers, l)
	}
	return out
}

// partOf is what layer l (of attention) recomputes.
func (pl *perLayer) partOf(l int) string {
	if p, ok := pl.part[l]; ok {
		return p
	}
	return recompute.Attention
}

// modules is the union of the Megatron-LM modules the plan's layers recompute in part,
// and whether every such layer names only known ones.
func (pl *perLayer) modules() (analytic.Modules, bool) {
	var s analytic.Modules
	ok := true
	for i := range pl.attention {
		for _, l := range pl.attention[i] {
			m, err := analytic.ParseModules(strings.Split(pl.partOf(l), ","))
			ok = ok && err == nil
			s |= m
		}
	}
	return s, ok
}

// layerList names layers, a run of consecutive ones by its ends.
func layerList(names []string, ls []int) string {
	var out []string
	for k := 0; k < len(ls); {
		e := k
		for e+1 < len(ls) && ls[e+1] == ls[e]+1 {
			e++
		}
		if e == k {
			out = append(out, names[ls[k]])
		} else {
			out = append(out, names[ls[k]]+" .. "+names[ls[e]])
		}
		k = e + 1
	}
	return strings.Join(out, ", ")
}

// megatronRecompute is Megatron-LM's recomputation of a plan of recompute auto.
// Megatron-LM recomputes the first N transformer layers of every pipeline stage whole
// (--recompute-granularity full --recompute-method block --recompute-num-layers N), or
// the same parts of every layer (--recompute-granularity selective --recompute-modules
// ...), one setting for every stage. The export gives the plan exactly when every stage
// recomputes its first N blocks whole and nothing else, or every block the same parts;
// otherwise it recomputes at least what the plan does (memory stays within the plan's,
// time grows), and says so.
func (j *job) megatronRecompute(w *strings.Builder, blocksBefore func(stage, layer int) int, isBlock func(layer int) bool) {
	pl, _ := j.in.perLayer()
	if pl == nil {
		j.recomputeApprox("the plan's per-layer recomputation (recompute auto) is not at hand: the export recomputes nothing; give the plan to say what each stage recomputes")
		return
	}
	if j.moved != nil {
		j.recomputeApprox("the export splits otherwise than the plan, whose per-layer recomputation is for its own stages: %s", pl.describe(j.in.LayerNames))
	}
	n, anyFull, anyAttention, exact := 0, false, false, true
	for i := range pl.full {
		k := len(pl.full[i]) + len(pl.attention[i])
		n = max(n, k)
		anyFull = anyFull || len(pl.full[i]) > 0
		anyAttention = anyAttention || len(pl.attention[i]) > 0
		// Exact: the stage's first k blocks, whole.
		for x, l := range pl.full[i] {
			exact = exact && blocksBefore(i, l) == x
		}
	}
	for i := range pl.full {
		exact = exact && len(pl.full[i]) == n && len(pl.attention[i]) == 0
	}
	what := pl.describe(j.in.LayerNames)
	switch {
	case n == 0:
		fmt.Fprintf(w, "  # recompute auto: every stage fits keeping its activations: nothing recomputed\n")
	case !anyFull:
		mods, known := pl.modules()
		if !known {
			mods = analytic.ModCoreAttn
			j.recomputeApprox("the plan names parts Megatron-LM has no module for (%s): the export recomputes the attention core", what)
		}
		fmt.Fprintf(w, "  --recompute-granularity selective --recompute-modules %s  # pipeplan per layer: %s\n", strings.Join(mods.Names(), " "), commentText(what))
		// Exact: every block recomputes the same parts (and nothing else does).
		parts := map[int]string{}
		for i := range pl.attention {
			for _, l := range pl.attention[i] {
				parts[l] = pl.partOf(l)
			}
		}
		same := true
		for l := range j.in.LayerNames {
			p, ok := parts[l]
			same = same && ok == isBlock(l) && (!ok || p == mods.String())
		}
		if !same {
			j.recomputeApprox("Megatron-LM recomputes the same parts (--recompute-modules) of every layer; the plan recomputes per layer (%s): the export recomputes %s in every layer, keeping less and taking a little longer than planned", what, strings.Join(mods.Names(), ", "))
		}
	default:
		fmt.Fprintf(w, "  --recompute-granularity full --recompute-method block --recompute-num-layers %d  # pipeplan per layer: %s\n", n, commentText(what))
		if !exact {
			why := "Megatron-LM recomputes the same number of first blocks whole on every stage"
			if anyAttention {
				why += ", and with full granularity no attention core alone"
			}
			j.recomputeApprox("%s; the plan recomputes per stage (%s): the export recomputes the first %d blocks of every stage whole, keeping less and taking longer than planned", why, what, n)
		}
	}
}

// pytorchRecomputeNotes says what the PyTorch export cannot recompute as planned: a
// module's attention core alone (a checkpoint wrapper wraps whole modules), or anything
// without the plan.
func (j *job) pytorchRecomputeNotes(pl *perLayer) {
	if pl == nil {
		j.recomputeApprox("the plan's per-layer recomputation (recompute auto) is not at hand: the export recomputes nothing; give the plan to say what each stage recomputes")
		return
	}
	var att, other []int
	for i := range pl.attention {
		for _, l := range pl.attention[i] {
			if pl.partOf(l) == recompute.Attention {
				att = append(att, l)
			} else {
				other = append(other, l)
			}
		}
	}
	if len(att) > 0 {
		j.recomputeApprox("a checkpoint wrapper recomputes whole modules, not the attention core alone, which the plan recomputes in %s: run their attention core (scaled_dot_product_attention with the math backend, or your eager attention) under torch.utils.checkpoint.checkpoint in the block's forward, or keep those activations (more memory than planned)", layerList(j.in.LayerNames, att))
	}
	if len(other) > 0 {
		j.recomputeApprox("the plan recomputes parts of blocks (RECOMPUTE names them in Megatron-LM's modules) in %s, which apply_recompute leaves as they are: mlp and moe are the block's MLP submodule (HuggingFace's model.layers.N.mlp), which you can wrap in checkpoint_wrapper yourself; core_attn, layernorm, moe_act, mla_up_proj and shared_experts discard an output inside a module, which no wrapper reaches (Megatron-Core's output-discarding checkpointing): rewrite the block's forward, or keep those activations (more memory than planned)", layerList(j.in.LayerNames, other))
	}
	var whole []string
	for i, w := range pl.whole {
		if w {
			whole = append(whole, fmt.Sprint(i))
		}
	}
	if len(whole) > 0 {
		j.recomputeApprox("stages %s recompute their whole forward keeping only the stage's input, as planned; the checkpoint wrappers keep each module's input (more memory than planned): to keep only the stage's input, wrap the stage's module (its pipe.split_gm submodule) in one checkpoint wrapper instead", strings.Join(whole, ", "))
	}
}

// writeTorchRecompute writes RECOMPUTE, the plan's per-layer recomputation by module
// path, and apply_recompute, which wraps the modules recomputed whole in PyTorch's
// checkpoint wrapper (torch.utils.checkpoint, non-reentrant) before the model is split.
func writeTorchRecompute(w *strings.Builder, pl *perLayer, mods []string) {
	if pl.mode == string(analytic.SelectiveOp) {
		writeTorchSelectiveOp(w, pl, mods)
		return
	}
	fmt.Fprintf(w, "# Recomputation as planned (recompute %s), stage by stage: \"full\" reruns the\n", pl.mode)
	w.WriteString("# module's forward in the backward pass, keeping only its input; any other value names\n")
	w.WriteString("# the parts of the block recomputed, in Megatron-LM's --recompute-modules names\n")
	w.WriteString("# (core_attn: the attention core; see the notes: a wrapper cannot reach them).\n")
	w.WriteString("RECOMPUTE = {\n")
	for i := range pl.full {
		for _, l := range pl.full[i] {
			fmt.Fprintf(w, "    %s: %s,  # stage %d\n", pyStr(mods[l]), pyStr(recompute.Full), i)
		}
		for _, l := range pl.attention[i] {
			fmt.Fprintf(w, "    %s: %s,  # stage %d\n", pyStr(mods[l]), pyStr(pl.partOf(l)), i)
		}
	}
	w.WriteString("}\n\n")
	w.WriteString(`
def apply_recompute(model):
    """Wraps every module RECOMPUTE runs "full" in a checkpoint wrapper; call it before pipeline()."""
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper
    for path, part in RECOMPUTE.items():
        if part != "full":
            continue
        parent, _, name = path.rpartition(".")
        owner = model.get_submodule(parent) if parent else model
        setattr(owner, name, checkpoint_wrapper(owner.get_submodule(name)))
    return model

`)
}

// writeTorchSelectiveOp writes RECOMPUTE, the modules checkpointed under torchtitan's
// per-op policy (training.recompute selective-op), and apply_recompute, which wraps
// each in PyTorch's checkpoint wrapper with a context_fn of
// torch.utils.checkpoint.create_selective_checkpoint_contexts (PyTorch 2.4 and later),
// as torchtitan's _apply_ac_to_transformer_block does (9dec370): the outputs of
// aten.mm are saved but every second one, counted from each module's first and apart
// in the forward pass and its rerun, and the outputs of scaled_dot_product_attention's
// fused kernels always; everything else is rerun in the backward pass
// (analytic.SelectiveOp prices the same rule).
func writeTorchSelectiveOp(w *strings.Builder, pl *perLayer, mods []string) {
	w.WriteString("# Recomputation as planned (recompute selective-op, torchtitan's per-op selective\n")
	w.WriteString("# activation checkpointing), stage by stage: each module listed runs under a checkpoint\n")
	w.WriteString("# that saves every other matmul's output and the fused attention's, and reruns the rest.\n")
	w.WriteString("RECOMPUTE = {\n")
	for i := range pl.full {
		for _, l := range pl.full[i] {
			fmt.Fprintf(w, "    %s: %s,  # stage %d\n", pyStr(mods[l]), pyStr(pl.mode), i)
		}
	}
	w.WriteString("}\n\n")
	w.WriteString(`
def _selective_op_context():
    """A fresh checkpoint context pair for one module's forward (torchtitan's policy)."""
    from collections import defaultdict
    from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts
    aten = torch.ops.aten
    save = {aten.mm.default, aten.max.default}
    for name in ("_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
                 "_scaled_dot_product_cudnn_attention"):
        if hasattr(aten, name):
            save.add(getattr(aten, name).default)
    meta = defaultdict(int)

    def policy(ctx, func, *args, **kwargs):
        key = "recompute_mm_count" if ctx.is_recompute else "forward_mm_count"
        if func == aten.mm.default:
            meta[key] += 1
        keep = func in save and not (func == aten.mm.default and meta[key] % 2 == 0)
        return CheckpointPolicy.MUST_SAVE if keep else CheckpointPolicy.PREFER_RECOMPUTE

    return create_selective_checkpoint_contexts(policy)


def apply_recompute(model):
    """Wraps every module RECOMPUTE names in a checkpoint wrapper under the per-op policy; call it before pipeline()."""
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper
    for path in RECOMPUTE:
        parent, _, name = path.rpartition(".")
        owner = model.get_submodule(parent) if parent else model
        setattr(owner, name, checkpoint_wrapper(owner.get_submodule(name), context_fn=_selective_op_context, preserve_rng_state=False))
    return model

`)
}

// any reports whether some stage recomputes something.
func (pl *perLayer) any() bool {
	for i := range pl.full {
		if len(pl.full[i])+len(pl.attention[i]) > 0 {
			return true
		}
	}
	return false
}
