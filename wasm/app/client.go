package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
)

// client is the page's side of the planner worker (wasm/planner, planner.wasm): it
// numbers the calls, posts them to the worker, and routes the worker's answers (results,
// a search's progress, errors) to their callers. It is plain Go: client_js.go connects it
// to a Web Worker, the tests to wasm/planner/ops directly.
type client struct {
	// post sends a message to the worker: op on args (JSON texts, or in the browser
	// objects the worker turns into JSON), or op "cancel" to stop the call id.
	post func(id int, op string, args []any)
	// restart replaces a worker that stopped with a new one (client_js.go); nil: a
	// stopped worker stays stopped and every later call fails with why.
	restart func()

	mu     sync.Mutex
	next   int
	calls  map[int]*call
	broken error // why the worker is gone, once it is
	// dead: the worker stopped; the next call starts a new one (with restart).
	dead bool
}

// call is a call in flight: where its progress and its answer go.
type call struct {
	progress func(string)
	done     func(result string, err error)
}

// answer is a message from the worker: {id, result}, {id, progress}, {id, error, abort}
// (with the result found so far, if any), or {fatal} when the planner failed to load or
// stopped (out of memory, a fatal error).
type answer struct {
	ID          int
	Result      string
	HasResult   bool
	Progress    string
	HasProgress bool
	Error       string
	Abort       bool
	Fatal       string
}

func newClient(post func(id int, op string, args []any)) *client {
	return &client{post: post, calls: map[int]*call{}}
}

// start posts a call and returns its id. done is called once, with the answer as JSON
// text, or with context.Canceled (and what was found so far) when a cancel stopped it,
// or with the worker's error. progress, when set, receives a search's progress.
func (c *client) start(op string, args []any, progress func(string), done func(string, error)) int {
	c.mu.Lock()
	if c.broken != nil {
		err := c.broken
		c.mu.Unlock()
		done("", err)
		return 0
	}
	if c.dead {
		c.dead = false
		c.mu.Unlock()
		c.restart()
		c.mu.Lock()
	}
	c.next++
	id := c.next
	c.calls[id] = &call{progress: progress, done: done}
	c.mu.Unlock()
	c.post(id, op, args)
	return id
}

// cancel asks the worker to stop call id (a search); its done still comes.
func (c *client) cancel(id int) {
	c.mu.Lock()
	_, ok := c.calls[id]
	c.mu.Unlock()
	if ok {
		c.post(id, "cancel", nil)
	}
}

// receive routes a message from the worker.
func (c *client) receive(a answer) {
	if a.Fatal != "" {
		// Every call in flight is lost with the worker: each is rejected with why, and
		// the next call starts a new worker (or, without restart, fails the same way).
		err := errors.New(a.Fatal)
		c.mu.Lock()
		if c.restart != nil {
			c.dead = true
			err = fmt.Errorf("%s: the call was lost; the next call starts a new planner", a.Fatal)
		} else {
			c.broken = err
		}
		calls := c.calls
		c.calls = map[int]*call{}
		c.mu.Unlock()
		for _, id := range slices.Sorted(maps.Keys(calls)) {
			calls[id].done("", err)
		}
		return
	}
	c.mu.Lock()
	k := c.calls[a.ID]
	if k != nil && !a.HasProgress {
		delete(c.calls, a.ID)
	}
	c.mu.Unlock()
	switch {
	case k == nil:
	case a.HasProgress:
		if k.progress != nil {
			k.progress(a.Progress)
		}
	case a.Abort:
		k.done(a.Result, context.Canceled)
	case a.Error != "":
		k.done(a.Result, errors.New(a.Error))
	default:
		k.done(a.Result, nil)
	}
}

// Do is a call that blocks until the answer comes (ui.Planner): it must run in a
// goroutine of its own, never in a JavaScript callback. progress is called in this
// goroutine (some may be skipped when they come faster than it takes them). Closing stop
// cancels the call.
func (c *client) Do(stop <-chan struct{}, op string, args []string, progress func(string)) (string, error) {
	type outcome struct {
		s   string
		err error
	}
	done := make(chan outcome, 1)
	prog := make(chan string, 1)
	var pf func(string)
	if progress != nil {
		pf = func(p string) {
			select {
			case <-prog: // keep the latest
			default:
			}
			prog <- p
		}
	}
	a := make([]any, len(args))
	for i, s := range args {
		a[i] = s
	}
	id := c.start(op, a, pf, func(s string, err error) { done <- outcome{s, err} })
	for {
		select {
		case p := <-prog:
			progress(p)
		case o := <-done:
			return o.s, o.err
		case <-stop:
			c.cancel(id)
			stop = nil
		}
	}
}
