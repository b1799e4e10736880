package request

import (
	"slices"

	"pipeplan/core/analytic"
	"pipeplan/core/cluster"
	"pipeplan/core/schedule"
	"pipeplan/core/wire"
)

// FP8AmaxTPOnlyApplies reports whether training.fp8_amax_tp_only applies to n, a request
// in its normal form (Normalize's, every default filled): training an architecture in
// fp8 under the delayed recipe, the one recipe that keeps an amax history for Transformer
// Engine to reduce (DelayedAmaxReductionsPerChunk). It is Normalize's own rule: the field
// is refused wherever this is false, and the page offers its control where it is true.
func FP8AmaxTPOnlyApplies(n *wire.Request) bool {
	ar := n.Model.Architecture
	return ar != nil && amaxHistory(analytic.DType(ar.DType), analytic.FP8Recipe(n.Training.FP8Recipe), n.Training.Mode == wire.ModeTraining)
}

// amaxHistory: a run in dtype d under recipe rc (defaults filled) reduces an amax
// history, which only delayed scaling keeps and only training reduces.
func amaxHistory(d analytic.DType, rc analytic.FP8Recipe, train bool) bool {
	return d == analytic.FP8 && rc == analytic.Delayed && train
}

// DelayedAmaxReductionsPerChunk is how many all-reduces of the amax history a model
// chunk's pass through its transformer blocks waits for under Transformer Engine's
// delayed scaling in Megatron-Core, per microbatch: one at the forward pass's end
// and, in training, one at the backward pass's end.
//
// Megatron-Core wraps each TransformerBlock's forward (one model chunk) in one outer
// fp8_autocast when the recipe is delayed (megatron/core/transformer/transformer_block.py:
// use_outer_fp8_context = config.fp8 and fp8_recipe == delayed; the context from
// megatron/core/fp8_utils.py get_fp8_context, fp8_group =
// parallel_state.get_amax_reduction_group(with_context_parallel=True,
// tp_only_amax_red=config.tp_only_amax_red), core_r0.13.0). Transformer Engine
// reduces the region's amaxes when the outermost autocast exits with gradients on
// (transformer_engine/pytorch/fp8.py, FP8GlobalStateManager.fp8_autocast_exit: "if
// enabled and cls.FP8_AUTOCAST_DEPTH == 0 and not _graph and torch.is_grad_enabled():
// cls.reduce_and_update_fp8_tensors(forward=True)", TE v2.2), and once more when the
// region's first fp8 module, the last to run backward, ends its backward
// (reduce_and_update_fp8_tensors(forward=False) under is_first_fp8_module, module/linear.py
// and layernorm_linear.py). reduce_and_update_fp8_tensors concatenates the amaxes into
// one buffer and all-reduces it (MAX) over the group, async_op False: the compute
// stream waits. Without gradients (inference) no reduction runs. A recomputed
// forward (full recompute) runs inside the block's backward, under no autocast exit of
// its own (TE's checkpoint copies the forward's scales for it,
// copy_forward_fp8_meta_tensors_for_recompute), so it adds none.
func DelayedAmaxReductionsPerChunk(train bool) (fwd, bwd int) {
	if !train {
		return 0, 0
	}
	return 1, 1
}

// AmaxReductionGroup is the size of Megatron-Core's amax reduction group and the nodes
// it spans: get_amax_reduction_group is the tensor x data (x context) group, all of a
// pipeline stage's ranks, unless TransformerConfig.tp_only_amax_red (default False)
// narrows it to the tensor group (megatron/core/parallel_state.py, core_r0.13.0).
// Megatron-Core numbers ranks tensor first, then context, then data, then pipeline
// (order "tp-cp-ep-dp-pp"), so the group is tensor x context x data consecutive ranks:
// one node when it fits in one of perNode devices, else group / perNode nodes (perNode 0:
// one node).
func AmaxReductionGroup(tensor, context, data, perNode int, tpOnly bool) (ranks, nodes int) {
	ranks = max(1, tensor)
	if !tpOnly {
		ranks *= max(1, context) * max(1, data)
	}
	nodes = 1
	if perNode > 0 && ranks > perNode {
		nodes = (ranks + perNode - 1) / perNode
	}
	return ranks, nodes
}

// delayedAmaxReductions adds to the transformer blocks' times the blocking amax
// all-reduces of Transformer Engine's delayed scaling (DelayedAmaxReductionsPerChunk)
// when Megatron-Core runs an architecture in fp8 with the delayed recipe (framework
// mode megatron): each priced as NCCL's small all-reduce over AmaxReductionGroup
// (cluster.SmallAllReduceSeconds). A chunk holds its blocks' layers once per pipeline
// stage x chunks, as Megatron-Core splits them evenly (num_layers / (pipeline x
// virtual)), so each block layer carries pipeline x chunks / layers of a chunk's
// reductions in each pass: the sum over a chunk is its own reductions when the chunks
// are equal. The model's layers are the cache's: the changed ones are copied.
func (p *prepared) delayedAmaxReductions(fw cluster.Framework, o analytic.Options) {
	if fw.Name != cluster.Megatron || o.DType != analytic.FP8 || o.FP8Recipe != analytic.Delayed || p.model == nil || p.est == nil {
		return
	}
	fwdN, bwdN := DelayedAmaxReductionsPerChunk(p.train())
	par := p.req.Parallelism
	perNode := 0
	if p.topo != nil {
		perNode = p.topo.DevicesPerNode
	}
	ranks, nodes := AmaxReductionGroup(par.Tensor, par.Context, par.Data, perNode, p.req.Training.FP8AmaxTPOnly)
	ar := cluster.SmallAllReduceSeconds(ranks, nodes)
	if ar <= 0 || fwdN+bwdN == 0 {
		return
	}
	blocks := p.blockLayers()
	if len(blocks) == 0 {
		return
	}
	chunks := max(1, par.Pipeline)
	if p.sched.Kind == schedule.Interleaved {
		chunks *= max(1, p.sched.Chunks)
	}
	share := float64(min(chunks, len(blocks))) / float64(len(blocks)) * ar
	p.model.Layers = slices.Clone(p.model.Layers)
	for _, i := range blocks {
		l := &p.model.Layers[i]
		l.ForwardSeconds += float64(fwdN) * share
		l.BackwardSeconds += float64(bwdN) * share
	}
}
