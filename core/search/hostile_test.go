package search

import (
	"context"
	"runtime"
	"strings"
	"testing"
)

// allocated is the bytes f allocates (runtime.MemStats.TotalAlloc), a measure that does not
// depend on the machine's speed.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestHostileQueries: every knob of a query is bounded before anything is allocated for
// it. Each hostile query is refused naming the knob, having allocated less than the bound
// the case states (the query's own bytes aside): before the bounds, max_devices 1e8 took
// 2.8 GB to refuse, and 1e9 ran the machine out of memory.
func TestHostileQueries(t *testing.T) {
	const small = 1 << 20 // bytes: a refusal allocates little more than its message
	for _, tt := range []struct {
		name, query, want string
		bound             uint64
	}{
		{"max_devices 1e9", `{"request":{},"max_devices":1000000000}`, "max_devices: must be between 1 and 65536, got 1000000000", small},
		{"max_devices 1e8", `{"request":{},"max_devices":100000000}`, "max_devices: must be between 1 and 65536", small},
		{"max_devices negative", `{"request":{},"max_devices":-1}`, "max_devices: must be between 1 and 65536, got -1", small},
		{"max_devices 2^63", `{"request":{},"max_devices":9223372036854775807}`, "max_devices: must be between", small},
		{"max_devices float", `{"request":{},"max_devices":1e9}`, "max_devices", small},
		{"stages", `{"request":{},"max_devices":8,"stages":1000000}`, "stages: must be between 0 and 4096", small},
		{"replicas", `{"request":{},"max_devices":8,"replicas":-3}`, "replicas: must be between 0 and 4096", small},
		{"tensor", `{"request":{},"max_devices":8,"tensor":99999}`, "tensor: must be between 0 and 4096", small},
		{"microbatches", `{"request":{},"max_devices":8,"microbatches":2000000000}`, "microbatches: must be between 0 and 1048576", small},
		{"microbatch_size", `{"request":{},"max_devices":8,"microbatch_size":1000000000}`, "microbatch_size: must be between 0 and 4096", small},
		{"max_microbatch_size", `{"request":{},"max_devices":8,"max_microbatch_size":1000000000}`, "max_microbatch_size: must be between 0 and 4096", small},
		{"global_batch", `{"request":{},"max_devices":8,"global_batch":4000000000}`, "global_batch: must be between 0 and 1073741824", small},
		{"context", `{"request":{},"max_devices":8,"context":1000000}`, "context: must be between 0 and 4096", small},
		{"contexts", `{"request":{},"max_devices":8,"contexts":[2,0]}`, "contexts[1]: must be between 1 and 4096, got 0", small},
		{"zero", `{"request":{},"max_devices":8,"zero":7}`, "zero: must be 0, 1, 2 or 3, got 7", small},
		{"microbatches_per_stage value", `{"request":{},"max_devices":8,"microbatches_per_stage":[1,0]}`, "microbatches_per_stage[1]: must be between 1 and 1048576, got 0", small},
		{"microbatches_per_stage length", `{"request":{},"max_devices":8,"microbatches_per_stage":[` + strings.Repeat("1,", 100) + `1]}`, "microbatches_per_stage: must hold at most 64 values, got 101", small},
		{"schedules length", `{"request":{},"max_devices":8,"schedules":[` + strings.Repeat(`"1f1b",`, 100) + `"1f1b"]}`, "schedules: must hold at most 64 schedules, got 101", small},
		{"schedule name", `{"request":{},"max_devices":8,"schedules":["` + strings.Repeat("x", 1000) + `"]}`, "schedules[0]: must be a schedule's name (at most 64 bytes), got 1000 bytes", small},
		{"memory_proportions length", `{"request":{},"max_devices":8,"memory_proportions":[` + strings.Repeat("0.5,", 100) + `1]}`, "memory_proportions: must hold at most 64 proportions, got 101", small},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			got := allocated(func() { _, err = DecodeQuery([]byte(tt.query)) })
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			if bound := tt.bound + 4*uint64(len(tt.query)); got > bound {
				t.Errorf("allocated %d bytes to refuse it, more than the %d bound", got, bound)
			}
		})
	}
}

// TestHugeGrid: a grid within every knob's bound but too large to walk is refused from its
// count, before any of it is built (at most 1 MiB allocated, where building it took
// gigabytes), naming max_devices.
func TestHugeGrid(t *testing.T) {
	ps := make([]int, 64)
	for i := range ps {
		ps[i] = i + 1
	}
	s := Space{MaxDevices: MaxDevices, Pipelines: ps, Tensors: []int{1, 2, 4, 8}, Schedules: []string{"1f1b", "gpipe", "interleaved:2", "zb-h1"},
		Recomputes: []string{"none", "selective", "full"}, ZeROs: []int{0, 1}, MemoryProportions: []float64{1}, MicrobatchesPerStage: []int{1, 2, 4, 8}, MaxMicrobatchSize: MaxMicrobatchSize}
	var err error
	got := allocated(func() { _, err = Run(context.Background(), s, &toy{}, Options{}) })
	if err == nil || !strings.Contains(err.Error(), "max_devices: the grid holds") || !strings.Contains(err.Error(), "more than the 1048576 a search may walk") {
		t.Fatalf("error %v", err)
	}
	if got > 1<<20 {
		t.Errorf("allocated %d bytes to refuse it, more than 1 MiB", got)
	}
}

// TestCountBoundsGroups: the count that decides the refusal is never below the groups the
// grid builds, on grids of every shape small enough to build.
func TestCountBoundsGroups(t *testing.T) {
	for _, devices := range []int{1, 2, 3, 7, 8, 12, 30} {
		for _, gb := range []int{0, 1, 12, 30, 64} {
			for _, data := range [][]int{nil, {1, 3}, {2, 4, 5}} {
				s := Space{MaxDevices: devices, Pipelines: []int{1, 2, 3, 5}, Tensors: []int{1, 2, 4}, Data: data,
					Schedules: []string{"1f1b", "interleaved:2"}, Recomputes: []string{"none", "full"}, ZeROs: []int{0, 1},
					MemoryProportions: []float64{1}, GlobalBatch: gb, MaxMicrobatchSize: 4}
				if gb == 0 {
					s.MicrobatchesPerStage = []int{1, 2}
				}
				gs, err := s.groups()
				if err != nil {
					t.Fatal(err)
				}
				if n := s.count(); n < uint64(len(gs)) {
					t.Errorf("devices %d, global batch %d, data %v: count %d below the %d groups", devices, gb, data, n, len(gs))
				}
			}
		}
	}
}

// FuzzDecodeQuery: any bytes give a query whose knobs are within their bounds, or an
// error; never a panic. A query that decodes builds a toy grid that is refused or walked
// within maxGroups configurations.
func FuzzDecodeQuery(f *testing.F) {
	for _, s := range []string{
		`{"request":{},"max_devices":8}`,
		`{"request":{"version":1},"max_devices":1000000000}`,
		`{"request":{},"max_devices":65536,"global_batch":1024,"max_microbatch_size":4096}`,
		`{"request":{},"max_devices":8,"schedules":["1f1b","interleaved:4"],"memory_proportions":[0.5,1],"microbatches_per_stage":[1,2]}`,
		`{"request":{},"max_devices":8,"stages":2,"replicas":2,"tensor":2,"zero":1,"microbatch_size":4}`,
		`{}`, `[]`, `{"request":null}`, "\x00\x00",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		q, err := DecodeQuery(data)
		if err != nil {
			return
		}
		if err := ValidateKnobs(&q.SearchKnobs); err != nil {
			t.Fatalf("decoded knobs are invalid: %v", err)
		}
		k := q.SearchKnobs
		if k.MaxDevices < 1 || k.MaxDevices > MaxDevices || k.MaxMicrobatchSize > MaxMicrobatchSize || len(k.Schedules) > MaxListLength {
			t.Fatalf("a knob out of bounds decoded: %+v", k)
		}
		s := Space{MaxDevices: k.MaxDevices, Pipelines: []int{1, 2, 4}, Tensors: []int{1, 2}, Schedules: []string{"1f1b"},
			Recomputes: []string{"none"}, ZeROs: []int{0, 1}, MemoryProportions: k.MemoryProportions, GlobalBatch: k.GlobalBatch,
			MaxMicrobatchSize: max(1, k.MaxMicrobatchSize)}
		if len(s.MemoryProportions) == 0 {
			s.MemoryProportions = []float64{1}
		}
		if s.GlobalBatch == 0 {
			s.MicrobatchesPerStage = []int{1}
		}
		if s.Validate() != nil {
			return
		}
		gs, err := s.groups()
		if err != nil || len(gs) > maxGroups || uint64(len(gs)) > s.count() {
			t.Fatalf("groups %d (count %d), %v", len(gs), s.count(), err)
		}
	})
}

// FuzzSpace: a space of any small knobs is refused or builds at most maxGroups groups,
// no more than it counted.
func FuzzSpace(f *testing.F) {
	f.Add(8, 4, 2, 0, 3, 2)
	f.Add(65536, 64, 8, 1024, 4096, 4)
	f.Add(1, 1, 1, 1, 1, 1)
	f.Fuzz(func(t *testing.T, devices, pipelines, tensors, globalBatch, maxSize, schedules int) {
		if pipelines < 0 || pipelines > 256 || tensors < 0 || tensors > 64 || schedules < 0 || schedules > 8 {
			return
		}
		s := Space{MaxDevices: devices, Tensors: []int{}, Recomputes: []string{"none"}, ZeROs: []int{0, 1}, MemoryProportions: []float64{1},
			GlobalBatch: globalBatch, MaxMicrobatchSize: maxSize}
		for p := 1; p <= pipelines; p++ {
			s.Pipelines = append(s.Pipelines, p)
		}
		for k := 1; k <= tensors; k++ {
			s.Tensors = append(s.Tensors, k)
		}
		for i := range schedules {
			s.Schedules = append(s.Schedules, []string{"1f1b", "gpipe", "zb-h1", "interleaved:2"}[i%4])
		}
		if globalBatch == 0 {
			s.MicrobatchesPerStage = []int{1, 2}
		}
		if s.Validate() != nil {
			return
		}
		gs, err := s.groups()
		if err != nil || len(gs) > maxGroups || uint64(len(gs)) > s.count() {
			t.Fatalf("groups %d (count %d), %v", len(gs), s.count(), err)
		}
	})
}
