//go:build js && wasm

package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"syscall/js"

	"github.com/syumai/workers"
	"github.com/syumai/workers/cloudflare"
	"github.com/syumai/workers/cloudflare/kv"

	"pipeplan/share"
)

// binding is the name of the KV namespace of plans in wrangler.toml.
const binding = "PLANS"

func main() {
	c := share.Config{Plan: share.CorePlanner, BaseURL: variable("PUBLIC_URL")}
	ns, err := kv.NewNamespace(binding)
	if err != nil {
		panic(fmt.Sprintf("the KV namespace %s is not bound: add it to wrangler.toml ([[kv_namespaces]] binding = %q): %v", binding, binding, err))
	}
	c.Store = kvStore{ns}
	for _, o := range strings.Split(variable("ALLOWED_ORIGINS"), ",") {
		if o = strings.TrimSpace(o); o != "" {
			c.AllowedOrigins = append(c.AllowedOrigins, o)
		}
	}
	if v := variable("MAX_REQUEST_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			panic(fmt.Sprintf("MAX_REQUEST_BYTES = %q: want a positive number of bytes", v))
		}
		c.MaxRequestBytes = n
	}
	workers.ServeNonBlock(share.NewHandler(c))
	workers.Ready()
	<-workers.Done()
	afterCallStack()
}

// afterCallStack returns once JavaScript's call stack has emptied: from a microtask
// (a callback of a resolved promise), which JavaScript runs only then. workers closes Done as the last byte of the answer is handed to workerd. For
// a handler that never waits on JavaScript (a 404 of a malformed id, a preflight) that
// happens inside the JavaScript call that delivered the request, and a Go program that
// exits there fails that call ("Cannot read properties of undefined (reading 'exports')").
// A timer of Go's own (time.Sleep) is not enough: the scheduler may find it expired
// while still inside that call, when the machine is slow.
func afterCallStack() {
	done := make(chan struct{})
	var f js.Func
	f = js.FuncOf(func(js.Value, []js.Value) any {
		f.Release()
		close(done)
		return nil
	})
	js.Global().Get("Promise").Call("resolve").Call("then", f)
	<-done
}

// variable returns the Worker's variable name, or "" when it is not set.
func variable(name string) string {
	v := cloudflare.GetBinding(name)
	if v.Type() != js.TypeString {
		return ""
	}
	return v.String()
}

// kvStore is a share.Store over a Workers KV namespace. KV is eventually consistent
// across Cloudflare's locations (a plan just stored may take up to a minute to be
// readable elsewhere), which content-addressed, never-changing documents tolerate.
type kvStore struct{ ns *kv.Namespace }

// null is what kv.Namespace.GetString returns for a missing key (JavaScript's null,
// printed by syscall/js); a stored document is a JSON object and never reads so.
const null = "<null>"

func (s kvStore) Get(_ context.Context, id string) ([]byte, error) {
	v, err := s.ns.GetString(id, nil)
	if err != nil {
		return nil, err
	}
	if v == null {
		return nil, share.ErrNotFound
	}
	return []byte(v), nil
}

func (s kvStore) Put(_ context.Context, id string, doc []byte) error {
	return s.ns.PutString(id, string(doc), nil)
}
