package ui

import "github.com/vugu/vugu"

// HandlerPanicked, when set, is told of a panic in an event handler, which then returns
// as if it had ended. It runs where the handler ran (holding vugu's lock).
var HandlerPanicked func(v any)

// RecoverHandlers makes every DOM event handler of a build (@click='...') recover a
// panic and give it to HandlerPanicked, when set: vugu v0.4.0 recovers none (a panic in
// a handler ends the page's program, with vugu's lock held), so the page says what
// failed and goes on. Call it on each build before rendering it, with the same
// RecoverHandlers: vugu reuses the output of a component that did not change, whose
// handlers are wrapped already, and each is wrapped once.
type RecoverHandlers struct {
	wrapped map[*vugu.VGNode]bool
}

// Wrap wraps the handlers of br's nodes that are not wrapped yet.
func (r *RecoverHandlers) Wrap(br *vugu.BuildResults) {
	now := map[*vugu.VGNode]bool{}
	eachNode(br, func(n *vugu.VGNode) {
		if len(n.DOMEventHandlerSpecList) == 0 {
			return
		}
		now[n] = true
		if r.wrapped[n] {
			return
		}
		for i := range n.DOMEventHandlerSpecList {
			n.DOMEventHandlerSpecList[i].Func = recovering(n.DOMEventHandlerSpecList[i].Func)
		}
	})
	// The nodes of this build only: those vugu dropped are not kept alive.
	r.wrapped = now
}

// recovering returns f, recovering a panic for HandlerPanicked.
func recovering(f func(vugu.DOMEvent)) func(vugu.DOMEvent) {
	return func(e vugu.DOMEvent) {
		if HandlerPanicked != nil {
			defer func() {
				if v := recover(); v != nil {
					HandlerPanicked(v)
				}
			}()
		}
		f(e)
	}
}

// eachNode calls f on every node of a build's output, the components' included, each
// once.
func eachNode(br *vugu.BuildResults, f func(n *vugu.VGNode)) {
	if br == nil || br.Out == nil {
		return
	}
	seen := map[*vugu.BuildOut]bool{}
	var walkOut func(bo *vugu.BuildOut)
	var walk func(n *vugu.VGNode)
	walk = func(n *vugu.VGNode) {
		for ; n != nil; n = n.NextSibling {
			if n.Component != nil {
				walkOut(br.ResultFor(n.Component))
				continue
			}
			f(n)
			walk(n.FirstChild)
		}
	}
	walkOut = func(bo *vugu.BuildOut) {
		if bo == nil || seen[bo] {
			return
		}
		seen[bo] = true
		for _, n := range bo.Out {
			walk(n)
		}
	}
	walkOut(br.Out)
}
