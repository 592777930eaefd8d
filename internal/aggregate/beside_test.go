package aggregate

import "testing"

// TestBeside: join returns after f has run, and f's panic is raised again
// by every join on the caller's goroutine.
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
		if p := caught(join); p != "boom" {
			t.Fatalf("join %d raised %v, want boom", i+1, p)
		}
	}
}
