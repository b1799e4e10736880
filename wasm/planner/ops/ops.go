// Package ops is what planner.wasm (wasm/planner) does for the page: each operation
// takes JSON texts and answers JSON text, so that the page (main.wasm, which does not
// link the planner) and the worker exchange only strings. It is plain Go, tested natively;
// wasm/planner only carries messages between a Web Worker and Do.
//
// The operations, by name (docs/js-api.md describes those of the JS API):
//
//	plan [request]               the result as compact JSON, or an error object (pipeplan.plan)
//	planJSON [request]           the result as the command line prints it (pipeplan.planJSON)
//	estimate [request]           the analytic estimate of the request's architecture
//	search [query]               the search's answer, wire.SearchAnswer (pipeplan.search and the page's search);
//	                             streams progress, and on cancellation gives what was found so far
//	export [request, options]    the plan in options.format (pipeplan.export)
//	exports [request, options]   the plan in every format (pipeplan.exports)
//	profiler []                  {filename, text}: the PyTorch profiler script
//	candidate [query, candidate] the request of a searched candidate, in core's normal form
//	layout [request]             request.StartLayout: the request with its devices laid out
//	                             as stages x replicas, and the rule that chose it
//	normal [request]             what each of the page's knobs resolves to in the
//	                             request's normal form (request.Normalize), by knob name
//	model [request, model]       request.WithModel: the request planning another model
//	                             (a wire.ModelSpec), with the fields core left out and why
//	calibrate [request, profile] request.Calibration: the request's architecture fitted to
//	                             a measured profile (its text, a native model file)
//	                             (pipeplan.calibrate)
//	view [request, window]       the page's plan: the result cut to a spec.View of the
//	                             window (spec.Window), the whole held for window and result
//	window [handle, window]      another window of a held result
//	result [handle]              a held result whole, as plan answers it
//	expand [request]             the request with its stored model put back (to share it)
//	open [request, result]       a share server's stored plan: {request, view}, the
//	                             request's large model kept in the browser's storage
//
// A request may hold a stored model's reference in its model document (Ref, Import):
// Do puts the document back before it runs the operation; candidate and model answer
// with the reference again, as the page holds it.
//
// Bad input comes back as an error object ({error, fields}), never as a Go error: Do's
// error is only the context's, when a search is cancelled.
package ops

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"pipeplan/core/analytic"
	"pipeplan/core/cluster"
	"pipeplan/core/request"
	"pipeplan/core/search"
	"pipeplan/core/search/evaluate"
	"pipeplan/core/units"
	"pipeplan/core/wire"
)

// Do runs the operation op on its arguments (JSON texts). progress, when set, receives a
// search's progress as JSON; yield, when set, is called every searchSlice of a search's
// work (where a single-threaded host lets its event loop run, to see a cancel message).
// A panic comes back as an error object.
func Do(ctx context.Context, op string, args []string, progress func(string), yield func()) (out string, err error) {
	defer recovered(&out)
	var refs []Ref
	given := args // as the caller gave them, references and all
	for i, a := range args {
		r, rs, err := Models.Resolve(a)
		if err != nil {
			return mustJSON(apiError{Error: err.Error(), Fields: []apiField{{Path: "model.document", Reason: err.Error()}}}), nil
		}
		if rs != nil {
			if refs == nil { // the caller's slice stays as given
				args = append([]string(nil), args...)
			}
			args[i], refs = r, append(refs, rs...)
		}
	}
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	switch op {
	case "plan":
		b, err := json.Marshal(plan(arg(0)))
		if err != nil {
			return mustJSON(apiError{Error: "internal error: " + err.Error()}), nil
		}
		return string(b), nil
	case "planJSON":
		return planJSON(arg(0)), nil
	case "estimate":
		return estimateJSON(arg(0)), nil
	case "search":
		return searchJSON(ctx, arg(0), progress, yield)
	case "export":
		return exportJSON(arg(0), arg(1)), nil
	case "exports":
		return exportsJSON(arg(0), arg(1)), nil
	case "profiler":
		return profilerJSON(), nil
	case "candidate":
		return candidateJSON(arg(0), arg(1), refs), nil
	case "view":
		return Views.view(arg(0), arg(1)), nil
	case "window":
		return Views.window(arg(0), arg(1)), nil
	case "result":
		return Views.result(arg(0)), nil
	case "open":
		return Views.open(arg(0), arg(1)), nil
	case "expand":
		return arg(0), nil
	case "calibrate":
		return calibrateJSON(arg(0), arg(1)), nil
	case "layout":
		return layoutJSON(ctx, arg(0)), nil
	case "normal":
		return normalJSON(arg(0)), nil
	case "model":
		return withModelJSON(arg(0), arg(1), given), nil
	}
	return mustJSON(apiError{Error: fmt.Sprintf("unknown operation %q", op)}), nil
}

// layoutJSON is request.StartLayout's answer for a request (JSON), or an error object.
func layoutJSON(ctx context.Context, requestJSON string) string {
	r, err := request.Decode([]byte(requestJSON))
	if err != nil {
		return mustJSON(errorOf(err))
	}
	l, err := request.StartLayout(ctx, r)
	if err != nil {
		return mustJSON(errorOf(err))
	}
	return mustJSON(l)
}

// withModelJSON is request.WithModel's answer for a request and a model spec (JSON):
// {"request": ..., "dropped": [{"path", "reason"}, ...], "notice": request.LeftOut's
// line of them ("" for none)}, or an error object. given
// are the arguments as the caller gave them: where the model spec's document was a
// stored model's reference (Ref, an imported file's), the answer's request holds the
// reference again, as the page holds it, not the document.
func withModelJSON(requestJSON, modelJSON string, given []string) string {
	r, err := request.Decode([]byte(requestJSON))
	if err != nil {
		return mustJSON(errorOf(err))
	}
	var m wire.ModelSpec
	if err := json.Unmarshal([]byte(modelJSON), &m); err != nil {
		return mustJSON(apiError{Error: "the model does not read: " + err.Error()})
	}
	out, dropped := request.WithModel(r, m)
	var g wire.ModelSpec
	if len(given) == 2 && given[1] != modelJSON && json.Unmarshal([]byte(given[1]), &g) == nil && len(g.Document) > 0 && len(out.Model.Document) > 0 {
		out.Model.Document = g.Document
	}
	return mustJSON(struct {
		Request *wire.Request     `json:"request"`
		Dropped []request.Dropped `json:"dropped"`
		Notice  string            `json:"notice"`
	}{out, dropped, request.LeftOut(m, dropped)})
}

// normalJSON is what each of the page's knobs resolves to in the request's normal form
// (request.Normalize, every default applied), by the page's knob names: {"dtype":
// "bf16", "seq": "4096", ...}; a knob core leaves unset is absent. The page shows them
// beside "default" without reading the request's rules itself.
func normalJSON(requestJSON string) string {
	r, err := request.Decode([]byte(requestJSON))
	if err != nil {
		return mustJSON(errorOf(err))
	}
	n, err := request.Normalize(r)
	if err != nil {
		return mustJSON(errorOf(err))
	}
	ar := n.Model.Architecture
	if ar == nil {
		ar = &wire.Architecture{}
	}
	num := func(v int) string {
		if v == 0 {
			return ""
		}
		return strconv.Itoa(v)
	}
	k := map[string]string{
		"batch": num(n.Schedule.MicrobatchSize), "seq": num(ar.Seq), "dtype": ar.DType, "attention": ar.Attention,
		"precision": n.Training.Precision, "fp8_recipe": n.Training.FP8Recipe, "optimizer": n.Training.Optimizer,
		"recompute": n.Training.Recompute, "mode": n.Training.Mode, "sharding": n.Parallelism.Sharding,
		"context_method": n.Parallelism.ContextMethod, "expert_dispatcher": n.Parallelism.ExpertDispatcher,
		"microbatches": num(n.Schedule.Microbatches), "data": num(n.Parallelism.Data),
		"tensor": num(n.Parallelism.Tensor), "context": num(n.Parallelism.Context), "expert": num(max(1, n.Parallelism.Expert)),
		"schedule": n.Schedule.Name, "objective": n.Objective, "partition": wire.PartitionLayers,
		"shard_group": num(n.Parallelism.ShardGroup), "prefetch": n.Parallelism.Prefetch,
		"reshard":       n.Parallelism.Reshard, // zero3 and hsdp: core's rule (request.DefaultReshard)
		"context_inner": num(n.Parallelism.ContextInner),
	}
	if n.Parallelism.ExpertDispatcher != "" { // a mixture of experts (Normalize sets it)
		k["expert_tensor"] = num(n.Parallelism.ExpertTensor)
		// Normalize writes the defaults, balanced routing and dropless, as 0.
		k["expert_imbalance"], k["capacity_factor"] = "1 (balanced)", "0 (dropless)"
		if v := ar.ExpertImbalance; v != 0 {
			k["expert_imbalance"] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		if v := ar.CapacityFactor; v != 0 {
			k["capacity_factor"] = strconv.FormatFloat(v, 'g', -1, 64)
		}
	}
	if n.Model.Architecture != nil { // the framework's overlaps, or the request's
		onOff := map[bool]string{true: request.OverlapOn, false: request.OverlapOff}
		o := request.PricedOverlaps(n)
		k["overlap_grad_reduce"], k["overlap_param_gather"] = onOff[o.GradReduce], onOff[o.ParamGather]
		k["overlap_tensor_comm"] = onOff[o.TensorComm]
		if o.TensorComm {
			k["overlap_tensor_comm"] = o.TensorCommMethod // the framework's method, named
		}
		if o.TensorCommMethod == request.OverlapUserbuffers { // the config userbuffers runs with
			k["tp_comm_overlap_config"] = cmp.Or(o.TensorCommConfig, analytic.TEDefaultUserbuffers)
		}
	}
	// FSDP2's reduce type and copies: where the sharding takes them (core's list), which
	// needs an architecture in training.
	if n.Model.Architecture != nil && n.Training.Mode != wire.ModeInference &&
		slices.Contains(wire.ShardingFields(n.Parallelism.Sharding), "fully_shard") {
		k["fully_shard"], k["reduce_dtype"] = "off", "the gradients' own"
		if n.Parallelism.FullyShard {
			k["fully_shard"] = "on"
		}
		if n.Parallelism.ReduceDType != "" {
			k["reduce_dtype"] = n.Parallelism.ReduceDType
		}
	}
	if n.Parallelism.Tensor >= 2 { // sequence parallelism splits what tensor parallelism leaves whole
		k["sequence_parallel"] = "off"
	}
	if n.Parallelism.Expert >= 2 {
		k["expert_overlap"] = "off"
	} else {
		delete(k, "expert_dispatcher") // no all-to-alls without expert parallelism
	}
	if n.Model.Architecture != nil {
		k["framework"], k["split"], k["tie"] = ar.Framework, ar.Split, ar.Tie
		if n.Training.Mode != wire.ModeInference { // inference computes no loss
			k["train_metrics"] = "0 (none)"
			k["cross_entropy"] = ar.CrossEntropy
			if fw, err := cluster.LookupFramework(ar.Framework); err == nil && ar.CrossEntropy == "" {
				k["cross_entropy"] = fw.CrossEntropy() // the mode's own kernel
			}
		}
		if ar.DType == "fp8" { // fp8 attention needs fp8
			k["fp8_attention"] = "off"
		}
		if request.FP8AmaxTPOnlyApplies(n) { // delayed scaling's amax history (core's rule)
			k["fp8_amax_tp_only"] = "off"
		}
		if request.MoEAuxLossApplies(n) { // Megatron-Core's router (core's rule)
			k["moe_aux_loss"] = "none"
		}
		if request.MoEForceLoadBalancingApplies(n) {
			k["moe_force_load_balancing"] = "off"
		}
		if n.Parallelism.ExpertDispatcher != "" { // a mixture of experts
			k["expert_fused_mlp"] = "off"
		}
		// The device's and framework's figures: the request's, or the presets'.
		fig := func(name string, v float64) { k[name] = strconv.FormatFloat(v, 'g', 4, 64) }
		if d, err := cluster.LookupDevice(n.Cluster.Device); err == nil {
			fig("matmul_efficiency", d.Perf.MatmulEfficiency)
			fig("memory_efficiency", d.Perf.MemoryEfficiency)
			fig("kernel_seconds", d.Perf.KernelSeconds)
		}
		if fw, err := cluster.LookupFramework(ar.Framework); err == nil {
			fig("host_kernel_seconds", fw.HostKernelSeconds)
			fig("host_layer_seconds", fw.HostLayerSeconds)
		}
		switch n.Training.Recompute { // what selective reruns, or what auto chooses from
		case "selective":
			k["recompute_modules"] = wire.RecomputeAttention
		case "auto":
			k["recompute_modules"] = "all that apply"
		}
	}
	if f := n.Schedule.WeightGradFraction; f != 0 { // zb-h1's
		k["weight_grad_fraction"] = strconv.FormatFloat(f, 'g', -1, 64)
	}
	if request.DPBucketBytesApplies(n) { // core's rule; its size is the framework's (core's buckets)
		k["dp_bucket_bytes"] = "the framework's"
	}
	if request.CheckForNaNInGradApplies(n) { // Megatron-Core's buckets (core's rule)
		k["check_for_nan_in_grad"] = "off"
	}
	if request.DPBucketElementsApplies(n) { // Megatron-Core's default bucket_size for the replicas
		k["dp_bucket_elements"] = strconv.FormatInt(cluster.MegatronBucketElements(max(n.Parallelism.Data, 1)), 10)
	}
	k["free_transfers"] = "off"
	if len(n.Cluster.Document) > 0 {
		k["data_link"] = n.Cluster.DataLink
		if k["data_link"] == "" {
			k["data_link"] = "the slowest between stages"
		}
	}
	if ar.DType != "" && ar.DType != "fp8" {
		k["fp8_recipe"] = "none: dtype " + ar.DType
	}
	if n.MemoryProportion != 0 {
		k["memory_proportion"] = strconv.FormatFloat(n.MemoryProportion, 'g', -1, 64)
	}
	if n.Partition != "" {
		k["partition"] = n.Partition
	}
	k["capacity"] = capacityNote(n)
	for name, v := range k {
		if v == "" {
			delete(k, name)
		}
	}
	return mustJSON(k)
}

// capacityNote says what a stage's capacity is on the request's device preset, so that
// 76 GiB for a profile and 80 GiB for an architecture on the same H100 say why: a
// measured profile may fill the preset's usable share (core/cluster: 95% of a GPU's
// memory, the rest left to the runtime), an architecture all of it, with its
// framework's own memory counted in each stage (core/request); times the memory
// proportion. "" for a cluster document.
func capacityNote(n *wire.Request) string {
	d, err := cluster.FromPreset(n.Cluster.Device, 1)
	if err != nil || len(d.Devices) == 0 {
		return ""
	}
	dev := d.Devices[0]
	mem := units.Bytes(dev.MemoryBytes)
	mp := ""
	if n.MemoryProportion != 0 && n.MemoryProportion != 1 {
		mp = fmt.Sprintf(", times the memory proportion %g", n.MemoryProportion)
	}
	if n.Model.Architecture != nil || dev.UsableFraction == 0 || dev.UsableFraction == 1 {
		return fmt.Sprintf("Capacity: all of each %s's %s%s. The framework's own memory (CUDA context, libraries) and its allocator's reserve are counted in each stage's memory (its breakdown), not taken off the capacity.", dev.Name, mem, mp)
	}
	return fmt.Sprintf("Capacity: %.0f%% of each %s's %s is usable%s: the rest is left to the runtime (CUDA context, communication buffers, allocator fragmentation), which a measured profile does not count.", 100*dev.UsableFraction, dev.Name, mem, mp)
}

// candidateJSON is the request of one candidate of a query's search (its JSON, as the
// report gives it), in core's normal form (every knob stated).
// refs are the stored models the query referenced: the request answers with its
// reference again, as the page holds it.
func candidateJSON(queryJSON, candidateJSON string, refs []Ref) string {
	q, err := search.DecodeQuery([]byte(queryJSON))
	if err != nil {
		return mustJSON(errorOf(err))
	}
	ev, err := evaluate.New(q.Request)
	if err != nil {
		return mustJSON(errorOf(err))
	}
	if err := ev.Fix(q.SearchKnobs); err != nil { // the knobs every candidate shares
		return mustJSON(errorOf(err))
	}
	var c search.Candidate
	if err := json.Unmarshal([]byte(candidateJSON), &c); err != nil {
		return mustJSON(apiError{Error: "candidate: " + err.Error()})
	}
	r, err := ev.Request(c)
	if err != nil {
		return mustJSON(errorOf(err))
	}
	if n, err := request.Normalize(r); err == nil {
		r = n
	}
	if len(refs) == 1 && len(r.Model.Document) > 0 {
		b, _ := json.Marshal(refs[0])
		r.Model.Document = b
	}
	return mustJSON(r)
}

// searchOptions reports progress at most every progressEvery (and at the end) and yields
// every searchSlice.
func searchOptions(progress func(string), yield func()) search.Options {
	var opt search.Options
	if progress != nil {
		last := time.Time{}
		opt.Progress = func(p wire.SearchProgress) {
			if now := time.Now(); now.Sub(last) >= progressEvery || p.Done == p.Total {
				last = now
				progress(mustJSON(p))
			}
		}
	}
	if yield != nil {
		last := time.Now()
		opt.Yield = func() {
			if time.Since(last) >= searchSlice {
				yield()
				last = time.Now()
			}
		}
	}
	return opt
}
