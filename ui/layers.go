package ui

// --- The layer table.

// Layers is the layer table's window: after an import, with DrawInFrames, none in the
// first render, which draws the new model's summary, then LayerFrameRows more in each
// of the next (DrawNext).
func (a *App) Layers() []LayerRow {
	var stageOf []int
	off := 0
	if a.View != nil {
		stageOf, off = a.View.LayerStages, a.View.LayerStart
	}
	size := LayerPageSize
	if a.layersPending {
		size = a.layersShown
	}
	rows := layerPage(a.Model(), off, stageOf, a.LayerStart, size)
	if a.Res != nil && a.Res.Plan != nil {
		markRecomputed(rows, a.Res.Plan)
	}
	return rows
}

// HasRecompute reports whether the plan chose recomputation per layer (recompute auto).
func (a *App) HasRecompute() bool {
	p := a.Res
	return p != nil && p.Plan != nil && len(p.Plan.Stages) > 0 && p.Plan.Stages[0].Recompute != nil
}

// HasLayerCosts reports whether the result has the layers' costs (request.layers).
func (a *App) HasLayerCosts() bool {
	m := a.Model()
	return m != nil && m.LayerCosts != nil
}

// ShowLayerCosts asks core for the layers' costs (request.layers) and replans.
func (a *App) ShowLayerCosts() {
	a.Req.Layers = true
	a.changed(false)
}

// LayerCount is the number of layers, 0 without a model.
func (a *App) LayerCount() int {
	if m := a.Model(); m != nil {
		return m.Layers
	}
	return 0
}

// PageLayers moves the layer table's window by delta rows, or to row "at" if at >= 0.
func (a *App) PageLayers(delta, at int) {
	n := a.LayerCount()
	s := a.LayerStart + delta
	if at >= 0 {
		s = at
	}
	a.LayerStart = max(0, min(s, n-1))
	a.refetch()
}
