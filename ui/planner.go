package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"pipeplan/core/model"
	"pipeplan/core/wire"
)

// Planner runs one operation of the planner on its arguments (JSON texts) and returns
// the answer (JSON text): wasm/planner/ops.Do, which in the browser runs in a Web Worker
// (planner.wasm), so that the page's program does not link the planner. The page uses
// "view" [request, window] (a plan, cut to a spec.View; the planner holds the whole),
// "window" [handle, window] and "result" [handle] (another window, the whole result),
// "open" [request, result] (a share server's plan), "expand" [request] (a stored model
// put back, to share), "exports" [request], "search" [query] (a search, with its
// progress) and "candidate" [query, candidate]; Host.ImportFile sends files ("import").
// Closing stop cancels the call (nil: it runs to its
// end). Bad input comes back as an error object ({error, fields}); the error is only a
// cancelled search's (context.Canceled, with the answer found so far) or a planner that
// failed to load. It blocks: call it from Host.Background.
//
// stop is a channel, not a context.Context: the page makes no contexts. A cancellable
// context (WithCancel, WithTimeout) costs main.wasm about 200 KB, most of it because a
// context's Deadline returns a time.Time: a context in an interface makes the linker keep
// every method of time.Time that some interface might call (Format, Parse, MarshalJSON).
type Planner func(stop <-chan struct{}, op string, args []string, progress func(string)) (string, error)

// plannerError is the planner's error object as a Go error: its message, and its bad
// fields (model.AsFieldErrors finds them).
type plannerError struct {
	msg    string
	fields model.Errors
	noPlan bool
}

func (e *plannerError) Error() string { return e.msg }

func (e *plannerError) Unwrap() error {
	if len(e.fields) == 0 {
		return nil
	}
	return e.fields
}

// errorObject reads the planner's error object from an answer; nil when the answer is
// not one. The error object's first key is "error" (wasm/planner/ops' apiError), which
// no result's is: an answer is only decoded here when it starts so, for a result of
// megabytes must not be read twice on the page's only thread.
func errorObject(out string) *plannerError {
	if !strings.HasPrefix(strings.TrimLeft(strings.TrimPrefix(strings.TrimLeft(out, " \t\r\n"), "{"), " \t\r\n"), `"error"`) {
		return nil
	}
	var o struct {
		Error  *string `json:"error"`
		Fields []struct {
			Path, Reason string
		} `json:"fields"`
		NoPlan bool `json:"no_plan"`
	}
	if json.Unmarshal([]byte(out), &o) != nil || o.Error == nil {
		return nil
	}
	e := &plannerError{msg: *o.Error, noPlan: o.NoPlan}
	for _, f := range o.Fields {
		e.fields = append(e.fields, &model.FieldError{Path: f.Path, Reason: f.Reason})
	}
	return e
}

// call runs op on args with the planner and decodes its answer into v; an error object
// comes back as a *plannerError. Closing stop cancels it (nil: never).
func (a *App) call(stop <-chan struct{}, op string, v any, args ...any) error {
	texts := make([]string, len(args))
	for i, x := range args {
		if s, ok := x.(string); ok {
			texts[i] = s
			continue
		}
		b, err := json.Marshal(x)
		if err != nil {
			return err
		}
		texts[i] = string(b)
	}
	if a.Planner == nil {
		return errors.New("no planner")
	}
	out, err := a.Planner(stop, op, texts, nil)
	if err != nil {
		return err
	}
	if e := errorObject(out); e != nil {
		return e
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		return fmt.Errorf("the planner's answer does not read: %v", err)
	}
	return nil
}

// plan plans a request with the planner, which holds the result and answers it cut to a
// View of window w (spec.Cut): what the page decodes and draws is bounded whatever the
// size of the plan.
func (a *App) plan(r *wire.Request, w wire.Window) (*wire.View, error) {
	v := new(wire.View)
	if err := a.call(nil, "view", v, r, w); err != nil {
		return nil, err
	}
	if v.Result == nil {
		return nil, errors.New("the planner's answer has no result")
	}
	return v, nil
}
