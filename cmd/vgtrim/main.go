// Command vgtrim shrinks the Go code that vugugen (github.com/vugu/vugu v0.4.0) generates
// for the page's components, ui/*_gen.go, without changing what it builds. The page's
// WebAssembly binary (main.wasm) is mostly code, and vugugen spells every node of a
// template out in full: an allocation with every field, an AppendChild, an event
// handler's composite literal, a JSON property's error check. vgtrim rewrites the Build
// methods and drops what the program does not need:
//
//   - a text node becomes vgText(vgparent, "..."), an element vgElement(vgparent, ns,
//     tag, key, value, ...), an event handler vgOn(vgn, "click", func...), a property
//     vgProp(vgn, "value", v): small functions the package defines (ui/vgnode.go) that
//     build the same nodes;
//   - a text node of white space only is dropped where HTML does not draw it (see
//     Whitespace): a template's line breaks and indentation are hundreds of nodes;
//   - the imports that vugugen keeps with "var _ log.Logger" lines go when the file does
//     not use them: log's init alone links about 60 KB into main.wasm.
//
// Usage (ui/generate.go runs it after vugugen; a directory means its *_gen.go files):
//
//	go run ./cmd/vgtrim ui
//
// The files are rewritten in place, formatted. vgtrim refuses a file in which it finds a
// node it does not know (another vugugen's output): it changes nothing rather than
// something it has not checked. A file it has trimmed already stays as it is.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: vgtrim FILE_gen.go|DIR...")
		os.Exit(2)
	}
	var names []string
	for _, arg := range os.Args[1:] {
		if fi, err := os.Stat(arg); err == nil && fi.IsDir() {
			m, _ := filepath.Glob(filepath.Join(arg, "*_gen.go"))
			names = append(names, m...)
		} else {
			names = append(names, arg)
		}
	}
	for _, name := range names {
		src, err := os.ReadFile(name)
		if err == nil {
			var out []byte
			if out, err = Trim(src); err == nil && !bytes.Equal(out, src) {
				err = os.WriteFile(name, out, 0o644)
			}
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "vgtrim: %s: %v\n", name, err)
			os.Exit(1)
		}
	}
}

// Trim returns the trimmed source of one generated file.
func Trim(src []byte) ([]byte, error) {
	// First the Build methods, then the imports that they no longer use.
	for _, pass := range []func(*trimmer, *ast.File){(*trimmer).builds, (*trimmer).unusedImports} {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "", src, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		t := &trimmer{fset: fset, src: src}
		if pass(t, f); t.err != nil {
			return nil, t.err
		}
		if src, err = t.apply(); err != nil {
			return nil, err
		}
	}
	return src, nil
}

// builds rewrites the Build methods.
func (t *trimmer) builds(f *ast.File) {
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && fd.Name.Name == "Build" && fd.Body != nil {
			root := t.level(fd.Body.List, nil)
			if t.err != nil {
				return
			}
			t.whitespace(root)
		}
	}
}

// apply makes the edits and formats the result. An edit that deletes statements takes
// their lines with them.
func (t *trimmer) apply() ([]byte, error) {
	for i, e := range t.edits {
		if e.text != "" {
			continue
		}
		start, end := e.start, e.end
		for start > 0 && (t.src[start-1] == ' ' || t.src[start-1] == '\t') {
			start--
		}
		if (start == 0 || t.src[start-1] == '\n') && end < len(t.src) && t.src[end] == '\n' {
			t.edits[i].start, t.edits[i].end = start, end+1
		}
	}
	slices.SortFunc(t.edits, func(a, b edit) int { return a.start - b.start })
	var out bytes.Buffer
	at := 0
	for _, e := range t.edits {
		if e.start < at {
			return nil, errors.New("overlapping rewrites (a bug in vgtrim)")
		}
		out.Write(t.src[at:e.start])
		out.WriteString(e.text)
		at = e.end
	}
	out.Write(t.src[at:])
	return format.Source(out.Bytes())
}

// edit replaces src[start:end] with text.
type edit struct {
	start, end int
	text       string
}

type trimmer struct {
	fset  *token.FileSet
	src   []byte
	edits []edit
	err   error
}

func (t *trimmer) off(p token.Pos) int { return t.fset.Position(p).Offset }

// replace rewrites the source of the statements from a to b (inclusive).
func (t *trimmer) replace(a, b ast.Node, text string) {
	t.edits = append(t.edits, edit{t.off(a.Pos()), t.off(b.End()), text})
}

func (t *trimmer) text(n ast.Node) string { return string(t.src[t.off(n.Pos()):t.off(n.End())]) }

func (t *trimmer) fail(n ast.Node, format string, args ...any) {
	if t.err == nil {
		t.err = fmt.Errorf("%s: %s", t.fset.Position(n.Pos()), fmt.Sprintf(format, args...))
	}
}

// The kinds of item in a list of sibling nodes.
const (
	textItem    = iota // a text node: data
	elemItem           // an element: tag
	condItem           // vg-if: sub, present or not
	loopItem           // vg-for: sub, any number of times
	transparent        // a <vg-template>: sub, its children in its place
	opaqueItem         // a component, or anything else that makes nodes
)

// item is a node, or a group of nodes, among its siblings.
type item struct {
	kind int
	data string // textItem: the text; elemItem: the tag
	sub  *level // an element's children; the nodes of condItem, loopItem, transparent
	edit int    // a text item: the index of the edit that rewrites it
}

// level is a list of siblings: an element's children, or the nodes of a vg-if or vg-for
// body among the siblings of the level that holds it.
type level struct {
	items []*item
	tag   string // the element whose children these are; "" for a root or a body
	up    *level // the level that holds this one's condItem, loopItem or transparent
	in    *item  // that item
}

// level reads a list of statements that make sibling nodes (the children of tag, or of a
// body inside up), rewriting each node's construction on the way.
func (t *trimmer) level(list []ast.Stmt, up *level) *level {
	lv := &level{up: up}
	var cur *item // the element that the statements after it decorate
	for i := 0; i < len(list); i++ {
		s := list[i]
		switch {
		case isVgparentBlock(s):
			// The children of the element made just before.
			if cur == nil {
				t.fail(s, "children without an element")
				return lv
			}
			sub := t.level(s.(*ast.BlockStmt).List[2:], nil)
			if cur.kind == transparent {
				sub.up, sub.in = lv, cur
			} else {
				sub.tag = cur.data
			}
			cur.sub, cur = sub, nil
		case isPropBlock(s):
			b := s.(*ast.BlockStmt)
			v := b.List[0].(*ast.AssignStmt).Rhs[0].(*ast.CallExpr).Args[0]
			key := b.List[2].(*ast.AssignStmt).Rhs[0].(*ast.CallExpr).Args[1].(*ast.CompositeLit).Elts[0].(*ast.KeyValueExpr).Value
			t.replace(s, s, fmt.Sprintf("vgProp(vgn, %s, %s)", t.text(key), t.text(v)))
		case isHandler(s):
			lit := s.(*ast.AssignStmt).Rhs[0].(*ast.CallExpr).Args[1].(*ast.CompositeLit)
			var ev, fn string
			for _, e := range lit.Elts {
				kv := e.(*ast.KeyValueExpr)
				switch kv.Key.(*ast.Ident).Name {
				case "EventType":
					ev = t.text(kv.Value)
				case "Func":
					fn = t.text(kv.Value)
				}
			}
			t.replace(s, s, fmt.Sprintf("vgOn(vgn, %s, %s)", ev, fn))
		case isComponentBlock(s):
			lv.items = append(lv.items, &item{kind: opaqueItem})
			cur = nil
		default:
			if n, ok := newNode(s); ok {
				if i+1 >= len(list) || !isAppend(list[i+1]) {
					// The root, which goes to vgout.Out: left as it is.
					cur = &item{kind: elemItem, data: n.tag}
					lv.items = append(lv.items, cur)
					continue
				}
				it := &item{}
				switch {
				case n.template:
					it.kind = transparent
				case n.element:
					it.kind, it.data = elemItem, n.tag
					t.replace(s, list[i+1], fmt.Sprintf("vgn = vgElement(vgparent, %s, %s%s)", n.ns, strconv.Quote(n.tag), n.attrs))
				default:
					it.kind, it.data, it.edit = textItem, n.text, len(t.edits)
					t.replace(s, list[i+1], fmt.Sprintf("vgn = vgText(vgparent, %s)", strconv.Quote(n.text)))
				}
				lv.items = append(lv.items, it)
				cur = it
				i++
				continue
			}
			if kind, data, ok := helperCall(s); ok {
				// A node that vgtrim made already.
				it := &item{kind: kind, data: data, edit: len(t.edits)}
				t.replace(s, s, t.text(s))
				lv.items = append(lv.items, it)
				cur = it
				continue
			}
			switch s := s.(type) {
			case *ast.IfStmt:
				if s.Else != nil {
					t.fail(s, "an if with an else")
					return lv
				}
				it := &item{kind: condItem}
				it.sub = t.level(s.Body.List, lv)
				it.sub.in = it
				lv.items = append(lv.items, it)
				cur = nil
			case *ast.RangeStmt, *ast.ForStmt:
				var body *ast.BlockStmt
				if r, ok := s.(*ast.RangeStmt); ok {
					body = r.Body
				} else {
					body = s.(*ast.ForStmt).Body
				}
				it := &item{kind: loopItem}
				it.sub = t.level(body.List, lv)
				it.sub.in = it
				lv.items = append(lv.items, it)
				cur = nil
			case *ast.ExprStmt:
				if !isVgnCall(s) {
					t.fail(s, "an unknown statement")
					return lv
				}
			case *ast.BlockStmt:
				t.fail(s, "an unknown block")
				return lv
			}
			// Declarations and assignments that make no node (vgout, vgiterkey, the
			// loop variables, vgn.X = ...) are left as they are.
		}
	}
	return lv
}

// node is what a "vgn = &vugu.VGNode{...}" statement makes.
type node struct {
	element, template bool
	ns, tag           string // ns as Go source
	attrs             string // ", key, value" pairs as Go source
	text              string
}

// newNode reads "vgn = &vugu.VGNode{Type: vugu.VGNodeType(N), ...}": a text node (1) or
// an element (3, a <vg-template> without Data). Component nodes are not read here.
func newNode(s ast.Stmt) (node, bool) {
	var n node
	a, ok := s.(*ast.AssignStmt)
	if !ok || len(a.Lhs) != 1 || !isIdent(a.Lhs[0], "vgn") || a.Tok != token.ASSIGN || len(a.Rhs) != 1 {
		return n, false
	}
	u, ok := a.Rhs[0].(*ast.UnaryExpr)
	if !ok || u.Op != token.AND {
		return n, false
	}
	lit, ok := u.X.(*ast.CompositeLit)
	if !ok || !isSel(lit.Type, "vugu", "VGNode") {
		return n, false
	}
	fields := map[string]ast.Expr{}
	for _, e := range lit.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			return n, false
		}
		fields[kv.Key.(*ast.Ident).Name] = kv.Value
	}
	typ, ok := fields["Type"].(*ast.CallExpr)
	if !ok || !isSel(typ.Fun, "vugu", "VGNodeType") || len(typ.Args) != 1 {
		return n, false
	}
	switch kind := literal(typ.Args[0]); {
	case kind == "1" && len(fields) == 2:
		n.text, ok = stringLit(fields["Data"])
		return n, ok
	case kind == "3" && len(fields) == 1:
		n.template = true
		return n, true
	case kind == "3" && len(fields) == 4:
		n.element = true
		ns, ok1 := stringLit(fields["Namespace"])
		tag, ok2 := stringLit(fields["Data"])
		if !ok1 || !ok2 {
			return n, false
		}
		n.ns, n.tag = strconv.Quote(ns), tag
		switch attr := fields["Attr"].(type) {
		case *ast.CallExpr: // []vugu.VGAttribute(nil)
			if len(attr.Args) != 1 || !isIdent(attr.Args[0], "nil") {
				return n, false
			}
		case *ast.CompositeLit:
			for _, e := range attr.Elts {
				a, ok := e.(*ast.CompositeLit)
				if !ok || len(a.Elts) != 3 {
					return n, false
				}
				var k, v string
				for _, e := range a.Elts {
					kv := e.(*ast.KeyValueExpr)
					s, ok := stringLit(kv.Value)
					if !ok {
						return n, false
					}
					switch kv.Key.(*ast.Ident).Name {
					case "Namespace":
						if s != "" {
							return n, false
						}
					case "Key":
						k = s
					case "Val":
						v = s
					}
				}
				n.attrs += ", " + strconv.Quote(k) + ", " + strconv.Quote(v)
			}
		default:
			return n, false
		}
		return n, true
	}
	return n, false
}

// helperCall reads "vgn = vgText(vgparent, "...")" and "vgn = vgElement(vgparent, ns,
// "tag", ...)", which vgtrim wrote: the item's kind and its text or tag.
func helperCall(s ast.Stmt) (kind int, data string, ok bool) {
	a, ok := s.(*ast.AssignStmt)
	if !ok || len(a.Lhs) != 1 || !isIdent(a.Lhs[0], "vgn") || len(a.Rhs) != 1 {
		return 0, "", false
	}
	c, ok := a.Rhs[0].(*ast.CallExpr)
	switch {
	case !ok:
		return 0, "", false
	case isIdent(c.Fun, "vgText") && len(c.Args) == 2:
		data, ok = stringLit(c.Args[1])
		return textItem, data, ok
	case isIdent(c.Fun, "vgElement") && len(c.Args) >= 3:
		data, ok = stringLit(c.Args[2])
		return elemItem, data, ok
	}
	return 0, "", false
}

// isAppend reports whether s is "vgparent.AppendChild(vgn)".
func isAppend(s ast.Stmt) bool {
	e, ok := s.(*ast.ExprStmt)
	if !ok {
		return false
	}
	c, ok := e.X.(*ast.CallExpr)
	return ok && isSel(c.Fun, "vgparent", "AppendChild") && len(c.Args) == 1 && isIdent(c.Args[0], "vgn")
}

// isVgparentBlock reports whether s is "{ vgparent := vgn; _ = vgparent; ... }".
func isVgparentBlock(s ast.Stmt) bool {
	b, ok := s.(*ast.BlockStmt)
	if !ok || len(b.List) < 2 {
		return false
	}
	a, ok := b.List[0].(*ast.AssignStmt)
	return ok && a.Tok == token.DEFINE && len(a.Lhs) == 1 && isIdent(a.Lhs[0], "vgparent") && isIdent(a.Rhs[0], "vgn")
}

// isComponentBlock reports whether s is the block that places a component
// ("{ vgcompKey := ...; ... }").
func isComponentBlock(s ast.Stmt) bool {
	b, ok := s.(*ast.BlockStmt)
	if !ok || len(b.List) == 0 {
		return false
	}
	a, ok := b.List[0].(*ast.AssignStmt)
	return ok && a.Tok == token.DEFINE && isIdent(a.Lhs[0], "vgcompKey")
}

// isPropBlock reports whether s is
//
//	{
//		b, err := vjson.Marshal(v)
//		if err != nil {
//			panic(err)
//		}
//		vgn.Prop = append(vgn.Prop, vugu.VGProperty{Key: "k", JSONVal: vjson.RawMessage(b)})
//	}
func isPropBlock(s ast.Stmt) bool {
	b, ok := s.(*ast.BlockStmt)
	if !ok || len(b.List) != 3 {
		return false
	}
	m, ok := b.List[0].(*ast.AssignStmt)
	if !ok || len(m.Lhs) != 2 || !isIdent(m.Lhs[0], "b") || !isIdent(m.Lhs[1], "err") {
		return false
	}
	if c, ok := m.Rhs[0].(*ast.CallExpr); !ok || !isSel(c.Fun, "vjson", "Marshal") || len(c.Args) != 1 {
		return false
	}
	if _, ok := b.List[1].(*ast.IfStmt); !ok {
		return false
	}
	p, ok := b.List[2].(*ast.AssignStmt)
	if !ok || !isSel(p.Lhs[0], "vgn", "Prop") {
		return false
	}
	c, ok := p.Rhs[0].(*ast.CallExpr)
	if !ok || !isIdent(c.Fun, "append") || len(c.Args) != 2 {
		return false
	}
	lit, ok := c.Args[1].(*ast.CompositeLit)
	if !ok || !isSel(lit.Type, "vugu", "VGProperty") || len(lit.Elts) != 2 {
		return false
	}
	k, ok := lit.Elts[0].(*ast.KeyValueExpr)
	return ok && isIdent(k.Key, "Key")
}

// isHandler reports whether s is
// "vgn.DOMEventHandlerSpecList = append(vgn.DOMEventHandlerSpecList, vugu.DOMEventHandlerSpec{EventType: ..., Func: ...})".
func isHandler(s ast.Stmt) bool {
	a, ok := s.(*ast.AssignStmt)
	if !ok || len(a.Lhs) != 1 || !isSel(a.Lhs[0], "vgn", "DOMEventHandlerSpecList") {
		return false
	}
	c, ok := a.Rhs[0].(*ast.CallExpr)
	if !ok || !isIdent(c.Fun, "append") || len(c.Args) != 2 {
		return false
	}
	lit, ok := c.Args[1].(*ast.CompositeLit)
	if !ok || !isSel(lit.Type, "vugu", "DOMEventHandlerSpec") || len(lit.Elts) != 2 {
		return false
	}
	for _, e := range lit.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok || (!isIdent(kv.Key, "EventType") && !isIdent(kv.Key, "Func")) {
			return false
		}
	}
	return true
}

// isVgnCall reports whether s calls a method of vgn, vgparent or vgout, or one of the
// helpers (a statement that vgtrim wrote).
func isVgnCall(s *ast.ExprStmt) bool {
	c, ok := s.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	if sel, ok := c.Fun.(*ast.SelectorExpr); ok {
		return isIdent(sel.X, "vgn") || isIdent(sel.X, "vgparent") || isIdent(sel.X, "vgout")
	}
	return isIdent(c.Fun, "vgOn") || isIdent(c.Fun, "vgProp")
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func isSel(e ast.Expr, x, name string) bool {
	s, ok := e.(*ast.SelectorExpr)
	return ok && isIdent(s.X, x) && s.Sel.Name == name
}

func literal(e ast.Expr) string {
	if b, ok := e.(*ast.BasicLit); ok {
		return b.Value
	}
	return ""
}

func stringLit(e ast.Expr) (string, bool) {
	b, ok := e.(*ast.BasicLit)
	if !ok || b.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(b.Value)
	return s, err == nil
}

// unusedImports drops "var _ pkg.Name" lines and the imports they keep when nothing
// else in the file uses the package, and vugugen's comment above them when none is left.
func (t *trimmer) unusedImports(f *ast.File) {
	used := map[string]bool{}
	keepers := map[string]*ast.GenDecl{}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR && len(g.Specs) == 1 {
			v := g.Specs[0].(*ast.ValueSpec)
			if len(v.Names) == 1 && v.Names[0].Name == "_" && len(v.Values) == 0 {
				if sel, ok := v.Type.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok {
						keepers[id.Name] = g
						continue
					}
				}
			}
		}
		ast.Inspect(d, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok {
					used[id.Name] = true
				}
			}
			return true
		})
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.IMPORT || len(g.Specs) != 1 {
			continue
		}
		spec := g.Specs[0].(*ast.ImportSpec)
		path, _ := strconv.Unquote(spec.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if spec.Name != nil {
			name = spec.Name.Name
		}
		if k := keepers[name]; k != nil && !used[name] {
			t.replace(g, g, "")
			t.replace(k, k, "")
			delete(keepers, name)
		}
	}
	if len(keepers) == 0 {
		for _, c := range f.Comments {
			if strings.TrimSpace(c.Text()) == "'fix' unused imports" {
				t.replace(c, c, "")
			}
		}
	}
}

// Whitespace: a text node of white space only (a template's line break and indentation)
// draws nothing in HTML where it falls in the white space that CSS removes (white-space:
// normal or nowrap; the page's stylesheet makes no element pre): at the start or the end
// of a block's line, that is next to a block-level element or at the edge of a block
// container, or among the children of elements whose text is not drawn (table rows,
// select, SVG shapes). There vgtrim drops it; elsewhere (between inline elements, where
// it draws a space) it stays. A node that may or may not be there (vg-if, vg-for) counts
// as block-level only if what lies beyond it does too; a component counts as inline.

// blockTags are the elements that are block-level by default (HTML's rendering section).
var blockTags = set("address", "article", "aside", "blockquote", "caption", "dd", "details",
	"dialog", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1",
	"h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "legend", "li", "main", "nav",
	"ol", "p", "pre", "section", "summary", "table", "ul")

// containerTags are the block containers: at their edges white space is removed.
var containerTags = set("address", "article", "aside", "blockquote", "caption", "dd",
	"details", "dialog", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer",
	"form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "legend", "li", "main",
	"nav", "ol", "p", "section", "summary", "td", "th", "ul")

// hiddenTextTags are the elements whose text children of white space are never drawn.
var hiddenTextTags = set("table", "thead", "tbody", "tfoot", "tr", "colgroup", "select",
	"optgroup", "datalist", "svg", "g", "defs", "pattern", "marker", "clipPath", "mask",
	"symbol", "linearGradient", "radialGradient")

// keepTags are the elements inside which white space is kept as it is.
var keepTags = set("pre", "textarea", "script", "style", "text", "tspan", "title")

func set(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// whitespace drops the text nodes of white space that HTML would not draw, in lv and
// the levels under it.
func (t *trimmer) whitespace(lv *level) {
	parent := element(lv)
	for i, it := range lv.items {
		if it.sub != nil {
			t.whitespace(it.sub)
		}
		if it.kind != textItem || !isSpace(it.data) || keepTags[parent] {
			continue
		}
		if hiddenTextTags[parent] || blockSide(lv, i, -1) || blockSide(lv, i, +1) {
			t.edits[it.edit].text = ""
		}
	}
}

// element is the tag of the element whose children lv's nodes are ("" for a Build's
// top level).
func element(lv *level) string {
	for lv.tag == "" && lv.up != nil {
		lv = lv.up
	}
	return lv.tag
}

func isSpace(s string) bool {
	return s != "" && strings.Trim(s, " \t\n\r") == ""
}

// blockSide reports whether the node next to lv's item i on side dir (-1 before, +1
// after) is surely block-level, or the edge of a block container.
func blockSide(lv *level, i, dir int) bool {
	all, through := scan(lv, i+dir, dir)
	if !all {
		return false
	}
	if !through {
		return true
	}
	if lv.up == nil {
		return containerTags[lv.tag]
	}
	if lv.in.kind == loopItem {
		// Another time round the loop may come next.
		start := 0
		if dir < 0 {
			start = len(lv.items) - 1
		}
		if all, _ := scan(lv, start, dir); !all {
			return false
		}
	}
	return blockSide(lv.up, slices.Index(lv.up.items, lv.in), dir)
}

// scan looks through lv's items from j on, in direction dir, for the nearest node: all
// reports whether every node that can be the nearest is block-level, through whether
// there may be none (a vg-if, a vg-for or nothing to the end).
func scan(lv *level, j, dir int) (all, through bool) {
	for ; j >= 0 && j < len(lv.items); j += dir {
		it := lv.items[j]
		switch it.kind {
		case textItem:
			if isSpace(it.data) {
				continue
			}
			return false, false
		case elemItem:
			return blockTags[it.data], false
		case opaqueItem:
			return false, false
		default: // condItem, loopItem, transparent
			start := 0
			if dir < 0 {
				start = len(it.sub.items) - 1
			}
			all, through := scan(it.sub, start, dir)
			if !all {
				return false, false
			}
			if !through && it.kind == transparent {
				return true, false
			}
			// Block-level when there; a vg-if or vg-for may not be: look beyond too.
		}
	}
	return true, true
}
