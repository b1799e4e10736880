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
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the helpers built\n%#v\nvugugen's code builds\n%#v", got, want)
	}
}
