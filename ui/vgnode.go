package ui

import (
	"github.com/vugu/vjson"
	"github.com/vugu/vugu"
)

// The components' generated Build methods (*_gen.go) make their nodes with these
// functions: cmd/vgtrim rewrites vugugen's output to call them, so that each node costs
// a call instead of its construction spelled out (main.wasm is mostly code). Each builds
// exactly what vugugen's code builds.

// vgText appends a text node to parent and returns it.
func vgText(parent *vugu.VGNode, data string) *vugu.VGNode {
	n := &vugu.VGNode{Type: vugu.TextNode, Data: data}
	parent.AppendChild(n)
	return n
}

// vgElement appends an element to parent and returns it: namespace ns ("" or "svg"),
// tag, and its static attributes as key, value pairs.
func vgElement(parent *vugu.VGNode, ns, tag string, attrs ...string) *vugu.VGNode {
	n := &vugu.VGNode{Type: vugu.ElementNode, Namespace: ns, Data: tag}
	if len(attrs) > 0 {
		n.Attr = make([]vugu.VGAttribute, len(attrs)/2)
		for i := range n.Attr {
			n.Attr[i] = vugu.VGAttribute{Key: attrs[2*i], Val: attrs[2*i+1]}
		}
	}
	parent.AppendChild(n)
	return n
}

// vgOn adds a DOM event handler to n (@click='...'). A panic in the handler is
// recovered and given to HandlerPanicked, when set: vugu v0.4.0 recovers none (a panic in
// a handler ends the page's program, with vugu's lock held), so the page says what
// failed and goes on. It is not inlined: inlined, each of its ~50 callers had a copy
// of the wrapper (20 KB of main.wasm).
//
//go:noinline
func vgOn(n *vugu.VGNode, event string, f func(vugu.DOMEvent)) {
	n.DOMEventHandlerSpecList = append(n.DOMEventHandlerSpecList, vugu.DOMEventHandlerSpec{EventType: event, Func: func(e vugu.DOMEvent) {
		if HandlerPanicked != nil {
			defer func() {
				if v := recover(); v != nil {
					HandlerPanicked(v)
				}
			}()
		}
		f(e)
	}})
}

// HandlerPanicked, when set, is told of a panic in an event handler, which then returns
// as if it had ended. It runs where the handler ran (holding vugu's lock).
var HandlerPanicked func(v any)

// vgProp sets a JavaScript property of n to v, as JSON (.value='...').
func vgProp(n *vugu.VGNode, key string, v any) {
	b, err := vjson.Marshal(v)
	if err != nil {
		panic(err)
	}
	n.Prop = append(n.Prop, vugu.VGProperty{Key: key, JSONVal: vjson.RawMessage(b)})
}
