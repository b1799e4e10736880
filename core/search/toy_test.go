package search

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"strings"

	"pipeplan/core/schedule"
)

// toy is an evaluator with closed forms: a model of layers of equal work, split evenly;
// a pipeline makespan with the schedule's bubble; tensor parallelism dividing the work
// with some communication; a ring all-reduce over the replicas; memory that grows with
// the microbatch size and the microbatches in flight. A deterministic jitter per
// candidate (up to 15% slower) makes throughput non-monotone in the microbatch size, which
// the search must not rely on. Bound is the makespan without bubble or jitter.
type toy struct {
	layers     int
	work       float64 // seconds per sample per layer
	overhead   float64 // seconds per microbatch per layer (kernel launches)
	static     float64 // bytes of weights and state, whole model
	act        float64 // bytes per sample per layer kept for backward
	limit      float64 // bytes per device
	gradBytes  float64
	bandwidth  float64 // of the data-parallel ring
	tpEff      float64 // speed-up efficiency of tensor parallelism
	evaluated  int
	cancelAt   int
	cancel     context.CancelFunc
	noJitter   bool
	violations bool // make Bound wrong, to see the search notice
	// twins: selective recomputation keeps as much as none and runs as fast, and Twin
	// says so.
	twins bool
	// fitter: CannotFit says true when the candidate needs a tenth more than the memory.
	fitter bool
	// refine: Refine gives the throughput without the jitter, which only slows.
	refine bool
}

// Refine: with refine, the outcome's throughput before the jitter (a tight bound);
// otherwise +Inf (nothing known).
func (t *toy) Refine(c Candidate) (float64, error) {
	if !t.refine {
		return math.Inf(1), nil
	}
	u := *t
	u.noJitter, u.cancelAt = true, 0
	o, err := u.Evaluate(context.Background(), c)
	if err != nil || !o.Feasible {
		return math.Inf(1), err
	}
	return o.SamplesPerSecond, nil
}

// CannotFit: with fitter, a necessary condition of fitting (need <= limit) fails.
func (t *toy) CannotFit(c Candidate) bool {
	return t.fitter && t.memory(c) > 1.1*t.limit*c.MemoryProportion
}

// MayHaveTwins: with twins, selective configurations.
func (t *toy) MayHaveTwins(g Config) bool { return t.twins && g.Recompute == "selective" }

// Twin: with twins, a selective candidate is its none twin.
func (t *toy) Twin(c Candidate) (Candidate, bool) {
	if !t.twins || c.Recompute != "selective" {
		return c, false
	}
	c.Recompute = "none"
	return c, true
}

func (t *toy) stage(c Candidate) float64 {
	per := float64(c.MicrobatchSize)*t.work + t.overhead
	tp := float64(c.Tensor)
	per = per / (tp * math.Pow(t.tpEff, math.Log2(tp)))
	if c.Recompute == "full" {
		per *= 4.0 / 3
	}
	return per * float64(t.layers) / float64(c.Pipeline)
}

func (t *toy) ring(c Candidate) float64 {
	d := float64(c.Data)
	if d == 1 {
		return 0
	}
	return 2 * (d - 1) / d * t.gradBytes / float64(c.Pipeline*c.Tensor) / t.bandwidth
}

func (t *toy) Bound(c Candidate) (float64, error) {
	u := float64(c.MicrobatchSize*c.Microbatches*c.Data) / (float64(c.Microbatches)*t.stage(c) + t.ring(c))
	if t.violations {
		u *= 0.5
	}
	return u, nil
}

func (t *toy) inFlight(c Candidate) int {
	sc, _ := schedule.Parse(c.Schedule)
	switch sc.Kind {
	case schedule.GPipe:
		return c.Microbatches
	case schedule.Interleaved:
		return min(c.Microbatches, c.Pipeline) + c.Pipeline/sc.Chunks
	}
	return min(c.Microbatches, c.Pipeline)
}

func (t *toy) MemoryKey(c Candidate) string {
	z := 1
	if c.ZeRO == 1 {
		z = c.Data
	}
	return fmt.Sprintf("%d/%d/%d/%s/%d/%g", c.Pipeline, c.Tensor, t.inFlight(c), c.Recompute, z, c.MemoryProportion)
}

func (t *toy) memory(c Candidate) float64 {
	static := t.static / float64(c.Pipeline*c.Tensor)
	if c.ZeRO == 1 {
		static = static/4 + 3*static/4/float64(c.Data)
	}
	act := t.act * float64(c.MicrobatchSize) * float64(t.layers) / float64(c.Pipeline) / float64(c.Tensor)
	switch c.Recompute {
	case "selective":
		if !t.twins {
			act *= 0.6
		}
	case "full":
		act *= 0.1
	}
	return static + act*float64(t.inFlight(c))
}

func (t *toy) Evaluate(ctx context.Context, c Candidate) (Outcome, error) {
	t.evaluated++
	if t.cancelAt > 0 && t.evaluated == t.cancelAt {
		t.cancel()
	}
	need, limit := t.memory(c), t.limit*c.MemoryProportion
	if need > limit {
		return Outcome{Reason: fmt.Sprintf("stage 0 needs %.0f bytes over %.0f", need-limit, limit)}, nil
	}
	sc, _ := schedule.Parse(c.Schedule)
	s, m, p := t.stage(c), float64(c.Microbatches), float64(c.Pipeline)
	var makespan float64
	switch sc.Kind {
	case schedule.GPipe, schedule.OneFOneB:
		makespan = (m + p - 1) * s
	case schedule.Interleaved:
		makespan = (m + (p-1)/float64(sc.Chunks)) * s * 1.02 // more transfers
	case schedule.ZBH1:
		makespan = (m + (p-1)/3) * s
	}
	step := makespan + t.ring(c)
	if !t.noJitter {
		h := fnv.New32a()
		if t.twins && c.Recompute == "selective" {
			c.Recompute = "none" // the same jitter: the same outcome
		}
		h.Write([]byte(c.String()))
		step *= 1 + 0.15*float64(h.Sum32()%1000)/1000
	}
	samples := float64(c.MicrobatchSize * c.Microbatches * c.Data)
	return Outcome{Feasible: true, SamplesPerSecond: samples / step, StepSeconds: step,
		HeadroomBytes: int64(limit - need), Reason: ""}, nil
}

func (t *toy) reasonOK(o Outcome) bool {
	return o.Feasible || strings.HasPrefix(o.Reason, "stage 0 needs")
}
