package examples

import (
	"math"
	"slices"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/load"
	"pipeplan/core/plan"
)

// bruteForce returns the splits of the layer times into p contiguous stages that the
// partitioner's rule prefers: the least largest stage time, then (the total being the
// same for every split) the least sum of squared stage times. Values within a relative
// 1e-12 count as equal, since sums in another order may differ in the last bits. It sums
// the per-layer times itself, apart from the estimator's prefix sums.
func bruteForce(times []float64, p int) (best float64, splits [][]int) {
	n := len(times)
	near := func(a, b float64) bool { return !math.IsInf(b, 1) && math.Abs(a-b) <= 1e-12*math.Max(a, b) }
	best, bestSq := math.Inf(1), math.Inf(1)
	bounds := make([]int, p+1)
	bounds[p] = n
	var walk func(i int)
	walk = func(i int) {
		if i == p {
			worst, sq := 0.0, 0.0
			for s := range p {
				sum := 0.0
				for _, t := range times[bounds[s]:bounds[s+1]] {
					sum += t
				}
				worst = max(worst, sum)
				sq += sum * sum
			}
			switch {
			case worst < best && !near(worst, best), near(worst, best) && sq < bestSq && !near(sq, bestSq):
				best, bestSq, splits = worst, sq, [][]int{slices.Clone(bounds)}
			case near(worst, best) && near(sq, bestSq):
				splits = append(splits, slices.Clone(bounds))
			}
			return
		}
		for k := bounds[i-1] + 1; k <= n-(p-i); k++ {
			bounds[i] = k
			walk(i + 1)
		}
	}
	walk(1)
	return best, splits
}

func TestDefaultPlansAsBruteForce(t *testing.T) {
	e := Default()
	m, _, err := load.Model(e.ModelJSON())
	if err != nil {
		t.Fatal(err)
	}
	var times []float64
	for _, l := range m.Layers {
		times = append(times, l.ForwardSeconds+l.BackwardSeconds)
	}
	for p := 1; p <= 5; p++ {
		c, err := cluster.FromPreset(e.Device, p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := plan.Make(m, c, plan.Options{})
		if err != nil {
			t.Fatalf("%d stages: %v", p, err)
		}
		best, splits := bruteForce(times, p)
		if math.Abs(got.Bottleneck-best) > 1e-12*best {
			t.Errorf("%d stages: bottleneck %v, brute force %v", p, got.Bottleneck, best)
		}
		// Equal blocks make some splits tie on every criterion (3 of them on 5 stages):
		// the partitioner may return any of those.
		if !slices.ContainsFunc(splits, func(s []int) bool { return slices.Equal(s, got.Boundaries) }) {
			t.Errorf("%d stages: boundaries %v, brute force %v", p, got.Boundaries, splits)
		}
		for i, s := range got.Stages {
			if s.MemoryBytes > s.LimitBytes {
				t.Errorf("%d stages: stage %d holds %d bytes over its limit %d", p, i, s.MemoryBytes, s.LimitBytes)
			}
		}
	}
}

// On 4 stages the head (18.07 ms) and three blocks (5.154 ms each) make the last stage;
// the 21 other blocks fill three stages of seven, the first also holding the embedding,
// which makes it the bottleneck: 0.1260 + 7 * 5.154 = 36.204 ms.
func TestDefaultFourStages(t *testing.T) {
	e := Default()
	m, _, err := load.Model(e.ModelJSON())
	if err != nil {
		t.Fatal(err)
	}
	c, err := cluster.FromPreset(e.Device, e.Stages)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Make(m, c, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 8, 15, 22, 26}; !slices.Equal(p.Boundaries, want) {
		t.Errorf("boundaries %v, want %v", p.Boundaries, want)
	}
	if want := 0.0000336 + 0.0000924 + 7*(0.001718+0.003436); math.Abs(p.Bottleneck-want) > 1e-15 {
		t.Errorf("bottleneck %v, want %v", p.Bottleneck, want)
	}
}

func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{{"gpt2-medium", true}, {"GPT2-Medium", true}, {"gpt2", false}, {"", false}} {
		e, err := Lookup(tc.name)
		if (err == nil) != tc.ok {
			t.Errorf("Lookup(%q): error %v, want ok=%v", tc.name, err, tc.ok)
		}
		if tc.ok && e.Name != "gpt2-medium" {
			t.Errorf("Lookup(%q) = %q", tc.name, e.Name)
		}
	}
}

func TestModelJSONIsACopy(t *testing.T) {
	a := Default().ModelJSON()
	a[0] = 'x'
	if b := Default().ModelJSON(); b[0] != '{' {
		t.Fatal("ModelJSON exposes the embedded bytes")
	}
}
