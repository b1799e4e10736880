package ui

import (
	"testing"

	"github.com/vugu/vjson"
	"github.com/vugu/vugu"
)

// vgText, vgElement and vgProp build nodes as vugugen's code does, for the tests.
func vgText(parent *vugu.VGNode, data string) *vugu.VGNode {
	n := &vugu.VGNode{Type: vugu.TextNode, Data: data}
	parent.AppendChild(n)
	return n
}

func vgElement(parent *vugu.VGNode, ns, tag string, attrs ...string) *vugu.VGNode {
	n := &vugu.VGNode{Type: vugu.ElementNode, Namespace: ns, Data: tag}
	for i := 0; i+1 < len(attrs); i += 2 {
		n.Attr = append(n.Attr, vugu.VGAttribute{Key: attrs[i], Val: attrs[i+1]})
	}
	parent.AppendChild(n)
	return n
}

func vgProp(n *vugu.VGNode, key string, v any) {
	b, err := vjson.Marshal(v)
	if err != nil {
		panic(err)
	}
	n.Prop = append(n.Prop, vugu.VGProperty{Key: key, JSONVal: vjson.RawMessage(b)})
}

// TestRecoverHandlers: a handler's panic goes to HandlerPanicked, and the handler
// returns; without HandlerPanicked it panics as before; a build wrapped again (vugu
// reuses an unchanged component's output) keeps one wrapper per handler.
func TestRecoverHandlers(t *testing.T) {
	root := &vugu.VGNode{Type: vugu.ElementNode, Data: "div"}
	n := vgElement(root, "", "button")
	ran := false
	n.DOMEventHandlerSpecList = append(n.DOMEventHandlerSpecList, vugu.DOMEventHandlerSpec{EventType: "click", Func: func(vugu.DOMEvent) { ran = true; panic("broken") }})
	br := &vugu.BuildResults{Out: &vugu.BuildOut{Out: []*vugu.VGNode{root}}}
	var r RecoverHandlers
	r.Wrap(br)
	r.Wrap(br)
	var got []any
	HandlerPanicked = func(v any) { got = append(got, v) }
	n.DOMEventHandlerSpecList[0].Func(nil)
	if !ran || len(got) != 1 || got[0] != "broken" {
		t.Errorf("ran %v, HandlerPanicked got %v", ran, got)
	}
	// A HandlerPanicked that panics itself: once wrapped, the panic leaves the handler
	// (twice wrapped, the outer wrapper would recover it and call HandlerPanicked again).
	got = nil
	HandlerPanicked = func(v any) { got = append(got, v); panic(v) }
	func() {
		defer func() { recover() }()
		n.DOMEventHandlerSpecList[0].Func(nil)
	}()
	if len(got) != 1 {
		t.Errorf("HandlerPanicked called %d times for one panic: the handler is wrapped more than once", len(got))
	}
	HandlerPanicked = nil
	defer func() {
		if v := recover(); v != "broken" {
			t.Errorf("without HandlerPanicked the panic is %v", v)
		}
	}()
	n.DOMEventHandlerSpecList[0].Func(nil)
}

// TestRecoverHandlersPage: every handler of the page's build is wrapped, the
// components' included.
func TestRecoverHandlersPage(t *testing.T) {
	br := build(t, NewApp(nil, &fakeHost{}, local))
	var handlers int
	eachNode(br, func(n *vugu.VGNode) { handlers += len(n.DOMEventHandlerSpecList) })
	if handlers < 20 {
		t.Fatalf("the page has %d event handlers", handlers)
	}
	var r RecoverHandlers
	r.Wrap(br)
	if len(r.wrapped) == 0 {
		t.Fatal("no node wrapped")
	}
	eachNode(br, func(n *vugu.VGNode) {
		if len(n.DOMEventHandlerSpecList) > 0 && !r.wrapped[n] {
			t.Errorf("<%s> %v not wrapped", n.Data, n.DOMEventHandlerSpecList[0].EventType)
		}
	})
}
