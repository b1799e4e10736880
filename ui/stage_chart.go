package ui

import "github.com/vugu/vugu"

// StageChart draws a StageBar. With Editable set its boundaries can be dragged with a
// pointer or moved with the arrow keys (PageUp and PageDown move ten layers); each move
// calls OnMove with the boundary's index and the layer it now starts.
type StageChart struct {
	// ID is the figure's id ("bar-main"), by which the host sets its data-boundaries
	// (App.Detached).
	ID       string
	Bar      *StageBar
	Caption  string
	Editable bool
	OnMove   func(index, layer int)
	// Host converts pointer positions to the bar's coordinates.
	Host Host

	dragging, ghost int
}

func (c *StageChart) segClass(s Segment) string {
	if s.Bottleneck {
		return "seg bottleneck"
	}
	return "seg"
}

func (c *StageChart) ghostX() float64 {
	if c.Bar == nil || c.ghost < 0 || c.ghost >= len(c.Bar.X) {
		return 0
	}
	return c.Bar.X[c.ghost]
}

func (c *StageChart) pointerDown(e vugu.DOMEvent, h Handle) {
	if c.Host == nil {
		return
	}
	c.dragging, c.ghost = h.Index, h.Layer
	c.Host.Capture(e)
	e.PreventDefault()
}

func (c *StageChart) pointerMove(e vugu.DOMEvent) {
	if c.dragging == 0 || c.Host == nil || c.Bar == nil {
		return
	}
	l := c.Bar.LayerAt(c.Host.BarX(e, BarWidth))
	if l != c.ghost {
		c.ghost = l
		if c.OnMove != nil {
			c.OnMove(c.dragging, l)
		}
	}
}

func (c *StageChart) pointerUp(vugu.DOMEvent) { c.dragging = 0 }

func (c *StageChart) key(e vugu.DOMEvent, h Handle) {
	step := map[string]int{"ArrowLeft": -1, "ArrowDown": -1, "ArrowRight": 1, "ArrowUp": 1, "PageDown": -10, "PageUp": 10}[e.PropString("key")]
	if step == 0 || c.OnMove == nil {
		return
	}
	e.PreventDefault()
	c.OnMove(h.Index, h.Layer+step)
}
