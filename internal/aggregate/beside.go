package aggregate

import (
	"fmt"
	"runtime/debug"
)

// beside runs f on a goroutine of its own. join waits for f to return and
// raises a panic of f again on the caller's goroutine, where a run reports
// it as an internal error rather than the process dying, its value then
// being a string that holds f's value and f's stack where it panicked;
// join may be called more than once.
func beside(f func()) (join func()) {
	done := make(chan struct{})
	var panicked any
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				panicked = fmt.Sprintf("%v\n\nraised on another goroutine:\n%s", p, debug.Stack())
			}
		}()
		f()
	}()
	return func() {
		<-done
		if panicked != nil {
			panic(panicked)
		}
	}
}
