package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"pipeplan/core/model"
	"pipeplan/core/request"
	"pipeplan/core/search"
	"pipeplan/core/search/requests"
	"pipeplan/core/units"

	"github.com/schollz/progressbar/v3"
)

func init() {
	register(&command{name: "search", summary: "find the fastest way to run a model on the devices at hand (pipeline, data and tensor parallelism)", run: runSearch})
}

// searchJSON is the --json form of pipeplan search.
type searchJSON struct {
	Best      *bestJSON        `json:"best"`
	Evaluated []search.Outcome `json:"evaluated"`
	Pareto    []search.Outcome `json:"pareto"`
	Stats     search.Stats     `json:"stats"`
}

// bestJSON is the best configuration with the request that reproduces it.
type bestJSON struct {
	Stages           int              `json:"stages"`
	Replicas         int              `json:"replicas"`
	TensorParallel   int              `json:"tensor_parallel"`
	MicrobatchSize   int              `json:"microbatch_size"`
	Microbatches     int              `json:"microbatches"`
	Schedule         string           `json:"schedule"`
	Recompute        string           `json:"recompute"`
	ZeRO             int              `json:"zero"`
	Context          int              `json:"context,omitempty"`
	MemoryProportion float64          `json:"memory_proportion"`
	Devices          int              `json:"devices"`
	Throughput       float64          `json:"throughput"`
	TokensPerSecond  float64          `json:"tokens_per_second"`
	MFU              float64          `json:"mfu"`
	StepSeconds      float64          `json:"step_seconds"`
	BubbleFraction   float64          `json:"bubble_fraction"`
	HeadroomBytes    int64            `json:"headroom_bytes"`
	Boundaries       []int            `json:"boundaries"`
	Request          *request.Request `json:"request"`
}

func runSearch(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("search", stderr)
	var f requestFlags
	f.add(fs, true)
	maxDevices := fs.Int("max-devices", 0, "devices at hand: stages x replicas x tensor x context parallelism at most")
	globalBatch := fs.Int("global-batch", 0, "samples per step (microbatch size x microbatches x replicas); default: searched")
	maxBatch := fs.Int("max-batch", 0, "largest microbatch size to try (default 64 for --hf-config, 128 for a profile)")
	asJSON := fs.Bool("json", false, "print the best, every configuration planned and the Pareto front as JSON")
	exhaustive := fs.Bool("exhaustive", false, "plan every candidate, pruning nothing (slow: to check the search)")
	if err := parse(fs, args); err != nil {
		return err
	}
	g := f.given()
	for _, name := range []string{"devices", "boundaries", "events", "print-request"} {
		if g[name] {
			return fmt.Errorf("--%s: does not go with search (it plans many requests)", name)
		}
	}
	// The knobs are checked first: they bound the search, before anything is built.
	k := search.Knobs{MaxDevices: *maxDevices, Stages: f.stages, Replicas: f.dp, Tensor: f.tp, Expert: f.ep,
		Schedule: f.schedule, Recompute: f.recompute, GlobalBatch: *globalBatch, Microbatches: f.microbatches,
		MicrobatchSize: f.batch, MaxMicrobatchSize: *maxBatch}
	if f.zero1 {
		one := 1
		k.ZeRO = &one
	}
	if f.sharding != "" {
		z, ok := map[string]int{"none": 0, "zero1": 1, "zero2": 2, "zero3": 3, "fsdp": 3}[f.sharding]
		if !ok {
			return fmt.Errorf("--sharding: the search tries none, zero1, zero2 and zero3 (fsdp), got %q", f.sharding)
		}
		if f.zero1 && z != 1 {
			return fmt.Errorf("--zero1: means --sharding zero1, and --sharding says %s", f.sharding)
		}
		k.ZeRO = &z
	}
	for _, name := range []string{"shard-group", "prefetch"} {
		if g[name] {
			return fmt.Errorf("--%s: does not go with search (it searches none, zero1, zero2 and zero3 with their defaults)", name)
		}
	}
	k.Context = f.cp
	if f.memoryProportion.set {
		k.MemoryProportions = []float64{f.memoryProportion.v}
	}
	if err := k.Validate(); err != nil {
		return knobFlagError(err)
	}
	base, err := f.build()
	if err != nil {
		return err
	}
	ev, err := requests.New(base)
	if err != nil {
		return f.flagError(err)
	}
	s, err := ev.Space(k)
	if err != nil {
		return err
	}
	opt := search.Options{Exhaustive: *exhaustive}
	var bar *progressBar
	if !*asJSON && isTerminal(stdout) {
		bar = newProgressBar(stderr)
		opt.Progress = bar.update
	}
	rep, err := search.Run(context.Background(), s, ev, opt)
	if bar != nil {
		bar.finish()
	}
	if err != nil {
		return err
	}
	if rep.Best == nil {
		msg := "no configuration fits"
		for _, o := range rep.Evaluated {
			if o.Reason != "" {
				msg += fmt.Sprintf(" (for example %s: %s)", o.Candidate, o.Reason)
				break
			}
		}
		return noPlanError{errors.New(msg)}
	}
	q, err := ev.Request(rep.Best.Candidate)
	if err != nil {
		return err
	}
	b := rep.Best
	best := &bestJSON{Stages: b.Pipeline, Replicas: b.Data, TensorParallel: b.Tensor, MicrobatchSize: b.MicrobatchSize,
		Microbatches: b.Microbatches, Schedule: b.Schedule, Recompute: b.Recompute, ZeRO: b.ZeRO, Context: b.Context, MemoryProportion: b.MemoryProportion,
		Devices: b.Devices, Throughput: b.SamplesPerSecond, TokensPerSecond: b.TokensPerSecond, MFU: b.MFU, StepSeconds: b.StepSeconds,
		BubbleFraction: b.BubbleFraction, HeadroomBytes: b.HeadroomBytes, Boundaries: b.Boundaries, Request: q}
	if *asJSON {
		return writeJSON(stdout, searchJSON{Best: best, Evaluated: rep.Evaluated, Pareto: rep.Pareto, Stats: rep.Stats})
	}
	printSearch(stdout, rep)
	return nil
}

// knobFlags are the flags that set a query's knobs (core/search.Knobs), by the knob's field.
var knobFlags = map[string]string{
	"max_devices": "--max-devices", "stages": "--stages", "replicas": "--dp", "tensor": "--tp",
	"schedule": "--schedule", "recompute": "--recompute", "global_batch": "--global-batch",
	"microbatches": "--microbatches", "microbatch_size": "--batch", "max_microbatch_size": "--max-batch",
	"memory_proportions": "--memory-proportion", "context": "--cp", "zero": "--sharding",
}

// knobFlagError names the flag of each knob an error is about.
func knobFlagError(err error) error {
	es, ok := model.AsFieldErrors(err)
	if !ok {
		return err
	}
	out := make(model.Errors, len(es))
	for i, e := range es {
		out[i] = e
		if fl, ok := knobFlags[e.Path]; ok {
			out[i] = &model.FieldError{Path: fl, Reason: e.Reason}
		}
	}
	return out
}

// printSearch writes the best and the ten fastest configurations, then the work done.
func printSearch(w io.Writer, rep *search.Report) {
	b := rep.Best
	cp := ""
	if b.Context > 1 {
		cp = fmt.Sprintf(" x %d-way context parallel", b.Context)
	}
	if b.Expert > 1 {
		cp += fmt.Sprintf(", %d-way expert parallel", b.Expert)
	}
	fmt.Fprintf(w, "best: %s x %s x %d-way tensor parallel%s (%s), %s, %s of %d, recompute %s, ZeRO-%d\n",
		units.Count(int64(b.Pipeline), "stage"), units.Count(int64(b.Data), "replica"), b.Tensor, cp, units.Count(int64(b.Devices), "device"),
		b.Schedule, units.Count(int64(b.Microbatches), "microbatch"), b.MicrobatchSize, b.Recompute, b.ZeRO)
	fmt.Fprintf(w, "      %s", units.Rate(b.SamplesPerSecond, "samples/s"))
	if b.TokensPerSecond > 0 {
		fmt.Fprintf(w, ", %s", units.Rate(b.TokensPerSecond, "tokens/s"))
	}
	if b.MFU > 0 {
		fmt.Fprintf(w, ", MFU %.1f%%", 100*b.MFU)
	}
	fmt.Fprintf(w, ", step %.3f s, bubble %.1f%%, split %v\n\n", b.StepSeconds, 100*b.BubbleFraction, b.Boundaries)
	var top []search.Outcome
	for _, o := range rep.Evaluated {
		if o.Feasible {
			top = append(top, o)
		}
	}
	sortOutcomes(top)
	if len(top) > 10 {
		top = top[:10]
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	// The expert-parallel column only for a mixture of experts, whose candidates state it.
	experts := slices.ContainsFunc(top, func(o search.Outcome) bool { return o.Expert > 0 })
	e := func(o search.Outcome) string {
		if !experts {
			return ""
		}
		return fmt.Sprintf("%d\t", max(1, o.Expert))
	}
	head := "p\td\tt\tc\t"
	if experts {
		head += "e\t"
	}
	fmt.Fprintln(tw, head+"devices\tschedule\tm\tb\trecompute\tzero\tsamples/s\ttokens/s\tMFU\tstep s\tbubble\theadroom\t")
	for _, o := range top {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%s%d\t%s\t%d\t%d\t%s\t%d\t%.2f\t%.0f\t%.1f%%\t%.3f\t%.1f%%\t%.0f%%\t\n", o.Pipeline, o.Data, o.Tensor, max(1, o.Context), e(o), o.Devices,
			o.Schedule, o.Microbatches, o.MicrobatchSize, o.Recompute, o.ZeRO, o.SamplesPerSecond, o.TokensPerSecond, 100*o.MFU,
			o.StepSeconds, 100*o.BubbleFraction, 100*o.HeadroomFraction)
	}
	tw.Flush()
	st := rep.Stats
	fmt.Fprintf(w, "\n%d candidates (%d configurations): %d planned (%d fit), %d pruned by bound, %d known not to fit; %.2f s\n",
		st.Candidates, st.Configurations, st.Evaluated, st.Feasible, st.PrunedByBound, st.KnownInfeasible, st.Seconds)
	var front []string
	for _, o := range rep.Pareto {
		front = append(front, fmt.Sprintf("%d: %.2f/s", o.Devices, o.SamplesPerSecond))
	}
	fmt.Fprintf(w, "Pareto front (devices: samples/s): %s\n", strings.Join(front, ", "))
}

func sortOutcomes(os []search.Outcome) {
	for i := 1; i < len(os); i++ {
		for j := i; j > 0 && os[j].SamplesPerSecond > os[j-1].SamplesPerSecond; j-- {
			os[j], os[j-1] = os[j-1], os[j]
		}
	}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progressBar shows the search's progress on a terminal with schollz/progressbar (a
// maintained progress bar library): done of total candidates, planned, and the best so far.
type progressBar struct {
	bar *progressbar.ProgressBar
}

func newProgressBar(w io.Writer) *progressBar {
	return &progressBar{bar: progressbar.NewOptions64(1,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionShowCount(),
		progressbar.OptionSetDescription("searching"),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
	)}
}

func (b *progressBar) update(p search.Progress) {
	if int64(p.Total) != b.bar.GetMax64() {
		b.bar.ChangeMax64(int64(p.Total))
	}
	desc := fmt.Sprintf("planned %d", p.Evaluated)
	if p.Best != nil {
		desc += ", best " + units.Rate(p.Best.SamplesPerSecond, "samples/s")
	}
	b.bar.Describe(desc)
	_ = b.bar.Set64(int64(p.Done))
}

func (b *progressBar) finish() { _ = b.bar.Finish() }
