package request

import (
	"context"
	"fmt"
	"strings"

	"pipeplan/core/model"
	"pipeplan/core/wire"
)

// LayoutTie is the relative throughput within which StartLayout keeps the simpler
// layout (fewer pipeline stages, then no sharding): a 1% gain is below what the
// estimates tell apart (core/search's NearTie is the same).
const LayoutTie = 0.01

// Layout is a starting layout of a request's devices (StartLayout).
type Layout struct {
	// Request is the request given with the layout set: parallelism.data and
	// parallelism.sharding (the pipeline follows from the devices).
	Request *wire.Request `json:"request"`
	// Pipeline stages and Data replicas of the layout, and its Sharding ("none" or
	// "zero1"); SamplesPerSecond its throughput as planned.
	Pipeline         int     `json:"stages"`
	Data             int     `json:"replicas"`
	Sharding         string  `json:"sharding"`
	SamplesPerSecond float64 `json:"samples_per_second"`
	// Tried is how many layouts were planned.
	Tried int `json:"tried"`
	// Rule says where the layout comes from, for people.
	Rule string `json:"rule"`
}

// StartLayout lays out the devices of a request that leaves the layout open (an
// architecture on a device preset and a count, neither parallelism.pipeline nor
// parallelism.data given, no boundaries): of the splits of the count, over the tensor x context groups, into
// pipeline stages p times replicas d (every divisor p, d = groups / p), with ZeRO-1
// beside no sharding where the request gives none (training, d >= 2), it plans each and
// keeps the fastest; a layout within LayoutTie of a faster one that has fewer stages
// (or no sharding) is kept instead. So N devices do not start as N pipeline stages
// (Llama-3-8B on 2 x 8 H100s: 16 stages, a third of the step idle) when replicas run
// faster, as Megatron-LM's and DeepSpeed's guides advise: data parallelism first,
// pipeline stages as many as memory needs.
//
// A request that fixes the layout, or whose layout no split fits, comes back as given
// (Layout.Request is r, Pipeline 0) with a Rule that says why. Errors are the request's
// (Normalize's).
func StartLayout(ctx context.Context, r *wire.Request) (*Layout, error) {
	n, err := Normalize(r)
	if err != nil {
		return nil, err
	}
	par := r.Parallelism
	switch {
	case r.Model.Architecture == nil:
		return &Layout{Request: r, Rule: "a measured profile is planned as one pipeline of the devices (its times are per device, measured for pipelining): give replicas for data parallelism"}, nil
	case len(r.Cluster.Document) > 0:
		return &Layout{Request: r, Rule: "the cluster document is one pipeline: its devices are the stages"}, nil
	case par.Pipeline != 0 || par.Data != 0:
		return &Layout{Request: r, Rule: "the request gives its stages or replicas"}, nil
	case len(r.Boundaries) > 0:
		return &Layout{Request: r, Rule: "the request gives its split"}, nil
	}
	group := n.Parallelism.Tensor * n.Parallelism.Context
	groups := n.Cluster.Count / group
	shardings := []string{par.Sharding}
	open := par.Sharding == "" && par.ZeRO == 0 && n.Training.Mode == wire.ModeTraining
	if open {
		shardings = []string{"", "zero1"}
	}
	cache := NewCache()
	best := &Layout{Request: r}
	for p := 1; p <= groups; p++ {
		if groups%p != 0 {
			continue
		}
		d := groups / p
		for _, sh := range shardings {
			if sh == "zero1" && d < 2 {
				continue
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			c := clone(r)
			c.Parallelism.Data, c.Parallelism.Sharding = d, sh
			c.Events, c.Layers = false, false
			best.Tried++
			pr, err := cache.Prepare(c)
			if err != nil {
				if _, ok := model.AsFieldErrors(err); ok {
					continue // this layout is not valid (a stage count the model cannot split)
				}
				return nil, err
			}
			res, err := pr.Run(ctx)
			if err != nil {
				return nil, err
			}
			if !res.Feasible || res.Step == nil {
				continue
			}
			if s := res.Step.SamplesPerSecond; best.Pipeline == 0 || s > best.SamplesPerSecond*(1+LayoutTie) {
				best.Pipeline, best.Data, best.Sharding, best.SamplesPerSecond = p, d, sh, s
			}
		}
	}
	if best.Pipeline == 0 {
		best.Rule = fmt.Sprintf("no split of the %d devices into stages × replicas fits: the request is planned as given", n.Cluster.Count)
		return best, nil
	}
	out := clone(r)
	out.Parallelism.Data = best.Data
	if best.Data == 1 {
		out.Parallelism.Data = 0
	}
	out.Parallelism.Sharding = best.Sharding
	best.Request = out
	if best.Sharding == "" {
		best.Sharding = "none"
	}
	what := "pipeline stages × replicas"
	if open {
		what += ", with and without ZeRO-1"
	}
	unit := "devices"
	if group > 1 {
		unit = fmt.Sprintf("groups of %d devices (tensor × context)", group)
	}
	sh := ""
	if best.Sharding != "none" {
		sh = ", " + best.Sharding
	}
	best.Rule = fmt.Sprintf("These replicas and sharding are core's starting layout (type replicas to choose your own): the fastest of %d splits of the %d %s into %s (within %g%%, the fewest stages): %s × %s%s",
		best.Tried, groups, unit, what, 100*LayoutTie, plural(best.Pipeline, "stage"), plural(best.Data, "replica"), sh)
	return best, nil
}

func plural(n int, s string) string {
	if n == 1 {
		return "1 " + s
	}
	if strings.HasSuffix(s, "s") {
		return fmt.Sprintf("%d %s", n, s)
	}
	return fmt.Sprintf("%d %ss", n, s)
}
