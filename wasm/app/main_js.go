//go:build js && wasm

package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"syscall/js"

	"pipeplan/core/examples"
	"pipeplan/core/model"
	"pipeplan/core/request"
)

// storageKey is the localStorage key of the stage count.
const storageKey = "pipeplan.stages"

// page holds the app's DOM elements and what they show.
type page struct {
	doc     js.Value
	example examples.Example
	model   *model.Model

	input, summary, alert, table, tbody js.Value
}

func main() {
	e := examples.Default()
	m, err := e.Model()
	if err != nil {
		panic(err) // the embedded example is tested; this cannot happen
	}
	js.Global().Set("pipeplan", js.ValueOf(map[string]any{
		"plan":           js.FuncOf(func(_ js.Value, args []js.Value) any { return parsed(callJSON(planJSON, args)) }),
		"planJSON":       js.FuncOf(func(_ js.Value, args []js.Value) any { return callJSON(planJSON, args) }),
		"estimate":       js.FuncOf(func(_ js.Value, args []js.Value) any { return parsed(callJSON(estimateJSON, args)) }),
		"exampleRequest": js.FuncOf(func(js.Value, []js.Value) any { return parsed(mustJSON(exampleRequest())) }),
		"exampleModel":   js.FuncOf(func(js.Value, []js.Value) any { return string(e.ModelJSON()) }),
		"export":         js.FuncOf(func(_ js.Value, args []js.Value) any { return parsed(callJSON2(exportJSON, args)) }),
		"exports":        js.FuncOf(func(_ js.Value, args []js.Value) any { return parsed(callJSON2(exportsJSON, args)) }),
		"profiler":       js.FuncOf(func(js.Value, []js.Value) any { return parsed(profilerJSON()) }),
		"search":         js.FuncOf(searchJS),
	}))
	p := &page{doc: js.Global().Get("document"), example: e, model: m}
	p.mount()
	stages := initialStages(queryStages(), storageGet(storageKey), e.Stages)
	p.input.Set("value", stages)
	p.show(stages)
	select {} // keep the callbacks alive
}

// callJSON runs an API function on the request in args[0]: a JSON string as it is, an
// object through JSON.stringify with a replacer that refuses what JSON cannot carry (NaN,
// Infinity, BigInt). A cyclic object, a throwing getter, or any panic comes back as an
// error object: the Go program never exits, so the next call works.
func callJSON(f func(string) string, args []js.Value) (out string) {
	defer recovered(&out)
	if len(args) == 0 || args[0].IsUndefined() || args[0].IsNull() {
		return mustJSON(apiError{Error: errNoRequest.Error()})
	}
	switch t := typeOf(args[0]); t {
	case "string":
		return f(args[0].String())
	case "object":
	default:
		return mustJSON(apiError{Error: fmt.Sprintf("the request is a %s: %v", t, errNoRequest)})
	}
	text, err := stringify(args[0])
	if err != nil {
		return mustJSON(apiError{Error: err.Error()})
	}
	return f(text)
}

// callJSON2 runs an API function of a request and options (args[0], args[1]), each an
// object or its JSON text; absent options are the defaults.
func callJSON2(f func(request, options string) string, args []js.Value) (out string) {
	defer recovered(&out)
	var opts string
	if len(args) > 1 && !args[1].IsUndefined() && !args[1].IsNull() {
		switch t := typeOf(args[1]); t {
		case "string":
			opts = args[1].String()
		case "object":
			text, err := stringify(args[1])
			if err != nil {
				return mustJSON(apiError{Error: "options: " + err.Error()})
			}
			opts = text
		default:
			return mustJSON(apiError{Error: fmt.Sprintf("the options are a %s: give an object, or its JSON text", t)})
		}
	}
	return callJSON(func(req string) string { return f(req, opts) }, args[:min(len(args), 1)])
}

// maxDepth bounds the nesting of a request object: deeper is surely a cycle.
const maxDepth = 64

// check walks a request object for what JSON cannot carry: NaN and Infinity (JSON.stringify
// would write null, read back as "the default"), BigInt (it would throw), functions and
// symbols (it would drop them), and cycles. Errors name the path.
func check(v js.Value, path string, depth int) error {
	name := path
	if name == "" {
		name = "the request"
	}
	if depth > maxDepth {
		return fmt.Errorf("%s: nests deeper than %d levels (a cyclic object?)", name, maxDepth)
	}
	switch typeOf(v) {
	case "number":
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%s: must be a finite number, got %v", name, f)
		}
	case "bigint":
		return fmt.Errorf("%s: must be a number, got a BigInt", name)
	case "function", "symbol":
		return fmt.Errorf("%s: must be a JSON value, got a %s", name, typeOf(v))
	case "object":
		if v.IsNull() {
			return nil
		}
		if js.Global().Get("Array").Call("isArray", v).Bool() {
			for i := range v.Length() {
				if err := check(v.Index(i), fmt.Sprintf("%s[%d]", path, i), depth+1); err != nil {
					return err
				}
			}
			return nil
		}
		keys := js.Global().Get("Object").Call("keys", v)
		for i := range keys.Length() {
			k := keys.Index(i).String()
			p := k
			if path != "" {
				p = path + "." + k
			}
			if err := check(v.Get(k), p, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// typeOf is JavaScript's typeof; js.Value.Type panics on BigInt.
func typeOf(v js.Value) (t string) {
	defer func() {
		if recover() != nil {
			t = "bigint"
		}
	}()
	switch v.Type() {
	case js.TypeUndefined:
		return "undefined"
	case js.TypeNull:
		return "object"
	case js.TypeBoolean:
		return "boolean"
	case js.TypeNumber:
		return "number"
	case js.TypeString:
		return "string"
	case js.TypeSymbol:
		return "symbol"
	case js.TypeFunction:
		return "function"
	}
	return "object"
}

// stringify is JSON.stringify(v) after check, with any JS exception (a throwing getter,
// toJSON) as an error.
func stringify(v js.Value) (text string, err error) {
	if err := check(v, "", 0); err != nil {
		return "", err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the request cannot be read as JSON: %v", r)
		}
	}()
	return js.Global().Get("JSON").Call("stringify", v).String(), nil
}

// parsed returns JSON text as a JS object.
func parsed(text string) any { return js.Global().Get("JSON").Call("parse", text) }

// el creates an element with attributes and text.
func (p *page) el(tag string, attrs map[string]string, text string) js.Value {
	e := p.doc.Call("createElement", tag)
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		e.Call("setAttribute", k, attrs[k])
	}
	if text != "" {
		e.Set("textContent", text)
	}
	return e
}

// mount replaces the loading message in #app with the controls and an empty table.
func (p *page) mount() {
	app := p.doc.Call("getElementById", "app")
	title := p.el("h2", nil, "Example: "+p.example.Title)
	controls := p.el("div", map[string]string{"class": "controls"}, "")
	controls.Call("append", p.el("label", map[string]string{"for": "stages"}, "Pipeline stages"))
	p.input = p.el("input", map[string]string{
		"id": "stages", "type": "number", "min": "1", "max": strconv.Itoa(len(p.model.Layers)), "step": "1", "inputmode": "numeric",
	}, "")
	controls.Call("append", p.input, p.el("span", map[string]string{"class": "hint"}, "one "+p.example.Device+" device per stage"))
	p.summary = p.el("p", map[string]string{"id": "summary"}, "")
	p.alert = p.el("p", map[string]string{"id": "error", "role": "alert", "hidden": ""}, "")
	p.table = p.el("table", map[string]string{"id": "plan"}, "")
	head := p.el("tr", nil, "")
	for i, h := range viewHeader {
		attrs := map[string]string{"scope": "col"}
		if i >= 4 {
			attrs["class"] = "num"
		}
		head.Call("append", p.el("th", attrs, h))
	}
	thead := p.el("thead", nil, "")
	thead.Call("append", head)
	p.tbody = p.el("tbody", nil, "")
	p.table.Call("append", thead, p.tbody)
	app.Call("replaceChildren", title, controls, p.summary, p.alert, p.table)

	p.input.Call("addEventListener", "input", js.FuncOf(func(js.Value, []js.Value) any {
		text := p.input.Get("value").String()
		if strings.TrimSpace(text) == "" {
			return nil // a person clearing the box to type another number
		}
		n, err := parseStages(text)
		if err != nil {
			p.fail(err)
			return nil
		}
		setQueryStages(n)
		storageSet(storageKey, strconv.Itoa(n))
		p.show(n)
		return nil
	}))
}

// show plans the example on n stages and draws the result.
func (p *page) show(n int) {
	r := exampleRequest()
	r.Cluster.Count = n
	res, err := request.Run(context.Background(), r)
	if err != nil {
		p.fail(err)
		return
	}
	if res.Plan == nil {
		p.fail(errors.New(res.Diagnostics[len(res.Diagnostics)-1].Message))
		return
	}
	v := newPlanView(p.model, p.example.Device, res.Plan)
	p.alert.Set("hidden", true)
	p.summary.Set("textContent", v.Summary)
	p.table.Set("hidden", false)
	p.table.Call("setAttribute", "data-boundaries", v.Boundaries)
	rows := make([]any, 0, len(v.Rows))
	for _, r := range v.Rows {
		tr := p.el("tr", nil, "")
		if r.Bottleneck {
			tr.Call("setAttribute", "class", "bottleneck")
			tr.Call("setAttribute", "title", "the bottleneck: the slowest stage")
		}
		for i, cell := range r.Cells {
			attrs := map[string]string{}
			if i >= 4 {
				attrs["class"] = "num"
			}
			td := p.el("td", attrs, cell)
			if i == len(r.Cells)-1 {
				meter := p.el("span", map[string]string{"class": "meter", "aria-hidden": "true"}, "")
				bar := p.el("span", map[string]string{"class": "bar"}, "")
				bar.Get("style").Set("width", strconv.FormatFloat(100*min(r.UsedFraction, 1), 'f', 1, 64)+"%")
				meter.Call("append", bar)
				td.Set("textContent", "")
				td.Call("append", meter, p.el("span", map[string]string{"class": "pct"}, cell))
			}
			tr.Call("append", td)
		}
		rows = append(rows, tr)
	}
	p.tbody.Call("replaceChildren", rows...)
}

// fail shows an error in place of the plan.
func (p *page) fail(err error) {
	p.alert.Set("textContent", err.Error())
	p.alert.Set("hidden", false)
	p.summary.Set("textContent", "")
	p.table.Set("hidden", true)
	p.table.Call("setAttribute", "data-boundaries", "")
	p.tbody.Call("replaceChildren")
}

// queryStages returns the URL's ?stages= value, or "".
func queryStages() string {
	v := url().Get("searchParams").Call("get", "stages")
	if v.IsNull() {
		return ""
	}
	return v.String()
}

// setQueryStages puts the stage count in the URL without adding a history entry.
func setQueryStages(n int) {
	u := url()
	u.Get("searchParams").Call("set", "stages", strconv.Itoa(n))
	js.Global().Get("history").Call("replaceState", nil, "", u.Call("toString"))
}

func url() js.Value {
	return js.Global().Get("URL").New(js.Global().Get("location").Get("href"))
}

// storageGet reads localStorage, which may be missing or refuse (private modes): "".
func storageGet(key string) (v string) {
	defer func() {
		if recover() != nil {
			v = ""
		}
	}()
	s := js.Global().Get("localStorage").Call("getItem", key)
	if s.IsNull() {
		return ""
	}
	return s.String()
}

// storageSet writes localStorage, ignoring a refusal: the URL still keeps the state.
func storageSet(key, value string) {
	defer func() { recover() }()
	js.Global().Get("localStorage").Call("setItem", key, value)
}
