package load_test

import (
	"bytes"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"pipeplan/core/cluster"
	"pipeplan/core/load"
	"pipeplan/core/model"
	"pipeplan/core/partition"
	"pipeplan/core/plan"
)

// addSeeds adds the files matching each pattern to the fuzz corpus.
func addSeeds(f *testing.F, patterns ...string) {
	for _, pat := range patterns {
		paths, err := filepath.Glob(pat)
		if err != nil || len(paths) == 0 {
			f.Fatalf("no seed files match %s", pat)
		}
		for _, p := range paths {
			f.Add(readFile(f, p))
		}
	}
}

// planAll plans m on c with both objectives and checks that a plan, when there is one,
// has a stage per device, finite non-negative costs and memory within each limit; an
// error must be bad input (field errors) or ErrNoFit, never a panic.
func planAll(t *testing.T, m *model.Model, c *cluster.Cluster) {
	for _, obj := range []partition.Objective{partition.MaxCompute, partition.MaxComputePlusTransfer} {
		p, err := plan.Make(m, c, plan.Options{Objective: obj})
		if err != nil {
			if _, ok := model.AsFieldErrors(err); !ok && !errors.Is(err, plan.ErrNoFit) {
				t.Fatalf("objective %v: error %q is neither about fields nor ErrNoFit", obj, err)
			}
			continue
		}
		if len(p.Boundaries) != len(c.Devices)+1 || p.Boundaries[0] != 0 || p.Boundaries[len(c.Devices)] != len(m.Layers) {
			t.Fatalf("objective %v on %d devices: boundaries %v for %d layers", obj, len(c.Devices), p.Boundaries, len(m.Layers))
		}
		for i, s := range p.Stages {
			if !(s.Compute >= 0 && s.Transfer >= 0 && s.MemoryBytes >= 0) || // also NaN
				math.IsInf(s.Compute, 0) || math.IsInf(s.Transfer, 0) || s.MemoryBytes > s.LimitBytes {
				t.Fatalf("objective %v, stage %d: compute %v, transfer %v, memory %d of %d", obj, i, s.Compute, s.Transfer, s.MemoryBytes, s.LimitBytes)
			}
		}
	}
}

// trivialCluster has p roomy devices with a clock, joined by a latency-bandwidth link.
func trivialCluster(p int) *cluster.Cluster {
	return cluster.Homogeneous(cluster.Device{MemoryBytes: 1 << 40, ClockHz: 1e9}, p,
		cluster.Link{LatencySeconds: 1e-6, BytesPerSecond: 1e10}, &cluster.Link{LatencySeconds: 1e-6, BytesPerSecond: 1e9})
}

// checkLoadError checks that an input refused by load is refused for a stated reason:
// field errors, or an error about the file as a whole (syntax, size, format, trailing
// data).
func checkLoadError(t *testing.T, err error) {
	if _, ok := model.AsFieldErrors(err); ok {
		return
	}
	for _, prefix := range []string{"JSON syntax error at line ", "unexpected data after the JSON value", "the input is ", "unrecognised model format"} {
		if strings.HasPrefix(err.Error(), prefix) {
			return
		}
	}
	t.Fatalf("error %q is neither field errors nor about the file", err)
}

// FuzzModel feeds load.Model anything: it must not panic, an error must be field errors
// or about the file, and a model it accepts must pass Validate and plan on one and two
// stages without panicking. Hostile seeds (and crashers found) are in
// testdata/fuzz/FuzzModel.
func FuzzModel(f *testing.F) {
	addSeeds(f, "testdata/pipedream/*.graph.txt", "testdata/graphcore/[!c]*.json")
	for _, s := range []string{
		`{"layers": [{"name": "a", "forward_seconds": 1, "outputs": [{"id": "x", "bytes": 4}]}, {"name": "b", "forward_seconds": 2, "inputs": ["x"]}]}`,
		`{"time_unit": "cycles", "layers": [{"name": "a", "forward_cycles": 3, "tie_group": "g"}, {"name": "b", "tie_group": "g"}]}`,
		`{"layerName": ["a", "a", "b"], "layerInfo": [{"cycle": {"forward": 1}}, {"memory": {"inputs": 5, "shared": {"k": 2}}}, {}]}`,
		"a -- A -- forward_compute_time=1, backward_compute_time=1, activation_size=[1; 2], parameter_size=3\nb -- B -- forward_compute_time=0, backward_compute_time=0, activation_size=1, parameter_size=0\n\ta -- b\n",
		"a -- A -- forward_compute_time=1, backward_compute_time=1, activation_size=1, parameter_size=3\n\ta -- a\n",
		"x -- y",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, format, err := load.Model(data)
		if err != nil {
			if m != nil {
				t.Fatalf("a model and an error %v", err)
			}
			checkLoadError(t, err)
			return
		}
		if format == "" {
			t.Fatal("accepted a model without naming its format")
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("accepted a %s model that fails Validate: %v", format, err)
		}
		for p := 1; p <= 2; p++ {
			planAll(t, m, trivialCluster(p))
		}
	})
}

// FuzzCluster feeds load.Cluster anything: it must not panic, an error must be field
// errors or about the file, and a cluster it accepts must pass Validate and take plans of
// small models in seconds and in cycles. Hostile seeds are in testdata/fuzz/FuzzCluster.
func FuzzCluster(f *testing.F) {
	addSeeds(f, "testdata/graphcore/cluster_*.json")
	for _, s := range []string{
		`{"devices": [{"memory_bytes": 1000, "clock_hz": 1e9}, {"memory_bytes": 2000}], "links": [{"gbps": 1, "idle_cycles": 5}], "host": {"latency_seconds": 1e-6}}`,
		`{"clock": 1.33e9, "memory": 894.5, "connection": [{"recvGBps": 7, "recvIdleCycle": 50000, "sendGBps": 70, "sendIdleCycle": 3000}]}`,
		`{"clock": 1e9, "memory": 894, "connection": [{"recvGBps": 1e-300, "sendGBps": 1e300}]}`,
		`{"clock": 1, "memory": 1e-9, "connection": [{"recvGBps": 1, "sendGBps": 1}]}`,
	} {
		f.Add([]byte(s))
	}
	in, out := int64(1<<30), int64(7)
	models := []*model.Model{
		{Inputs: []model.Tensor{{ID: "in", Bytes: 1 << 20}}, Layers: []model.Layer{
			{Name: "a", ForwardSeconds: 1, ParamBytes: 100, InputIDs: []string{"in"}, Outputs: []model.Tensor{{ID: "x", Bytes: 4 << 20}}},
			{Name: "b", ForwardSeconds: 2, ActivationBytes: 300, InputIDs: []string{"x"}, Outputs: []model.Tensor{{ID: "y", Bytes: 5}}},
			{Name: "c", ForwardSeconds: 1, InputIDs: []string{"x", "y"}},
		}},
		{TimeUnit: model.Cycles, Layers: []model.Layer{
			{Name: "a", ForwardCycles: 10, ExclusiveBytes: 1 << 20, RecvBytes: &in},
			{Name: "b", ForwardCycles: 20, TemporaryBytes: 1 << 10, SendBytes: &out},
			{Name: "c", ForwardCycles: 5, Shared: map[string]int64{"code": 64}},
		}},
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := load.Cluster(data)
		if err != nil {
			if c != nil {
				t.Fatalf("a cluster and an error %v", err)
			}
			checkLoadError(t, err)
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("accepted a cluster that fails Validate: %v", err)
		}
		if len(c.Devices) > 8 {
			return // more stages than the models have layers: nothing to plan
		}
		for _, m := range models {
			planAll(t, m, c)
		}
	})
}

// TestFuzzSeedsPlan makes sure the fuzz targets' own checks would notice a broken
// planner: the seed models do produce plans.
func TestFuzzSeedsPlan(t *testing.T) {
	m, _, err := load.Model(readFile(t, "testdata/pipedream/alexnet.graph.txt"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Make(m, trivialCluster(2), plan.Options{})
	if err != nil || errors.Is(err, plan.ErrNoFit) || len(p.Boundaries) != 3 {
		t.Fatalf("alexnet on 2 stages: %v, %v", p, err)
	}
}

// FuzzCheckText: text (UTF-8 without NUL) passes, wherever SniffBytes cuts it; a NUL or a
// byte that is not UTF-8 in the first SniffBytes is refused; more is never looked at.
func FuzzCheckText(f *testing.F) {
	f.Add([]byte(`{"layers": []}`), 0)
	f.Add([]byte("node1 -- Embedding() -- forward_compute_time=1.0"), 4090)
	f.Add([]byte("\x00\x00"), 0)
	f.Add([]byte("é€😀"), 4093)
	f.Fuzz(func(t *testing.T, data []byte, pad int) {
		if pad < 0 || pad > 2*load.SniffBytes {
			return
		}
		in := append(bytes.Repeat([]byte("a"), pad), data...)
		err := load.CheckText(in)
		head := in[:min(len(in), load.SniffBytes)]
		switch {
		case utf8.Valid(in) && bytes.IndexByte(in, 0) < 0 && err != nil:
			t.Fatalf("text refused: %v", err)
		case bytes.IndexByte(head, 0) >= 0 && err == nil:
			t.Fatal("a NUL in the head passed")
		case len(in) <= load.SniffBytes && !utf8.Valid(in) && err == nil:
			t.Fatal("bytes that are not UTF-8 passed")
		}
	})
}
