package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"pipeplan/core/units"
	"strconv"
	"strings"
	"text/tabwriter"

	"pipeplan/core/analytic"
	"pipeplan/core/arch"
	"pipeplan/core/load"
	"pipeplan/core/model"
)

func init() {
	register(&command{name: "estimate", summary: "estimate a HuggingFace model's per-layer costs on a device", run: runEstimate})
}

// analyticFlags are the flags that turn a config.json into a model: shared by estimate
// and plan (--hf-config).
type analyticFlags struct {
	config                                                        string
	batch, seq, dataParallel, tensorParallel                      int
	dtype, precision, optimizer, attention, recompute, split, tie string
	zero1, sequenceParallel                                       bool
	matmulEff, memoryEff, kernelMicros                            optionalFloat
}

// optionalFloat is a float flag that remembers whether it was given.
type optionalFloat struct {
	v   float64
	set bool
}

func (o *optionalFloat) String() string {
	if o == nil || !o.set {
		return ""
	}
	return strconv.FormatFloat(o.v, 'g', -1, 64)
}

func (o *optionalFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return errors.New("must be a number")
	}
	o.v, o.set = v, true
	return nil
}

func (f *analyticFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&f.config, "hf-config", "", "HuggingFace config.json `file`, or a bundled name: "+strings.Join(arch.BundledNames(), ", "))
	fs.IntVar(&f.batch, "batch", 1, "samples per microbatch (sequences with --hf-config)")
	fs.IntVar(&f.seq, "seq", 0, "sequence length with --hf-config (default: the model's context, at most 4096)")
	fs.StringVar(&f.dtype, "dtype", "bf16", "element type: bf16, fp16 or fp32")
	fs.StringVar(&f.precision, "precision", "", "pure (all state in --dtype) or mixed (fp32 master weights and optimizer state; the default for 16-bit)")
	fs.StringVar(&f.optimizer, "optimizer", "adamw", "adamw, adam, sgd (with momentum) or none (inference)")
	fs.StringVar(&f.attention, "attention", "flash", "attention kernel: eager (scores kept, s^2 memory) or flash")
	fs.StringVar(&f.recompute, "recompute", "none", "activation recomputation: none, selective (attention core, --hf-config) or full (each block; for a profile, each stage's input)")
	fs.StringVar(&f.split, "split", "block", "pipeline layers: block (one per transformer block) or sublayer (attention and MLP apart)")
	fs.StringVar(&f.tie, "tie", "copy", "tied embeddings: copy (both ends hold the matrix, gradients all-reduced) or stage (one stage holds both ends)")
	fs.IntVar(&f.dataParallel, "dp", 1, "data-parallel replicas (with --zero1: optimizer state sharded over them)")
	fs.BoolVar(&f.zero1, "zero1", false, "shard optimizer state and master weights over the --dp replicas (ZeRO-1)")
	fs.IntVar(&f.tensorParallel, "tp", 1, "tensor-parallel degree (Megatron-style): each stage is a group of N devices over the device's link; figures are one device's")
	fs.BoolVar(&f.sequenceParallel, "sp", false, "sequence parallelism with --tp: norms, dropout and residuals split along the sequence too")
	fs.Var(&f.matmulEff, "matmul-efficiency", "fraction of the peak FLOP/s matrix products reach (default: the device preset's)")
	fs.Var(&f.memoryEff, "memory-efficiency", "fraction of the memory bandwidth memory-bound kernels reach (default: the preset's)")
	fs.Var(&f.kernelMicros, "kernel-us", "launch cost of one kernel in microseconds (default: the preset's)")
}

// inference reports whether the flags describe inference.
func (f *analyticFlags) inference() bool { return f.optimizer == string(analytic.None) }

// loadArch reads --hf-config: a file when one exists at that path (or the name looks like
// a path), else a bundled config.
func (f *analyticFlags) loadArch() (*arch.Arch, error) {
	name := f.config
	data, err := os.ReadFile(name)
	if err != nil {
		if _, ok := arch.BundledConfig(name); ok {
			return arch.Bundled(name)
		}
		if strings.ContainsAny(name, `/\`) || strings.HasSuffix(name, ".json") {
			return nil, fmt.Errorf("--hf-config: %w", err)
		}
		return nil, fmt.Errorf("--hf-config: no file %q and no bundled config of that name; bundled: %s", name, strings.Join(arch.BundledNames(), ", "))
	}
	a, err := arch.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	a.Name = strings.TrimSuffix(filepath.Base(name), ".json")
	return a, nil
}

func (f *analyticFlags) options(a *arch.Arch) analytic.Options {
	seq := f.seq
	if seq == 0 {
		seq = 4096
		if a.MaxPositions > 0 && a.MaxPositions < seq {
			seq = a.MaxPositions
		}
	}
	return analytic.Options{
		Batch: f.batch, Seq: seq,
		DType: analytic.DType(f.dtype), Precision: analytic.Precision(f.precision),
		Optimizer: analytic.Optimizer(f.optimizer), Attention: analytic.Attention(f.attention),
		Recompute: analytic.Recompute(f.recompute), Split: analytic.Split(f.split), Tie: analytic.Tie(f.tie),
		DataParallel: f.dataParallel, ZeRO1: f.zero1,
		TensorParallel: f.tensorParallel, SequenceParallel: f.sequenceParallel,
	}
}

func (f *analyticFlags) target(device string) (analytic.Target, error) {
	t, err := analytic.PresetTarget(device)
	if err != nil {
		return t, fmt.Errorf("--device: %w", err)
	}
	if f.matmulEff.set {
		t.Perf.MatmulEfficiency = f.matmulEff.v
	}
	if f.memoryEff.set {
		t.Perf.MemoryEfficiency = f.memoryEff.v
	}
	if f.kernelMicros.set && !(f.kernelMicros.v >= 0) {
		return t, fmt.Errorf("--kernel-us: must be >= 0, got %v", f.kernelMicros.v)
	}
	if f.kernelMicros.set {
		t.Perf.KernelSeconds = f.kernelMicros.v * 1e-6
	}
	return t, nil
}

// estimate runs the analytic profiler on --hf-config for a device preset.
func (f *analyticFlags) estimate(device string) (*analytic.Result, error) {
	if f.config == "" {
		return nil, errors.New("--hf-config: a config.json file or bundled name is required")
	}
	if device == "" {
		return nil, errors.New("--device: a device preset is required (see pipeplan devices)")
	}
	if f.dataParallel < 1 {
		return nil, fmt.Errorf("--dp: must be >= 1, got %d", f.dataParallel)
	}
	a, err := f.loadArch()
	if err != nil {
		return nil, err
	}
	t, err := f.target(device)
	if err != nil {
		return nil, err
	}
	r, err := analytic.Estimate(a, t, f.options(a))
	if err != nil {
		return nil, flagError(err)
	}
	return r, nil
}

// loadModel builds the model of --hf-config for plan: the device is --device, or the
// first device of the --cluster file, which must then be named after a preset.
func (f *analyticFlags) loadModel(modelFile, device, clusterFile string) (*model.Model, error) {
	if modelFile != "" {
		return nil, errors.New("--model and --hf-config: give one of them, not both")
	}
	if device == "" && clusterFile != "" {
		data, err := os.ReadFile(clusterFile)
		if err != nil {
			return nil, err
		}
		c, err := load.Cluster(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", clusterFile, err)
		}
		device = c.Devices[0].Name
		if device == "" {
			return nil, fmt.Errorf("--hf-config with --cluster: %s: devices[0].name must name a device preset, to cost the layers on", clusterFile)
		}
	}
	r, err := f.estimate(device)
	if err != nil {
		return nil, err
	}
	return r.Model(), nil
}

// flagError renames option field paths to the flags that set them ("batch: ..." becomes
// "--batch: ...").
func flagError(err error) error {
	es, ok := model.AsFieldErrors(err)
	if !ok {
		return err
	}
	flags := map[string]string{
		"batch": "--batch", "seq": "--seq", "dtype": "--dtype", "precision": "--precision",
		"optimizer": "--optimizer", "attention": "--attention", "recompute": "--recompute",
		"split": "--split", "tie": "--tie", "data_parallel": "--dp", "tensor_parallel": "--tp",
		"perf.matmul_efficiency": "--matmul-efficiency", "perf.memory_efficiency": "--memory-efficiency",
		"perf.kernel_seconds": "--kernel-us",
	}
	out := make(model.Errors, len(es))
	for i, e := range es {
		out[i] = e
		if f, ok := flags[e.Path]; ok {
			out[i] = &model.FieldError{Path: f, Reason: e.Reason}
		}
	}
	return out
}

func runEstimate(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("estimate", stderr)
	var f analyticFlags
	f.add(fs)
	device := fs.String("device", "", "device preset `name` (see pipeplan devices)")
	asJSON := fs.Bool("json", false, "print the estimate as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	r, err := f.estimate(*device)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, r)
	}
	t, _ := f.target(*device) // checked by estimate
	printEstimate(stdout, r, t)
	return nil
}

// printEstimate writes a table of the layers (consecutive identical layers on one row)
// and the totals.
func printEstimate(w io.Writer, r *analytic.Result, t analytic.Target) {
	fmt.Fprintf(w, "%s on %s\n%s\n%s\n\n", r.Name, r.Device, r.Arch, r.Opts)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "layers\tkind\tparams\tfwd GFLOP\tfwd\tbwd\tsaved\toutput\tworking\t")
	ls := r.Layers
	for i := 0; i < len(ls); {
		// Collapse repeats of one layer, or of a pair (attention and MLP sublayers).
		period, reps := 1, 1
		for p := 1; p <= 2; p++ {
			n := 1
			for i+(n+1)*p <= len(ls) && sameRun(ls[i:i+p], ls[i+n*p:i+(n+1)*p]) {
				n++
			}
			if n > 1 && n*p > reps*period {
				period, reps = p, n
			}
		}
		for k := 0; k < period; k++ {
			l := ls[i+k]
			name := l.Name
			if reps > 1 {
				name = fmt.Sprintf("%s .. %s (x%d)", l.Name, ls[i+(reps-1)*period+k].Name, reps)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f\t%s\t%s\t%s\t%s\t%s\t\n", name, l.Kind, count(l.Params), l.FwdFLOPs/1e9,
				units.Time(l.FwdSeconds, model.Seconds), units.Time(l.BwdSeconds, model.Seconds),
				units.Bytes(l.SavedActivationBytes), units.Bytes(l.OutputBytes), units.Bytes(l.TemporaryBytes))
		}
		i += reps * period
	}
	tw.Flush()
	tt := r.Total
	fmt.Fprintf(w, "\nparameters   %s", count(tt.Params))
	if tp := r.Opts.TensorParallel; tp > 1 {
		fmt.Fprintf(w, ", %s on each of %d tensor-parallel devices (the figures below are one device's)", count(tt.DeviceParams), tp)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "state        weights %s, gradients %s, optimizer %s\n", units.Bytes(tt.WeightsBytes), units.Bytes(tt.GradsBytes), units.Bytes(tt.OptimizerBytes))
	fmt.Fprintf(w, "activations  %s per microbatch\n", units.Bytes(tt.ActivationBytes))
	limit := t.Device.MemoryLimitBytes(1)
	verdict := "fits"
	if tt.PeakBytes > limit {
		verdict = "does not fit: pipeline it (pipeplan plan --hf-config ... --stages N)"
	}
	fmt.Fprintf(w, "peak memory  %s on one device; %s usable on %s: %s\n", units.Bytes(tt.PeakBytes), units.Bytes(limit), r.Device, verdict)
	flops := tt.FwdFLOPs + tt.BwdFLOPs
	fmt.Fprintf(w, "step time    %s (forward %s, backward %s, optimizer %s)\n", units.Time(tt.StepSeconds, model.Seconds),
		units.Time(tt.FwdSeconds, model.Seconds), units.Time(tt.BwdSeconds, model.Seconds), units.Time(tt.OptimizerSeconds, model.Seconds))
	if tt.StepSeconds > 0 {
		peak := t.Device.FLOPSPerSecond
		if r.Opts.DType == analytic.FP32 {
			peak = t.Perf.FP32FLOPSPerSecond
		}
		rate := flops / tt.StepSeconds
		group := ""
		if tp := r.Opts.TensorParallel; tp > 1 {
			group = fmt.Sprintf(" per group of %d", tp)
		}
		fmt.Fprintf(w, "throughput   %.0f tokens/s%s, %.1f TFLOP/s per device (%.0f%% of peak)\n", tt.TokensPerSecond, group, rate/1e12, 100*rate/peak)
	}
	if tt.TiedAllReduceBytes > 0 {
		fmt.Fprintf(w, "tied embedding: when pipelined, first and last stage all-reduce %s of gradients per step (%s)\n",
			units.Bytes(tt.TiedAllReduceBytes), units.Time(tt.TiedAllReduceSeconds, model.Seconds))
	}
}

// sameRun reports whether two runs of layers cost the same, names aside.
func sameRun(a, b []analytic.Layer) bool {
	for i := range a {
		x, y := a[i], b[i]
		x.Name, y.Name = "", ""
		if x != y {
			return false
		}
	}
	return true
}

// count formats a parameter count: 1.56B, 124.4M, 3200.
func count(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.1fK", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// syncInference makes --inference and --optimizer none agree for an --hf-config model,
// and reports whether the plan is for inference.
func (f *analyticFlags) syncInference(inference bool) bool {
	if f.config == "" {
		return inference
	}
	if inference {
		f.optimizer = string(analytic.None)
	}
	return f.inference()
}
