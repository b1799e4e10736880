package model

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"
)

// FieldError says what is wrong with one field of an input, by its path
// ("layers[3].outputs[0].bytes") and the reason ("must be >= 0").
type FieldError struct {
	Path   string
	Reason string
}

func (e *FieldError) Error() string {
	if e.Path == "" {
		return Clip(e.Reason)
	}
	return Clip(e.Path) + ": " + Clip(e.Reason)
}

// MaxMessageBytes bounds the path and the reason of an error as they are written: a
// reason quotes what it refuses, and a hostile input (a device name of 100,000
// characters) must not come back whole.
const MaxMessageBytes = 512

// Clip returns s, or its first bytes and how many it had when it is longer than
// MaxMessageBytes (cut at a character's start).
func Clip(s string) string {
	if len(s) <= MaxMessageBytes {
		return s
	}
	cut := MaxMessageBytes - 40
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (cut: %d bytes in all)", s[:cut], len(s))
}

// Errors collects the field errors of one input. Its Error lists up to ten of them.
type Errors []*FieldError

func (es Errors) Error() string {
	const most = 10
	var b strings.Builder
	for i, e := range es {
		if i == most {
			fmt.Fprintf(&b, "\n(and %d more)", len(es)-most)
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Err returns nil when es is empty, and es otherwise.
func (es Errors) Err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

// Add appends an error for path with a formatted reason.
func (es *Errors) Add(path, format string, args ...any) {
	*es = append(*es, &FieldError{Path: Clip(path), Reason: Clip(fmt.Sprintf(format, args...))})
}

// NonNegative checks that a count of bytes or a time is finite and >= 0.
func (es *Errors) NonNegative(path string, v float64) {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		es.Add(path, "must be a finite number")
	case v < 0:
		es.Add(path, "must be >= 0, got %v", v)
	}
}

// Positive checks that v is finite and > 0.
func (es *Errors) Positive(path string, v float64) {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		es.Add(path, "must be a finite number")
	case v <= 0:
		es.Add(path, "must be > 0, got %v", v)
	}
}

// AsFieldErrors returns the field errors inside err, if it holds any.
func AsFieldErrors(err error) (Errors, bool) {
	var es Errors
	if errors.As(err, &es) {
		return es, true
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		return Errors{fe}, true
	}
	return nil, false
}

// Prefixed returns err with its field errors put under prefix ("request" makes
// "cluster.device" "request.cluster.device", and an error of no field "request"); an
// error holding no field errors comes back as it is.
func Prefixed(prefix string, err error) error {
	fes, ok := AsFieldErrors(err)
	if !ok {
		return err
	}
	var es Errors
	for _, fe := range fes {
		path := prefix
		if fe.Path != "" {
			path += "." + fe.Path
		}
		es = append(es, &FieldError{Path: path, Reason: fe.Reason})
	}
	return es
}

// maxBytes bounds every byte count (an exbibyte): larger values are surely mistakes. It
// does not bound their sums: many counts of 2^60, or in-flight microbatches multiplying
// them, still overflow int64, so estimate.New bounds the model's byte total as well.
const maxBytes = 1 << 60

// maxCycles bounds cycle counts so that sums stay exact in float64.
const maxCycles = 1 << 50

// MaxLayers bounds the layers of a model (2,097,152). Real profiles have hundreds to a
// few thousand layers, an operator-level graph tens of thousands; the planner is exact
// and near linear up to a million layers (core/partition), and a longer list is surely a
// mistake or hostile. Importers stop reading at this count rather than decode more.
const MaxLayers = 1 << 21

// Validate checks a model for everything the planner relies on. The errors name each bad
// field by its path. A valid model has at least one layer, non-negative finite costs, times
// in its declared unit only, unique tensor ids produced before they are consumed, and tie
// groups that are spelled consistently.
func (m *Model) Validate() error {
	var es Errors
	switch m.TimeUnit {
	case "", Seconds, Cycles:
	default:
		es.Add("time_unit", "must be %q or %q, got %q", Seconds, Cycles, m.TimeUnit)
	}
	switch n := len(m.Layers); {
	case n == 0:
		es.Add("layers", "must hold at least one layer")
	case n > MaxLayers:
		es.Add("layers", "must hold at most %d layers, got %d", MaxLayers, n)
		return es.Err() // each layer's checks would only repeat the work
	}
	if d := m.MeasuredOn; d != nil {
		if d.Name == "" && d.FLOPSPerSecond == 0 {
			es.Add("measured_on", "must name a device preset or give flops_per_second")
		}
		es.NonNegative("measured_on.flops_per_second", d.FLOPSPerSecond)
		if m.Unit() == Cycles {
			es.Add("measured_on", "applies to times in seconds: cycle counts already scale with each device's clock_hz")
		}
	}
	if m.MicrobatchSize < 0 {
		es.Add("microbatch_size", "must be >= 0, got %d", m.MicrobatchSize)
	}
	if m.TokensPerSample < 0 {
		es.Add("tokens_per_sample", "must be >= 0, got %d", m.TokensPerSample)
	}
	switch m.ConvertedFrom {
	case "", FromGraphcore, FromPipeDream:
	default:
		es.Add("converted_from", "must be %q or %q (or left out), got %q", FromGraphcore, FromPipeDream, m.ConvertedFrom)
	}
	if m.ScaledFrom < 0 {
		es.Add("scaled_from", "must be >= 0, got %d", m.ScaledFrom)
	}
	if m.ScaledFrom > 0 && m.MicrobatchSize == 0 {
		es.Add("scaled_from", "needs microbatch_size, the size the profile was scaled to")
	}
	producer := make(map[string]int, len(m.Inputs)+len(m.Layers)) // tensor id -> producing layer, -1 for model inputs
	for j, t := range m.Inputs {
		p := fmt.Sprintf("inputs[%d]", j)
		checkTensor(&es, p, t)
		if _, dup := producer[t.ID]; dup && t.ID != "" {
			es.Add(p+".id", "tensor %q is declared twice", t.ID)
		}
		producer[t.ID] = -1
	}
	for i := range m.Layers {
		m.validateLayer(&es, i, producer)
	}
	return es.Err()
}

func checkTensor(es *Errors, p string, t Tensor) {
	if t.ID == "" {
		es.Add(p+".id", "must not be empty")
	}
	checkBytes(es, p+".bytes", t.Bytes)
}

func checkBytes(es *Errors, path string, v int64) {
	if v < 0 {
		es.Add(path, "must be >= 0, got %d", v)
	} else if v > maxBytes {
		es.Add(path, "must be at most 2^60 bytes, got %d", v)
	}
}

func (m *Model) validateLayer(es *Errors, i int, producer map[string]int) {
	l := &m.Layers[i]
	// Paths are built only for errors: a search validates thousands of valid models.
	if m.layerNumbersOK(l) {
		m.checkLayerTensors(es, i, producer, true)
		return
	}
	p := fmt.Sprintf("layers[%d]", i)
	if m.Unit() == Cycles {
		if l.ForwardSeconds != 0 || l.BackwardSeconds != 0 {
			es.Add(p, "gives times in seconds but the model's time_unit is cycles")
		}
		for _, c := range []struct {
			name string
			v    int64
		}{{"forward_cycles", l.ForwardCycles}, {"backward_cycles", l.BackwardCycles}} {
			if c.v < 0 || c.v > maxCycles {
				es.Add(p+"."+c.name, "must be between 0 and 2^50, got %d", c.v)
			}
		}
	} else {
		if l.ForwardCycles != 0 || l.BackwardCycles != 0 {
			es.Add(p, "gives times in cycles but the model's time_unit is seconds (set \"time_unit\": \"cycles\")")
		}
		es.NonNegative(p+".forward_seconds", l.ForwardSeconds)
		es.NonNegative(p+".backward_seconds", l.BackwardSeconds)
	}
	for _, f := range []struct {
		name        string
		fixed, time float64
	}{{"forward_fixed_seconds", l.ForwardFixedSeconds, l.ForwardSeconds}, {"backward_fixed_seconds", l.BackwardFixedSeconds, l.BackwardSeconds}} {
		if !(f.fixed >= 0 && f.fixed <= f.time) {
			es.Add(p+"."+f.name, "must be between 0 and the layer's time (%g s), got %v", f.time, f.fixed)
		}
	}
	for _, b := range []struct {
		name string
		v    int64
	}{
		{"param_bytes", l.ParamBytes}, {"grad_bytes", l.GradBytes}, {"optimizer_bytes", l.OptimizerBytes},
		{"exclusive_bytes", l.ExclusiveBytes}, {"temporary_bytes", l.TemporaryBytes},
		{"activation_bytes", l.ActivationBytes}, {"carry_over_bytes", l.CarryOverBytes},
	} {
		checkBytes(es, p+"."+b.name, b.v)
	}
	if l.GradBytes > l.ParamBytes && l.ParamBytes >= 0 {
		es.Add(p+".grad_bytes", "must be at most param_bytes (%d), which holds the gradients, got %d", l.ParamBytes, l.GradBytes)
	}
	if l.RecvBytes != nil {
		checkBytes(es, p+".recv_bytes", *l.RecvBytes)
	}
	if l.SendBytes != nil {
		checkBytes(es, p+".send_bytes", *l.SendBytes)
	}
	m.checkLayerTensors(es, i, producer, false)
}

// layerNumbersOK reports whether every number of the layer passes validateLayer's checks
// (so that no error path needs building).
func (m *Model) layerNumbersOK(l *Layer) bool {
	okBytes := func(v int64) bool { return v >= 0 && v <= maxBytes }
	if m.Unit() == Cycles {
		if l.ForwardSeconds != 0 || l.BackwardSeconds != 0 || l.ForwardCycles < 0 || l.ForwardCycles > maxCycles ||
			l.BackwardCycles < 0 || l.BackwardCycles > maxCycles {
			return false
		}
	} else if l.ForwardCycles != 0 || l.BackwardCycles != 0 || !(l.ForwardSeconds >= 0) || !(l.BackwardSeconds >= 0) ||
		math.IsInf(l.ForwardSeconds, 0) || math.IsInf(l.BackwardSeconds, 0) {
		return false
	}
	if !(l.ForwardFixedSeconds >= 0 && l.ForwardFixedSeconds <= l.ForwardSeconds) || !(l.BackwardFixedSeconds >= 0 && l.BackwardFixedSeconds <= l.BackwardSeconds) {
		return false
	}
	for _, v := range []int64{l.ParamBytes, l.GradBytes, l.OptimizerBytes, l.ExclusiveBytes, l.TemporaryBytes, l.ActivationBytes, l.CarryOverBytes} {
		if !okBytes(v) {
			return false
		}
	}
	if l.GradBytes > l.ParamBytes || (l.RecvBytes != nil && !okBytes(*l.RecvBytes)) || (l.SendBytes != nil && !okBytes(*l.SendBytes)) {
		return false
	}
	for _, v := range l.Shared {
		if !okBytes(v) {
			return false
		}
	}
	return true
}

// checkLayerTensors checks a layer's shared items (unless sharedOK: layerNumbersOK has),
// inputs and outputs, and records the outputs' producer.
func (m *Model) checkLayerTensors(es *Errors, i int, producer map[string]int, sharedOK bool) {
	l := &m.Layers[i]
	p := func() string { return fmt.Sprintf("layers[%d]", i) }
	bad := false
	if !sharedOK {
		for _, v := range l.Shared {
			bad = bad || v < 0 || v > maxBytes
		}
	}
	if bad { // in key order, so that the errors do not change from run to run
		keys := make([]string, 0, len(l.Shared))
		for k := range l.Shared {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if v := l.Shared[k]; v < 0 || v > maxBytes {
				checkBytes(es, fmt.Sprintf("%s.shared[%q]", p(), k), v)
			}
		}
	}
	for j, id := range l.InputIDs {
		if m.FromPrevious(i, id) {
			continue // the previous layer's output, as in most profiles: no lookup in a map of n ids
		}
		q, ok := producer[id]
		switch {
		case !ok:
			es.Add(fmt.Sprintf("%s.inputs[%d]", p(), j), "tensor %q is neither a model input nor produced by an earlier layer", id)
		case q == i:
			es.Add(fmt.Sprintf("%s.inputs[%d]", p(), j), "tensor %q is the layer's own output", id)
		}
	}
	for j, t := range l.Outputs {
		q := func() string { return fmt.Sprintf("%s.outputs[%d]", p(), j) }
		if t.ID == "" || t.Bytes < 0 || t.Bytes > maxBytes {
			checkTensor(es, q(), t)
		}
		if prev, dup := producer[t.ID]; dup && t.ID != "" {
			if prev < 0 {
				es.Add(q()+".id", "tensor %q is already a model input", t.ID)
			} else {
				es.Add(q()+".id", "tensor %q is already produced by layers[%d]", t.ID, prev)
			}
			continue
		}
		producer[t.ID] = i
	}
}
