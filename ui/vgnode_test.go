package ui

import (
	"reflect"
	"testing"

	"github.com/vugu/vjson"
	"github.com/vugu/vugu"
)

// TestVGNodeHelpers: the helpers build the nodes that vugugen's code builds.
func TestVGNodeHelpers(t *testing.T) {
	want := &vugu.VGNode{Type: vugu.VGNodeType(3), Namespace: "", Data: "div"}
	var vgn *vugu.VGNode
	vgn = &vugu.VGNode{Type: vugu.VGNodeType(3), Namespace: "", Data: "input", Attr: []vugu.VGAttribute{{Namespace: "", Key: "id", Val: "x"}, vugu.VGAttribute{Namespace: "", Key: "type", Val: "number"}}}
	want.AppendChild(vgn)
	vgn.DOMEventHandlerSpecList = append(vgn.DOMEventHandlerSpecList, vugu.DOMEventHandlerSpec{EventType: "input", Func: nil})
	{
		b, err := vjson.Marshal(42)
		if err != nil {
			panic(err)
		}
		vgn.Prop = append(vgn.Prop, vugu.VGProperty{Key: "value", JSONVal: vjson.RawMessage(b)})
	}
	vgn = &vugu.VGNode{Type: vugu.VGNodeType(1), Data: " "}
	want.AppendChild(vgn)
	vgn = &vugu.VGNode{Type: vugu.VGNodeType(3), Namespace: "svg", Data: "g", Attr: []vugu.VGAttribute(nil)}
	want.AppendChild(vgn)

	got := &vugu.VGNode{Type: vugu.VGNodeType(3), Namespace: "", Data: "div"}
	vgn = vgElement(got, "", "input", "id", "x", "type", "number")
	vgOn(vgn, "input", nil)
	vgProp(vgn, "value", 42)
	vgText(got, " ")
	vgElement(got, "svg", "g")
	// vgOn's handler wraps the one given (see TestHandlerPanicked).
	if h := got.FirstChild.DOMEventHandlerSpecList; len(h) != 1 || h[0].Func == nil {
		t.Fatalf("vgOn added %v", h)
	}
	got.FirstChild.DOMEventHandlerSpecList[0].Func = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the helpers built\n%#v\nvugugen's code builds\n%#v", got, want)
	}
}

// TestHandlerPanicked: a handler's panic goes to HandlerPanicked, and the handler returns;
// without HandlerPanicked it panics as before.
func TestHandlerPanicked(t *testing.T) {
	n := &vugu.VGNode{Type: vugu.ElementNode, Data: "button"}
	ran := false
	vgOn(n, "click", func(vugu.DOMEvent) { ran = true; panic("broken") })
	var got any
	HandlerPanicked = func(v any) { got = v }
	n.DOMEventHandlerSpecList[0].Func(nil)
	HandlerPanicked = nil
	if !ran || got != "broken" {
		t.Errorf("ran %v, HandlerPanicked got %v", ran, got)
	}
	defer func() {
		if v := recover(); v != "broken" {
			t.Errorf("without HandlerPanicked the panic is %v", v)
		}
	}()
	n.DOMEventHandlerSpecList[0].Func(nil)
}
