package aggregate

import (
	"strings"
	"testing"
)

// TestBeside: join returns after f has run, and f's panic is raised again
// by every join on the caller's goroutine, with f's stack.
func TestBeside(t *testing.T) {
	ran := false
	join := beside(func() { ran = true })
	join()
	join()
	if !ran {
		t.Fatal("join returned before f ran")
	}
	caught := func(join func()) (p any) {
		defer func() { p = recover() }()
		join()
		return nil
	}
	join = beside(func() { panic("boom") })
	for i := range 2 {
		p, _ := caught(join).(string)
		if !strings.HasPrefix(p, "boom\n") || !strings.Contains(p, "TestBeside.func") {
			t.Fatalf("join %d raised %q, want boom and the stack of f", i+1, p)
		}
	}
}
