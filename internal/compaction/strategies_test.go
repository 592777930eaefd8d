package compaction

import (
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

// codingSession is a 8-turn session: turns 1 and 3 are codelet anchors
// (Edit + a successful result whose output has "test" and "passed").
func codingSession() *builder {
	b := &builder{}
	b.user("Please fix the login bug in auth.go.") // turn 0
	b.say("Reading it.", "Read:r0:/p/auth.go").result("r0", false, "package auth\nfunc Login() {}")
	b.say("The token check is inverted.")
	b.user("Go ahead and fix it.") // turn 1: anchor
	b.say("", "Edit:e1:/p/auth.go").result("e1", false, "The file /p/auth.go has been updated.")
	b.say("", "Bash:t1:go test ./...").result("t1", false, "ok  auth 0.1s\n3 tests passed")
	b.say("Fixed. All tests pass.")
	b.user("Now add a logout handler.") // turn 2: failing test
	b.say("", "Write:w2:/p/logout.go").result("w2", false, "File created")
	b.say("", "Bash:t2:go test ./...").result("t2", true, "Error: Exit code 1\n--- FAIL: TestLogout\nFAIL")
	b.say("A test fails.")
	b.user("Fix the failing test.") // turn 3: error-resolution anchor
	b.say("", "Edit:e3:/p/logout.go").result("e3", false, "updated")
	b.say("", "Bash:t3:go test ./...").result("t3", false, "all 4 tests passed")
	b.say("Fixed the logout test.")
	b.user("What does parseConfig do?") // turn 4
	b.say("It reads config.yaml.")
	b.user("Update the README.") // turn 5
	b.say("", "Edit:e5:/p/README.md").result("e5", false, "updated")
	b.say("Updated the README.")
	b.user("Thanks. Summarise the session.") // turn 6
	b.say("We fixed login and logout.")
	b.user("Bye.") // turn 7
	b.say("Bye!")
	return b
}

func TestCodeletKeepsFromMostRecentOlderAnchor(t *testing.T) {
	tr := codingSession().transcript()
	opt := options(t, 0)
	opt.Mode = ModeOnce
	_, events, sim := replay(t, tr, "codelet", newStrategy[AnchorParams](t, "codelet", nil), opt)
	if len(events) != 1 {
		t.Fatalf("%d events", len(events))
	}
	ev := events[0]
	// 8 turns, keep 3 (5..7); older anchors at 1 and 3: keep from 3.
	if ev.AnchorKind != "natural" || !ev.AnchorUsed || ev.AnchorRule != "error-resolution" || ev.AnchorType != "error-resolution" {
		t.Errorf("anchor = %s %s %s used=%v", ev.AnchorKind, ev.AnchorType, ev.AnchorRule, ev.AnchorUsed)
	}
	if ev.KeptTurns != 5 || ev.SummarizedTurns != 3 {
		t.Errorf("kept %d summarized %d, want 5 and 3", ev.KeptTurns, ev.SummarizedTurns)
	}
	first := sim.Ctx[1]
	if sim.Ctx[0].Orig != -1 || first.Msg.Text() != "Fix the failing test." {
		t.Errorf("context = %s, starting %q", shape(sim.Ctx), first.Msg.Text())
	}
	summary := sim.Ctx[0].Msg.Text()
	want := "Active files: /p/auth.go, /p/logout.go, /p/README.md\n" +
		"Goals: Please fix the login bug in auth\n" +
		"Build: passing\n\nKey outcomes:\n" +
		"✓ Modified /p/auth.go: Reading it\n" +
		"[ANCHOR] Fixed. All tests pass.\n" +
		"✓ Modified /p/logout.go: A test fails"
	if summary != want {
		t.Errorf("summary:\n%s\nwant:\n%s", summary, want)
	}
}

func TestCodeletWithoutOlderAnchorKeepsRecentTurns(t *testing.T) {
	b := &builder{}
	for i := 0; i < 6; i++ {
		b.user("Question number " + string(rune('A'+i)) + ".").say("Answer.")
	}
	opt := options(t, 0)
	opt.Mode = ModeOnce
	_, events, sim := replay(t, b.transcript(), "codelet", newStrategy[AnchorParams](t, "codelet", nil), opt)
	ev := events[0]
	if ev.AnchorKind != "none" || ev.AnchorUsed || ev.KeptTurns != 3 || ev.SummarizedTurns != 3 {
		t.Errorf("event = %+v", ev)
	}
	if shape(sim.Ctx) != "s 6 7 8 9 10 11" {
		t.Errorf("context = %s", shape(sim.Ctx))
	}
	// fspec falls back to a synthetic anchor at the last turn, which the
	// selection ignores (it is among the recent turns): same cut.
	_, events, sim = replay(t, b.transcript(), "fspec", newStrategy[AnchorParams](t, "fspec", nil), opt)
	if ev := events[0]; ev.AnchorKind != "synthetic" || ev.AnchorUsed || ev.AnchorType != "user-checkpoint" {
		t.Errorf("fspec event = %+v", ev)
	}
	if shape(sim.Ctx) != "s 6 7 8 9 10 11" || !strings.HasPrefix(sim.Ctx[0].Msg.Text(), "Active files: None\nGoals: Continue conversation\nBuild: unknown") {
		t.Errorf("fspec context = %s, summary %q", shape(sim.Ctx), sim.Ctx[0].Msg.Text())
	}
}

// TestCodeletTriggerIsCacheAware: effective = prompt − 0.9 × cache read, so
// with the cache warm the trigger waits far past 90 % of the window.
func TestCodeletTriggerIsCacheAware(t *testing.T) {
	st := newStrategy[AnchorParams](t, "codelet", nil)
	sim := &Sim{Shared: NewShared(codingSession().transcript()), Window: 1000, Metric: ruler(t, "chars4")}
	sim.append(len(sim.T.Messages))
	sim.Overhead = 950 - sim.Tokens()
	if fire, eff := st.Trigger(sim); !fire || eff != 950 {
		t.Errorf("first call, nothing cached: fire %v effective %d, want fire at 950 > 900", fire, eff)
	}
	sim.called() // the whole prompt is now cached
	sim.Call = 1
	if fire, eff := st.Trigger(sim); fire || eff != 95 {
		t.Errorf("warm cache: fire %v effective %d, want 950 − 0.9×950 = 95, no fire", fire, eff)
	}
}

// windowSession has 14 messages after the first prompt: the boundary falls
// on a tool result and must walk back to its call.
func windowSession() *builder {
	b := &builder{}
	b.user("Build a flashcard app with spaced repetition.")                                             // 0
	b.say("Starting.", "Write:w0:src/db.ts").result("w0", false, "created")                             // 1 2
	b.say("", "Bash:b1:npm install drizzle-orm").result("b1", false, "added 12 packages")               // 3 4
	b.say("", "Read:r1:src/a.ts", "Read:r2:src/b.ts").result("r1", false, "a").result("r2", false, "b") // 5 6 7
	b.say("", "Edit:e1:src/sm2.ts").result("e1", false, "updated")                                      // 8 9
	b.say("SM-2 done.")                                                                                 // 10
	b.user("Add AI integration.")                                                                       // 11
	b.say("", "Bash:b2:npm test").result("b2", true, "Error: Exit code 1\nTypeError: x is undefined")   // 12 13
	b.say("Fixing the type error.")                                                                     // 14
	return b
}

func TestWindowNeverSplitsAToolPair(t *testing.T) {
	tr := windowSession().transcript()
	opt := options(t, 0)
	opt.Mode = ModeOnce
	_, events, sim := replay(t, tr, "window", newStrategy[WindowParams](t, "window", nil), opt)
	// 15 messages + system = 16 in the seed's array (index i is recorded
	// message i−1); boundary = 16 − 10 = 6 is message 5, a call: kept from 5.
	if got := shape(sim.Ctx); got != "s 5 6 7 8 9 10 11 12 13 14" {
		t.Errorf("context = %s", got)
	}
	if ev := events[0]; ev.OrphanResults != 0 || ev.DanglingCalls != 0 {
		t.Errorf("orphans %d dangling %d", ev.OrphanResults, ev.DanglingCalls)
	}
	// One message more moves the boundary onto tool result 7; it walks back
	// over 7 and 6 to call 5.
	tr2 := windowSession().say("more").transcript()
	_, _, sim = replay(t, tr2, "window", newStrategy[WindowParams](t, "window", nil), opt)
	if got := shape(sim.Ctx); got != "s 5 6 7 8 9 10 11 12 13 14 15" {
		t.Errorf("boundary on a tool result: context = %s", got)
	}
	summary := sim.Ctx[0].Msg
	if summary.Role != transcript.RoleAssistant || !strings.HasPrefix(summary.Text(), "## Session Summary (Compaction Round 1)\n\n### Original Task\nBuild a flashcard app with spaced repetition.") {
		t.Errorf("summary = %q", summary.Text())
	}
	for _, want := range []string{"| src/db.ts | Created |", "- Installed/ran: `npm install drizzle-orm`"} {
		if !strings.Contains(summary.Text(), want) {
			t.Errorf("summary lacks %q:\n%s", want, summary.Text())
		}
	}
}

func TestWindowThresholdAndMinimumMessages(t *testing.T) {
	w := newStrategy[WindowParams](t, "window", nil).(*window)
	sim := &Sim{Shared: NewShared(windowSession().transcript()), Metric: ruler(t, "chars4"), Rulers: rulers}
	if got := w.threshold(sim); got != 93_600 {
		t.Errorf("default threshold = %d, want (128000−2000−4000−5000)×0.8 = 93600", got)
	}
	sim.Override = 20_000
	if got := w.threshold(sim); got != 7_200 {
		t.Errorf("threshold with --window 20000 = %d, want 7200", got)
	}
	sim.append(10) // 10 messages + system = 11 = keepLast + 1: never compact
	sim.Overhead = 1_000_000
	if fire, _ := w.Trigger(sim); fire {
		t.Error("fired with messages ≤ keepLast + 1")
	}
	sim.append(11)
	if fire, est := w.Trigger(sim); !fire || est < 1_000_000 {
		t.Errorf("fire %v est %d", fire, est)
	}
}

func TestWindowChainsSummaries(t *testing.T) {
	b := &builder{}
	b.user("Write the parser for the config format.")
	for i := 0; i < 70; i++ {
		id := "c" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		b.say(strings.Repeat("Working on step. ", 30), "Edit:"+id+":src/f"+id+".go").result(id, false, strings.Repeat("ok ", 200))
		if i == 20 {
			b.user("Now the writer too.")
		}
	}
	opt := options(t, 20_000)
	_, events, sim := replay(t, b.transcript(), "window", newStrategy[WindowParams](t, "window", nil), opt)
	if len(events) < 2 {
		t.Fatalf("%d events, want at least two rounds", len(events))
	}
	s := sim.Ctx[0].Msg.Text()
	n := len(events)
	if !strings.HasPrefix(s, "## Session Summary (Compaction Round ") || !strings.Contains(s, "### Original Task\nWrite the parser for the config format.") ||
		!strings.Contains(s, "incorporates context from") || !strings.Contains(s, "src/fcaa.go") {
		t.Errorf("round %d summary does not carry round 1:\n%s", n, s)
	}
	for _, ev := range events {
		if ev.OrphanResults+ev.DanglingCalls != 0 {
			t.Errorf("round %d: orphans %d dangling %d", ev.Round, ev.OrphanResults, ev.DanglingCalls)
		}
	}
}

func TestMaskKeepsExactlyTheNewestObservations(t *testing.T) {
	b := &builder{}
	b.user("Explore the repo.")
	for i := 0; i < 15; i++ {
		id := string(rune('a' + i))
		b.say("", "Bash:"+id+":ls "+id).result(id, false, "line1\nline2\nline3")
	}
	b.say("Done.")
	opt := options(t, 0)
	_, events, sim := replay(t, b.transcript(), "mask", newStrategy[MaskParams](t, "mask", nil), opt)
	// Before calls 11..15 an 11th observation is unmasked: 5 events.
	if len(events) != 5 {
		t.Errorf("%d mask events, want 5", len(events))
	}
	masked, kept := 0, 0
	for _, it := range sim.Ctx {
		for _, bl := range it.Msg.Blocks {
			if bl.Kind != transcript.BlockToolResult {
				continue
			}
			if bl.Text == "Old environment output: (3 lines omitted)" {
				masked++
			} else {
				kept++
			}
		}
	}
	if kept != 10 || masked != 5 {
		t.Errorf("kept %d masked %d", kept, masked)
	}
	for _, ev := range events {
		if ev.OrphanResults+ev.DanglingCalls != 0 || ev.SummarizedTurns != 0 || ev.Action != "mask" {
			t.Errorf("event %+v", ev)
		}
	}
}

func TestTruncateDropsWholeTurns(t *testing.T) {
	b := &builder{}
	for i := 0; i < 6; i++ {
		id := string(rune('a' + i))
		b.user(strings.Repeat("x", 400)).say("", "Read:"+id+":/f").result(id, false, strings.Repeat("y", 400)).say("ok")
	}
	// each turn ≈ 100 + 5 + 100 + 1 tokens (chars4); 6 turns ≈ 1236
	opt := options(t, 1000)
	_, events, sim := replay(t, b.transcript(), "truncate", newStrategy[TruncateParams](t, "truncate", nil), opt)
	if len(events) == 0 {
		t.Fatal("no event")
	}
	for _, ev := range events {
		if ev.TokensAfter > 600 || ev.OrphanResults+ev.DanglingCalls != 0 || ev.SummaryTokens != 0 {
			t.Errorf("event %+v", ev)
		}
	}
	if !sim.Ctx[0].Msg.IsPrompt() {
		t.Errorf("context starts mid-turn: %s", shape(sim.Ctx))
	}
}

func TestCodexKeepsNewestUserMessagesWithinBudget(t *testing.T) {
	b := &builder{}
	b.user(strings.Repeat("a", 400)) // 100 tokens
	b.say("x", "Read:r:/f").result("r", false, "content")
	b.user(strings.Repeat("b", 400))
	b.say("y")
	b.user(strings.Repeat("c", 200)) // 50 tokens
	b.say("z")
	opt := options(t, 0)
	opt.Mode = ModeOnce
	st := newStrategy[CodexParams](t, "codex", func(p *CodexParams) { p.UserBudget = 120 })
	_, _, sim := replay(t, b.transcript(), "codex", st, opt)
	// newest first: c (50) fits, b (100) is cut to the 70 left; a is dropped.
	if got := shape(sim.Ctx); got != "3m 5 s" {
		t.Fatalf("context = %s", got)
	}
	if n := len(sim.Ctx[0].Msg.Text()); n != 280 {
		t.Errorf("cut message has %d chars, want 70 tokens × 4", n)
	}
	if !strings.HasPrefix(sim.Ctx[2].Msg.Text(), codexSummaryPrefix) {
		t.Error("summary lacks Codex's prefix")
	}
}

func TestStructuredListsFilesNoSentenceMentions(t *testing.T) {
	b := &builder{}
	b.user("Refactor the storage layer. Don't touch the public API.")
	b.say("Looking.", "Read:r1:/p/api.go", "Read:r2:/p/store.go").result("r1", false, "x").result("r2", false, "y")
	b.say("", "Edit:e1:/p/store.go", "Write:w1:/p/cache.go").result("e1", false, "ok").result("w1", false, "ok")
	b.say("Done with the first part.")
	opt := options(t, 0)
	opt.Mode = ModeOnce
	_, events, sim := replay(t, b.transcript(), "structured", newStrategy[StructuredParams](t, "structured", nil), opt)
	s := sim.Ctx[0].Msg.Text()
	for _, want := range []string{"## Goal\n- Refactor the storage layer", "## Constraints & Preferences\n- Don't touch the public API",
		"### Blocked\n- (none)", "<read-files>\n/p/api.go\n</read-files>", "<modified-files>\n/p/cache.go\n/p/store.go\n</modified-files>"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	if len(sim.Ctx) != 1 || events[0].FileRecall == nil || *events[0].FileRecall != 1 {
		t.Errorf("context %s, file recall %v", shape(sim.Ctx), events[0].FileRecall)
	}
}

func TestStructuredAccumulatesFilesAndMergesAcrossRounds(t *testing.T) {
	b := &builder{}
	b.user("Port the CLI to Go. Always keep flags compatible.")
	b.say("", "Edit:e1:/p/main.go").result("e1", false, strings.Repeat("ok ", 400))
	b.say(strings.Repeat("Step one done. ", 40))
	b.user("Now the config loader.")
	b.say("", "Read:r2:/p/config.go").result("r2", false, strings.Repeat("cfg ", 400))
	b.say(strings.Repeat("Step two done. ", 40))
	b.user("And tests.")
	b.say("", "Write:w3:/p/config_test.go").result("w3", false, strings.Repeat("ok ", 400))
	b.say(strings.Repeat("Step three done. ", 40))
	b.user("Thanks.")
	b.say("ok")
	st := newStrategy[StructuredParams](t, "structured", func(p *StructuredParams) { p.Reserve = 0 })
	opt := options(t, 550)
	_, events, sim := replay(t, b.transcript(), "structured", st, opt)
	if len(events) < 2 {
		t.Fatalf("%d events", len(events))
	}
	s := sim.Ctx[0].Msg.Text()
	for _, want := range []string{"- Port the CLI to Go", "- Always keep flags compatible", "- And tests",
		"<read-files>\n/p/config.go\n</read-files>", "<modified-files>\n/p/config_test.go\n/p/main.go\n</modified-files>"} {
		if !strings.Contains(s, want) {
			t.Errorf("round %d summary lacks %q:\n%s", len(events), want, s)
		}
	}
}
