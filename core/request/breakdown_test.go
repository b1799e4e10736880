package request

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/units"
	"pipeplan/core/wire"
)

// TestStepBreakdown: the parts before the semicolon are those StepSeconds adds up, and
// the hidden communication comes after it, named by what hides it; a collective hidden
// behind compute adds the compute it slows (NCCL's SMs), named as that, not as exposed.
func TestStepBreakdown(t *testing.T) {
	for _, tt := range []struct {
		name string
		step wire.Step
		want string
	}{
		{"pipeline alone", wire.Step{PipelineSeconds: 0.25, StepSeconds: 0.25}, "pipeline 250.00 ms"},
		{"all hidden", wire.Step{PipelineSeconds: 0.26864, OptimizerSeconds: 0.01174, DataParallelAllReduceSeconds: 0.00965},
			"pipeline 268.64 ms + optimizer 11.74 ms; data-parallel all-reduce 9.65 ms, all of it hidden behind the last backward"},
		{"all hidden, slowing the backward", wire.Step{PipelineSeconds: 0.26864, OptimizerSeconds: 0.01174, DataParallelAllReduceSeconds: 0.00965,
			DataParallelExposedSeconds: 0.00175, DataParallelSlowdownSeconds: 0.00175},
			"pipeline 268.64 ms + the last backward slowed 1.75 ms + optimizer 11.74 ms; data-parallel all-reduce 9.65 ms, all of it hidden behind the last backward, slowing it 1.75 ms (NCCL's SMs)"},
		{"partly hidden", wire.Step{PipelineSeconds: 0.26864, OptimizerSeconds: 0.01174, DataParallelAllReduceSeconds: 0.00965, DataParallelExposedSeconds: 0.00175},
			"pipeline 268.64 ms + data-parallel all-reduce 1.75 ms exposed + optimizer 11.74 ms; data-parallel all-reduce 9.65 ms, 7.90 ms of it hidden behind the last backward"},
		{"partly hidden, slowing the backward", wire.Step{PipelineSeconds: 0.26864, OptimizerSeconds: 0.01174, DataParallelAllReduceSeconds: 0.00965,
			DataParallelExposedSeconds: 0.00275, DataParallelSlowdownSeconds: 0.001},
			"pipeline 268.64 ms + data-parallel all-reduce 1.75 ms exposed + the last backward slowed 1.00 ms + optimizer 11.74 ms; data-parallel all-reduce 9.65 ms, 7.90 ms of it hidden behind the last backward, slowing it 1.00 ms (NCCL's SMs)"},
		{"none hidden", wire.Step{PipelineSeconds: 0.1, TiedAllReduceSeconds: 0.001, DataParallelAllReduceSeconds: 0.002, DataParallelExposedSeconds: 0.002},
			"pipeline 100.00 ms + tied all-reduce 1.00 ms + data-parallel all-reduce 2.00 ms"},
		{"sharded", wire.Step{PipelineSeconds: 0.1, DataParallelReduceScatterSeconds: 0.003, DataParallelAllGatherSeconds: 0.002, DataParallelExposedSeconds: 0.001},
			"pipeline 100.00 ms + data-parallel reduce-scatter + all-gather 1.00 ms exposed; data-parallel reduce-scatter + all-gather 5.00 ms, 4.00 ms of it hidden behind the last backward and the first forward"},
		{"all-reduced, then gathered (deepspeed-bf16)", wire.Step{PipelineSeconds: 0.1, DataParallelAllReduceSeconds: 0.006, DataParallelAllGatherSeconds: 0.002, DataParallelExposedSeconds: 0.008},
			"pipeline 100.00 ms + data-parallel all-reduce + all-gather 8.00 ms"},
		{"sharded, slowing the passes", wire.Step{PipelineSeconds: 0.1, DataParallelReduceScatterSeconds: 0.003, DataParallelAllGatherSeconds: 0.002,
			DataParallelExposedSeconds: 0.0009, DataParallelSlowdownSeconds: 0.0009},
			"pipeline 100.00 ms + the last backward and the first forward slowed 900.0 µs; data-parallel reduce-scatter + all-gather 5.00 ms, all of it hidden behind the last backward and the first forward, slowing them 900.0 µs (NCCL's SMs)"},
		{"per-layer, hidden", wire.Step{PipelineSeconds: 0.05575, OptimizerSeconds: 0.00543, DataParallelLayerSeconds: 0.00525,
			DataParallelLayerAddedSeconds: 0.00117, DataParallelLayerSlowdownSeconds: 0.00117},
			"pipeline 55.75 ms (including each layer's compute slowed 1.17 ms) + optimizer 5.43 ms; per-layer all-gather + reduce-scatter 5.25 ms, all of it hidden behind each layer's compute, slowing it 1.17 ms (NCCL's SMs)"},
		{"per-layer, partly exposed", wire.Step{PipelineSeconds: 0.05575, OptimizerSeconds: 0.00543, DataParallelLayerSeconds: 0.00525,
			DataParallelLayerAddedSeconds: 0.00117, DataParallelLayerSlowdownSeconds: 0.00017},
			"pipeline 55.75 ms (including per-layer all-gather + reduce-scatter 1.00 ms exposed and each layer's compute slowed 170.0 µs) + optimizer 5.43 ms; per-layer all-gather + reduce-scatter 5.25 ms, 4.25 ms of it hidden behind each layer's compute, slowing it 170.0 µs (NCCL's SMs)"},
		{"exposed within rounding", wire.Step{PipelineSeconds: 0.1, DataParallelAllReduceSeconds: 0.01,
			DataParallelExposedSeconds: 0.0018 + 1e-18, DataParallelSlowdownSeconds: 0.0018},
			"pipeline 100.00 ms + the last backward slowed 1.80 ms; data-parallel all-reduce 10.00 ms, all of it hidden behind the last backward, slowing it 1.80 ms (NCCL's SMs)"},
	} {
		if got := breakdown(&tt.step); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
	if got := breakdown(nil); got != "" {
		t.Errorf("nil step: %q", got)
	}
}

// TestBreakdownNamesTheSlowdown plans GPT-2 medium on four H100s in eager PyTorch, whose
// data-parallel communication all hides behind compute (DDP's buckets, ZeRO-1's
// reduce-scatter and all-gather, FSDP's per-layer gathers, HSDP's both), and
// Llama-2 7B under ZeRO-3 without prefetch, whose gathers run before their passes:
// a breakdown calls exposed only communication that outlasts compute, names the compute
// that hidden collectives slow (cluster.OverlapSlowdownSeconds: NCCL's SMs), and its
// printed parts add up to the printed step (issue 19 item 6).
func TestBreakdownNamesTheSlowdown(t *testing.T) {
	const gpt2m = `{"model":{"architecture":{"name":"gpt2-medium","seq":1024}},"cluster":{"device":"h100-sxm","count":4,"devices_per_node":2},"parallelism":{"data":4,"sharding":%q%s},"schedule":{"microbatches":2}}`
	for _, tt := range []struct {
		name, req string
		exposed   bool // some communication outlasts compute
	}{
		{"ddp", fmt.Sprintf(gpt2m, "none", ""), false},
		{"zero1", fmt.Sprintf(gpt2m, "zero1", ""), false},
		{"zero3", fmt.Sprintf(gpt2m, "zero3", ""), false},
		{"hsdp", fmt.Sprintf(gpt2m, "hsdp", `,"shard_group":2`), false},
		{"zero3 without prefetch", `{"model":{"architecture":{"name":"llama-2-7b","seq":4096}},"cluster":{"device":"h100-sxm","count":16,"devices_per_node":8},"parallelism":{"data":16,"sharding":"zero3","prefetch":"none"}}`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Run(context.Background(), decode(t, tt.req))
			if err != nil || res.Step == nil {
				t.Fatalf("%v %+v", err, res)
			}
			st := res.Step
			b := st.Breakdown
			if slow := st.DataParallelSlowdownSeconds + st.DataParallelLayerSlowdownSeconds; !(slow > 0) || !strings.Contains(b, "(NCCL's SMs)") {
				t.Errorf("%v s of compute slowed by hidden collectives, not named: %q", slow, b)
			}
			if strings.Contains(b, "exposed") != tt.exposed {
				t.Errorf("exposed communication: want %v: %q", tt.exposed, b)
			}
			sum, slack := breakdownSum(t, b)
			step, half := parseTime(t, units.Time(st.StepSeconds, model.Seconds))
			if math.Abs(sum-step) > slack+half+1e-12 {
				t.Errorf("the printed parts add up to %v s, the printed step is %v s: %q", sum, step, b)
			}
		})
	}
}

// breakdownSum adds the parts a breakdown prints before its semicolon (the first time
// of each "+"-separated part, parentheses left out), as a reader would, and says by how
// much their printed rounding may move the sum (slack).
func breakdownSum(t *testing.T, b string) (sum, slack float64) {
	t.Helper()
	head, _, _ := strings.Cut(b, ";")
	head = regexp.MustCompile(`\([^)]*\)`).ReplaceAllString(head, "")
	for _, part := range strings.Split(head, " + ") {
		m := timeRE.FindString(part)
		if m == "" {
			t.Fatalf("part %q of %q states no time", part, b)
		}
		v, half := parseTime(t, m)
		sum, slack = sum+v, slack+half
	}
	return sum, slack
}

var timeRE = regexp.MustCompile(`[0-9.]+(e[-+][0-9]+)? (ns|µs|ms|s)\b`)

// parseTime reads a printed time ("1.93 s", "410.3 µs") in seconds, and half its last
// printed digit (its rounding).
func parseTime(t *testing.T, s string) (seconds, half float64) {
	t.Helper()
	num, unit, _ := strings.Cut(s, " ")
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	scale := map[string]float64{"ns": 1e-9, "µs": 1e-6, "ms": 1e-3, "s": 1}[unit]
	decimals := 0
	if _, frac, ok := strings.Cut(num, "."); ok {
		decimals = len(frac)
	}
	return v * scale, 0.5 * math.Pow(10, -float64(decimals)) * scale
}
