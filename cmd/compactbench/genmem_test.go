package main

import (
	"context"
	"io"
	"path/filepath"
	"runtime"
	"testing"
)

// TestGenMemoryPerByte: gen --bytes allocates about 1.6 bytes per byte it
// writes (the generator's own strings), because a session's files go from
// the generator's 256 KiB buffers straight to their files. Holding every
// file of the sessions in flight in memory until they were written in
// order allocated 5.4 bytes per byte, and its peak RSS followed the
// sessions waiting (559 MB at 8 GiB).
func TestGenMemoryPerByte(t *testing.T) {
	const size = 8 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	opts := genOptions{Out: filepath.Join(t.TempDir(), "c"), Scenarios: []string{"feature", "mixed"}, Bytes: size, Seed: 1, Jobs: 2, Quiet: true}
	if err := genCommand(context.Background(), opts, io.Discard); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 3*size {
		t.Errorf("allocated %d bytes to write %d", got, size)
	}
}
