//go:build js && wasm

package main

import (
	"fmt"
	"syscall/js"

	"pipeplan/core/examples"
	"pipeplan/core/profiler"
)

// exposeAPI sets window.pipeplan (doc.go and docs/js-api.md describe it): the calls that
// plan go to the planner worker (c) and return Promises.
func exposeAPI(c *client) {
	e := examples.Default()
	call := func(op string, two bool, conv func(string) any) js.Func {
		return js.FuncOf(func(_ js.Value, args []js.Value) any { return c.promise(op, two, conv, args) })
	}
	text := func(s string) any { return s }
	js.Global().Set("pipeplan", js.ValueOf(map[string]any{
		"plan":           call("plan", false, parsed),
		"planJSON":       call("planJSON", false, text),
		"estimate":       call("estimate", false, parsed),
		"search":         js.FuncOf(func(_ js.Value, args []js.Value) any { return c.searchJS(args) }),
		"export":         call("export", true, parsed),
		"exports":        call("exports", true, parsed),
		"calibrate":      js.FuncOf(func(_ js.Value, args []js.Value) any { return c.calibrateJS(args) }),
		"profiler":       js.FuncOf(func(js.Value, []js.Value) any { return parsed(profilerJSON()) }),
		"exampleRequest": js.FuncOf(func(js.Value, []js.Value) any { return parsed(mustJSON(exampleRequest())) }),
		"exampleModel":   js.FuncOf(func(js.Value, []js.Value) any { return string(e.ModelJSON()) }),
	}))
}

// promise posts op on the request in args[0] (and the options in args[1], when two) to
// the planner and returns a Promise of its answer, converted by conv. A call the page
// refuses (no request, a number for one) resolves to an error object at once, as the
// planner's error objects do; a planner that failed to load or stopped rejects.
func (c *client) promise(op string, two bool, conv func(string) any, args []js.Value) any {
	a, bad := argsOf(args, two)
	if bad != "" {
		return js.Global().Get("Promise").Call("resolve", parsed(bad))
	}
	var resolve, reject js.Value
	executor := js.FuncOf(func(_ js.Value, p []js.Value) any { resolve, reject = p[0], p[1]; return nil })
	promise := js.Global().Get("Promise").New(executor)
	executor.Release()
	c.start(op, a, nil, func(out string, err error) {
		if err != nil {
			reject.Invoke(js.Global().Get("Error").New(err.Error()))
			return
		}
		resolve.Invoke(conv(out))
	})
	return promise
}

// calibrateJS is pipeplan.calibrate(request, profileText): a Promise of the fit of the
// request's architecture to the measured profile (request.Calibration), or of an error
// object naming the field. The profile is the text of a native model file (an object is
// taken as its JSON).
func (c *client) calibrateJS(args []js.Value) any {
	if len(args) < 2 || (typeOf(args[1]) != "string" && (typeOf(args[1]) != "object" || args[1].IsNull())) {
		bad := mustJSON(apiError{Error: "profile: give the measured profile, the text of a native model file (as the profiler script writes it)"})
		return js.Global().Get("Promise").Call("resolve", parsed(bad))
	}
	return c.promise("calibrate", true, parsed, args)
}

// profilerJSON is pipeplan.profiler's JSON: the profiler script (core/profiler's text),
// to offer for download.
func profilerJSON() string {
	return mustJSON(struct {
		Filename string `json:"filename"`
		Text     string `json:"text"`
	}{profiler.FileName, profiler.Script})
}

// argsOf takes an API call's request (args[0]) and, when two, its options (args[1]),
// each a JSON string as it is or an object as it is: an object goes to the planner worker
// by postMessage, whose structured clone keeps shared sub-objects shared and costs the
// page's thread one native copy; the worker checks it and writes its JSON
// (wasm/planner/worker.js: what JSON cannot carry, cycles, and the values a DAG of
// shared objects would repeat, each distinct object walked once). bad is an error
// object for a call refused here: no request, or a value that is neither.
func argsOf(args []js.Value, two bool) (a []any, bad string) {
	defer recovered(&bad)
	if len(args) == 0 || args[0].IsUndefined() || args[0].IsNull() {
		return nil, mustJSON(apiError{Error: errNoRequest.Error()})
	}
	switch t := typeOf(args[0]); t {
	case "string":
		a = append(a, args[0].String())
	case "object":
		a = append(a, args[0])
	default:
		return nil, mustJSON(apiError{Error: fmt.Sprintf("the request is a %s: %v", t, errNoRequest)})
	}
	if !two {
		return a, ""
	}
	if len(args) < 2 || args[1].IsUndefined() || args[1].IsNull() {
		return append(a, ""), "" // the defaults
	}
	switch t := typeOf(args[1]); t {
	case "string":
		a = append(a, args[1].String())
	case "object":
		a = append(a, args[1])
	default:
		return nil, mustJSON(apiError{Error: fmt.Sprintf("the options are a %s: give an object, or its JSON text", t)})
	}
	return a, ""
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

// parsed returns JSON text as a JS object.
func parsed(text string) any { return js.Global().Get("JSON").Call("parse", text) }
