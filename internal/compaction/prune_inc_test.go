package compaction

import (
	"fmt"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

// uniformOutput is the text of the made-up session's equal outputs.
var uniformOutput = strings.Repeat("z", 4_000)

// pruneVariants are prune's parameters at their defaults and at edges of
// the trigger's walk: no protected tail, no skipped turns, a tail that
// protects exactly three equal outputs (one ends the protection exactly),
// many skipped turns.
func pruneVariants(t *testing.T) []func(p *PruneParams) {
	one := ruler(t, "chars4").Block(&transcript.Block{Kind: transcript.BlockToolResult, Text: uniformOutput})
	return []func(p *PruneParams){
		nil,
		func(p *PruneParams) { p.Protect, p.Minimum = 0, 1_000 },
		func(p *PruneParams) { p.SkipTurns, p.Protect, p.Minimum = 0, 3_000, 2_000 },
		func(p *PruneParams) { p.SkipTurns, p.Protect, p.Minimum = 1, 5_000, 500 },
		func(p *PruneParams) { p.SkipTurns, p.Protect, p.Minimum = 1, 3*one, one },
		func(p *PruneParams) { p.SkipTurns, p.Protect, p.Minimum = 5, 1, 0 },
	}
}

// pruneSession has prompts, runs of tool outputs of varied and of equal
// sizes, some answered in one message (parallel calls), and text between,
// so that prunes leave pruned outputs at different places of later walks,
// also before outputs of the same message.
func pruneSession() *transcript.Transcript {
	b := &builder{}
	for i := 0; i < 80; i++ {
		if i%5 == 0 {
			b.user(fmt.Sprintf("Step %d: read the next files.", i))
		}
		id := fmt.Sprintf("t%d", i)
		text := strings.Repeat("y", 400+(i*737)%9_000)
		if i >= 40 {
			text = uniformOutput
		}
		if i%4 == 1 {
			b.say("reading two", "Read:"+id+"a:/src/a.go", "Read:"+id+"b:/src/b.go")
			b.msgs = append(b.msgs, transcript.Message{Role: transcript.RoleTool, Timestamp: b.stamp(), Blocks: []transcript.Block{
				{Kind: transcript.BlockToolResult, ToolID: id + "a", Text: text},
				{Kind: transcript.BlockToolResult, ToolID: id + "b", Text: uniformOutput}}})
			continue
		}
		b.say("reading", "Read:"+id+fmt.Sprintf(":/src/f%d.go", i)).result(id, i%9 == 0, text)
		if i%7 == 3 {
			b.say("noted")
		}
	}
	return b.transcript()
}

// TestPruneTriggerMatchesWalk replays prune, with every variant, at
// windows that make it prune and summarize, on a made-up session and on
// the real corpus when present: every trigger checks its incremental
// answer against the walk of the whole context (checkPrune), so a
// difference panics.
func TestPruneTriggerMatchesWalk(t *testing.T) {
	run := func(t *testing.T, ts []*transcript.Transcript, windows []int) (events int) {
		for _, tr := range ts {
			for _, w := range windows {
				for _, set := range pruneVariants(t) {
					st := newStrategy(t, "prune", set)
					_, evs, _ := replay(t, tr, "prune", st, options(t, w))
					events += len(evs)
				}
			}
		}
		return events
	}
	if !checkPrune {
		t.Fatal("tests must check prune's trigger")
	}
	if n := run(t, []*transcript.Transcript{pruneSession()}, []int{1_000_000, 30_000, 8_000}); n == 0 {
		t.Fatal("the made-up session never compacted")
	}
	t.Run("real corpus", func(t *testing.T) {
		if testing.Short() {
			t.Skip("long")
		}
		if n := run(t, realTranscripts(t, false), []int{60_000, 8_000}); n == 0 {
			t.Fatal("no compaction")
		}
	})
}
