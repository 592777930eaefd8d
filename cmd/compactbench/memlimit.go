package main

import (
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
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
// by default, never continuously. The limit is also recomputed every
// memLimitTick, so that one large file (whose live heap may pass the floor
// before any file is written) is not collected continuously meanwhile.
// GOMEMLIMIT in the environment (even "off") leaves the runtime's own
// setting alone.
type memLimit struct {
	on     bool
	old    int64
	n      int
	sample []metrics.Sample
	done   chan struct{} // closed by stop, ends the ticker
	ended  chan struct{} // closed when the ticker has ended
}

// memLimitTick is how often the limit is recomputed besides every
// memLimitEvery written files.
const memLimitTick = 50 * time.Millisecond

// memLimitEvery is how many written files apart the limit is recomputed.
const memLimitEvery = 16

// startMemLimit sets the run's soft memory limit (see memLimit); stop
// restores the previous one.
func startMemLimit() *memLimit {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return &memLimit{}
	}
	m := &memLimit{on: true, sample: liveSample(), done: make(chan struct{}), ended: make(chan struct{})}
	m.old = debug.SetMemoryLimit(memFloor)
	go m.tick()
	return m
}

// liveSample is the metrics sample of the live heap.
func liveSample() []metrics.Sample {
	return []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
}

// tick recomputes the limit every memLimitTick until stop.
func (m *memLimit) tick() {
	defer close(m.ended)
	t := time.NewTicker(memLimitTick)
	defer t.Stop()
	sample := liveSample() // its own: fileWritten reads m.sample on the emitting goroutine
	for {
		select {
		case <-m.done:
			return
		case <-t.C:
			limitFromLive(sample)
		}
	}
}

// limitFromLive sets the limit from the live heap read into sample.
func limitFromLive(sample []metrics.Sample) {
	metrics.Read(sample)
	if sample[0].Value.Kind() == metrics.KindUint64 {
		debug.SetMemoryLimit(memLimitFor(sample[0].Value.Uint64()))
	}
}

// fileWritten recomputes the limit every memLimitEvery files.
func (m *memLimit) fileWritten() {
	if m == nil || !m.on {
		return
	}
	if m.n++; m.n%memLimitEvery != 0 {
		return
	}
	limitFromLive(m.sample)
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
		close(m.done)
		<-m.ended // no update after the restore
		debug.SetMemoryLimit(m.old)
	}
}
