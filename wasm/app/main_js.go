//go:build js && wasm

package main

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"syscall/js"

	"pipeplan/core/examples"
	"pipeplan/core/model"
	"pipeplan/core/plan"
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
		"plan":          js.FuncOf(jsPlan),
		"exampleModel":  js.FuncOf(func(js.Value, []js.Value) any { return string(e.ModelJSON()) }),
		"presetCluster": js.FuncOf(jsPresetCluster),
	}))
	p := &page{doc: js.Global().Get("document"), example: e, model: m}
	p.mount()
	stages := initialStages(queryStages(), storageGet(storageKey), e.Stages)
	p.input.Set("value", stages)
	p.show(stages)
	select {} // keep the callbacks alive
}

// jsPlan is pipeplan.plan(model, cluster, options).
func jsPlan(_ js.Value, args []js.Value) any {
	in := make([]string, 3)
	for i := range min(len(args), 3) {
		in[i] = jsonArg(args[i])
	}
	return planJSON(in[0], in[1], in[2])
}

// jsPresetCluster is pipeplan.presetCluster(device, stages).
func jsPresetCluster(_ js.Value, args []js.Value) any {
	if len(args) != 2 || args[0].Type() != js.TypeString || args[1].Type() != js.TypeNumber {
		return mustJSON(apiError{Error: "presetCluster(device, stages): give a device name and a number"})
	}
	c, err := examples.Example{Device: args[0].String()}.Cluster(args[1].Int())
	if err != nil {
		return mustJSON(apiError{Error: err.Error()})
	}
	return mustJSON(c)
}

// jsonArg turns an argument into JSON text: strings as they are, undefined and null as
// empty, anything else through JSON.stringify.
func jsonArg(v js.Value) string {
	switch v.Type() {
	case js.TypeString:
		return v.String()
	case js.TypeUndefined, js.TypeNull:
		return ""
	}
	return js.Global().Get("JSON").Call("stringify", v).String()
}

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
	c, err := p.example.Cluster(n)
	if err != nil {
		p.fail(err)
		return
	}
	pl, err := plan.Make(p.model, c, plan.Options{})
	if err != nil {
		p.fail(err)
		return
	}
	v := newPlanView(p.model, p.example.Device, pl)
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
