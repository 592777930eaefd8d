package anchors

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

func TestScoreMath(t *testing.T) {
	cases := []struct {
		s       Score
		p, r, f float64
		pok     bool
		rok     bool
	}{
		{Score{TP: 2, FP: 2, FN: 6}, 0.5, 0.25, 1.0 / 3, true, true},
		{Score{TP: 0, FP: 3, FN: 1}, 0, 0, 0, true, true},
		{Score{FN: 4}, 0, 0, 0, false, true},
		{Score{FP: 4}, 0, 0, 0, true, false},
		{Score{}, 0, 0, 0, false, false},
	}
	for _, c := range cases {
		p, pok := c.s.Precision()
		r, rok := c.s.Recall()
		f, fok := c.s.F1()
		if pok != c.pok || rok != c.rok || fok != (c.pok && c.rok) || math.Abs(p-c.p) > 1e-12 || math.Abs(r-c.r) > 1e-12 || math.Abs(f-c.f) > 1e-12 {
			t.Errorf("%+v: P %v %v R %v %v F %v %v", c.s, p, pok, r, rok, f, fok)
		}
	}
}

// TestCount checks scoring by hand on five turns.
func TestCount(t *testing.T) {
	codelet := mustBuiltin(t, "codelet")
	pass := "all tests passed"
	ts := turns(
		turn("a").run("Edit", "a.go", true, "").run("Bash", "t", true, pass),           // 0: task-completion
		turn("b").run("Bash", "t", false, "boom"),                                      // 1: nothing
		turn("c").prevErr().run("Edit", "a.go", true, "").run("Bash", "t", true, pass), // 2: error-resolution
		turn("d"), // 3
		turn("e").run("Write", "b.go", true, "").run("Bash", "t", true, pass), // 4: task-completion
	)
	e := codelet.Evaluate(ts)
	gold := NewTruth(len(ts))
	gold.Add(0, TaskCompletion)
	gold.Add(2, TaskCompletion) // detected as error-resolution: counts overall, not per type
	gold.Add(3, UserCheckpoint)
	gold.Add(3, TaskCompletion)  // same turn twice: one labelled turn
	gold.Add(9, ErrorResolution) // beyond the last turn: a miss
	c := Count(e, gold, nil)
	if c.Anchors != 3 || c.Synthetic != 0 || c.NoNatural != 0 || c.GoldTurns != 4 || c.GoldTranscripts != 1 || c.EvidenceTranscripts != 0 {
		t.Fatalf("counts: %+v", c)
	}
	// Overall: detected {0,2,4}, labelled {0,2,3,9}: TP 2 (0,2), FP 1 (4), FN 2 (3,9).
	if c.All.Gold != (Score{TP: 2, FP: 1, FN: 2}) || c.All.Evidence != (Score{}) {
		t.Errorf("all: %+v", c.All)
	}
	// task-completion: detected {0,4}, labelled {0,2,3}: TP 1, FP 1, FN 2.
	if got := c.ByType[1].Gold; got != (Score{TP: 1, FP: 1, FN: 2}) {
		t.Errorf("task-completion: %+v", got)
	}
	// error-resolution: detected {2}, labelled {9}: TP 0, FP 1, FN 1.
	if got := c.ByType[0].Gold; got != (Score{TP: 0, FP: 1, FN: 1}) {
		t.Errorf("error-resolution: %+v", got)
	}
	// user-checkpoint: labelled {3}: FN 1.
	if got := c.ByType[2].Gold; got != (Score{FN: 1}) {
		t.Errorf("user-checkpoint: %+v", got)
	}
	// Rules: error-resolution fired {2}: TP 1, FN 3 (0,3,9); task-completion fired {0,4}: TP 1 FP 1 FN 3 (2,3,9).
	want := []RuleCounts{
		{Matches: 1, Fires: 1, Scores: Scores{Gold: Score{TP: 1, FN: 3}}},
		{Matches: 2, Fires: 2, Scores: Scores{Gold: Score{TP: 1, FP: 1, FN: 3}}},
	}
	if !reflect.DeepEqual(c.Rules, want) {
		t.Errorf("rules: %+v", c.Rules)
	}

	// fspec on a transcript without natural anchors: synthetic at the last
	// turn; scored against evidence with a label on it.
	fspec := mustBuiltin(t, "fspec")
	ts2 := turns(turn("q"), turn("r"))
	ev := NewTruth(2)
	ev.Add(1, FeatureMilestone)
	c2 := Count(fspec.Evaluate(ts2), nil, ev)
	if c2.Synthetic != 1 || c2.NoNatural != 1 || c2.Anchors != 0 || c2.SyntheticScore.Evidence != (Score{TP: 1}) ||
		c2.All.Evidence != (Score{FN: 1}) || c2.EvidenceTurns != 1 {
		t.Errorf("fspec: %+v", c2)
	}

	var tally Tally
	tally.Add([]SetCounts{c})
	tally.Add([]SetCounts{c2, c})
	if len(tally.Sets) != 2 || tally.Sets[0].Set != "codelet" || tally.Sets[0].Transcripts != 2 ||
		tally.Sets[0].All.Gold != (Score{TP: 4, FP: 2, FN: 4}) || tally.Sets[1].Synthetic != 1 {
		t.Errorf("tally: %+v %+v", tally.Sets[0], tally.Sets[1])
	}
}

func todoInput(items ...string) string {
	var parts []string
	for i := 0; i+1 < len(items); i += 2 {
		parts = append(parts, `{"content":"`+items[i]+`","status":"`+items[i+1]+`","activeForm":"x"}`)
	}
	return `{"todos":[` + strings.Join(parts, ",") + `]}`
}

func TestEvidence(t *testing.T) {
	todo := func(b *tb, in string) *tb {
		b.t.ToolCalls = append(b.t.ToolCalls, transcript.ToolCall{ID: "todo" + in[:5], Name: "TodoWrite", Input: in})
		return b
	}
	ts := turns(
		todo(turn("plan"), todoInput("A", "in_progress", "B", "pending")).
			run("Bash", "go test ./...", false, "--- FAIL: TestA\nFAIL"),
		todo(turn("go on"), todoInput("A", "completed", "B", "in_progress")).
			run("Bash", "go test ./...", true, "ok  \tpkg\t0.1s").
			run("Bash", `git add -A && git commit -m "fix A"`, true, "[main 1a2b3c4] fix A\n 1 file changed"),
		todo(turn("more"), todoInput("A", "completed", "B", "completed", "C", "completed")).
			run("Bash", "npm test 2>&1 | tail", true, "Tests: 1 failed, 3 passed").
			run("Bash", `git commit -m x`, true, "Command running in background with ID: b1"),
		turn("again").run("Bash", "npm run test", true, "Tests: 4 passed").
			run("Bash", "git -C repo commit --amend --no-edit", true, "[detached HEAD 0123abcd] x"),
		turn("tail").run("Bash", "npm test", false, "Exit code 1\n1 failing").run("Bash", "npm test", true, "4 passing"),
	)
	tr := &transcript.Transcript{Compactions: []transcript.Compaction{
		{Kind: transcript.CompactFull, Trigger: "auto", PreTokens: 160000, MessageIndex: 5},
		{Kind: transcript.CompactMicro, MessageIndex: 1},
	}}
	// Message spans: turn k covers messages [2k, 2k+2).
	for i := range ts {
		ts[i].Start, ts[i].End = 2*i, 2*i+2
	}
	got := DeriveEvidence(tr, ts, EvidenceKinds)
	want := []Evidence{
		{Turn: 1, Type: TaskCompletion, Kind: EvidenceTodo, Note: "1 todo completed"},
		{Turn: 1, Type: ErrorResolution, Kind: EvidenceTestFix, Note: "go test fixed (failing since turn 0)"},
		{Turn: 1, Type: FeatureMilestone, Kind: EvidenceCommit, Note: "[main 1a2b3c4] fix A"},
		{Turn: 2, Type: TaskCompletion, Kind: EvidenceTodo, Note: "2 todos completed"},
		{Turn: 2, Type: UserCheckpoint, Kind: EvidenceCompaction, Note: "compaction (auto, 160000 tokens)"},
		{Turn: 3, Type: ErrorResolution, Kind: EvidenceTestFix, Note: "npm test fixed (failing since turn 2)"},
		{Turn: 3, Type: FeatureMilestone, Kind: EvidenceCommit, Note: "[detached HEAD 0123abcd] x"},
	}
	// Turn 4 fails and passes within the turn: not a fix of an earlier
	// turn's failure, so no label.
	sortEvidence(got)
	sortEvidence(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got:\n%+v\nwant:\n%+v", got, want)
	}
	if got := DeriveEvidence(tr, ts, []EvidenceKind{EvidenceCommit}); len(got) != 2 {
		t.Errorf("commit only: %+v", got)
	}
}

func sortEvidence(es []Evidence) {
	for i := 1; i < len(es); i++ {
		for j := i; j > 0 && (es[j].Turn < es[j-1].Turn || es[j].Turn == es[j-1].Turn && es[j].Kind < es[j-1].Kind); j-- {
			es[j], es[j-1] = es[j-1], es[j]
		}
	}
}

func TestTestRunner(t *testing.T) {
	cases := map[string]string{
		"go test ./... -count=1":          "go test",
		"cd x && python -m pytest -q":     "pytest",
		"npm run test -- --watch=false":   "npm test",
		"mix test test/a_test.exs 2>&1":   "mix test",
		"./gradlew test":                  "./gradlew test",
		"cargo nextest run":               "cargo nextest run",
		"echo 'go testing'":               "",
		"git commit -m 'make tests pass'": "",
		"ls":                              "",
	}
	for cmd, want := range cases {
		if got := testRunner(cmd); got != want {
			t.Errorf("%q: %q, want %q", cmd, got, want)
		}
	}
}

func TestParseEvidenceKinds(t *testing.T) {
	if k, err := ParseEvidenceKinds("all"); err != nil || len(k) != 4 {
		t.Fatal(k, err)
	}
	if k, err := ParseEvidenceKinds("none"); err != nil || k != nil {
		t.Fatal(k, err)
	}
	if k, err := ParseEvidenceKinds("commit, todo,commit"); err != nil || !reflect.DeepEqual(k, []EvidenceKind{EvidenceTodo, EvidenceCommit}) {
		t.Fatal(k, err)
	}
	if _, err := ParseEvidenceKinds("todos"); err == nil {
		t.Fatal("typo accepted")
	}
}

func TestParseLabels(t *testing.T) {
	data := `{"transcript": "s1", "turn": 0, "type": "task-completion", "note": "tests pass"}
# a comment

{"transcript": "sub/x.jsonl", "turn": 3, "type": "error-resolution", "extra": 1}
{"transcript": "s2", "turn": -1, "type": "none"}
`
	ls, err := ParseLabels([]byte(data), "corp/labels.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 3 || ls[0].Note != "tests pass" || ls[1].Line != 4 || ls[2].Turn != -1 || ls[2].Type != "" {
		t.Fatalf("%+v", ls)
	}
	set := NewLabelSet(ls, "/work")
	if l, ok := set.For("s1", "elsewhere.jsonl"); !ok || len(l) != 1 {
		t.Errorf("by id: %v %v", l, ok)
	}
	if l, ok := set.For("other", "corp/sub/x.jsonl"); !ok || len(l) != 1 || l[0].Turn != 3 {
		t.Errorf("by relative path: %v %v", l, ok)
	}
	if l, ok := set.For("other", "/work/corp/./sub/x.jsonl"); !ok || len(l) != 1 {
		t.Errorf("by absolute path: %v %v", l, ok)
	}
	if l, ok := set.For("s2", "y"); !ok || len(l) != 0 {
		t.Errorf("none: %v %v", l, ok)
	}
	if _, ok := set.For("s3", "corp/s3.jsonl"); ok {
		t.Error("unlabelled transcript reported labelled")
	}
	if un := set.Unmatched([]string{"s1"}, []string{"corp/sub/x.jsonl"}); len(un) != 1 || un[0].Transcript != "s2" {
		t.Errorf("unmatched: %+v", un)
	}

	bad := []struct{ line, want string }{
		{`{"transcript": "s", "turn": 1, "type": "task-complete"}`, `x.jsonl:1: unknown anchor type "task-complete"`},
		{`{"transcript": "s", "turn": "1", "type": "task-completion"}`, `x.jsonl:1: "turn" must be a number`},
		{`{"transcript": "s", "turn": 1.5, "type": "task-completion"}`, `"turn" must be an integer`},
		{`{"transcript": "s", "turn": -1, "type": "task-completion"}`, `turn -1 goes with type "none"`},
		{`{"transcript": "s", "turn": 2, "type": "none"}`, `type "none" goes with turn -1`},
		{`{"turn": 2, "type": "none"}`, `"transcript" must be a non-empty string`},
		{`{"transcript": "s", "turn": 2, "type": "task-completion"`, `x.jsonl:1: malformed JSON`},
		{`[1]`, `a label is a JSON object`},
	}
	for _, b := range bad {
		_, err := ParseLabels([]byte(b.line+"\n"), "x.jsonl")
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: err %v, want %q", b.line, err, b.want)
		}
	}
}

func TestEvidencePrefilters(t *testing.T) {
	if testRunnerPre == nil || failurePre == nil {
		t.Fatal("evidence regexes lost their literal prefilters")
	}
	for _, out := range []string{"--- FAIL: TestX", "FAIL\tpkg", "3 failed, 2 passed", "test result: FAILED. 1 passed", "1 failing"} {
		if testVerdict(&transcript.ToolResult{Success: true, Output: out}) != verdictFail {
			t.Errorf("%q not a failure", out)
		}
	}
	for _, out := range []string{"ok  \tpkg\t0.1s", "10 tests, 0 failures", "Tests: 4 passed"} {
		if testVerdict(&transcript.ToolResult{Success: true, Output: out}) != verdictPass {
			t.Errorf("%q not a pass", out)
		}
	}
}
