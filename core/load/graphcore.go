package load

// Graphcore's auto-pipeline formats: the ModelInfo profile of a model and the
// IPUClusterInfo description of an IPU system. docs/formats.md says what maps to what.

import (
	"fmt"
	"math"

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
// several times, so its invocations form a tie group named after it. layerInfo is
// converted entry by entry as it is read.
func graphcoreModel(data []byte) (*model.Model, error) {
	r := newReader(data)
	r.bounds = map[string]int{"layerName": model.MaxLayers, "layerType": model.MaxLayers, "layerInfo": model.MaxLayers}
	var names, kinds []string
	var layers []model.Layer
	haveNames, haveInfos := false, false
	if t, ok := r.token(); ok {
		r.fields(t, []string{"layerName", "layerType", "layerInfo"}, func(key string) {
			switch key {
			case "layerName":
				names, haveNames = r.strings(), true
			case "layerType":
				kinds = r.strings()
			case "layerInfo":
				haveInfos = true
				if t, ok := r.token(); ok {
					layers = []model.Layer{}
					r.array(t, func(i int) {
						layers = append(layers, model.Layer{})
						r.graphcoreLayer(&layers[i])
					})
				}
			}
		})
	}
	if err := r.end(); err != nil {
		return nil, err
	}
	var es model.Errors
	if !haveNames {
		es.Add("layerName", "is missing")
	}
	if !haveInfos {
		es.Add("layerInfo", "is missing")
	}
	if haveNames && haveInfos && len(names) != len(layers) {
		es.Add("layerName", "has %d entries but layerInfo has %d: there must be one name per layer", len(names), len(layers))
	}
	if kinds != nil && haveInfos && len(kinds) != len(layers) {
		es.Add("layerType", "has %d entries but layerInfo has %d: there must be one type per layer", len(kinds), len(layers))
	}
	if len(es) > 0 {
		return nil, es
	}
	if len(layers) == 0 {
		return nil, &model.FieldError{Path: "layerInfo", Reason: "must hold at least one layer"}
	}
	calls := map[string]int{}
	for i, n := range names {
		if n == "" {
			es.Add(fmt.Sprintf("layerName[%d]", i), "must not be empty")
		}
		calls[n]++
	}
	for i := range layers {
		l := &layers[i]
		l.Name = names[i]
		if kinds != nil {
			l.Kind = kinds[i]
		}
		if calls[l.Name] > 1 {
			l.TieGroup = l.Name
		}
	}
	if len(es) > 0 {
		return nil, es
	}
	return &model.Model{TimeUnit: model.Cycles, Layers: layers}, nil
}

// strings reads an array of strings.
func (r *reader) strings() []string {
	t, ok := r.token()
	if !ok {
		return nil
	}
	out := []string{}
	r.array(t, func(int) { out = append(out, r.str()) })
	return out
}

// graphcoreLayer reads one LayerInfo entry into l. A key left out counts as 0 (or as
// empty); null is refused.
func (r *reader) graphcoreLayer(l *model.Layer) {
	var in, out int64
	l.RecvBytes, l.SendBytes = &in, &out
	t, ok := r.token()
	if !ok {
		return
	}
	r.fields(t, []string{"cycle", "memory"}, func(key string) {
		t, ok := r.token()
		if !ok {
			return
		}
		if key == "cycle" {
			r.fields(t, []string{"forward", "backward"}, func(key string) {
				if key == "forward" {
					l.ForwardCycles = r.whole(maxCycles)
				} else {
					l.BackwardCycles = r.whole(maxCycles)
				}
			})
			return
		}
		r.fields(t, []string{"shared", "exclusive", "inputs", "outputs", "maxTemporary", "curCarryOver", "curActivation"}, func(key string) {
			switch key {
			case "shared":
				r.byteMap(func(k string, v int64) {
					if l.Shared == nil {
						l.Shared = map[string]int64{}
					}
					l.Shared[k] = v
				})
			case "exclusive":
				var sum int64
				r.byteMap(func(_ string, v int64) { sum += v }) // at most 2^60 each: no overflow before the check
				if sum > maxBytes {
					r.add("sums to more than 2^60 bytes")
					sum = 0
				}
				l.ExclusiveBytes = sum
			case "inputs":
				in = r.whole(maxBytes)
			case "outputs":
				out = r.whole(maxBytes)
			case "maxTemporary":
				l.TemporaryBytes = r.whole(maxBytes)
			case "curCarryOver":
				l.CarryOverBytes = r.whole(maxBytes)
			case "curActivation":
				l.ActivationBytes = r.whole(maxBytes)
			}
		})
	})
}

// byteMap reads an object of byte counts, calling set with each.
func (r *reader) byteMap(set func(key string, v int64)) {
	if t, ok := r.token(); ok {
		r.object(t, true, func(key string) { set(key, r.whole(maxBytes)) })
	}
}

// graphcoreCluster converts an IPUClusterInfo: one device per connection entry, each
// with the common clock and memory and its own receive and send links. Host transfers
// count in every stage's transfer time (cluster.Cluster.HostEveryStage), as in Graphcore's auto-pipeline tool.
// The tool's memoryProportion is a plan option (estimate.Options.MemoryProportion).
func graphcoreCluster(data []byte) (*cluster.Cluster, error) {
	r := newReader(data)
	r.bounds = map[string]int{"connection": cluster.MaxStages}
	var clock, memMiB float64
	var links [][2]cluster.Link // receive and send link per IPU
	have := map[string]bool{}
	if t, ok := r.token(); ok {
		r.fields(t, []string{"clock", "memory", "connection"}, func(key string) {
			have[key] = true
			switch key {
			case "clock":
				clock = r.positive(maxClockHz)
			case "memory":
				memMiB = r.positive(maxBytes / mebibyte)
			case "connection":
				if t, ok := r.token(); ok {
					r.array(t, func(int) { links = append(links, r.graphcoreConnection()) })
				}
			}
		})
	}
	if err := r.end(); err != nil {
		return nil, err
	}
	var es model.Errors
	for _, k := range []string{"clock", "memory", "connection"} {
		if !have[k] {
			es.Add(k, "is missing")
		}
	}
	if have["connection"] && len(links) == 0 {
		es.Add("connection", "must hold one entry per IPU, got none")
	}
	if len(es) > 0 {
		return nil, es
	}
	c := &cluster.Cluster{
		Name:           fmt.Sprintf("%d IPUs", len(links)),
		Devices:        make([]cluster.Device, len(links)),
		HostEveryStage: true,
	}
	for i, l := range links {
		c.Devices[i] = cluster.Device{Name: fmt.Sprintf("ipu%d", i), MemoryBytes: int64(memMiB * mebibyte), ClockHz: clock,
			Recv: &l[0], Send: &l[1]}
	}
	return c, nil
}

// graphcoreConnection reads one connection entry: its receive and send links.
func (r *reader) graphcoreConnection() (l [2]cluster.Link) {
	t, ok := r.token()
	if !ok {
		return l
	}
	var recv, send bool
	r.fields(t, []string{"recvGBps", "recvIdleCycle", "sendGBps", "sendIdleCycle"}, func(key string) {
		switch key {
		case "recvGBps":
			l[0].GBps, recv = r.positive(math.MaxFloat64), true
		case "recvIdleCycle":
			l[0].IdleCycles = r.whole(maxCycles)
		case "sendGBps":
			l[1].GBps, send = r.positive(math.MaxFloat64), true
		case "sendIdleCycle":
			l[1].IdleCycles = r.whole(maxCycles)
		}
	})
	if t.kind == '{' && !recv {
		r.addAt("recvGBps", "is missing")
	}
	if t.kind == '{' && !send {
		r.addAt("sendGBps", "is missing")
	}
	return l
}
