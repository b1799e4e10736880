package load

// Graphcore's auto-pipeline formats (seed 000): the ModelInfo profile of a model and the
// IPUClusterInfo description of an IPU system. docs/formats.md says what maps to what.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"

	"pipeplan/core/cluster"
	"pipeplan/core/model"
)

// Bounds that keep sums of imported values exact and far from int64 overflow; the model's
// Validate enforces the same ones.
const (
	maxBytes  = 1 << 60
	maxCycles = 1 << 50
	mebibyte  = 1 << 20
	// maxClockHz bounds an IPU clock (a terahertz) so that cycle counts stay finite.
	maxClockHz = 1e12
)

// graphcoreModel converts a ModelInfo: one layer per entry of layerName/layerInfo, in
// order, with times in cycles. A name that occurs more than once is one layer called
// several times, so its invocations form a tie group named after it.
func graphcoreModel(data []byte) (*model.Model, error) {
	var es model.Errors
	root, err := decodeRoot(data, &es, "layerName", "layerType", "layerInfo")
	if root == nil {
		return nil, err
	}
	names := stringList(&es, "layerName", root["layerName"], true)
	kinds := stringList(&es, "layerType", root["layerType"], false)
	infos := list(&es, "layerInfo", root["layerInfo"], true)
	if names != nil && infos != nil && len(names) != len(infos) {
		es.Add("layerName", "has %d entries but layerInfo has %d: there must be one name per layer", len(names), len(infos))
	}
	if kinds != nil && infos != nil && len(kinds) != len(infos) {
		es.Add("layerType", "has %d entries but layerInfo has %d: there must be one type per layer", len(kinds), len(infos))
	}
	if len(es) > 0 {
		return nil, es
	}
	if len(infos) == 0 {
		return nil, &model.FieldError{Path: "layerInfo", Reason: "must hold at least one layer"}
	}
	calls := map[string]int{}
	for i, n := range names {
		if n == "" {
			es.Add(fmt.Sprintf("layerName[%d]", i), "must not be empty")
		}
		calls[n]++
	}
	m := &model.Model{TimeUnit: model.Cycles, Layers: make([]model.Layer, len(infos))}
	for i, v := range infos {
		l := &m.Layers[i]
		l.Name = names[i]
		if kinds != nil {
			l.Kind = kinds[i]
		}
		if calls[l.Name] > 1 {
			l.TieGroup = l.Name
		}
		graphcoreLayer(&es, fmt.Sprintf("layerInfo[%d]", i), v, l)
	}
	if len(es) > 0 {
		return nil, es
	}
	return m, nil
}

// graphcoreLayer fills l from one LayerInfo entry.
func graphcoreLayer(es *model.Errors, p string, v any, l *model.Layer) {
	info := object(es, p, v)
	if info == nil {
		return
	}
	checkKeys(es, p, info, "cycle", "memory")
	if cyc := object(es, p+".cycle", info["cycle"]); cyc != nil {
		checkKeys(es, p+".cycle", cyc, "forward", "backward")
		l.ForwardCycles = whole(es, p+".cycle.forward", cyc["forward"], maxCycles)
		l.BackwardCycles = whole(es, p+".cycle.backward", cyc["backward"], maxCycles)
	}
	mp := p + ".memory"
	mem := object(es, mp, info["memory"])
	if mem == nil {
		return
	}
	checkKeys(es, mp, mem, "shared", "exclusive", "inputs", "outputs", "maxTemporary", "curCarryOver", "curActivation")
	if shared := object(es, mp+".shared", mem["shared"]); len(shared) > 0 {
		l.Shared = make(map[string]int64, len(shared))
		for _, k := range sortedKeys(shared) {
			l.Shared[k] = whole(es, fmt.Sprintf("%s.shared[%q]", mp, k), shared[k], maxBytes)
		}
	}
	if excl := object(es, mp+".exclusive", mem["exclusive"]); excl != nil {
		for _, k := range sortedKeys(excl) {
			l.ExclusiveBytes += whole(es, fmt.Sprintf("%s.exclusive[%q]", mp, k), excl[k], maxBytes)
		}
		if l.ExclusiveBytes > maxBytes {
			es.Add(mp+".exclusive", "sums to more than 2^60 bytes")
		}
	}
	in := whole(es, mp+".inputs", mem["inputs"], maxBytes)
	out := whole(es, mp+".outputs", mem["outputs"], maxBytes)
	l.RecvBytes, l.SendBytes = &in, &out
	l.TemporaryBytes = whole(es, mp+".maxTemporary", mem["maxTemporary"], maxBytes)
	l.CarryOverBytes = whole(es, mp+".curCarryOver", mem["curCarryOver"], maxBytes)
	l.ActivationBytes = whole(es, mp+".curActivation", mem["curActivation"], maxBytes)
}

// graphcoreCluster converts an IPUClusterInfo: one device per connection entry, each
// with the common clock and memory and its own receive and send links. Host transfers
// count in every stage's transfer time (cluster.Cluster.HostEveryStage), as in seed 000.
// The tool's memoryProportion is a plan option (estimate.Options.MemoryProportion).
func graphcoreCluster(data []byte) (*cluster.Cluster, error) {
	var es model.Errors
	root, err := decodeRoot(data, &es, "clock", "memory", "connection")
	if root == nil {
		return nil, err
	}
	clock := positive(&es, "clock", root["clock"], maxClockHz)
	memMiB := positive(&es, "memory", root["memory"], maxBytes/mebibyte)
	conns := list(&es, "connection", root["connection"], true)
	if conns != nil && len(conns) == 0 {
		es.Add("connection", "must hold one entry per IPU, got none")
	}
	c := &cluster.Cluster{
		Name:           fmt.Sprintf("%d IPUs", len(conns)),
		Devices:        make([]cluster.Device, len(conns)),
		HostEveryStage: true,
	}
	for i, v := range conns {
		p := fmt.Sprintf("connection[%d]", i)
		d := &c.Devices[i]
		d.Name = fmt.Sprintf("ipu%d", i)
		d.MemoryBytes = int64(memMiB * mebibyte)
		d.ClockHz = clock
		conn := object(&es, p, v)
		if conn == nil {
			continue
		}
		checkKeys(&es, p, conn, "recvGBps", "recvIdleCycle", "sendGBps", "sendIdleCycle")
		d.Recv = &cluster.Link{
			GBps:       positive(&es, p+".recvGBps", conn["recvGBps"], math.MaxFloat64),
			IdleCycles: whole(&es, p+".recvIdleCycle", conn["recvIdleCycle"], maxCycles),
		}
		d.Send = &cluster.Link{
			GBps:       positive(&es, p+".sendGBps", conn["sendGBps"], math.MaxFloat64),
			IdleCycles: whole(&es, p+".sendIdleCycle", conn["sendIdleCycle"], maxCycles),
		}
	}
	if len(es) > 0 {
		return nil, es
	}
	return c, nil
}

// decodeGeneric decodes one JSON value with numbers kept as json.Number, so that the
// converters can check each field by its path.
func decodeGeneric(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, jsonError(data, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("unexpected data after the JSON value at byte %d", dec.InputOffset())
	}
	return v, nil
}

// object returns v as a JSON object; null or absent is an empty object; anything else is
// an error at path.
func object(es *model.Errors, path string, v any) map[string]any {
	switch v := v.(type) {
	case nil:
		return map[string]any{}
	case map[string]any:
		return v
	}
	es.Add(path, "must be a JSON object, got %s", jsonType(v))
	return nil
}

// list returns v as a JSON array; absent or null is an error when required.
func list(es *model.Errors, path string, v any, required bool) []any {
	switch v := v.(type) {
	case nil:
		if required {
			es.Add(path, "is missing")
		}
		return nil
	case []any:
		return v
	}
	es.Add(path, "must be a JSON array, got %s", jsonType(v))
	return nil
}

// stringList returns v as an array of strings.
func stringList(es *model.Errors, path string, v any, required bool) []string {
	items := list(es, path, v, required)
	if items == nil {
		return nil
	}
	out := make([]string, len(items))
	for i, it := range items {
		s, ok := it.(string)
		if !ok {
			es.Add(fmt.Sprintf("%s[%d]", path, i), "must be a string, got %s", jsonType(it))
		}
		out[i] = s
	}
	return out
}

// checkKeys reports the keys of obj that the format does not define (in sorted order):
// most likely typing mistakes, which would otherwise be silently read as zero.
func checkKeys(es *model.Errors, path string, obj map[string]any, allowed ...string) {
	for _, k := range sortedKeys(obj) {
		known := false
		for _, a := range allowed {
			known = known || k == a
		}
		if !known {
			es.Add(join(path, k), "unknown key; expected one of %v", allowed)
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// whole returns v as a whole number in [0, limit]; absent or null is 0.
func whole(es *model.Errors, path string, v any, limit int64) int64 {
	if v == nil {
		return 0
	}
	n, ok := v.(json.Number)
	if !ok {
		es.Add(path, "must be a number, got %s", jsonType(v))
		return 0
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return inRange(es, path, i, limit)
	}
	f, err := strconv.ParseFloat(string(n), 64)
	switch {
	case err != nil && !isRangeErr(err):
		es.Add(path, "must be a number, got %s", n)
	case f < 0:
		es.Add(path, "must be >= 0, got %s", n)
	case f > float64(limit):
		es.Add(path, "must be at most %d, got %s", limit, n)
	case err != nil || f != math.Trunc(f): // err: too small to represent
		es.Add(path, "must be a whole number, got %s", n)
	default:
		return int64(f)
	}
	return 0
}

func inRange(es *model.Errors, path string, i, limit int64) int64 {
	switch {
	case i < 0:
		es.Add(path, "must be >= 0, got %d", i)
	case i > limit:
		es.Add(path, "must be at most %d, got %d", limit, i)
	default:
		return i
	}
	return 0
}

// positive returns v as a number in (0, limit]; absent is an error.
func positive(es *model.Errors, path string, v any, limit float64) float64 {
	if v == nil {
		es.Add(path, "is missing")
		return 0
	}
	n, ok := v.(json.Number)
	if !ok {
		es.Add(path, "must be a number, got %s", jsonType(v))
		return 0
	}
	f, err := strconv.ParseFloat(string(n), 64)
	switch {
	case err != nil && !isRangeErr(err):
		es.Add(path, "must be a number, got %s", n)
	case err != nil && f != 0 || f > limit:
		es.Add(path, "must be at most %g, got %s", limit, n)
	case f <= 0:
		es.Add(path, "must be > 0, got %s", n)
	default:
		return f
	}
	return 0
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// jsonType names the JSON type of a decoded value for error messages.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// decodeRoot decodes a Graphcore JSON object and checks that it has only the given keys,
// collecting field errors in es. A nil root comes with the error that stops decoding.
func decodeRoot(data []byte, es *model.Errors, keys ...string) (map[string]any, error) {
	top, err := decodeGeneric(data)
	if err != nil {
		return nil, err
	}
	root := object(es, "", top)
	if root == nil {
		return nil, es.Err()
	}
	checkKeys(es, "", root, keys...)
	return root, nil
}
