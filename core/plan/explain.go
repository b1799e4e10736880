package plan

import (
	"fmt"
	"math"

	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
	"pipeplan/core/units"
)

// The codes of a Reason: why no split fits.
const (
	// TooFewLayers: more stages than layers.
	TooFewLayers = "too_few_layers"
	// TooFewCuts: tie groups leave fewer places to cut than the stages need.
	TooFewCuts = "too_few_cuts"
	// LayerTooLarge: a layer (with the layers tied to it) fits no device that could hold it.
	LayerTooLarge = "layer_too_large"
	// StateTooLarge: parameters, optimizer state and exclusive memory alone exceed the
	// memory of all the devices together.
	StateTooLarge = "state_too_large"
	// NoSplitFits: every layer fits alone, but every split overloads some stage.
	NoSplitFits = "no_split_fits"
)

// Reason says why no split of a model fits a cluster, as data a front end can act on
// (highlight the layer, show bytes needed against capacity) and in words.
type Reason struct {
	// Code is one of the constants above.
	Code string `json:"code"`
	// Message says it in words, with the suggestion.
	Message string `json:"message"`
	// FirstLayer and LastLayer: the layer (or the tied layers) at fault, for
	// LayerTooLarge; -1 otherwise.
	FirstLayer int `json:"first_layer"`
	LastLayer  int `json:"last_layer"`
	// Device is the stage's device that came closest to holding them (LayerTooLarge),
	// -1 otherwise.
	Device int `json:"device"`
	// BytesNeeded against CapacityBytes: of the layer on Device (LayerTooLarge), or of
	// the state against all devices together (StateTooLarge).
	BytesNeeded   int64 `json:"bytes_needed,omitempty"`
	CapacityBytes int64 `json:"capacity_bytes,omitempty"`
	// MaxStages is the most stages that could work (TooFewLayers, TooFewCuts).
	MaxStages int `json:"max_stages,omitempty"`
	// Suggestion is what to change, in words.
	Suggestion string `json:"suggestion"`
}

// NoFitError is the error Make returns when no split fits; it wraps ErrNoFit.
type NoFitError struct{ Reason Reason }

func (e *NoFitError) Error() string { return ErrNoFit.Error() + ": " + e.Reason.Message }

// Unwrap makes errors.Is(err, ErrNoFit) hold.
func (e *NoFitError) Unwrap() error { return ErrNoFit }

// Diagnose says why no split of the model fits the cluster: too few layers, tie groups
// that leave too few cuts, a layer (with the layers tied to it) too large for any device,
// or memory that is short overall.
//
// Those are the only reasons: estimate.New refuses inputs whose compute or transfer times
// would not be finite, and with finite costs the partitioner rules a split out only for a
// range that splits a tie group or does not fit its device's memory.
func Diagnose(e *estimate.Estimator, m *model.Model, c *cluster.Cluster) Reason {
	n, p := e.Layers(), e.Stages()
	r := Reason{FirstLayer: -1, LastLayer: -1, Device: -1}
	finish := func(code, what, suggestion string) Reason {
		r.Code, r.Suggestion = code, suggestion
		r.Message = what + ": " + suggestion
		return r
	}
	if n < p {
		return tooManyStages(n, p)
	}
	cuts := 0
	for k := 1; k < n; k++ {
		if e.CutAllowed(k) {
			cuts++
		}
	}
	if cuts < p-1 {
		r.MaxStages = cuts + 1
		return finish(TooFewCuts, fmt.Sprintf("tie groups leave only %d places to cut the model, and %d stages need %d", cuts, p, p-1),
			fmt.Sprintf("use at most %d stages", cuts+1))
	}
	// The smallest admissible range around each layer: itself, grown to whole tie groups.
	for l := 0; l < n; {
		a, b := l, l
		for !e.CutAllowed(b + 1) {
			b++
		}
		lo, hi := 0, p-1 // stages that could hold it
		if a == 0 {
			hi = 0
		}
		if b == n-1 {
			lo = p - 1
		}
		best := -1
		var need int64
		for i := lo; i <= hi; i++ {
			rg := e.Range(i, a, b)
			if rg.Fits() {
				best = -2
				break
			}
			if best == -1 || rg.LimitBytes > e.LimitBytes(best) {
				best, need = i, rg.MemoryBytes
			}
		}
		if best >= 0 {
			what := fmt.Sprintf("layer %d (%s) alone needs", a, m.Layers[a].Name)
			if b > a {
				what = fmt.Sprintf("layers %d..%d (%s .. %s, tied: they must share a stage) need", a, b, m.Layers[a].Name, m.Layers[b].Name)
			}
			r.FirstLayer, r.LastLayer, r.Device = a, b, best
			r.BytesNeeded, r.CapacityBytes = need, e.LimitBytes(best)
			return finish(LayerTooLarge, fmt.Sprintf("%s %s; device %d (%s) holds %s", what, units.Bytes(need), best, deviceName(c, best), units.Bytes(e.LimitBytes(best))),
				"use devices with more memory, a larger memory proportion, recomputation or a smaller microbatch")
		}
		l = b + 1
	}
	var need, hold int64
	for l := 0; l < n; l++ {
		rg := e.Range(0, l, l)
		need += rg.ParamBytes + rg.OptimizerBytes + rg.ExclusiveBytes
	}
	framework := false
	for i := 0; i < p; i++ {
		// What the model's tensors may fill: the limit less the framework's memory.
		a := e.AllocatableBytes(i)
		framework = framework || a != e.LimitBytes(i)
		hold += min(a, math.MaxInt64-hold) // limits are at most 2^60 each, devices many
	}
	if need > hold {
		r.BytesNeeded, r.CapacityBytes = need, hold
		what := fmt.Sprintf("the %d devices hold %s together", p, units.Bytes(hold))
		if framework {
			what = fmt.Sprintf("the %d devices hold %s together beside the framework's memory", p, units.Bytes(hold))
		}
		return finish(StateTooLarge, fmt.Sprintf("the layers' parameters, optimizer state and exclusive memory alone need %s, and %s", units.Bytes(need), what),
			"use more stages or devices with more memory")
	}
	return finish(NoSplitFits, fmt.Sprintf("every layer fits a device alone, but every split of %d layers into %d stages puts more on some stage than its device holds", n, p),
		"use more stages, devices with more memory, a larger memory proportion or recomputation")
}

// tooManyStages explains why n layers fit no split into p > n stages.
func tooManyStages(n, p int) Reason {
	suggestion := fmt.Sprintf("use at most %d stages", n)
	return Reason{Code: TooFewLayers, FirstLayer: -1, LastLayer: -1, Device: -1, MaxStages: n, Suggestion: suggestion,
		Message: fmt.Sprintf("the model has %d layers but the cluster has %d stages, and every stage needs at least one layer: %s", n, p, suggestion)}
}

func deviceName(c *cluster.Cluster, i int) string {
	if name := c.Devices[i].Name; name != "" {
		return name
	}
	return "unnamed"
}
