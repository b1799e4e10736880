package analytic

import (
	"encoding/json"
	"fmt"
	"pipeplan/core/arch"
	"pipeplan/core/model"
	"strings"
)

// Modules is a set of the parts of a transformer block that selective recomputation
// reruns in the backward pass, named as Megatron-LM's --recompute-modules names them
// (megatron/training/arguments.py, "--recompute-modules"; Megatron-Core's
// TransformerConfig.recompute_modules): Options.RecomputeModules with Recompute
// Selective. The zero set means Megatron-LM's default, the attention core.
//
// Two kinds of recomputation (Megatron-Core's docs call them checkpointing and
// output-discarding checkpointing):
//   - core_attn, mlp and moe checkpoint a part: it keeps its input and runs its forward
//     pass again in the backward pass, keeping none of its own activations;
//   - layernorm, moe_act, mla_up_proj and shared_experts discard an output that a later
//     product saves as its input, and rebuild it in the backward pass from the inputs
//     that are kept anyway.
//
// What each saves, per microbatch, with e bytes per element, T tokens on the device
// (T/t with sequence parallelism for the h-wide ones), the activation bytes of
// Korthikanti et al. 2022 (section 4.1, generalised as layers.go does):
//   - core_attn: the attention core's s^2 tensors with eager attention (softmax output,
//     dropout mask and output: 5as^2b for GPT); nothing with flash attention, whose kernel
//     keeps only Q, K, V, its output and the softmax statistics, and costs nothing;
//   - layernorm: each norm's output, the next product's input (e*T*h per norm; the
//     product's 8-bit copy with fp8), for one norm's forward again;
//   - mlp (dense blocks) and moe (mixture blocks): the whole MLP part's activations but
//     its input (e*T*h kept), for its forward again (with its communication);
//   - moe_act: the routed experts' activation output, the down projection's input
//     (e*A*f for A routed rows of width f), for the activation again;
//   - shared_experts: the shared experts' activations (4*e*T*f_s), for their forward
//     again;
//   - mla_up_proj: latent attention's query and key-value up-projections' outputs with
//     rotary embedding applied (Q, K, V: e*T*(q + k + v)), for the up-projections and the
//     rotary embedding again.
type Modules uint8

// The parts selective recomputation may rerun.
const (
	ModCoreAttn Modules = 1 << iota
	ModMLP
	ModMoEAct
	ModLayerNorm
	ModMLAUpProj
	ModMoE
	ModSharedExperts
)

// moduleNames are Megatron-LM's names, in its order (the canonical order of a set).
var moduleNames = []struct {
	m    Modules
	name string
}{
	{ModCoreAttn, "core_attn"}, {ModMLP, "mlp"}, {ModMoEAct, "moe_act"}, {ModLayerNorm, "layernorm"},
	{ModMLAUpProj, "mla_up_proj"}, {ModMoE, "moe"}, {ModSharedExperts, "shared_experts"},
}

// ModuleNames lists every module's name, in Megatron-LM's order.
func ModuleNames() []string {
	out := make([]string, len(moduleNames))
	for i, m := range moduleNames {
		out[i] = m.name
	}
	return out
}

// ParseModules returns the set of the named modules; an unknown or repeated name is a
// *model.FieldError whose path is its index ("[2]").
func ParseModules(names []string) (Modules, error) {
	var s Modules
	for i, n := range names {
		m, ok := Modules(0), false
		for _, x := range moduleNames {
			if x.name == n {
				m, ok = x.m, true
			}
		}
		switch {
		case !ok:
			return 0, &model.FieldError{Path: fmt.Sprintf("[%d]", i), Reason: fmt.Sprintf("must be one of %s (Megatron-LM's --recompute-modules), got %q", strings.Join(ModuleNames(), ", "), n)}
		case s&m != 0:
			return 0, &model.FieldError{Path: fmt.Sprintf("[%d]", i), Reason: fmt.Sprintf("%q is named twice", n)}
		}
		s |= m
	}
	return s, nil
}

// Names lists the set's modules in Megatron-LM's order.
func (s Modules) Names() []string {
	var out []string
	for _, x := range moduleNames {
		if s&x.m != 0 {
			out = append(out, x.name)
		}
	}
	return out
}

// String is the set's names joined by commas ("" for the empty set).
func (s Modules) String() string { return strings.Join(s.Names(), ",") }

// MarshalJSON writes the set as a list of names.
func (s Modules) MarshalJSON() ([]byte, error) {
	n := s.Names()
	if n == nil {
		n = []string{}
	}
	return json.Marshal(n)
}

// UnmarshalJSON reads a list of names.
func (s *Modules) UnmarshalJSON(b []byte) error {
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return err
	}
	m, err := ParseModules(names)
	if err != nil {
		return err
	}
	*s = m
	return nil
}

// Applicable is the modules that change something in a's blocks under options o: the
// attention core with eager attention (flash attention's kernel keeps no s^2 tensor to
// drop); the norms; mlp where a block is dense; moe and moe_act where one is a mixture,
// and shared_experts where its mixtures have shared experts; mla_up_proj with latent
// attention.
func Applicable(a *arch.Arch, o Options) Modules {
	s := ModLayerNorm
	if o.withDefaults().Attention == Eager {
		s |= ModCoreAttn
	}
	if a.MoELayers() < a.NumLayers {
		s |= ModMLP
	}
	if a.MoELayers() > 0 {
		s |= ModMoE | ModMoEAct
		if a.SharedExpertSize > 0 {
			s |= ModSharedExperts
		}
	}
	if a.MLA() {
		s |= ModMLAUpProj
	}
	return s
}

// Misfit says why module m (one of the set) has no part to rerun in a's blocks, or ""
// where it has: mlp needs a dense block, moe and moe_act a mixture, shared_experts
// shared experts, mla_up_proj latent attention. (core_attn and layernorm apply to every
// block; core_attn changes nothing with flash attention, as Megatron-LM's selective
// default, and is not refused.)
func Misfit(a *arch.Arch, m Modules) string {
	switch {
	case m == ModMLP && a.MoELayers() == a.NumLayers:
		return "every block's MLP is a mixture of experts: use moe (or moe_act, shared_experts)"
	case (m == ModMoE || m == ModMoEAct) && a.MoELayers() == 0:
		return "no block is a mixture of experts: use mlp"
	case m == ModSharedExperts && (a.MoELayers() == 0 || a.SharedExpertSize == 0):
		return "the model has no shared experts"
	case m == ModMLAUpProj && !a.MLA():
		return "the model has no multi-head latent attention"
	}
	return ""
}

// checkModules refuses the options' modules that a's blocks have no part for (Misfit).
func checkModules(a *arch.Arch, o Options) error {
	var es model.Errors
	switch {
	case o.Recompute != SelectiveOp:
	case a.MoELayers() > 0 || a.MLA():
		es.Add("recompute", "selective-op is priced for dense blocks with separate query, key and value projections (torchtitan's Llama): the model has a mixture of experts or latent attention")
	case fusedQKV(a) || a.Family == arch.BERT:
		// torchtitan's policy saves aten.mm's outputs by count; GPT-2's Conv1D, MPT's
		// Wqkv and BERT's biased Linear layers run other operators (addmm) in another
		// order, which the count does not describe.
		es.Add("recompute", "selective-op is priced for dense blocks with separate query, key and value projections (torchtitan's Llama): %s blocks have a fused or biased attention input projection", a.Family)
	}
	for i, n := range o.RecomputeModules.Names() {
		m, _ := ParseModules([]string{n})
		if why := Misfit(a, m); why != "" {
			es.Add(fmt.Sprintf("recompute_modules[%d]", i), "%s: %s", n, why)
		}
	}
	return es.Err()
}

// modules is the set selective recomputation reruns: the options' (the attention core
// when they name none); empty unless Recompute is Selective.
func (o Options) modules() Modules {
	if o.Recompute != Selective {
		return 0
	}
	if o.RecomputeModules == 0 {
		return ModCoreAttn
	}
	return o.RecomputeModules
}

// rerun reports whether the options rerun the whole piece p from its input in the
// backward pass: every transformer sublayer under full recomputation, and the MLP part
// of a block whose module (mlp, moe) selective recomputation names.
func (c *calc) rerun(p piece) bool {
	return (c.o.Recompute == Full && p.recomputable) || (p.module != 0 && c.o.modules()&p.module != 0)
}

// rerunOp reports whether selective recomputation reruns the operation o of piece p
// (and p is not rerun whole): the eager attention core under core_attn, and the
// operations an output-discarding module rebuilds.
func (c *calc) rerunOp(p piece, o op) bool {
	if c.rerun(p) {
		return false
	}
	m := c.o.modules()
	return (m&ModCoreAttn != 0 && o.core && c.o.Attention == Eager) || (o.module != 0 && m&o.module != 0)
}

// sacPolicy is torchtitan's per-op selective checkpointing (SelectiveOp) applied to the
// pieces of one checkpointed block, in their forward order: share[i][j] is the part of
// ps[i].ops[j]'s forward that the policy saves (its output kept, not rerun in the
// backward pass), and saved the bytes those outputs hold. The policy's rule
// (_custom_policy at torchtitan 9dec370): aten.mm outputs are saved but every second
// one ("forward_mm_count" % 2 == 0 is recomputed, counting from 1 in each block), and
// SDPA's flash and memory-efficient outputs always. A linear op with parts stands for
// that many products, each counted. The fp8 recipe's saved amax scalars (aten.max) are
// a few bytes, not counted. nil for another strategy, or for pieces outside a block
// (torchtitan wraps model.layers only).
//
// With tensor parallelism the policy's list also holds
// torch.ops._c10d_functional.reduce_scatter_tensor (torchtitan 9dec370
// parallelize_llama.py and 820504e models/llama3/infra/parallelize.py, _save_list; not
// all_gather_into_tensor nor all_reduce): under sequence parallelism the DTensor
// redistribution after each row-parallel product (RowwiseParallel's Partial to
// Shard(1)) dispatches that reduce-scatter, and its output, the sublayer's
// sequence-sharded output (the piece's output, e*T*h/t bytes), is kept beside the
// products' (sacCommRerun says what is gathered again). The row-parallel products'
// own outputs are this device's partial sums over the whole sequence, e*T*h bytes
// (op.outBytes), kept where the count keeps them (the down projection, seventh).
func (c *calc) sacPolicy(ps []piece) (share [][]float64, saved float64) {
	if c.o.Recompute != SelectiveOp || len(ps) == 0 || !ps[0].recomputable {
		return nil, 0
	}
	share = make([][]float64, len(ps))
	mms := 0
	for i, p := range ps {
		share[i] = make([]float64, len(p.ops))
		if c.sh.tp > 1 && c.o.SequenceParallel {
			saved += p.fwdAllReduces * p.output // the reduce-scatters' outputs
		}
		for j, o := range p.ops {
			switch {
			case o.outBytes == 0:
			case o.core: // the fused attention kernel
				share[i][j], saved = 1, saved+o.outBytes
			default:
				parts := o.parts
				if parts == nil {
					parts = []float64{1}
				}
				var all, kept float64
				for _, w := range parts {
					all += w
					mms++
					if mms%2 == 1 {
						kept += w
					}
				}
				share[i][j] = kept / all
				saved += o.outBytes * kept / all
			}
		}
	}
	return share, saved
}

// sacCommRerun is the tensor-parallel communication of piece p that torchtitan's
// per-op policy (sacPolicy) runs again in the backward's recompute, in all-reduces of
// an activation (calc.allReduce) and in collective kernels. Its list saves the
// reduce-scatter's output but neither all_gather_into_tensor's nor all_reduce's
// (torchtitan 9dec370 and 820504e, _save_list), so the rerun block gathers each
// sublayer's input again: under sequence parallelism one all-gather a forward
// all-reduce (an all-reduce is a reduce-scatter and an all-gather of the same bytes,
// Patarasuk and Yuan 2009's ring: half its time), without it the all-reduce itself.
// With async TP (torch.compile's micro-pipeline pass runs after the recompute is
// decided, on the backward graph too) the rerun gather joins the backward's other
// communication behind its products (tensorCommExposed). Zero outside the policy, for
// a piece fully rerun (calc.rerun counts its communication) or without tensor
// parallelism.
func (c *calc) sacCommRerun(p piece, share [][]float64) (allReduces, kernels float64) {
	if share == nil || c.rerun(p) || c.sh.tp <= 1 {
		return 0, 0
	}
	if c.o.SequenceParallel {
		return p.fwdAllReduces / 2, p.fwdAllReduces
	}
	return p.fwdAllReduces, p.fwdAllReduces
}

// rerunShare is the part of operation j of piece i (p) that the backward pass reruns:
// all of it under full recomputation (or a module that reruns it), under torchtitan's
// per-op policy what it does not save (sacPolicy's share, nil outside one), else none.
func (c *calc) rerunShare(p piece, o op, share [][]float64, i, j int) float64 {
	switch {
	case c.rerun(p) || c.rerunOp(p, o):
		return 1
	case share != nil && j >= len(share[i]):
		// An operation calc.asyncChunks adds after the policy was read: async TP's
		// copies, of which the all-gather's is rerun with the gather.
		return o.gatherShare
	case share != nil:
		return 1 - share[i][j]
	}
	return 0
}
