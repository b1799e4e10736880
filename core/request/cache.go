package request

import (
	"sync"

	"pipeplan/core/analytic"
	"pipeplan/core/arch"
	"pipeplan/core/cluster"
	"pipeplan/core/model"
)

// A Cache remembers, across requests, what requests of one model have in common: the
// parsed architecture, and its analytic estimate for each set of options that decide it
// (microbatch size, sequence, types, recomputation, tensor parallelism, the data-parallel
// sharding of ZeRO-1, the device and its link). A search plans thousands of requests that
// differ in a few knobs; with a cache each estimate is made once (Cache.Prepare, and the
// variants of a Prepared, which share one). Results are the same as
// without one: what is cached is never changed by a request that uses it. A Cache is
// safe for concurrent use; the zero value is not (use NewCache).
type Cache struct {
	mu        sync.Mutex
	arches    map[archKey]archEntry
	estimates map[estimateKey]estimateEntry
	// buffered are the cached models' layers with PyTorch's pipeline stage buffers
	// (pipelineBuffers), by the cached layers and the buffers' bytes.
	buffered map[bufferedKey][]model.Layer
}

// bufferedKey names a cached model's layers (its first, by identity: the layers of an
// estimate's model are shared and never changed) and the stage buffers' bytes added to
// them.
type bufferedKey struct {
	layers *model.Layer
	size   int64
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{arches: map[archKey]archEntry{}, estimates: map[estimateKey]estimateEntry{}, buffered: map[bufferedKey][]model.Layer{}}
}

type archKey struct{ name, config string }

type archEntry struct {
	a   *arch.Arch
	err error
}

type estimateKey struct {
	arch       *arch.Arch // the cached parse, by identity
	name       string     // the model's label, which names the estimate's model
	device     string
	tensorLink cluster.Link
	// contextLink carries context-parallel exchanges across nodes (zero: the tensor link).
	contextLink cluster.Link
	// expertLink, expertInterLink and expertPerNode carry the expert all-to-alls.
	expertLink, expertInterLink cluster.Link
	expertPerNode               int
	matmul                      float64
	memory                      float64
	kernel                      float64
	kernelSet                   bool
	// framework with the request's host-cost overrides: it sets host times, the
	// optimizer's temporaries and the framework's memory of the estimate.
	framework cluster.Framework
	opts      analytic.Options
}

type estimateEntry struct {
	est *analytic.Result
	err error
	// model is est.Model(), built once: requests get a copy of the Model whose layers
	// and inputs they share, which no request changes (an architecture's model is only
	// read once built; profiles, which prepare adjusts, are not cached).
	model *model.Model
}

// archOf parses a bundled name (config empty) or a config, once. The Arch returned is a
// copy the caller may change; key is the cached one, which identifies it.
func (c *Cache) archOf(name string, config []byte, parse func() (*arch.Arch, error)) (a, key *arch.Arch, err error) {
	if c == nil {
		a, err = parse()
		return a, a, err
	}
	k := archKey{name, string(config)}
	c.mu.Lock()
	e, ok := c.arches[k]
	c.mu.Unlock()
	if !ok {
		e.a, e.err = parse()
		c.mu.Lock()
		c.arches[k] = e
		c.mu.Unlock()
	}
	if e.err != nil {
		return nil, nil, e.err
	}
	cp := *e.a
	return &cp, e.a, nil
}

// estimate is analytic.Estimate, once per key, with its model (est.Model()): the Model
// is the caller's, its layers and inputs shared and never to be changed.
func (c *Cache) estimate(k estimateKey, a *arch.Arch, t analytic.Target, o analytic.Options) (*analytic.Result, *model.Model, error) {
	if c == nil || k.arch == nil {
		est, err := analytic.Estimate(a, t, o)
		if err != nil {
			return nil, nil, err
		}
		return est, est.Model(), nil
	}
	c.mu.Lock()
	e, ok := c.estimates[k]
	c.mu.Unlock()
	if !ok {
		e.est, e.err = analytic.Estimate(a, t, o)
		if e.err == nil {
			e.model = e.est.Model()
		}
		c.mu.Lock()
		c.estimates[k] = e
		c.mu.Unlock()
	}
	if e.err != nil {
		return nil, nil, e.err
	}
	m := *e.model
	return e.est, &m, nil
}

// bufferedLayers is make(layers, size), once per cached layers and size where cached
// (layers are a cached estimate's model's): the layers returned are shared, never to be
// changed.
func (c *Cache) bufferedLayers(cached bool, layers []model.Layer, size int64, make func() []model.Layer) []model.Layer {
	if c == nil || !cached || len(layers) == 0 {
		return make()
	}
	k := bufferedKey{&layers[0], size}
	c.mu.Lock()
	l, ok := c.buffered[k]
	c.mu.Unlock()
	if !ok {
		l = make()
		c.mu.Lock()
		c.buffered[k] = l
		c.mu.Unlock()
	}
	return l
}
