// Package tempfile holds the memory-bounded logs (Log) of the rulers'
// per-call errors, the strategies' per-event values and label sets, and
// makes the temporary files they move their data to once it passes what
// they keep in memory.
package tempfile

import (
	"os"
	"runtime"
)

// Unlinked creates a temporary file in the system's temporary directory,
// named from prefix, and removes its name at once where the system allows
// it: the open file stays readable and writable, and its space is freed
// when it is closed (or collected, or the process ends), so a run that
// stops early leaves nothing behind. On Windows, where an open file cannot
// be removed, the name stays.
func Unlinked(prefix string) (*os.File, error) {
	f, err := os.CreateTemp("", prefix+"-*")
	if err != nil {
		return nil, err
	}
	if runtime.GOOS != "windows" {
		os.Remove(f.Name()) // the open file stays readable
	}
	return f, nil
}

// Check makes and closes one temporary file, as a Log's first Flush would:
// an error means that every Log keeps all its data in memory, which then
// grows with what is logged (a command warns of it).
func Check() error {
	f, err := Unlinked("compactbench-check")
	if err != nil {
		return err
	}
	err = f.Close()
	os.Remove(f.Name()) // where Unlinked kept the name (Windows)
	return err
}
