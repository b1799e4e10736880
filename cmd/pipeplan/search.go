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
	"pipeplan/core/search"
	"pipeplan/core/search/evaluate"
	"pipeplan/core/units"
	"pipeplan/core/wire"

	"github.com/schollz/progressbar/v3"
)

func init() {
	register(&command{name: "search", summary: "find the fastest way to run a model on the devices at hand (pipeline, data and tensor parallelism)", run: runSearch})
}

func runSearch(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("search", stderr)
	var f requestFlags
	f.add(fs, true)
	maxDevices := fs.Int("max-devices", 0, "devices at hand: stages x replicas x tensor x context parallelism at most")
	globalBatch := fs.Int("global-batch", 0, "samples per step (microbatch size x microbatches x replicas); default: 4 per device at hand (core's default plan), unless --microbatches is given")
	maxBatch := fs.Int("max-batch", 0, "largest microbatch size to try (default 64 for --hf-config, 128 for a profile)")
	asJSON := fs.Bool("json", false, "print the search's answer as JSON (core/wire.SearchAnswer, as pipeplan.search gives it): the best with its request, the ten fastest, the Pareto front and every configuration planned")
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
	k := wire.SearchKnobs{MaxDevices: *maxDevices, Stages: f.stages, Replicas: f.dp, Tensor: f.tp, Expert: f.ep,
		Schedule: f.schedule, Recompute: f.recompute, GlobalBatch: *globalBatch, Microbatches: f.microbatches,
		MicrobatchSize: f.batch, MaxMicrobatchSize: *maxBatch}
	if f.zero1 {
		one := 1
		k.ZeRO = &one
	}
	if f.sharding != "" {
		z, ok := map[string]int{"none": 0, "zero1": 1, "zero2": 2, "zero3": 3, "fsdp": 3, "hsdp": 3}[f.sharding]
		if !ok {
			return fmt.Errorf("--sharding: the search tries none, zero1, zero2, zero3 (fsdp) and hsdp (beside zero3), got %q", f.sharding)
		}
		if f.zero1 && z != 1 {
			return fmt.Errorf("--zero1: means --sharding zero1, and --sharding says %s", f.sharding)
		}
		k.ZeRO = &z
	}
	if g["prefetch"] {
		return fmt.Errorf("--prefetch: does not go with search (it searches zero3 and hsdp with their default prefetch)")
	}
	// --reshard fixes the zero3 and hsdp candidates' resharding (default: core's rule for
	// each, step with 2 stages or more); --cp-method the context method (the base's).
	k.Reshard, k.ContextMethod = f.reshard, f.cpMethod
	// --fully-shard and --reduce-dtype say how weights are sharded (PyTorch FSDP2): the
	// base request carries them, and core gives them to the zero3 and hsdp candidates.
	// HSDP's shard group: tried beside zero3 (the knob's default: the replicas a node holds).
	k.ShardGroup = f.shardGroup
	k.Context = f.cp
	if f.memoryProportion.set {
		k.MemoryProportions = []float64{f.memoryProportion.v}
	}
	if err := search.ValidateKnobs(&k); err != nil {
		return knobFlagError(err)
	}
	base, err := f.build()
	if err != nil {
		return err
	}
	opt := search.Options{Exhaustive: *exhaustive}
	var bar *progressBar
	if !*asJSON && isTerminal(stdout) {
		bar = newProgressBar(stderr)
		opt.Progress = bar.update
	}
	a, err := evaluate.RunQuery(context.Background(), &wire.SearchQuery{Request: base, SearchKnobs: k}, opt)
	if bar != nil {
		bar.finish()
	}
	if err != nil {
		return searchError(&f, err)
	}
	if a.Best == nil {
		msg := "no configuration fits"
		for _, o := range a.Evaluated {
			if o.Reason != "" {
				msg += fmt.Sprintf(" (for example %s: %s)", o.SearchCandidate, o.Reason)
				break
			}
		}
		return noPlanError{errors.New(msg)}
	}
	if *asJSON {
		return writeJSON(stdout, a)
	}
	printSearch(stdout, a)
	return nil
}

// searchError names the flags of a search's errors: the base request's fields (which
// the answer's errors put under "request") by the flags that set them, the knobs' by
// theirs.
func searchError(f *requestFlags, err error) error {
	es, ok := model.AsFieldErrors(err)
	if !ok {
		return err
	}
	var req, knobs model.Errors
	for _, e := range es {
		if rest, ok := strings.CutPrefix(e.Path, "request"); ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
			req = append(req, &model.FieldError{Path: strings.TrimPrefix(rest, "."), Reason: e.Reason})
		} else {
			knobs = append(knobs, e)
		}
	}
	var out model.Errors
	if len(req) > 0 {
		fes, _ := model.AsFieldErrors(f.flagError(req))
		out = append(out, fes...)
	}
	if len(knobs) > 0 {
		fes, _ := model.AsFieldErrors(knobFlagError(knobs))
		out = append(out, fes...)
	}
	return out
}

// knobFlags are the flags that set a query's knobs (core/wire.SearchKnobs), by the knob's field.
var knobFlags = map[string]string{
	"max_devices": "--max-devices", "stages": "--stages", "replicas": "--dp", "tensor": "--tp",
	"schedule": "--schedule", "recompute": "--recompute", "global_batch": "--global-batch",
	"microbatches": "--microbatches", "microbatch_size": "--batch", "max_microbatch_size": "--max-batch",
	"memory_proportions": "--memory-proportion", "context": "--cp", "zero": "--sharding", "shard_group": "--shard-group",
	"reshard": "--reshard", "context_method": "--cp-method",
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

// printSearch writes the answer's best and its ten fastest configurations (Answer.Top),
// then the work done.
func printSearch(w io.Writer, a *wire.SearchAnswer) {
	b := a.Best
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
	if b.ShardGroup > 0 {
		fmt.Fprintf(w, "      HSDP: ZeRO-3 within shard groups of %s, replicated across them\n", units.Count(int64(b.ShardGroup), "replica"))
	}
	fmt.Fprintf(w, "      %s", units.Rate(b.SamplesPerSecond, "samples/s"))
	if b.TokensPerSecond > 0 {
		fmt.Fprintf(w, ", %s", units.Rate(b.TokensPerSecond, "tokens/s"))
	}
	if b.MFU > 0 {
		fmt.Fprintf(w, ", MFU %.1f%%", 100*b.MFU)
	}
	fmt.Fprintf(w, ", step %.3f s, bubble %.1f%%, split %v\n", b.StepSeconds, 100*b.BubbleFraction, b.Boundaries)
	if a.GlobalBatch > 0 {
		fmt.Fprintf(w, "global batch: %s, %s\n", units.Count(int64(a.GlobalBatch), "sample"), a.GlobalBatchRule)
	} else {
		fmt.Fprintf(w, "global batch: searched (candidates run different samples per step)\n")
	}
	fmt.Fprintf(w, "rule: the best has the most memory headroom within %g%% of the fastest; rows alike but for ZeRO, recomputation or memory proportion at the same speed are one row, the one with the most headroom (alike: how many more)\n\n", 100*search.NearTie)
	top := a.Top
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	// The expert-parallel column only for a mixture of experts, whose candidates state it.
	experts := slices.ContainsFunc(top, func(o wire.SearchOutcome) bool { return o.Expert > 0 })
	e := func(o wire.SearchOutcome) string {
		if !experts {
			return ""
		}
		return fmt.Sprintf("%d\t", max(1, o.Expert))
	}
	head := "p\td\tt\tc\t"
	if experts {
		head += "e\t"
	}
	fmt.Fprintln(tw, head+"devices\tschedule\tm\tb\trecompute\tzero\tsamples/s\ttokens/s\tMFU\tstep s\tbubble\theadroom\talike\t")
	for _, o := range top {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%s%d\t%s\t%d\t%d\t%s\t%d\t%.2f\t%.0f\t%.1f%%\t%.3f\t%.1f%%\t%.0f%%\t%d\t\n", o.Pipeline, o.Data, o.Tensor, max(1, o.Context), e(o), o.Devices,
			o.Schedule, o.Microbatches, o.MicrobatchSize, o.Recompute, o.ZeRO, o.SamplesPerSecond, o.TokensPerSecond, 100*o.MFU,
			o.StepSeconds, 100*o.BubbleFraction, 100*o.HeadroomFraction, len(o.Alike))
	}
	tw.Flush()
	st := a.Stats
	fmt.Fprintf(w, "\n%d candidates (%d configurations): %d planned (%d fit), %d pruned by bound, %d known not to fit; %.2f s\n",
		st.Candidates, st.Configurations, st.Evaluated, st.Feasible, st.PrunedByBound, st.KnownInfeasible, st.Seconds)
	var front []string
	for _, o := range a.Pareto {
		front = append(front, fmt.Sprintf("%d: %.2f/s", o.Devices, o.SamplesPerSecond))
	}
	fmt.Fprintf(w, "Pareto front (devices: samples/s): %s\n", strings.Join(front, ", "))
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

func (b *progressBar) update(p wire.SearchProgress) {
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
