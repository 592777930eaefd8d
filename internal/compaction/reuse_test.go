package compaction

import (
	"reflect"
	"testing"
)

// TestReplaysInTurnMatchFreshReplays: every strategy replayed in turn on
// one Shared (which lends each replay the arrays and fact marks the one
// before left, Sim.reuse) gives the runs and events of the same strategy
// replayed alone on a fresh Shared, on the real corpus at a 60,000-token
// window (every session compacts) and at the models' windows.
func TestReplaysInTurnMatchFreshReplays(t *testing.T) {
	ts := corpus(t)
	for _, window := range []int{60_000, 0} {
		opt := options(t, window)
		for _, tr := range ts {
			inTurn := NewShared(tr)
			for _, spec := range Specs() {
				run, events := Replay(inTurn, spec.ID, spec.New(spec.Params()), opt, 0, 1)
				freshRun, freshEvents := Replay(NewShared(tr), spec.ID, spec.New(spec.Params()), opt, 0, 1)
				if !reflect.DeepEqual(freshRun, run) || !reflect.DeepEqual(freshEvents, events) {
					t.Fatalf("%s %s (window %d): the replay in turn differs from a fresh one:\n%+v\n%+v",
						tr.Path, spec.ID, window, run, freshRun)
				}
			}
		}
	}
}
