package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestMemLimitFor(t *testing.T) {
	for _, tc := range []struct {
		live uint64
		want int64
	}{
		{0, memFloor},
		{40 << 20, memFloor},            // 60 MiB < the floor
		{memFloor * 2 / 3, memFloor},    // exactly the floor
		{100 << 20, 150 << 20},          // half the live heap above it
		{1 << 40, 3 << 39},              // no cap however large
		{math.MaxUint64, math.MaxInt64}, // no overflow
	} {
		if got := memLimitFor(tc.live); got != tc.want {
			t.Errorf("memLimitFor(%d) = %d, want %d", tc.live, got, tc.want)
		}
	}
}

// TestMemLimitSetAndRestored: a run sets the floor, raises the limit with
// the live heap, and restores the previous limit; GOMEMLIMIT in the
// environment leaves the limit alone.
func TestMemLimitSetAndRestored(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	if v, set := os.LookupEnv("GOMEMLIMIT"); set {
		t.Setenv("GOMEMLIMIT", v)
		os.Unsetenv("GOMEMLIMIT")
	}
	m := startMemLimit()
	if got := debug.SetMemoryLimit(-1); got != memFloor {
		t.Fatalf("limit during a run = %d, want %d", got, memFloor)
	}
	keep := make([]byte, 200<<20) // live heap of 200 MiB: the limit must rise above it
	runtime.GC()
	for range memLimitEvery {
		m.fileWritten()
	}
	if got := debug.SetMemoryLimit(-1); got < 300<<20 {
		t.Fatalf("limit with 200 MiB live = %d, want at least 300 MiB", got)
	}
	keep[len(keep)-1] = 1
	m.stop()
	if got := debug.SetMemoryLimit(-1); got != prev {
		t.Fatalf("limit after the run = %d, want %d restored", got, prev)
	}

	t.Setenv("GOMEMLIMIT", "off")
	m = startMemLimit()
	m.fileWritten()
	if got := debug.SetMemoryLimit(-1); got != prev {
		t.Fatalf("with GOMEMLIMIT set the limit = %d, want %d untouched", got, prev)
	}
	m.stop()
}

// TestMemLimitRisesWithoutFiles: the limit follows the live heap on its
// ticker too, so one large file whose live heap passes the floor before any
// file is written is not collected continuously meanwhile.
func TestMemLimitRisesWithoutFiles(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	if v, set := os.LookupEnv("GOMEMLIMIT"); set {
		t.Setenv("GOMEMLIMIT", v)
		os.Unsetenv("GOMEMLIMIT")
	}
	m := startMemLimit()
	keep := make([]byte, 200<<20)
	runtime.GC()
	deadline := time.Now().Add(5 * time.Second)
	for debug.SetMemoryLimit(-1) < 300<<20 && time.Now().Before(deadline) {
		time.Sleep(memLimitTick)
	}
	got := debug.SetMemoryLimit(-1)
	keep[len(keep)-1] = 1
	m.stop()
	if got < 300<<20 {
		t.Fatalf("limit with 200 MiB live and no file written = %d, want at least 300 MiB", got)
	}
	if now := debug.SetMemoryLimit(-1); now != prev {
		t.Fatalf("limit after the run = %d, want %d restored", now, prev)
	}
}
