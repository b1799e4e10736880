package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"pipeplan/wasm/planner/ops"
)

// worker stands for planner.wasm in its Web Worker: each message runs ops.Do in a
// goroutine, answers come back through the client's receive, and a cancel message
// cancels the call it names.
func worker() *client {
	var c *client
	var mu sync.Mutex
	cancels := map[int]context.CancelFunc{}
	c = newClient(func(id int, op string, a []any) {
		args := make([]string, len(a))
		for i, v := range a {
			args[i] = v.(string)
		}
		mu.Lock()
		defer mu.Unlock()
		if op == "cancel" {
			if cancel := cancels[id]; cancel != nil {
				cancel()
			}
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancels[id] = cancel
		go func() {
			out, err := ops.Do(ctx, op, args, func(p string) { c.receive(answer{ID: id, Progress: p, HasProgress: true}) }, func() {})
			a := answer{ID: id, Result: out, HasResult: out != ""}
			if err != nil {
				a.Error, a.Abort = err.Error(), ctx.Err() != nil
			}
			c.receive(a)
		}()
	})
	return c
}

func TestClientPlans(t *testing.T) {
	c := worker()
	req, _ := json.Marshal(exampleRequest())
	out, err := c.Do(nil, "plan", []string{string(req)}, nil)
	if err != nil || !strings.Contains(out, `"feasible":true`) {
		t.Fatalf("plan: %v %.200s", err, out)
	}
	out, err = c.Do(nil, "plan", []string{"{"}, nil)
	if err != nil || !strings.Contains(out, `"error":"the request's JSON ends early"`) {
		t.Fatalf("bad plan: %v %.200s", err, out)
	}
}

func TestClientSearchProgressAndCancel(t *testing.T) {
	c := worker()
	const q = `{"request": {"model": {"architecture": {"name": "llama-3.2-1b", "seq": 2048}},
	"cluster": {"device": "h100-sxm", "devices_per_node": 8}}, "max_devices": 8, "global_batch": 32}`
	progress := 0
	out, err := c.Do(nil, "search", []string{q}, func(string) { progress++ })
	if err != nil || !strings.Contains(out, `"best"`) || progress == 0 {
		t.Fatalf("search: %v, %d progress, %.200s", err, progress, out)
	}
	stop := make(chan struct{})
	close(stop)
	if _, err := c.Do(stop, "search", []string{q}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled search: %v", err)
	}
}

// A planner that failed to load fails the calls in flight and every later call.
func TestClientBroken(t *testing.T) {
	var c *client
	c = newClient(func(id int, op string, args []any) {
		c.receive(answer{Fatal: "the planner failed to load: no wasm"})
	})
	if _, err := c.Do(nil, "plan", []string{"{}"}, nil); err == nil || !strings.Contains(err.Error(), "no wasm") {
		t.Errorf("first call: %v", err)
	}
	if _, err := c.Do(nil, "plan", []string{"{}"}, nil); err == nil {
		t.Errorf("later call: no error")
	}
}

// TestClientRestarts: when the planner worker stops (it ran out of memory: Go exits and
// worker.js posts {fatal}), every call in flight is rejected with the reason, and the
// next call starts a new worker, which answers it.
func TestClientRestarts(t *testing.T) {
	var c *client
	workers := 1
	var held []int // calls the first worker holds, unanswered
	c = newClient(func(id int, op string, args []any) {
		switch {
		case workers == 1 && op == "search":
			held = append(held, id)
		case workers == 1 && op == "plan":
			// The query that exhausts the worker: it stops, losing every call.
			c.receive(answer{Fatal: "the planner stopped (fatal error: out of memory)"})
		default:
			c.receive(answer{ID: id, Result: "answered by worker " + string(rune('0'+workers)), HasResult: true})
		}
	})
	c.restart = func() { workers++ }
	errs := make(chan error, 3)
	for range 2 {
		c.start("search", []any{"{}"}, nil, func(_ string, err error) { errs <- err })
	}
	if len(held) != 2 {
		t.Fatalf("the worker holds %d calls, want 2", len(held))
	}
	c.start("plan", []any{"{}"}, nil, func(_ string, err error) { errs <- err })
	for range 3 {
		err := <-errs
		if err == nil || !strings.Contains(err.Error(), "the planner stopped (fatal error: out of memory): the call was lost; the next call starts a new planner") {
			t.Errorf("a call in flight: %v", err)
		}
	}
	if workers != 1 {
		t.Fatalf("restarted before the next call: %d workers", workers)
	}
	out, err := c.Do(nil, "plan", []string{"{}"}, nil)
	if err != nil || out != "answered by worker 2" || workers != 2 {
		t.Errorf("the next call: %q, %v (%d workers)", out, err, workers)
	}
	out, err = c.Do(nil, "plan", []string{"{}"}, nil)
	if err != nil || workers != 2 {
		t.Errorf("a later call: %q, %v (%d workers, want one restart)", out, err, workers)
	}
}
