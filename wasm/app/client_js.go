//go:build js && wasm

package main

import (
	"fmt"
	"syscall/js"
)

// startPlanner starts the planner worker (planner.js, which runs planner.wasm) and
// returns its client. A worker that stops (out of memory) is terminated and replaced by a
// new one at the next call.
func startPlanner() *client {
	var w js.Value
	var c *client
	c = newClient(func(id int, op string, args []any) {
		defer func() {
			// postMessage refuses what it cannot clone (a function, a symbol): the call
			// answers an error object, as a bad request does.
			if v := recover(); v != nil {
				c.receive(answer{ID: id, HasResult: true, Result: mustJSON(apiError{Error: fmt.Sprintf("the request cannot be sent to the planner: it holds what JSON cannot carry (a function or a symbol): %v", v)})})
			}
		}()
		w.Call("postMessage", map[string]any{"id": id, "op": op, "args": args})
	})
	var onMessage, onError js.Func
	c.restart = func() {
		w.Call("terminate")
		w = newWorker(onMessage, onError)
	}
	// index.html starts the worker before main.wasm loads (window.pipeplanPlannerWorker),
	// holding what it says until now; a page without one gets its worker here.
	held := js.Undefined()
	if pre := js.Global().Get("pipeplanPlannerWorker"); pre.Type() == js.TypeObject {
		js.Global().Delete("pipeplanPlannerWorker")
		w, held = pre.Get("worker"), pre.Get("held")
	} else {
		w = js.Global().Get("Worker").New(plannerURL())
	}
	onMessage = js.FuncOf(func(_ js.Value, v []js.Value) any {
		d := v[0].Get("data")
		a := answer{ID: d.Get("id").Int(), Abort: d.Get("abort").Truthy()}
		if r := d.Get("result"); r.Type() == js.TypeString {
			a.Result, a.HasResult = r.String(), true
			// The longest answer (bytes of JSON) the page's thread has read, as
			// window.pipeplanLargestAnswer: what a test bounds (setting it to 0 first).
			if n, was := len(a.Result), js.Global().Get("pipeplanLargestAnswer"); was.Type() != js.TypeNumber || n > was.Int() {
				js.Global().Set("pipeplanLargestAnswer", n)
			}
		}
		if p := d.Get("progress"); p.Type() == js.TypeString {
			a.Progress, a.HasProgress = p.String(), true
		}
		if e := d.Get("error"); e.Type() == js.TypeString {
			a.Error = e.String()
		}
		if f := d.Get("fatal"); f.Type() == js.TypeString {
			a.Fatal = f.String()
		}
		c.receive(a)
		return nil
	})
	onError = js.FuncOf(func(_ js.Value, v []js.Value) any {
		msg := "the planner worker failed"
		if m := v[0].Get("message"); m.Type() == js.TypeString {
			msg += ": " + m.String()
		}
		c.receive(answer{Fatal: msg})
		return nil
	})
	w.Set("onmessage", onMessage)
	w.Set("onerror", onError)
	if held.Type() == js.TypeObject {
		for i := range held.Length() {
			e := held.Index(i)
			if e.Get("type").String() == "error" {
				onError.Invoke(e)
			} else {
				onMessage.Invoke(e)
			}
		}
	}
	return c
}

// newWorker starts a planner worker with these handlers.
func newWorker(onMessage, onError js.Func) js.Value {
	w := js.Global().Get("Worker").New(plannerURL())
	w.Set("onmessage", onMessage)
	w.Set("onerror", onError)
	return w
}

// plannerURL is planner.js beside wasm_exec.js (the page's script element says where),
// or window.pipeplanPlannerURL when a page sets it.
func plannerURL() string {
	if u := js.Global().Get("pipeplanPlannerURL"); u.Type() == js.TypeString {
		return u.String()
	}
	base := js.Global().Get("location").Get("href")
	if s := js.Global().Get("document").Call("querySelector", `script[src*="wasm_exec.js"]`); s.Truthy() {
		base = s.Get("src")
	}
	return js.Global().Get("URL").New("planner.js", base).Get("href").String()
}
