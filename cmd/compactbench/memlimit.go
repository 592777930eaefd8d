package main

import (
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
)

// memFloor is the smallest soft memory limit a run sets: below it the
// collector runs as Go's default (GOGC=100) would.
const memFloor = 64 << 20

// memLimit caps the collector's headroom during a run. By default Go lets
// the heap grow to twice what is live before it collects, and the pages a
// collection frees stay mapped a while; a run's live heap is mostly bounded
// buffers (the output tables' row groups, the spill logs' memory), so that
// headroom was what most of its peak RSS grew with. A run sets a soft limit
// (debug.SetMemoryLimit) of max(memFloor, 1.5 × the live heap), updated as
// files are written: the limit stays above the live heap by half of it, so
// a heap that keeps growing is collected at most about twice as often as
// by default, never continuously. GOMEMLIMIT in the environment (even
// "off") leaves the runtime's own setting alone.
type memLimit struct {
	on     bool
	old    int64
	n      int
	sample []metrics.Sample
}

// memLimitEvery is how many written files apart the limit is recomputed.
const memLimitEvery = 16

// startMemLimit sets the run's soft memory limit (see memLimit); stop
// restores the previous one.
func startMemLimit() *memLimit {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return &memLimit{}
	}
	m := &memLimit{on: true, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	m.old = debug.SetMemoryLimit(memFloor)
	return m
}

// fileWritten recomputes the limit every memLimitEvery files.
func (m *memLimit) fileWritten() {
	if m == nil || !m.on {
		return
	}
	if m.n++; m.n%memLimitEvery != 0 {
		return
	}
	metrics.Read(m.sample)
	if m.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	debug.SetMemoryLimit(memLimitFor(m.sample[0].Value.Uint64()))
}

// memLimitFor is the limit for a live heap of live bytes.
func memLimitFor(live uint64) int64 {
	if live > math.MaxInt64/3*2 {
		return math.MaxInt64
	}
	return max(memFloor, int64(live+live/2))
}

// stop restores the limit in force before the run.
func (m *memLimit) stop() {
	if m != nil && m.on {
		debug.SetMemoryLimit(m.old)
	}
}
