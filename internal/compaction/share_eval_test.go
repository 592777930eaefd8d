package compaction

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/compactbench/compactbench/internal/anchors"
)

// TestSharedEvaluationReplaysAlike: a replay reading anchor evaluations a
// suite made (Shared.ShareEvaluation) gives the runs and events of one that
// evaluates its rule sets itself, for every strategy on the real corpus at
// a 60,000-token window (every session compacts); and an evaluation by a
// set that is not the one its name resolves to is not used.
func TestSharedEvaluationReplaysAlike(t *testing.T) {
	ts := corpus(t)
	suite := anchors.NewSuite(anchors.Defaults()...)
	opt := options(t, 60_000)
	for _, tr := range ts {
		own, shared := NewShared(tr), NewShared(tr)
		for _, e := range suite.Evaluate(shared.Turns) {
			shared.ShareEvaluation(e)
		}
		if len(shared.evals) != len(anchors.DefaultSets) {
			t.Fatalf("%s: %d evaluations shared, want %d", tr.Path, len(shared.evals), len(anchors.DefaultSets))
		}
		for _, spec := range Specs() {
			ownRun, ownEvents := Replay(own, spec.ID, spec.New(spec.Params()), opt, 0, 1)
			run, events := Replay(shared, spec.ID, spec.New(spec.Params()), opt, 0, 1)
			if !reflect.DeepEqual(ownRun, run) || !reflect.DeepEqual(ownEvents, events) {
				t.Fatalf("%s %s: the replay with the suite's evaluations differs:\n%+v\n%+v", tr.Path, spec.ID, ownRun, run)
			}
		}
	}

	src, err := os.ReadFile(filepath.Join("..", "anchors", "rulesets", anchors.DefaultSets[0]+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := anchors.Parse(src, "copy") // same name, another set
	if err != nil {
		t.Fatal(err)
	}
	sh := NewShared(ts[0])
	sh.ShareEvaluation(anchors.NewSuite(other).Evaluate(sh.Turns)[0])
	if len(sh.evals) != 0 {
		t.Fatalf("an evaluation by a set its name does not resolve to was kept")
	}
}
