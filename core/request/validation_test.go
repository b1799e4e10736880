package request

import (
	"context"
	"math"
	"slices"
	"testing"

	"pipeplan/core/arch"
	"pipeplan/core/wire"
)

// validationCase is one published run of the validation tables, with its throughput
// error: predicted over published, minus 1 (positive: the planner is optimistic).
type validationCase struct {
	name, source, precision string
	err                     float64
	// gap: the known gap that lets it miss issue 19's 25%, or "".
	gap string
}

// validationCases plans every published run of this package's tables (publishedRuns,
// llama3Runs, shardedRuns, fp8Runs, the steps measured on an H100, publishedMoERuns,
// moreRuns, independentRuns, mlperfRuns) through Run and returns each one's
// throughput error; a run that does not fit is reported as an error of t (each ran).
func validationCases(t *testing.T) []validationCase {
	t.Helper()
	var out []validationCase
	run := func(name string, r *wire.Request) *wire.Result {
		res, err := Run(context.Background(), r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !res.Feasible {
			t.Errorf("%s: ran, but planned as not fitting: %v", name, res.Diagnostics)
			return nil
		}
		return res
	}
	for _, c := range publishedRuns {
		r := c.request()
		if res := run(c.name, r); res != nil {
			// Step times: throughput is their inverse.
			out = append(out, validationCase{c.name, c.source, runPrecision(r), c.seconds/res.Step.StepSeconds - 1, gapIf(c.tolerance)})
		}
	}
	a, err := arch.Parse(llama405BConfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range llama3Runs {
		if res := run(c.name, c.r); res != nil {
			seq := float64(c.r.Model.Architecture.Seq)
			perToken := 6*float64(a.Params()-a.EmbeddingWeightParams()) + 12*float64(a.NumLayers)*float64(a.HiddenSize)*seq
			got := res.Step.TokensPerSecond / float64(res.Step.Devices) * perToken / 1e12
			out = append(out, validationCase{c.name, "Dubey et al. 2024, Table 4", runPrecision(c.r), got/c.tflopsPerGPU - 1, gapIf(c.tolerance)})
		}
	}
	for _, c := range shardedRuns {
		if res := run(c.name, c.r); res != nil {
			got := res.Step.TokensPerSecond / float64(res.Step.Devices)
			out = append(out, validationCase{c.name, benchmarkOf(c.source), runPrecision(c.r), got/c.tokensPerGPU - 1, c.gap}) // per benchmark
		}
	}
	for _, c := range fp8Runs {
		r := c.request()
		if res := run(c.name, r); res != nil {
			got := float64(c.gbs) * float64(r.Model.Architecture.Seq) / res.Step.StepSeconds / float64(c.gpus)
			out = append(out, validationCase{c.name, c.source, runPrecision(r), got/c.tokensPerGPU - 1, c.gap})
		}
	}
	for _, m := range measuredSteps(t) {
		if m.Error != "" {
			continue // TestMeasuredSteps reports it
		}
		if res := run(m.name(), m.request()); res != nil {
			out = append(out, validationCase{m.name(), "measured: one " + m.device + ", eager PyTorch 2.11 (tools/measure/steps.py)", runPrecision(m.request()), m.StepSeconds/res.Step.StepSeconds - 1, ""})
		}
	}
	for _, c := range publishedMoERuns {
		if res := run(c.name, c.req); res != nil {
			got := res.Step.TokensPerSecond / float64(res.Step.Devices)
			out = append(out, validationCase{c.name, c.source, runPrecision(c.req), got/c.tokensPerGPUSecond - 1, c.gap})
		}
	}
	for _, c := range slices.Concat(moreRuns, independentRuns, mlperfMoreRuns()) { // published_more_test.go, published_indep_test.go, published_mlperf_test.go
		if res := run(c.name, c.r); res != nil {
			out = append(out, validationCase{c.name, c.source, runPrecision(c.r), c.seconds/res.Step.StepSeconds - 1, c.gap})
		}
	}
	return out
}

// runPrecision is a run's precision for the summary: fp8 (an fp8 dtype or recipe) or
// 16-bit.
func runPrecision(r *wire.Request) string {
	if (r.Model.Architecture != nil && r.Model.Architecture.DType == "fp8") || r.Training.FP8Recipe != "" {
		return "fp8"
	}
	return "16-bit"
}

// gapIf names the gap of a table that states a tolerance beyond issue 19's 25% instead
// of a gap.
func gapIf(tolerance float64) string {
	if tolerance > issueTolerance {
		return "a tolerance of its table beyond 25%"
	}
	return ""
}

// TestValidationSummary is issue 19.7's report: every published run planned through Run,
// its throughput error, and per source and per precision the count, the median |error|
// and the signed median, over all runs and over those without a known gap, each against
// issue 19's targets (median |error| within 10%, signed median within 5%, no run beyond
// 25%); the runs beyond 25% are named, and each must be one its table names a known gap
// for. The medians are held to regression bounds (below) until the targets are met.
func TestValidationSummary(t *testing.T) {
	if testing.Short() {
		t.Skip("plans runs of up to 16,384 devices")
	}
	cases := validationCases(t)
	groups := map[string][]float64{}
	var all []float64
	for _, c := range cases {
		groups["source: "+c.source] = append(groups["source: "+c.source], c.err)
		groups["precision: "+c.precision] = append(groups["precision: "+c.precision], c.err)
		all = append(all, c.err)
	}
	logGroups(t, groups)
	signed, abs := medians(all)
	var beyond int
	var held []float64
	for _, c := range cases {
		if c.gap == "" {
			held = append(held, c.err)
		}
		if math.Abs(c.err) <= issueTolerance {
			continue
		}
		beyond++
		t.Logf("beyond 25%%: %-58s %+6.1f%% (%s)", c.name, 100*c.err, c.gap)
		if c.gap == "" {
			t.Errorf("%s: error %+.1f%% beyond 25%% without a known gap", c.name, 100*c.err)
		}
	}
	met := "met"
	if abs > 0.10 || math.Abs(signed) > 0.05 || beyond > 0 {
		met = "NOT met"
	}
	t.Logf("all: %d runs, median |error| %.1f%%, signed median %+.1f%%, %d beyond 25%% (issue 19's targets: 10%%, within 5%%, none: %s)", len(all), 100*abs, 100*signed, beyond, met)
	hs, ha := medians(held)
	met = "met"
	if ha > 0.10 || math.Abs(hs) > 0.05 {
		met = "NOT met"
	}
	t.Logf("without the known gaps: %d runs, median |error| %.1f%%, signed median %+.1f%% (targets: %s)", len(held), 100*ha, 100*hs, met)
	// Megatron-Bridge's mixture-of-experts and context-parallel runs
	// (published_bridge_moe_test.go) are not among the cases held here yet: reported
	// with them, so that the targets are read over every published case.
	ext := append([]validationCase(nil), cases...)
	for _, c := range append(append([]bridgeMoERun(nil), bridgeMoERuns...), bridgeContextRuns...) {
		r := c.request(t)
		res, err := Run(context.Background(), r)
		if err != nil || !res.Feasible {
			continue // reported by TestBridgeMoEPublishedRuns (not expressed, or refused)
		}
		if _, ok := superseded(t, c, bridgeMoERuns); ok {
			continue // a later container ran the same configuration >25% faster: not held
		}
		got := float64(c.gbs) * float64(c.seq) / res.Step.StepSeconds / float64(c.gpus)
		ext = append(ext, validationCase{name: c.name, source: c.source, precision: runPrecision(r), err: got/c.tokensPerGPU - 1})
	}
	byPrecision := map[string][]float64{}
	var extAll []float64
	extBeyond := 0
	for _, c := range ext {
		byPrecision[c.precision] = append(byPrecision[c.precision], c.err)
		extAll = append(extAll, c.err)
		if math.Abs(c.err) > issueTolerance {
			extBeyond++
		}
	}
	for _, k := range []string{"16-bit", "fp8"} {
		es, ea := medians(byPrecision[k])
		t.Logf("with Megatron-Bridge's MoE and CP runs, precision %-6s %3d runs: median |error| %5.1f%%, signed median %+6.1f%%", k, len(byPrecision[k]), 100*ea, 100*es)
	}
	es, ea := medians(extAll)
	t.Logf("with Megatron-Bridge's MoE and CP runs: %d runs, median |error| %.1f%%, signed median %+.1f%%, %d beyond 25%% (not held yet)", len(extAll), 100*ea, 100*es, extBeyond)
	// The medians met issue 19's targets over the held runs until the independent sources
	// below were added; the runs beyond 25% (each with its known gap) and
	// Megatron-Bridge's MoE runs do not yet. The runs with the Bridge MoE and CP cases are held to what this
	// test measured when the bounds were last set (7.7%, +2.8%), with room for noise.
	// Megatron-Core's fp8 paths as its source runs them took them from 8.1%, +4.6% (287
	// runs) to 9.9%, +7.1%: one quantization of linear_fc1's input (analytic.oneFC1:
	// gate and up are one linear), the fused unpermute (analytic's shape.unpermute: one
	// kernel reading each row and writing each token, where a multiply and scatter-add
	// per expert had been charged) and 16-bit DeepEP dispatch. The over-pricing had
	// hidden that much optimism in the fp8 Bridge runs, so their signed bound is +7.5%
	// until what is left of it is found (not a constant tuned back). torchtitan's
	// runs that ran per-op selective checkpointing, planned with it (recompute
	// selective-op) rather than as full recomputation, took their memory from -34..-46%
	// to within 5% and their throughput from -3..+3% to +10..+20%: the whole forward
	// rerun full recomputation charged had hidden rates priced fast for them. With them,
	// 10.2%, +7.7% over 287 runs: bounds 11% and +8.5%, again a record of optimism found,
	// not a target met.
	// The independent sources of published_indep_test.go (DGX Cloud Benchmarking's
	// Nemotron4 340B, Nemotron4 15B, Llama 3.1 70B and Llama 3.1 405B recipes on 16 to
	// 2,304 H100s, and the Nemotron-4 340B report's production run: 51 runs, +6% to +33%,
	// no pricing changed) moved the held runs from 6.5%, +3.9% (155 runs) to 8.5%, +7.0%
	// (205), all runs from 7.0%, +4.6% (162) to 8.7%, +7.3% (213), and the runs with the
	// Bridge MoE and CP cases from 9.1%, +6.4% (287) to 10.0%, +8.3% (338): sources new to
	// the planner found it optimistic on Megatron-Core at NeMo 24.09 and 24.12 (bf16 +10%
	// to +20%, fp8 +6% to +22%). The signed bounds are 7.5%, 8% and 9% until that is
	// priced: a record of what the sources show, not a target met. Async TP's own copies
	// and partial sums (analytic's asyncCopies) then moved them to 8.3%, +6.9%; 8.7%,
	// +7.1%; and 10.0%, +8.1%, inside those bounds.
	// Transformer Engine's userbuffers overlap priced with the 16 multiprocessors its
	// pipelined and bulk overlaps take from the products they overlap (core/analytic's
	// userbuffersChunks, initialize_ub's defaults) took the held runs from 8.3%, +6.9%
	// (205 runs) to 5.7%, +3.7% (206: the Nemotron-4 report's run came within 25%), all runs
	// from 8.7%, +7.1% to 5.9%, +4.0% (213), and the runs with the Bridge MoE and CP cases from
	// 10.0%, +8.1% to 7.8%, +5.3% (338): DGX Cloud's NeMo 24.09 and 24.12 recipes from
	// +9.5..+18.4% to +3.6..+11.1% by source, NeMo 24.12's perf summary from +10.0% to
	// +4.2%, Megatron-Bridge's dense fp8 rows from -3..+3% to -7..0%. Bounds: issue
	// 19's 10% and 5% over the held runs and over all of them, 9% and 6.5% with the
	// Bridge MoE and CP cases.
	// The 2025-06 async TP benchmark's Llama 3.1 8B TP 8 rows, planned with the per-op
	// selective checkpointing they ran (core had refused it with tensor parallelism, so
	// they were planned as full recomputation), moved from +1..+10% to +19..+28%
	// (a known gap then): the held runs from 5.7%, +3.7% (206) to 5.7%, +3.7% (205), all runs
	// from 5.8%, +3.9% (7 beyond 25%) to 5.9%, +4.0% (8), with the Bridge MoE and CP
	// cases from 7.8%, +5.2% to 8.1%, +5.3%: optimism found; the bounds stay.
	// The DGX Cloud and Nemotron-4 report runs with a virtual pipeline planned on
	// Megatron-Core's even split of the blocks (published_indep_test.go's
	// megatronEvenLayout: Megatron-Core 0.9 and 0.10 refuse an uneven split under
	// interleaving), not the planner's optimum, which had given the 256,000-word head of
	// Nemotron-4 a chunk of its own: the 340B recipe from +11.7% to +7.8%, the report's
	// run from +24.9% to +20.0%, the 70B recipe from +8.1% to +6.7%; all runs from 6.2%,
	// +4.2% to 6.1%, +4.2%; the held runs from 5.9%, +4.0% to 5.8%, +4.0%; with the
	// Bridge MoE and CP cases from 8.1%, +5.7% to 7.7%, +5.7%. The bounds stay.
	// torchtitan's and HuggingFace's query, key and value projections priced as the
	// three products they run (core/analytic's separateProjections) and PyTorch's
	// sequence-dimension collectives' cats (sequenceCopies: torchtitan's vanilla TP rows,
	// and async TP's weight gradients' copies), measured on main at 246288e: all runs
	// from 6.1%, +4.2% (8 beyond 25%) to 5.9%, +4.0% (7: the 8B bf16 + async TP row came
	// within), the held runs from 5.8%, +4.0% (205) to 5.8%, +3.7% (206), with the Bridge
	// MoE and CP cases from 7.7%, +5.7% (40 beyond) to 7.3%, +5.3% (39); Dubey et al.'s
	// Table 4, planned in the compiled mode for want of Meta's stack, from -9.3% to
	// -14.3%. The bounds stay.
	// The rows of NVIDIA's recipes then named the userbuffers configs they ran
	// (parallelism.tp_comm_overlap_config: Megatron-Bridge's and NeMo's tuned configs,
	// NeMo-Framework-Launcher's for NeMo 24.07's summary, the ones DGX Cloud
	// Benchmarking's Llama 3.1 yamls hold), whose bulk overlaps leave their products
	// every multiprocessor but while their collective runs (analytic's bulkContention),
	// where initialize_ub's defaults, priced until then, take 16 for the products'
	// whole time: Megatron-Bridge's H100 Llama 3 70B rows -6.2..-7.2% to -2.9..-3.9%,
	// its GB200 rows -2.3..+0.1% to -1.2..+5.0% (Llama 3.1 405B) and +8.0% to +13.8%
	// (Llama 3 70B), NeMo 24.07's summary (labelled 24.12) +4.2% to +7.2% (median),
	// NeMo 25.04's GPT3 175B on GB200 -13.9% to -10.3%, DGX Cloud's Llama 3.1 70B +6.7%
	// to +9.9% and 405B +4.0% to +8.2%. The held runs went from 5.8%, +4.0% (205) to
	// 6.6%, +5.0%, all runs from 6.1%, +4.2% to 6.8%, +5.3%, with the Bridge MoE and CP
	// cases from 7.7%, +5.7% to 8.1%, +6.3%: the defaults had hidden that much of the
	// optimism of these rows. The signed bounds over all runs and with the Bridge cases
	// are 5.5% and 7% until it is found: a record, not issue 19's target met.
	// The expert groups' NVLink at the 370 of 450 GB/s NCCL's maintainer states its
	// copies reach (cluster.NVLinkPayloadShare), not its line rate: the DeepSeek-V2 run
	// from -3.1% to -6.8% (its EP 8 all-to-alls all on the H800's NVLink), DeepSeek-V3's
	// unchanged (-8.5%: its network side is the slower); on main at 47390f3 all runs and
	// the held runs as they were (6.6%, +4.7%, 5 beyond 25%; 6.3%, +4.5%, 208 runs);
	// with the Bridge MoE and CP cases from 7.7%, +5.9% to 7.3%, +5.3% (37 beyond). The
	// bounds stay.
	// MLCommons' MLPerf Training submissions (published_mlperf_test.go: 50 runs of GPT-3
	// 175B, Llama 3.1 405B and Llama 3.1 8B, rounds 3.0 to 5.1, eleven submitters, H100,
	// B200, B300, GB200 and MI355X, step times from their MLLOG logs, the userbuffers
	// configs their tp_overlap yamls hold where the request can name them; no pricing
	// changed), measured on main at 25f6c21: all runs from 6.6%, +4.7% (213, 5 beyond
	// 25%) to 6.3%, +4.7% (263, 8: Cisco's TP 2 H100 run, +35%, and the two MI355X
	// runs, -41% and -44%, each with its gap), the held runs from 6.3%, +4.5% (208) to
	// 6.1%, +4.6% (255), with the Bridge MoE and CP cases from 7.3%, +5.3% (338) to
	// 7.1%, +5.0% (388). The NVIDIA-implementation runs err -9% to +24%: close but for
	// software vintage (round 3.0's GPT-3 runs under NeMo 23.04 +17% to +21%, where round
	// 3.1's identical configuration under NeMo 23.09 errs +6% to +10%) and Oracle's
	// 3,072-GPU GPT-3 run (+24%, its 1,536-GPU sibling +5%). The bounds stay.
	// Every collective and copy over NVLink and NVSwitch (tensor, context, expert and
	// data-parallel groups, pipeline sends) at the bandwidth NCCL's own topology model
	// gives the GPU's NVLinks (cluster.NVLinkCollectiveBytesPerSecond: 240 GB/s on the
	// A100, 370.8 on the H100 and H200, 721.8 on Blackwell), not the line rate (the expert
	// groups' 0.82 folded into it), measured on main at 927c01e: all runs from 6.3%,
	// +4.7% to 6.0%, +3.9% (263, 8 beyond 25%: MT-NLG DP 12 +28.1% -> +26.4%, BLOOM TP8
	// PP6 mbs 2 +28.3% -> +25.9%, Cisco's MLPerf TP 2 run +35.4% -> +34.6%), the held
	// runs from 6.1%, +4.6% to 5.8%, +3.7% (255), with the Bridge MoE and CP cases from
	// 7.1%, +5.0% to 6.9%, +4.3% (388, 40 beyond); MLPerf 5.0%, +4.1% -> 4.8%, +3.8%
	// (v3.0's GPT-3 +18.8% -> +18.2%); Dubey et al.'s Table 4 -14.3% -> -16.3%,
	// DeepSeek-V2 -6.8% -> -7.4%, Korthikanti et al. +1.6% -> -0.4%. The all-reduce is
	// priced on the same rings: NeMo's and Megatron-Bridge's performance scripts run
	// with NCCL_NVLS_ENABLE=0 ("Disable NVLink SHARP to save memory", PERF_ENV_VARS), and
	// the A100 has no NVLink SHARP. The bounds stay.
	// Megatron-Core's (and Megatron-DeepSpeed's) gated MLP priced as the one 2f-wide
	// linear_fc1 it runs (analytic's oneFC1, cluster.Framework.FusedFC1: one product and
	// launch a pass where gate and up had been two), measured on main at 82e263a, moved
	// all runs from 6.0%, +3.9% to 6.0%, +4.1% (263, 8 beyond 25%), the held runs from
	// 5.8%, +3.7% to 5.8%, +3.9% (255), and with the Bridge MoE and CP cases from 6.9%,
	// +4.3% (388, 40 beyond) to 7.3%, +5.3% (44): the x86 megatron MoE rows, whose
	// launches the plan now undercounts by 31.5% (TestBridgeKernelsPerStep); the dense
	// Megatron-style sources +0.1 to +0.6 points (MLPerf's Llama 3.1 rows +0.2 to +0.5).
	// The bounds stay.
	// The AMD Instinct presets' GEMM fractions from published figures (core/cluster's
	// TestAMDGEMMEfficiencies: the MI355X's rocBLAS products on ROCm 7.2, 0.56 bf16 and
	// 0.62 fp8; the MI300X's fp8 at its MAF ratio to bf16, 0.40; a new mi325x preset):
	// the two MI355X MLPerf runs from -44% and -41% to -15% and -10%, their gap
	// removed; measured on main at 82e263a: all runs 6.0%, +3.9% (263, beyond 25% from
	// 8 to 6), the held runs from 5.8%, +3.7% (255) to 5.9%, +3.6% (257), with the
	// Bridge MoE and CP cases unchanged (6.9%, +4.3%, 388; 40 to 38 beyond). The
	// bounds stay.
	// Megatron-Bridge's context-parallel Llama 3.1 405B rows then priced the userbuffers
	// overlap and the config each recipe passed (bridgeMoERun.ubConfig; a tp4 config at
	// TP 2 on GB300 is taken, as initialize_ub gets its per-GEMM settings, not the name's
	// shape): those 8 from 8.9%, -8.9% to 8.7%, -0.8%; and the step added the expert
	// all-to-alls of the unpaired first forward and last backward of Megatron-Core's
	// combined 1F1B without pipelining (wire.Step.ExpertUnpairedSeconds): the Bridge MoE
	// runs from 12.8%, +8.5% to 13.6%, +8.3% (on main at 25f6c21). On main at c24121c
	// the CP rows from 11.2%, -11.2% to 8.9%, -0.8%, the Bridge MoE runs' medians
	// unmoved (14.9%, +12.3%); all runs and the held runs as they were (6.0%, +4.1%,
	// 263; 5.9%, +3.9%, 257), with the Bridge MoE and CP cases 7.3%, +5.3% (388, 42
	// beyond 25%) unmoved. The bounds stay.
	// DeepSpeed's data-parallel reductions as its source runs them: ZeRO-1 all-reduces
	// the whole 16-bit gradients before the all-gather (cluster.Framework.ZeRO1AllReduce;
	// MT-NLG +21.2/+22.7/+26.4% -> +20.9/+22.3/+25.9%), and the BF16 optimizer's fp32
	// gradients cross the network in bf16, its engine's default communication_data_type
	// under ZeRO stage 0 (analytic.Precision.CommunicatedGradBytes; BLOOM's log +5.8% ->
	// +7.3%, its benchmarks' median +6.2% -> +7.7%, TP8 PP6 mbs 2 +25.9% -> +29.2%):
	// measured on main at 0530dab, all runs from 5.9%, +3.9% to 6.1%, +4.1% (263, 6
	// beyond 25%), the held runs from 5.8%, +3.7% to 5.9%, +3.8% (257), with the Bridge
	// MoE and CP cases from 7.1%, +5.0% to 7.3%, +5.0% (388, 41 beyond). The bounds stay.
	// The GB200's matrix products at their measured MAMF beside the B200's (core/cluster's
	// TestGB200GEMMEfficiencies: 1,822 against 1,745 TFLOP/s bf16, 3,615.6 against
	// 3,432.5 fp8, ml-engineering's MAMF table; the datasheets' 2.5 against 2.25 PFLOP/s
	// had priced them 11.1% faster): measured on main at 62d466e, all runs from 5.9%,
	// +4.3% to 5.9%, +4.2% (263, 6 beyond 25%), the held runs from 5.9%, +4.2% to 5.7%,
	// +3.9% (257), with the Bridge MoE and CP cases from 7.3%, +5.1% to 7.2%, +4.9%
	// (388, 40 beyond, unmoved); MLPerf's v5.0 GB200 Llama 3.1 405B runs 4.7%, +4.7% to
	// 2.6%, +2.3%; the GB200 fp8 Bridge and NeMo rows +3.4% to -0.6% (10 runs; GPT-3
	// 175B -11.1% to -14.1%). The bounds stay.
	// The distributed optimizer's all-gather of fp8 primary weights priced in fp8, 1 byte
	// an element of the products' weights under delayed, current and blockwise scaling
	// (analytic.Result.ParamGatherBytes: Megatron-Core's torch.uint8 param buffer; mxfp8
	// gathers in bf16 and is unmoved), where the 16-bit weights had been priced: measured
	// on main at 0408ed6, all runs from 5.8%, +4.0% (6 beyond 25%) to 6.2%, +4.3% (7:
	// Cisco's TP 2 Llama 3.1 8B +24.9% -> +26.3%, its gap named again), the held runs
	// from 5.6%, +3.8% (257) to 6.0%, +4.2% (256), with the Bridge MoE and CP cases from
	// 6.9%, +4.6% to 7.2%, +4.9% (388, 38 -> 39 beyond); MLPerf's v5.1 Llama 3.1 8B
	// +11.2% -> +13.8%, v4.0 GPT-3 175B -4.0% -> +4.4%, DGX Cloud's Nemotron4 340B +5.4%
	// -> +6.6%: optimism the 16-bit gather had hidden. The bounds stay.
	if ha > 0.10 || math.Abs(hs) > 0.05 {
		t.Errorf("without the known gaps, over %d runs: median |error| %.1f%%, signed median %+.1f%%: beyond 10%% and 5%%", len(held), 100*ha, 100*hs)
	}
	if abs > 0.10 || math.Abs(signed) > 0.055 {
		t.Errorf("over all %d runs: median |error| %.1f%%, signed median %+.1f%%: beyond 10%% and 5.5%%", len(all), 100*abs, 100*signed)
	}
	if ea > 0.09 || math.Abs(es) > 0.07 {
		t.Errorf("with Megatron-Bridge's MoE and CP runs, over %d runs: median |error| %.1f%%, signed median %+.1f%%: beyond 9%% and 7%%, worse than when these bounds were set", len(extAll), 100*ea, 100*es)
	}
}
