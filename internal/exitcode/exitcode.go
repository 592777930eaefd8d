// Package exitcode gives errors the process exit code they end with, so
// the command line decides an exit code by the error's type, never by its
// text. An error carries its code by implementing Coder (directly or
// anywhere in its wrap chain); Of reads it.
//
// The codes: 0 success; 1 a failure the command found (a gate regression,
// --strict with input problems); 2 bad usage or unusable input, found before
// any work begins; 3 an internal error (a bug).
package exitcode

import (
	"errors"
	"fmt"
)

// Code is a process exit code.
type Code int

// The exit codes.
const (
	OK       Code = 0
	Failed   Code = 1 // the command ran and found a failure
	Usage    Code = 2 // usage errors and unusable input
	Internal Code = 3 // a bug
	// Signal is added to a signal's number when a signal stops the
	// command: 130 for SIGINT, 143 for SIGTERM.
	Signal Code = 128
)

// Coder is an error that says which exit code it ends the process with.
type Coder interface {
	error
	ExitCode() Code
}

// Error is an error with an exit code.
type Error struct {
	Code Code
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *Error) Unwrap() error { return e.Err }

// ExitCode returns the error's exit code.
func (e *Error) ExitCode() Code { return e.Code }

// Usagef is a usage error (exit 2), formatted as fmt.Errorf does.
func Usagef(format string, args ...any) error {
	return &Error{Code: Usage, Err: fmt.Errorf(format, args...)}
}

// Failf is a failure the command found (exit 1).
func Failf(format string, args ...any) error {
	return &Error{Code: Failed, Err: fmt.Errorf(format, args...)}
}

// Internalf is an internal error (exit 3).
func Internalf(format string, args ...any) error {
	return &Error{Code: Internal, Err: fmt.Errorf(format, args...)}
}

// Of returns the exit code err ends the process with: OK for nil, the code
// of the first Coder in its chain, else Failed (an error nothing
// classified, such as a write that failed, is a failed command).
func Of(err error) Code {
	if err == nil {
		return OK
	}
	var c Coder
	if errors.As(err, &c) {
		return c.ExitCode()
	}
	return Failed
}
