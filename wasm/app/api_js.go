//go:build js && wasm

package main

import (
	"fmt"
	"math"
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
// refuses (a value JSON cannot carry) resolves to an error object at once, as the
// planner's error objects do; a planner that failed to load rejects.
func (c *client) promise(op string, two bool, conv func(string) any, args []js.Value) any {
	var req, opts string
	var bad string
	if two {
		bad = callJSON2(func(r, o string) string { req, opts = r, o; return "" }, args)
	} else {
		bad = callJSON(func(r string) string { req = r; return "" }, args)
	}
	if bad != "" {
		return js.Global().Get("Promise").Call("resolve", parsed(bad))
	}
	a := []string{req}
	if two {
		a = append(a, opts)
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
