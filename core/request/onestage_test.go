package request

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"pipeplan/core/analytic"
	"pipeplan/core/cluster"
)

// TestEstimateAgreesWithOneStagePlan: the estimate and the same request planned on one
// stage and one microbatch state each quantity once (issue 19 item 6), to the last bit:
// the pipeline is the estimate's forward plus backward (with ZeRO-3's and HSDP's
// per-layer collectives, Result.DataParallel.PipelineSeconds), the optimizer update its
// optimizer time, each data-parallel collective and its exposed part the estimate's,
// the step and its written breakdown the estimate's, the stage's memory its peak on the
// device, the throughput the whole job's tokens per second (every replica's). For each
// sharding mode with data parallelism, and without. Each data-parallel case names the
// term it must price (positive), so that agreement on zeros cannot pass for agreement.
func TestEstimateAgreesWithOneStagePlan(t *testing.T) {
	const gpt2m = `{"model":{"architecture":{"name":"gpt2-medium","seq":1024%s}},"cluster":{"device":"a100-80gb","count":4},"parallelism":{"data":4,"sharding":"%s"%s}}`
	for _, tt := range []struct {
		name, req string
		// priced is the data-parallel term the case must price ("" without data
		// parallelism), hidden whether some of the communication must hide.
		priced string
		hidden bool
	}{
		{"gpt2 a100 bf16", `{"model":{"architecture":{"name":"gpt2","seq":512}},"cluster":{"device":"a100-80gb","count":1}}`, "", false},
		{"llama-3.2-1b h100", `{"model":{"architecture":{"name":"llama-3.2-1b"}},"cluster":{"device":"h100-sxm","count":1}}`, "", false},
		{"llama-3.2-1b h100 fp32", `{"model":{"architecture":{"name":"llama-3.2-1b","seq":512,"dtype":"fp32"}},"cluster":{"device":"h100-sxm","count":1}}`, "", false},
		{"llama-3.2-1b h100 fp8", `{"model":{"architecture":{"name":"llama-3.2-1b","seq":1024}},"cluster":{"device":"h100-sxm","count":1},"training":{"fp8_recipe":"delayed"}}`, "", false},
		{"llama-3.2-1b h100 tp2", `{"model":{"architecture":{"name":"llama-3.2-1b","seq":2048}},"cluster":{"device":"h100-sxm","count":2},"parallelism":{"tensor":2}}`, "", false},
		{"gpt2 a100 inference", `{"model":{"architecture":{"name":"gpt2","seq":512}},"cluster":{"device":"a100-80gb","count":1},"training":{"mode":"inference"}}`, "", false},
		{"gpt2-medium a100 ddp dp4", fmt.Sprintf(gpt2m, "", "none", ""), "allreduce", true},
		{"gpt2-medium a100 ddp dp4 megatron", fmt.Sprintf(gpt2m, `,"framework":"megatron"`, "none", ""), "allreduce", false},
		{"gpt2-medium a100 zero1 dp4", fmt.Sprintf(gpt2m, "", "zero1", ""), "reduce_scatter", true},
		{"gpt2-medium a100 zero1 dp4 megatron", fmt.Sprintf(gpt2m, `,"framework":"megatron"`, "zero1", ""), "reduce_scatter", false},
		{"gpt2-medium a100 zero2 dp4", fmt.Sprintf(gpt2m, "", "zero2", ""), "reduce_scatter", true},
		{"gpt2-medium a100 zero3 dp4 (fsdp)", fmt.Sprintf(gpt2m, "", "zero3", ""), "layer", true},
		{"gpt2-medium a100 zero3 dp4 no prefetch", fmt.Sprintf(gpt2m, "", "zero3", `,"prefetch":"none"`), "layer", true},
		{"gpt2-medium a100 hsdp dp4 group 2", fmt.Sprintf(gpt2m, "", "hsdp", `,"shard_group":2`), "layer", true},
		{"gpt2-medium a100 zero3 dp4 train_metrics", `{"model":{"architecture":{"name":"gpt2-medium","seq":1024}},"cluster":{"device":"a100-80gb","count":4},"parallelism":{"data":4,"sharding":"zero3"},"training":{"train_metrics":2}}`, "layer", true},
		{"llama-3.2-1b h100 tp2 train_metrics", `{"model":{"architecture":{"name":"llama-3.2-1b","seq":2048}},"cluster":{"device":"h100-sxm","count":2},"parallelism":{"tensor":2},"training":{"train_metrics":2}}`, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o, err := EstimateOneStage(context.Background(), decode(t, tt.req))
			if err != nil {
				t.Fatal(err)
			}
			tot, dp, res := o.Estimate.Total, o.Estimate.DataParallel, o.Result
			if !res.Feasible || res.Plan == nil || res.Step == nil || len(res.Plan.Stages) != 1 {
				t.Fatalf("no one-stage plan: %+v", res.Diagnostics)
			}
			st := res.Step
			if tt.priced == "" {
				if dp != nil {
					t.Fatalf("no data parallelism, yet the estimate prices some: %+v", dp)
				}
				dp = &analytic.DataParallel{PipelineSeconds: tot.FwdSeconds + tot.BwdSeconds, Breakdown: st.Breakdown}
			} else if dp == nil {
				t.Fatal("the estimate prices no data-parallel communication")
			}
			for _, c := range []struct {
				name      string
				plan, est float64
			}{
				{"pipeline", st.PipelineSeconds, dp.PipelineSeconds},
				{"per-layer collectives", st.DataParallelLayerSeconds, dp.LayerCollectiveSeconds},
				{"what they add to the passes", st.DataParallelLayerAddedSeconds, dp.LayerAddedSeconds},
				{"all-reduce", st.DataParallelAllReduceSeconds, dp.AllReduceSeconds},
				{"reduce-scatter", st.DataParallelReduceScatterSeconds, dp.ReduceScatterSeconds},
				{"all-gather", st.DataParallelAllGatherSeconds, dp.AllGatherSeconds},
				{"exposed", st.DataParallelExposedSeconds, dp.ExposedSeconds},
				{"compute slowed by hidden collectives", st.DataParallelSlowdownSeconds, dp.SlowdownSeconds},
				{"compute slowed by per-layer collectives", st.DataParallelLayerSlowdownSeconds, dp.LayerSlowdownSeconds},
				{"optimizer", st.OptimizerSeconds, tot.OptimizerSeconds},
				{"training-metric sync", st.TrainMetricSyncSeconds, tot.TrainMetricSyncSeconds},
				{"step", st.StepSeconds, tot.StepSeconds},
				// Throughput is the whole job's in both: every replica's tokens.
				{"tokens/s", st.TokensPerSecond, tot.TokensPerSecond},
			} {
				if c.plan != c.est {
					t.Errorf("%s: the plan's %v s, the estimate's %v s", c.name, c.plan, c.est)
				}
			}
			if st.Breakdown != dp.Breakdown {
				t.Errorf("breakdown: the plan's %q, the estimate's %q", st.Breakdown, dp.Breakdown)
			}
			if m := res.Plan.Stages[0].MemoryBytes; m != tot.PeakDeviceBytes {
				t.Errorf("stage memory %d bytes, want the estimate's peak %d bytes", m, tot.PeakDeviceBytes)
			}
			// The parts add up to the step: the passes (with what the per-layer collectives
			// add, which an independent sum from NCCL's ring formulas checks), the exposed
			// communication and the update.
			if g := zero3Gathers(t, tt.req, o); !near(dp.LayerAddedSeconds, g) {
				t.Errorf("the per-layer collectives add %v s, want %v s", dp.LayerAddedSeconds, g)
			}
			if want := tot.FwdSeconds + tot.BwdSeconds + dp.LayerAddedSeconds; !near(dp.PipelineSeconds, want) {
				t.Errorf("pipeline %v s, want forward + backward + the per-layer collectives' %v s", dp.PipelineSeconds, want)
			}
			if want := dp.PipelineSeconds + dp.ExposedSeconds + tot.OptimizerSeconds + tot.TrainMetricSyncSeconds; tot.StepSeconds != want {
				t.Errorf("step %v s, want its parts' %v s", tot.StepSeconds, want)
			}
			if strings.Contains(tt.name, "train_metrics") && !(tot.TrainMetricSyncSeconds > 0) {
				t.Errorf("training metrics on %d devices: no synchronisation priced", res.Step.Devices)
			}
			priced := map[string]float64{"": 1, "allreduce": dp.AllReduceSeconds, "reduce_scatter": dp.ReduceScatterSeconds, "layer": dp.LayerCollectiveSeconds}[tt.priced]
			if !(priced > 0) {
				t.Errorf("the %s term is %v s, want it priced", tt.priced, priced)
			}
			all := dp.AllReduceSeconds + dp.ReduceScatterSeconds + dp.AllGatherSeconds + dp.LayerCollectiveSeconds
			hidden := all - dp.ExposedSeconds - dp.LayerAddedSeconds
			if tt.hidden != (hidden > 0) || (hidden > 0 && !strings.Contains(dp.Breakdown, "hidden behind")) {
				t.Errorf("%v s of %v s hidden, want some: %v; breakdown %q", hidden, all, tt.hidden, dp.Breakdown)
			}
		})
	}
}

// zero3Gathers is what a ZeRO-3 (or HSDP) request's per-layer all-gathers and
// reduce-scatters add to the estimate's forward and backward (with prefetch: each pass
// of compute C beside its collectives D takes max(D, C + share x D); without, the
// gathers run before their pass), from the estimate's own layer times and bytes and
// NCCL's ring formulas over the request's link and shard group; 0 for other shardings.
func zero3Gathers(t *testing.T, req string, o *OneStage) float64 {
	t.Helper()
	n, err := Normalize(decode(t, req))
	if err != nil {
		t.Fatal(err)
	}
	if analytic.Sharding(n.Parallelism.Sharding).Level() < 3 {
		return 0
	}
	link, err := cluster.LookupLink(n.Cluster.Link)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := cluster.LookupDevice(n.Cluster.Device)
	if err != nil {
		t.Fatal(err)
	}
	share, k, est := float64(cluster.CollectiveCTAs)/float64(dev.Perf.Multiprocessors), n.Parallelism.Data, o.Estimate
	if n.Parallelism.Sharding == string(analytic.HSDP) {
		k = n.Parallelism.ShardGroup
	}
	var added float64
	for i, l := range est.Layers {
		w, g := est.FullBytes(i)
		ag := cluster.RingAllGatherSeconds(link.Link, float64(w), k)
		rs := cluster.RingReduceScatterSeconds(link.Link, float64(g), k)
		if n.Parallelism.Prefetch == PrefetchNone {
			added += ag + ag + max(rs, l.BwdSeconds+share*rs) - l.BwdSeconds
			continue
		}
		added += max(ag, l.FwdSeconds+share*ag) - l.FwdSeconds + max(ag+rs, l.BwdSeconds+share*(ag+rs)) - l.BwdSeconds
	}
	return added
}

// TestOneStageVerdict: EstimateOneStage says whether the whole model fits one device,
// so that a front end states core's verdict; when it does not, FirstError says why.
func TestOneStageVerdict(t *testing.T) {
	for _, tt := range []struct {
		name, req string
		fits      bool
	}{
		{"gpt2 on an a100", `{"model":{"architecture":{"name":"gpt2","seq":512}},"cluster":{"device":"a100-80gb","count":1}}`, true},
		{"llama-2-70b on an a100", `{"model":{"architecture":{"name":"llama-2-70b"}},"cluster":{"device":"a100-80gb","count":1}}`, false},
		{"llama-2-7b on an a100-40gb with adamw", `{"model":{"architecture":{"name":"llama-2-7b"}},"cluster":{"device":"a100-40gb","count":1}}`, false},
		{"llama-2-7b inference on an a100-40gb", `{"model":{"architecture":{"name":"llama-2-7b","seq":1024}},"cluster":{"device":"a100-40gb","count":1},"training":{"mode":"inference"}}`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o, err := EstimateOneStage(context.Background(), decode(t, tt.req))
			if err != nil {
				t.Fatal(err)
			}
			if o.Fits != tt.fits {
				t.Fatalf("Fits = %v, want %v (feasible %v, diagnostics %+v)", o.Fits, tt.fits, o.Result.Feasible, o.Result.Diagnostics)
			}
			if o.Fits {
				s := o.Result.Plan.Stages[0]
				if s.MemoryBytes > s.LimitBytes {
					t.Errorf("fits, but the stage needs %d bytes of %d", s.MemoryBytes, s.LimitBytes)
				}
			} else if o.Result.FirstError() == nil {
				t.Errorf("does not fit, and the result gives no reason")
			}
		})
	}
}
