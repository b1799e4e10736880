package ui

import (
	"fmt"

	"github.com/vugu/vugu"
)

// StageChart draws a StageBar. With Editable set its boundaries can be dragged with a
// pointer or moved with the left and right arrow keys (PageUp and PageDown move ten
// layers); each move calls OnMove with the boundary's index and the layer it now starts.
// The handles are one Tab stop (a roving tabindex, WAI-ARIA Authoring Practices): the up
// and down arrow keys go to the next and the previous boundary. The bar stretches to its
// box's width (preserveAspectRatio="none") and its labels are HTML over it, so that their
// text keeps its size in CSS pixels at any width.
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
	// active is the handle (its Index) that takes the Tab stop; 0: the first.
	active int
}

// tabIndex is 0 for the one handle in the Tab order, -1 for the others.
func (c *StageChart) tabIndex(h Handle) int {
	if h.Index == min(max(c.active, 1), len(c.Bar.Handles)) {
		return 0
	}
	return -1
}

// place positions a segment's label over the bar: --x and --w are its left edge and
// width in the bar's units (BarWidth, 1000, across; style.css turns them into percent).
func (c *StageChart) place(s Segment) string {
	return fmt.Sprintf("--x:%.1f;--w:%.1f", s.X, s.W)
}

func (c *StageChart) segClass(s Segment) string {
	if s.Bottleneck {
		return "seg bottleneck"
	}
	return "seg"
}

func (c *StageChart) ghostX() float64 {
	if c.Bar == nil {
		return 0
	}
	return c.Bar.xAt(c.ghost)
}

func (c *StageChart) pointerDown(e vugu.DOMEvent, h Handle) {
	if c.Host == nil {
		return
	}
	c.dragging, c.ghost, c.active = h.Index, h.Layer, h.Index
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
	c.active = h.Index
	next, step := 0, 0
	switch e.PropString("key") {
	case "ArrowDown":
		next = 1
	case "ArrowUp":
		next = -1
	case "ArrowLeft":
		step = -1
	case "ArrowRight":
		step = 1
	case "PageDown":
		step = -10
	case "PageUp":
		step = 10
	}
	if next != 0 {
		e.PreventDefault()
		if i := h.Index + next; i >= 1 && i <= len(c.Bar.Handles) && c.Host != nil {
			c.active = i
			c.Host.Focus(fmt.Sprintf("#%s .handle[data-index='%d']", c.ID, i))
		}
		return
	}
	if step == 0 || c.OnMove == nil {
		return
	}
	e.PreventDefault()
	c.OnMove(h.Index, h.Layer+step)
}
