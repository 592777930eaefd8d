package compaction

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

// TestReplayCostAndCacheByHand: two calls, chars4 metric, no overhead,
// default price $3 / $15 per million.
func TestReplayCostAndCacheByHand(t *testing.T) {
	b := &builder{}
	b.user(strings.Repeat("a", 400)) // 100 tokens
	b.say("ok")                      // 1 token, call 0, 10 output tokens
	b.user(strings.Repeat("b", 400)) // 100 tokens
	b.say("fine")                    // call 1
	run, events, _ := replay(t, b.transcript(), "none", none{}, options(t, 150))
	// call 0: prompt 100, nothing cached: write 100.
	// call 1: prompt 201, cached 100 (the previous prompt), write 101.
	want := (100*1.25*3 + 10*15 + 100*0.1*3 + 101*1.25*3 + 10*15) / 1e6
	if math.Abs(run.CostUSD-want) > 1e-12 {
		t.Errorf("cost %.10f, want %.10f", run.CostUSD, want)
	}
	if run.TokensProcessed != 301 || run.PeakContext != 201 || run.FinalContext != 202 || run.Overflows != 1 || len(events) != 0 {
		t.Errorf("run = %+v (window 150: call 1 overflows)", run)
	}
}

// TestCompactionBreaksTheCache: after a compaction the prompt is written anew.
func TestCompactionBreaksTheCache(t *testing.T) {
	sim := &Sim{Shared: NewShared(codingSession().transcript()), Metric: ruler(t, "chars4"), Overhead: 50, lastPrompt: -1}
	sim.append(10)
	sim.Call = 1
	sim.called()
	if got := sim.CacheRead(); got != sim.Prompt() {
		t.Errorf("cache read %d, want the whole prompt %d", got, sim.Prompt())
	}
	sim.replace(append([]Item{sim.Synthetic(transcript.RoleUser, "summary")}, sim.Ctx[5:]...))
	if got := sim.CacheRead(); got != 50 {
		t.Errorf("after a compaction the cache holds the overhead only: %d", got)
	}
	sim.called()
	sim.append(12)
	if got, want := sim.CacheRead(), sim.Prompt()-sim.ItemTokens(len(sim.Ctx)-1)-sim.ItemTokens(len(sim.Ctx)-2); got != want {
		t.Errorf("cache read %d, want everything but the 2 new messages %d", got, want)
	}
}

func TestThinkingStripping(t *testing.T) {
	b := &builder{}
	b.user("First question?")
	b.say("Answer one.")
	b.msgs[1].Blocks = append([]transcript.Block{{Kind: transcript.BlockThinking, Text: strings.Repeat("t", 400)}}, b.msgs[1].Blocks...)
	b.user("Second question?")
	for _, model := range []string{"claude-sonnet-4-5-20250929", "claude-opus-4-6"} {
		tr := b.transcript()
		tr.Model = model
		sim := &Sim{Shared: NewShared(tr), Metric: ruler(t, "chars4"), lastPrompt: -1}
		sim.strip = model == "claude-sonnet-4-5-20250929"
		sim.append(2)
		withThinking := sim.Tokens()
		sim.append(3)
		got := sim.Tokens() - withThinking
		want := 4 // "Second question?" = 16 chars
		if sim.strip {
			want -= 100 // the 400-character thinking leaves the prompt
		}
		if got != want {
			t.Errorf("%s: the new prompt changed the context by %d, want %d", model, got, want)
		}
	}
}

func TestSummarizeRun(t *testing.T) {
	events := []Event{
		{Call: 3, CompressionRatio: 0.8, AnchorKind: "natural", NeedKept: 1, NeedFacts: 2},
		{Call: 5, CompressionRatio: 0.7, AnchorKind: "synthetic"},            // within 2 calls: thrash
		{Call: 20, CompressionRatio: 0.05, AnchorKind: "none", NeedFacts: 0}, // frees < 10 %: thrash
		{Call: 40, CompressionRatio: 0.65, AnchorKind: "synthetic", NeedKept: 3, NeedFacts: 3},
	}
	var run Run
	summarize(&run, events)
	if run.Compactions != 4 || run.Thrash != 2 || math.Abs(*run.MeanCompression-0.55) > 1e-12 ||
		*run.SyntheticAnchorRate != 0.5 || *run.MeanNeedRecall != 0.75 {
		t.Errorf("run = %+v mean %v synth %v recall %v", run, *run.MeanCompression, *run.SyntheticAnchorRate, *run.MeanNeedRecall)
	}
}

func TestModeOnceCompactsOnceAtTheEnd(t *testing.T) {
	tr := codingSession().transcript()
	opt := options(t, 0)
	opt.Mode = ModeOnce
	sh := NewShared(tr)
	for _, spec := range Specs() {
		_, events := Replay(sh, spec.ID, spec.New(spec.Params()), opt, 0, 0)
		switch spec.ID {
		case "recorded", "mask", "prune", "truncate":
			// nothing to do: no recorded compaction, fewer than 10 outputs,
			// under every budget
			if len(events) != 0 {
				t.Errorf("%s: %d events", spec.ID, len(events))
			}
		default:
			if len(events) != 1 || events[0].Call != len(sh.Calls) {
				t.Errorf("%s: %d events %+v, want one after the last call", spec.ID, len(events), events)
			}
		}
	}
}

// TestRecordedReplaysTheRecording: the recorded strategy applies the
// transcript's own compactions where they happened.
func TestRecordedReplaysTheRecording(t *testing.T) {
	tr := codingSession().transcript()
	// A microcompaction clearing r0 before message 5 (call 2), a full
	// compaction before message 12 (call 6, at message 13).
	tr.Compactions = []transcript.Compaction{
		{Kind: transcript.CompactMicro, MessageIndex: 5, CompactedToolIDs: []string{"r0"}, PreTokens: 900},
		{Kind: transcript.CompactFull, MessageIndex: 12, PreTokens: 1200, Summary: "Summary: login fixed, logout test fixed; auth.go and logout.go changed."},
	}
	sh := NewShared(tr)
	st := newStrategy[RecordedParams](t, "recorded", nil)
	run, events := Replay(sh, "recorded", st, options(t, 0), 0, 0)
	if len(events) != 2 || run.Compactions != 2 {
		t.Fatalf("events %+v", events)
	}
	micro, full := events[0], events[1]
	c4 := ruler(t, "chars4")
	cleared := c4.Text("[Old tool result content cleared]") - c4.Text("package auth\nfunc Login() {}")
	if micro.Action != "microcompact" || micro.PreTokens != 900 || micro.Call != 2 || micro.TokensAfter-micro.TokensBefore != cleared || micro.OrphanResults != 0 {
		t.Errorf("microcompaction event %+v", micro)
	}
	if full.Action != "recorded" || full.PreTokens != 1200 || full.Call != 6 || full.KeptTurns != 0 || full.SummarizedTurns != 3 {
		t.Errorf("compaction event %+v", full)
	}
	if full.FileRecall == nil || *full.FileRecall != 1 {
		t.Errorf("file recall %v: the summary names auth.go and logout.go", full.FileRecall)
	}
}

func TestPruneProtectsTheNewestOutputs(t *testing.T) {
	b := &builder{}
	b.user("Read everything.")
	for i := 0; i < 8; i++ {
		id := string(rune('a' + i))
		b.say("", "Read:"+id+":/f"+id+".go").result(id, false, strings.Repeat("x", 40_000)) // 10,000 tokens each
	}
	b.user("Now summarise.")
	b.say("ok")
	b.user("Thanks.")
	b.say("bye")
	st := newStrategy[PruneParams](t, "prune", nil)
	opt := options(t, 1_000_000)
	_, events, sim := replay(t, b.transcript(), "prune", st, opt)
	// Before the call after "Thanks.", two user turns are behind the
	// outputs; walking back, 40,000 tokens (4 outputs) are protected and
	// the 4 older ones (40,000 > 20,000) are cleared.
	if len(events) != 1 || events[0].Action != "prune" {
		t.Fatalf("events %+v", events)
	}
	cleared := 0
	for _, it := range sim.Ctx {
		for _, bl := range it.Msg.Blocks {
			if bl.Kind == transcript.BlockToolResult && bl.Text == "[Old tool result content cleared]" {
				cleared++
			}
		}
	}
	if cleared != 4 || events[0].OrphanResults != 0 {
		t.Errorf("cleared %d outputs, orphans %d", cleared, events[0].OrphanResults)
	}
	// With a window the pruned context still overflows, it summarizes.
	opt = options(t, 30_000)
	_, events, sim = replay(t, b.transcript(), "prune", st, opt)
	if len(events) == 0 || events[len(events)-1].Action != "compact" || sim.Ctx[0].Orig != -1 {
		t.Errorf("events %+v context %s", events, shape(sim.Ctx))
	}
}

// TestCountKeepsOneTotalPerRuler: Count is asked with a fresh ruler value
// before every call; it must keep one running total per ruler name, correct
// after appends and compactions.
func TestCountKeepsOneTotalPerRuler(t *testing.T) {
	sim := &Sim{Shared: NewShared(codingSession().transcript()), Metric: ruler(t, "chars4"), lastPrompt: -1}
	count := func() int {
		n := 0
		for _, it := range sim.Ctx {
			n += ruler(t, "chars4msg").Message(it.Msg)
		}
		return n
	}
	for _, to := range []int{3, 8, 20} {
		sim.append(to)
		if got := sim.Count(ruler(t, "chars4msg")); got != count() {
			t.Errorf("after %d messages: Count %d, recount %d", to, got, count())
		}
	}
	sim.replace(append([]Item{sim.Synthetic(transcript.RoleUser, "summary text")}, sim.Ctx[10:]...))
	if got := sim.Count(ruler(t, "chars4msg")); got != count() || len(sim.aux) != 1 {
		t.Errorf("after a compaction: Count %d, recount %d, %d totals kept", got, count(), len(sim.aux))
	}
}

// TestPairsWithRepeatedIDsAndSameMessagePairs: recordings reuse tool ids
// (SWE-agent demonstrations) and put a result in the calling message
// (Codex web search); neither is an invalid context.
func TestPairsWithRepeatedIDsAndSameMessagePairs(t *testing.T) {
	b := &builder{}
	b.user("Go.")
	b.say("", "Bash:x:ls").result("x", false, "a") // 1 2
	b.say("", "Bash:x:ls").result("x", false, "b") // 3 4: the same id again
	b.say("searching", "WebSearch:w")              // 5
	b.msgs[5].Blocks = append(b.msgs[5].Blocks, transcript.Block{Kind: transcript.BlockToolResult, ToolID: "w", Text: "results"})
	b.say("done")
	sim := &Sim{Shared: NewShared(b.transcript()), Metric: ruler(t, "chars4"), lastPrompt: -1}
	sim.append(len(sim.T.Messages))
	for _, keep := range [][]int{{0, 1, 2, 3, 4, 5, 6}, {0, 3, 4, 5, 6}, {5, 6}} {
		ctx := make([]Item, len(keep))
		for i, k := range keep {
			ctx[i] = sim.Original(k)
		}
		sim.replace(ctx)
		sc := sim.scratch(len(sim.T.Messages), len(sim.Turns))
		sc.inc.mark++ // fresh marks, as markAfter makes
		for i := range sim.Ctx {
			sc.setAt(sim.Ctx[i].Orig, i)
		}
		if o, d := sc.pairs(sim.Shared, sim.Ctx); o != 0 || d != 0 {
			t.Errorf("keeping %v: %d orphans, %d dangling, want none", keep, o, d)
		}
	}
	// Dropping the second call keeps its result: one orphan.
	sim.replace([]Item{sim.Original(0), sim.Original(1), sim.Original(2), sim.Original(4)})
	sc := sim.scratch(len(sim.T.Messages), len(sim.Turns))
	sc.inc.mark++
	for i := range sim.Ctx {
		sc.setAt(sim.Ctx[i].Orig, i)
	}
	if o, d := sc.pairs(sim.Shared, sim.Ctx); o != 1 || d != 0 {
		t.Errorf("second call dropped: %d orphans, %d dangling, want 1 and 0", o, d)
	}
}

// TestRecordingsOwnLossIsNotCounted: a call the recording left unanswered
// is not held against a context that keeps it, even when a later call
// reuses its id and gets the result.
func TestRecordingsOwnLossIsNotCounted(t *testing.T) {
	b := &builder{}
	b.user("Go.")
	b.say("", "Bash:x:ls")                         // 1: never answered
	b.say("", "Bash:x:ls").result("x", false, "a") // 2 3
	b.say("done")
	sim := &Sim{Shared: NewShared(b.transcript()), Metric: ruler(t, "chars4"), lastPrompt: -1}
	sim.append(len(sim.T.Messages))
	before := slices.Clone(sim.Ctx) // replace rewrites the context in place
	sim.replace(append([]Item{sim.Synthetic(transcript.RoleUser, "s")}, before[1:]...))
	var ev Event
	measure(sim, &ev, before, sim.Tokens(), &Outcome{})
	if ev.OrphanResults != 0 || ev.DanglingCalls != 0 {
		t.Errorf("%d orphans, %d dangling: the recording itself lost the first call's result", ev.OrphanResults, ev.DanglingCalls)
	}
}

// TestRecordedOnA1MWindowSession: a claude-opus-5 session whose recorded
// context exceeds the 200k default ran on the 1M variant: the recorded
// replay judges it against 1M and reports no overflow. A session whose
// recording stays within its table window keeps it.
func TestRecordedOnA1MWindowSession(t *testing.T) {
	tests := []struct {
		model      string
		real       int64
		window     int
		source     string
		overflows  int
		overrideTo int
	}{
		{"claude-opus-5", 679_000, 1_000_000, "inferred", 0, 0},
		{"claude-opus-4-5", 150_000, 200_000, "table", 1, 0},
		{"claude-opus-5", 679_000, 100_000, "flag", 1, 100_000},
	}
	for _, tc := range tests {
		b := &builder{}
		b.user(strings.Repeat("a ", 600_000)) // 300,000 chars4 tokens
		b.say("ok")
		tr := b.transcript()
		tr.Model = tc.model
		tr.Messages[1].Model = tc.model
		tr.Messages[1].Usage.Input = tc.real
		spec, _ := SpecByID("recorded")
		run, _ := Replay(NewShared(tr), "recorded", spec.New(spec.Params()), options(t, tc.overrideTo), 0, 0)
		if run.Window != tc.window || run.WindowSource != tc.source || run.Overflows != tc.overflows {
			t.Errorf("%s real %d: window %d (%s), %d overflows; want %d (%s), %d", tc.model, tc.real,
				run.Window, run.WindowSource, run.Overflows, tc.window, tc.source, tc.overflows)
		}
	}
}

// TestRecordedAppliesUnrecordedDrops: the real context falls by 40 % with
// no compaction recorded; the recorded replay clears the oldest tool
// outputs (as server-side context editing does) until its count fell as
// much, and records a "drop" event. Other strategies do not see it.
func TestRecordedAppliesUnrecordedDrops(t *testing.T) {
	b := &builder{}
	b.user("go")
	for i := 0; i < 6; i++ {
		id := fmt.Sprintf("t%d", i)
		b.say("", "Bash:"+id+":ls")
		b.result(id, false, strings.Repeat("x", 40_000)) // 10,000 chars4 tokens
	}
	b.say("done")
	tr := b.transcript()
	reals := []int64{1_000, 11_000, 21_000, 31_000, 41_000, 51_000, 30_000} // the last call: a drop of 21,000
	k := 0
	for i := range tr.Messages {
		if tr.Messages[i].Role == transcript.RoleAssistant {
			tr.Messages[i].Usage.Input = reals[k]
			k++
		}
	}
	spec, _ := SpecByID("recorded")
	run, evs := Replay(NewShared(tr), "recorded", spec.New(spec.Params()), options(t, 0), 0, 0)
	if len(evs) != 1 || evs[0].Action != "drop" || evs[0].Call != 6 {
		t.Fatalf("events %+v, want one drop before call 6", evs)
	}
	none, evs, _ := replay(t, tr, "none", none{}, options(t, 0))
	if len(evs) != 0 || none.Prompts[6] <= none.Prompts[5] {
		t.Errorf("a strategy other than recorded saw the drop: %+v", evs)
	}
	// 21,000 tokens fall: three 10,000-token outputs are cleared.
	if full, after := none.Prompts[6], run.Prompts[6]; after > full-29_000 || after < full-31_000 {
		t.Errorf("prompt %d without the drop, %d with it: want 30,000 fewer", full, after)
	}
}
