package exitcode

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

func TestOf(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want Code
	}{
		{"nil", nil, OK},
		{"untyped", errors.New("disk full"), Failed},
		{"usage", Usagef("--jobs: want at least 1"), Usage},
		{"failure", Failf("gate: 2 figures regressed"), Failed},
		{"internal", Internalf("broken invariant"), Internal},
		{"wrapped usage", fmt.Errorf("run: %w", Usagef("bad")), Usage},
		{"usage wrapping an fs error", &Error{Code: Usage, Err: fs.ErrNotExist}, Usage},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Of(c.err); got != c.want {
				t.Errorf("Of(%v) = %d, want %d", c.err, got, c.want)
			}
		})
	}
}

func TestErrorKeepsItsCause(t *testing.T) {
	err := &Error{Code: Usage, Err: fmt.Errorf("--models: %w", fs.ErrNotExist)}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Error("the cause is lost")
	}
	if err.Error() != "--models: file does not exist" {
		t.Errorf("text %q", err.Error())
	}
}
