package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"pipeplan/core/units"
	"strings"
	"text/tabwriter"

	"pipeplan/core/cluster"
	"pipeplan/core/load"
	"pipeplan/core/model"
	"pipeplan/core/partition"
	"pipeplan/core/plan"
)

func init() {
	register(&command{name: "plan", summary: "find the optimal split of a model into pipeline stages", run: runPlan})
}

// inputFlags are the flags that name a model and a cluster; other commands reuse them.
type inputFlags struct {
	model, cluster, device string
	stages                 int
	hf                     analyticFlags // --hf-config and its options (estimate.go)
}

func (f *inputFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&f.model, "model", "", "model `file`: native JSON, Graphcore ModelInfo or PipeDream graph.txt")
	fs.StringVar(&f.cluster, "cluster", "", "cluster `file`: native JSON or Graphcore IPUClusterInfo")
	fs.StringVar(&f.device, "device", "", "device preset `name` for a homogeneous cluster (see pipeplan devices)")
	fs.IntVar(&f.stages, "stages", 0, "number of stages with --device")
	f.hf.add(fs)
}

// loadModel reads and decodes the --model file.
func (f *inputFlags) loadModel() (*model.Model, error) {
	if f.hf.config != "" {
		return f.hf.loadModel(f.model, f.device, f.cluster)
	}
	if f.model == "" {
		return nil, errors.New("--model: a model file is required (or --hf-config FILE|NAME)")
	}
	data, err := os.ReadFile(f.model)
	if err != nil {
		return nil, err
	}
	m, _, err := load.Model(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.model, err)
	}
	if m.Name == "" { // Graphcore and PipeDream profiles carry no name: use the file's
		m.Name = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(f.model), ".json"), ".graph.txt")
	}
	return m, nil
}

// loadCluster reads --cluster, or builds --stages copies of --device.
func (f *inputFlags) loadCluster() (*cluster.Cluster, error) {
	switch {
	case f.cluster != "" && f.device != "":
		return nil, errors.New("--cluster and --device: give one of them, not both")
	case f.cluster != "":
		if f.stages != 0 {
			return nil, errors.New("--stages: goes with --device; a cluster file has one stage per device")
		}
		data, err := os.ReadFile(f.cluster)
		if err != nil {
			return nil, err
		}
		c, err := load.Cluster(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.cluster, err)
		}
		return c, nil
	case f.device != "":
		if f.stages < 1 {
			return nil, fmt.Errorf("--stages: must be >= 1 with --device, got %d", f.stages)
		}
		return cluster.FromPreset(f.device, f.stages)
	}
	return nil, errors.New("--cluster FILE or --device NAME --stages N: a cluster is required")
}

func runPlan(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("plan", stderr)
	var in inputFlags
	in.add(fs)
	var sched scheduleFlags
	sched.add(fs)
	proportion := fs.Float64("memory-proportion", 1, "fraction of each device's usable memory a stage may fill")
	objective := fs.String("objective", "compute", "what to minimise: compute (the bottleneck) or compute+transfer")
	inference := fs.Bool("inference", false, "plan forward passes only (no backward time, no stashed activations)")
	asJSON := fs.Bool("json", false, "print the plan as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if p := *proportion; !(p > 0 && p <= 1) { // the Go API's 0-means-1 default is not a flag value
		return fmt.Errorf("--memory-proportion: must be in (0, 1], got %v", p)
	}
	// --schedule inference plans forward passes only, as --inference does: an --hf-config
	// model must then be costed without gradients and optimizer state.
	inferenceMode := in.hf.syncInference(*inference || sched.inference())
	obj, err := partition.ParseObjective(*objective)
	if err != nil {
		return fmt.Errorf("--objective: %w", err)
	}
	m, err := in.loadModel()
	if err != nil {
		return err
	}
	c, err := in.loadCluster()
	if err != nil {
		return err
	}
	opt := plan.Options{Objective: obj}
	opt.Estimate.MemoryProportion = *proportion
	opt.Estimate.Inference = inferenceMode
	if err := sched.apply(&opt, *asJSON, in.hf.recompute, in.hf.batch, in.hf.config != ""); err != nil {
		return err
	}
	p, err := plan.Make(m, c, opt)
	if errors.Is(err, plan.ErrNoFit) {
		return noPlanError{err}
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, p)
	}
	printPlan(stdout, m, p)
	printSchedule(stdout, p)
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printPlan writes a table with a row per stage.
func printPlan(w io.Writer, m *model.Model, p *plan.Plan) {
	name := m.Name
	if name == "" {
		name = "model"
	}
	fmt.Fprintf(w, "%s: %d layers on %d stages, objective %s, bottleneck %s\n\n",
		name, len(m.Layers), len(p.Stages), p.Objective, units.Time(p.Bottleneck, p.Unit))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "stage\tlayers\tfirst .. last\ttime\ttransfer\tmemory\tcapacity\tused\t")
	for i, s := range p.Stages {
		used := 100 * float64(s.MemoryBytes) / float64(s.LimitBytes)
		fmt.Fprintf(tw, "%d\t%d-%d\t%s\t%s\t%s\t%s\t%s\t%.0f%%\t\n", i, s.FirstLayer, s.LastLayer,
			ellipsis(s.FirstName+" .. "+s.LastName, 40), units.Time(s.Compute, p.Unit), units.Time(s.Transfer, p.Unit),
			units.Bytes(s.MemoryBytes), units.Bytes(s.LimitBytes), used)
	}
	tw.Flush()
}

func ellipsis(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
