package ui

import (
	"strconv"
	"unicode/utf8"

	"github.com/vugu/vugu"
)

// vugu's DOM renderer (domrender, vugu v0.4.0) hands the page's changes to JavaScript
// as instructions in one buffer of RenderBufferBytes, a size fixed in its Go code
// (make([]byte, 16384) in domrender.New) and in its script (new Uint8Array(16384)), and
// not configurable. The buffer is flushed to JavaScript whenever the next instruction
// would not fit, so a page of any size renders; but one instruction must fit in the
// buffer whole, less its terminating byte. Only innerHTML is split across flushes: a
// text node, an attribute or a property that does not fit fails the render with
// "requested instruction does not fit in the buffer". The instructions' sizes
// (renderer-js-instructions.go):
//
//	text node       len(text) + 5
//	attribute       len(name) + len(value) + 9
//	property        len(key) + len(JSON value) + 9
//
// So the page keeps every string that grows with the model out of the virtual DOM
// (App.Detached: the host sets them on the elements itself) and draws windows of rows
// and decimated charts; BoundRender is the net under that: whatever still does not fit
// is cut (text) or left out (attributes, properties) instead of failing the render.
const RenderBufferBytes = 16384

// maxInstruction is the largest instruction the buffer takes: its last byte is the
// terminator.
const maxInstruction = RenderBufferBytes - 1

// Instruction sizes of domrender's text, attribute and property instructions.
func textInstruction(text string) int             { return len(text) + 5 }
func attrInstruction(name, value string) int      { return len(name) + len(value) + 9 }
func propInstruction(key string, json []byte) int { return len(key) + len(json) + 9 }

// BoundRender makes a build's output fit domrender's instruction buffer: a text node
// too long is cut, at a character, and says how much was left out; an attribute or a
// property too long is left out (an input keeps what it holds). It returns how many it
// changed: none when the output fits, as it should, for the page's own strings that grow
// with the model are not in the virtual DOM.
func BoundRender(br *vugu.BuildResults) (changed int) {
	eachNode(br, func(n *vugu.VGNode) {
		if n.Type == vugu.TextNode || n.Type == vugu.CommentNode {
			if textInstruction(n.Data) > maxInstruction {
				n.Data = cutText(n.Data)
				changed++
			}
			return
		}
		attrs := n.Attr[:0]
		for _, a := range n.Attr {
			if attrInstruction(a.Key, a.Val) <= maxInstruction {
				attrs = append(attrs, a)
			}
		}
		props := n.Prop[:0]
		for _, p := range n.Prop {
			if propInstruction(p.Key, p.JSONVal) <= maxInstruction {
				props = append(props, p)
			}
		}
		changed += len(n.Attr) - len(attrs) + len(n.Prop) - len(props)
		n.Attr, n.Prop = attrs, props
	})
	return changed
}

// cutText cuts a text to what fits in one instruction, ending at a character, with a
// note of what was left out.
func cutText(s string) string {
	const note = " … ( more bytes not shown)"
	// Room for the note with the most digits its count can have.
	keep := maxInstruction - 5 - len(note) - len(strconv.Itoa(len(s)))
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + " … (" + strconv.Itoa(len(s)-keep) + " more bytes not shown)"
}
