package compaction

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/testutil"
	"github.com/compactbench/compactbench/internal/transcript"
)

// TestIncrementalMeasureMatchesFull replays every strategy over the shipped
// corpora (at the models' windows and a 20,000-token window), measuring each
// compaction incrementally and from scratch: the events must be equal.
func TestIncrementalMeasureMatchesFull(t *testing.T) {
	in, err := loader.Walk([]string{filepath.Join(testutil.RepoRoot(t), "corpora")})
	if err != nil {
		t.Fatal(err)
	}
	var ts []*transcript.Transcript
	for _, f := range in.Files {
		err := loader.ReadFile(f.Path, loader.Options{}, func(tr *transcript.Transcript) error {
			ts = append(ts, tr)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if compareMeasures(t, ts, []int{0, 20_000}) == 0 {
		t.Fatal("no compaction measured")
	}
}

// TestIncrementalMeasureMatchesFullReal is the same comparison over the real
// corpus at a 60,000-token window (skipped without the corpus).
func TestIncrementalMeasureMatchesFullReal(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	if compareMeasures(t, realTranscripts(t, false), []int{60_000}) == 0 {
		t.Fatal("no compaction measured")
	}
}

// compareMeasures replays transcripts both ways at each window and fails on
// the first event that differs; it returns the events compared.
func compareMeasures(t *testing.T, ts []*transcript.Transcript, windows []int) int {
	t.Helper()
	metric := ruler(t, "calibrated")
	defer func() { fullMeasure = false }()
	n := 0
	for _, tr := range ts {
		for _, window := range windows {
			opt := &Options{Window: window, Metric: metric, Rulers: rulers}
			for _, spec := range Specs() {
				var evs [2][]Event
				for k, full := range []bool{false, true} {
					fullMeasure = full
					_, evs[k] = Replay(NewShared(tr), spec.ID, spec.New(spec.Params()), opt, 0, 1)
				}
				for i := range evs[0] {
					if !reflect.DeepEqual(evs[0][i], evs[1][i]) {
						t.Fatalf("%s %s window %d event %d:\nincremental %+v\nfull        %+v", tr.Path, spec.ID, window, i, evs[0][i], evs[1][i])
					}
				}
				if len(evs[0]) != len(evs[1]) {
					t.Fatalf("%s %s: %d events, %d measured from scratch", tr.Path, spec.ID, len(evs[0]), len(evs[1]))
				}
				n += len(evs[0])
			}
		}
	}
	return n
}

// pairBreaker compacts before every call by dropping one item near the end
// of the context (breaking tool pairs), masking an older one, and now and
// then giving an item a tool call that is not its recording's or replacing
// it with written text: every case the incremental marks must follow.
type pairBreaker struct{}

func (pairBreaker) Trigger(s *Sim) (bool, int) { return len(s.Ctx) > 6, len(s.Ctx) }

func (pairBreaker) Compact(s *Sim) Outcome {
	ctx := append([]Item(nil), s.Ctx...)
	i := len(ctx) - 2 - s.Round%4
	ctx = append(ctx[:i], ctx[i+1:]...)
	j := len(ctx) - 5
	switch s.Round % 5 {
	case 1:
		ctx[j] = s.Synthetic(transcript.RoleUser, "summary of step")
	case 2:
		ctx[j] = s.Modify(ctx[j], []transcript.Block{{Kind: transcript.BlockToolUse, ToolID: "foreign", ToolName: "Bash"}})
	default:
		nb := append([]transcript.Block(nil), ctx[j].Msg.Blocks...)
		for k := range nb {
			if nb[k].Kind == transcript.BlockToolResult {
				nb[k] = placeholderResult(nb[k], "masked", placeholderMasked)
			}
		}
		ctx[j] = s.Modify(ctx[j], nb)
	}
	return Outcome{Ctx: ctx, Action: "mask"}
}

// TestIncrementalMeasureFollowsBrokenPairs compares incremental and full
// measuring on a replay that breaks tool pairs, changes tool blocks and
// writes text at every compaction.
func TestIncrementalMeasureFollowsBrokenPairs(t *testing.T) {
	b := &builder{}
	for i := 0; i < 40; i++ {
		if i%6 == 0 {
			b.user(fmt.Sprintf("Step %d: fix /src/mod%d.go.", i, i))
		}
		id := fmt.Sprintf("t%d", i)
		b.say("working", "Edit:"+id+fmt.Sprintf(":/src/mod%d.go", i)).result(id, i%7 == 0, fmt.Sprintf("error: mod%d.go:3 failed\nline two", i))
	}
	tr := b.transcript()
	opt := options(t, 1_000_000)
	var evs [2][]Event
	for k, full := range []bool{false, true} {
		fullMeasure = full
		_, evs[k] = Replay(NewShared(tr), "breaker", pairBreaker{}, opt, 0, 1)
	}
	fullMeasure = false
	broken := 0
	for i := range evs[0] {
		if !reflect.DeepEqual(evs[0][i], evs[1][i]) {
			t.Fatalf("event %d:\nincremental %+v\nfull        %+v", i, evs[0][i], evs[1][i])
		}
		broken += evs[0][i].OrphanResults + evs[0][i].DanglingCalls
	}
	if len(evs[0]) < 20 || len(evs[0]) != len(evs[1]) || broken == 0 {
		t.Fatalf("%d/%d events, %d broken pairs: the replay did not exercise the pairs", len(evs[0]), len(evs[1]), broken)
	}
}
