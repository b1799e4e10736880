//go:build js && wasm

package main

import (
	"context"
	"fmt"
	"syscall/js"
)

// searchJS is window.pipeplan.search(query, onProgress, options): it returns a Promise of
// the search's answer (docs/search.md). The search runs in the planner worker, so the
// page keeps drawing and answering while it runs. The promise has a cancel() method, and
// options.signal may be an AbortSignal: either stops the search, and the promise rejects
// with a DOMException named AbortError. A bad query resolves to an error object, as
// pipeplan.plan's does. onProgress, when a function, receives {done, total, evaluated,
// best} objects as the search goes.
func (c *client) searchJS(args []js.Value) any {
	query, bad := argsOf(args, false)
	if bad != "" {
		return js.Global().Get("Promise").Call("resolve", parsed(bad))
	}
	var onProgress, signal js.Value
	if len(args) > 1 && args[1].Type() == js.TypeFunction {
		onProgress = args[1]
	}
	if len(args) > 2 && args[2].Type() == js.TypeObject {
		if s := args[2].Get("signal"); s.Type() == js.TypeObject {
			signal = s
		}
	}
	var resolve, reject js.Value
	executor := js.FuncOf(func(_ js.Value, a []js.Value) any { resolve, reject = a[0], a[1]; return nil })
	promise := js.Global().Get("Promise").New(executor)
	executor.Release()
	var progress func(string)
	if !onProgress.IsUndefined() {
		progress = func(p string) { invokeQuietly(onProgress, parsed(p)) }
	}
	var id int
	var cancelFunc js.Func
	done := func(out string, err error) {
		promise.Set("cancel", js.FuncOf(func(js.Value, []js.Value) any { return nil }))
		if !signal.IsUndefined() {
			signal.Call("removeEventListener", "abort", cancelFunc)
		}
		cancelFunc.Release()
		switch {
		case err == context.Canceled:
			reject.Invoke(abortError())
		case err != nil:
			reject.Invoke(js.Global().Get("Error").New(err.Error()))
		default:
			resolve.Invoke(parsed(out))
		}
	}
	cancelFunc = js.FuncOf(func(js.Value, []js.Value) any { c.cancel(id); return nil })
	promise.Set("cancel", cancelFunc)
	id = c.start("search", query, progress, done)
	if !signal.IsUndefined() {
		if signal.Get("aborted").Truthy() {
			c.cancel(id)
		}
		signal.Call("addEventListener", "abort", cancelFunc)
	}
	return promise
}

// invokeQuietly calls a JS callback; an exception it throws is logged, not fatal.
func invokeQuietly(f js.Value, args ...any) {
	defer func() {
		if r := recover(); r != nil {
			js.Global().Get("console").Call("error", fmt.Sprintf("pipeplan.search: onProgress threw: %v", r))
		}
	}()
	f.Invoke(args...)
}

// abortError is what a cancelled search rejects with: a DOMException named AbortError,
// as fetch rejects when its signal aborts.
func abortError() js.Value {
	if d := js.Global().Get("DOMException"); d.Type() == js.TypeFunction {
		return d.New("the search was cancelled", "AbortError")
	}
	e := js.Global().Get("Error").New("the search was cancelled")
	e.Set("name", "AbortError")
	return e
}
