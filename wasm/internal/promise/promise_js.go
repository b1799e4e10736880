package promise

import (
	"errors"
	"syscall/js"
)

// Await waits for p and gives its value, or its rejection as an error (the rejection's
// text, e.g. "TypeError: Failed to fetch"). It blocks the calling goroutine only: call it
// off the event loop's callback (in a goroutine), so that the event loop runs meanwhile.
func Await(p js.Value) (js.Value, error) {
	type outcome struct {
		v   js.Value
		err error
	}
	ch := make(chan outcome, 1)
	var then, fail js.Func
	then = js.FuncOf(func(_ js.Value, args []js.Value) any {
		ch <- outcome{v: args[0]}
		return nil
	})
	fail = js.FuncOf(func(_ js.Value, args []js.Value) any {
		msg := "rejected"
		if len(args) > 0 {
			msg = args[0].Call("toString").String()
		}
		ch <- outcome{err: errors.New(msg)}
		return nil
	})
	defer then.Release()
	defer fail.Release()
	p.Call("then", then, fail)
	o := <-ch
	return o.v, o.err
}
