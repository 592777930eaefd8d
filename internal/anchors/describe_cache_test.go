package anchors

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/testutil"
	"github.com/compactbench/compactbench/internal/transcript"
)

// refAnchors is Evaluation.Anchors as it was: every description filled
// afresh (describe), no cache.
func refAnchors(e *Evaluation, from, to int) []Anchor {
	var out []Anchor
	for i := from; i < to; i++ {
		r := e.fired[i]
		if i == to-1 && e.blind != nil {
			r = e.blind[i]
		}
		if r < 0 {
			continue
		}
		rule := e.Set.Rules[r]
		t := &e.turns[i]
		out = append(out, Anchor{
			Turn: i - from, Type: rule.Type, Rule: rule.Name, Weight: rule.Weight, Confidence: rule.Confidence,
			Description: describe(rule.Description, t), Timestamp: t.Timestamp,
		})
	}
	return out
}

// TestAnchorsCachedDescriptions: the anchors of overlapping windows, asked
// again and again as a replay does (descriptions cached by turn), equal a
// fresh evaluation's, for every default rule set on every real transcript.
func TestAnchorsCachedDescriptions(t *testing.T) {
	dir := testutil.RealCorpus(t)
	in, err := loader.Walk([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	suite := NewSuite(Defaults()...)
	rng := rand.New(rand.NewPCG(3, 4))
	described := 0
	for _, f := range in.Files {
		err := loader.ReadFile(f.Path, loader.Options{}, func(tr *transcript.Transcript) error {
			turns := tr.Turns()
			n := len(turns)
			for _, e := range suite.Evaluate(turns) {
				for k := 0; k < 40; k++ {
					a, b := rng.IntN(n+1), rng.IntN(n+1)
					from, to := min(a, b), max(a, b)
					got, want := e.Anchors(from, to), refAnchors(e, from, to)
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("%s %s window [%d,%d):\n got %#v\nwant %#v", f.Path, e.Set.Name, from, to, got, want)
					}
					described += len(got)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if described == 0 {
		t.Fatal("no anchors checked")
	}
}
