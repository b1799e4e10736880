package ops

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"

	"pipeplan/core/request"
	"pipeplan/core/wire"
)

// views holds the page's last results whole, by handle, so that the page receives each
// cut to a spec.View and asks for other windows of it (spec.Cut).
type views struct {
	mu   sync.Mutex
	next int
	held []heldResult // the most recent last
}

type heldResult struct {
	handle int
	res    *wire.Result
}

// keepViews is how many results the planner holds for the page: the plan shown, the
// optimum beside a manual split, and one being replaced.
const keepViews = 4

// Views holds the page's results.
var Views = &views{}

// view plans a request (as plan does), holds the result and answers its View of the
// window (a spec.Window's JSON; "" is the first rows), or an error object.
func (v *views) view(requestJSON, windowJSON string) string {
	w, err := readWindow(windowJSON)
	if err != nil {
		return mustJSON(apiError{Error: err.Error()})
	}
	r, err := request.Decode([]byte(requestJSON))
	if err != nil {
		return mustJSON(errorOf(err))
	}
	res, err := request.Run(context.Background(), r)
	if err != nil {
		return mustJSON(errorOf(err))
	}
	return viewJSON(res, v.hold(res), w)
}

// hold holds a result and returns its handle.
func (v *views) hold(res *wire.Result) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.next++
	v.held = append(v.held, heldResult{v.next, res})
	if len(v.held) > keepViews {
		v.held = v.held[len(v.held)-keepViews:]
	}
	return v.next
}

func viewJSON(res *wire.Result, handle int, w wire.Window) string {
	cut := wire.Cut(res, w)
	cut.Handle = handle
	b, err := json.Marshal(cut)
	if err != nil {
		return mustJSON(apiError{Error: "internal error: " + err.Error()})
	}
	return string(b)
}

// open holds a stored plan's result (a share server's: its request and result, as JSON)
// and answers {request, view}: the request with a large model document kept in the
// browser's storage and referenced (Store.reference), and the result's View.
func (v *views) open(requestJSON, resultJSON string) string {
	r, err := request.Decode([]byte(requestJSON))
	if err != nil {
		return mustJSON(errorOf(err))
	}
	res := new(wire.Result)
	if err := json.Unmarshal([]byte(resultJSON), res); err != nil {
		return mustJSON(apiError{Error: "the stored result does not read: " + err.Error()})
	}
	r.Model.Document = Models.reference(r.Model.Name, r.Model.Document)
	h := v.hold(res)
	b, err := json.Marshal(struct {
		Request *wire.Request   `json:"request"`
		View    json.RawMessage `json:"view"`
	}{r, json.RawMessage(viewJSON(res, h, wire.Window{}))})
	if err != nil {
		return mustJSON(apiError{Error: "internal error: " + err.Error()})
	}
	return string(b)
}

// window answers another window of a held result, or an error object (errGone when the
// result is no longer held: the page plans again).
func (v *views) window(handleText, windowJSON string) string {
	res, h, err := v.find(handleText)
	if err != nil {
		return mustJSON(apiError{Error: err.Error()})
	}
	w, err := readWindow(windowJSON)
	if err != nil {
		return mustJSON(apiError{Error: err.Error()})
	}
	return viewJSON(res, h, w)
}

// result answers a held result whole, as plan does.
func (v *views) result(handleText string) string {
	res, _, err := v.find(handleText)
	if err != nil {
		return mustJSON(apiError{Error: err.Error()})
	}
	b, err := json.Marshal(res)
	if err != nil {
		return mustJSON(apiError{Error: "internal error: " + err.Error()})
	}
	return string(b)
}

// errGone starts the error of a window of a result the planner no longer holds.
const errGone = "the result is no longer held by the planner"

func (v *views) find(handleText string) (*wire.Result, int, error) {
	h, err := strconv.Atoi(handleText)
	if err != nil {
		return nil, 0, errorString("handle: " + err.Error())
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, x := range v.held {
		if x.handle == h {
			return x.res, h, nil
		}
	}
	return nil, 0, errorString(errGone + " (handle " + handleText + ")")
}

type errorString string

func (e errorString) Error() string { return string(e) }

func readWindow(s string) (wire.Window, error) {
	var w wire.Window
	if s == "" {
		return w, nil
	}
	if err := json.Unmarshal([]byte(s), &w); err != nil {
		return w, errorString("window: " + err.Error())
	}
	return w, nil
}
