package compaction

import (
	"maps"
	"reflect"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

// TestGatherCachedMatchesFresh: gather over recorded messages, which reads
// their sentences from the transcript's cache (filled by earlier gathers
// over other spans), finds what gather over copies of the messages finds,
// where every sentence is looked at afresh. Real corpus, every span of up
// to 40 messages starting at every 7th message. Both paths share their
// sentence rules, which this cannot check: TestGatherHandComputed holds
// them to figures worked out by hand.
func TestGatherCachedMatchesFresh(t *testing.T) {
	for _, tr := range corpus(t) {
		sh := NewShared(tr)
		n := len(tr.Messages)
		for start := 0; start < n; start += 7 {
			end := min(n, start+1+start%40)
			recorded, copies := make([]Item, 0, end-start), make([]Item, 0, end-start)
			for o := start; o < end; o++ {
				m := tr.Messages[o]
				recorded = append(recorded, Item{Msg: &tr.Messages[o], Orig: o})
				copies = append(copies, Item{Msg: &m, Orig: o})
			}
			got, want := gather(sh, recorded), gather(sh, copies)
			got.cues, want.cues = cueText{}, cueText{}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s [%d,%d): gather with the cache\n%+v\nwithout\n%+v", tr.Path, start, end, got, want)
			}
		}
		if sh.cues == nil {
			t.Fatalf("%s: the cache was not used", tr.Path)
		}
	}
}

// spanView is what a span holds, in a form a test can write down: the
// caches (cues, the sets' lookup maps) left out, nothing nil.
type spanView struct {
	Prompts, Constraints, Reads, Written, Edited, Errors []string
	Decisions, Commands, Says                            []string
	Actions                                              map[string]string
	LastError, LastSay                                   string
	Todos                                                []todo
}

func viewOf(sp *span) spanView {
	l := func(s []string) []string { return append([]string{}, s...) }
	v := spanView{Prompts: l(sp.prompts), Constraints: l(sp.constraints), Reads: l(sp.reads.list),
		Written: l(sp.written.list), Edited: l(sp.edited.list), Errors: l(sp.errors.list),
		Decisions: l(sp.decisions.list), Commands: l(sp.commands.list), Says: l(sp.says),
		Actions: map[string]string{}, LastError: sp.lastError, LastSay: sp.lastSay, Todos: append([]todo{}, sp.todos...)}
	maps.Copy(v.Actions, sp.actions)
	return v
}

// handTranscript is a short session whose spans' facts are written down
// by hand in TestGatherHandComputed.
func handTranscript() *transcript.Transcript {
	text := func(s string) transcript.Block { return transcript.Block{Kind: transcript.BlockText, Text: s} }
	use := func(id, name, path, command, input string) transcript.Block {
		return transcript.Block{Kind: transcript.BlockToolUse, ToolID: id, ToolName: name, Path: path, Command: command, Input: input}
	}
	result := func(id, out string, failed bool) transcript.Block {
		return transcript.Block{Kind: transcript.BlockToolResult, ToolID: id, Text: out, IsError: failed}
	}
	return &transcript.Transcript{ID: "hand", Messages: []transcript.Message{
		{Role: transcript.RoleUser, Blocks: []transcript.Block{text("Fix the parser. Don't touch the tests!\nAlways run go vet before committing.")}},
		{Role: transcript.RoleAssistant, Blocks: []transcript.Block{
			text("  I'll use a table-driven parser. It is faster.\n"),
			use("r1", "Read", "parser.go", "", `{"file_path":"parser.go"}`),
			use("b1", "Bash", "", "go test ./...\ngo vet ./...", `{"command":"go test ./...\ngo vet ./..."}`)}},
		{Role: transcript.RoleTool, Blocks: []transcript.Block{
			result("r1", "package parser", false),
			result("b1", "FAIL parser_test.go:12\nexit status 1", true)}},
		{Role: transcript.RoleAssistant, Blocks: []transcript.Block{
			text("Switching to a hand-written lexer instead of regexps."),
			use("e1", "Edit", "parser.go", "", `{"file_path":"parser.go","old_string":"a","new_string":"b"}`),
			use("w1", "Write", "lexer.go", "", `{"file_path":"lexer.go","content":"package parser"}`),
			use("e2", "Edit", "lexer.go", "", `{"file_path":"lexer.go","old_string":"a","new_string":"b"}`),
			use("t1", "TodoWrite", "", "", `{"todos":[{"content":"lexer","status":"in_progress"}]}`)}},
		{Role: transcript.RoleTool, Blocks: []transcript.Block{
			result("e1", "ok", false), result("w1", "ok", false), result("e2", "ok", false), result("t1", "ok", false)}},
		{Role: transcript.RoleUser, Blocks: []transcript.Block{text("Make sure the lexer has no globals.")}},
	}}
}

// TestGatherHandComputed holds gather to facts worked out by hand (a file
// read then edited is modified; written then edited, created; the last
// error stands until a later result succeeds) for three spans of handTranscript, each gathered over the recorded messages
// (the per-transcript cache, in an order where later spans reuse what
// earlier ones cached, and each twice) and over copies (no cache).
func TestGatherHandComputed(t *testing.T) {
	prompt0 := "Fix the parser. Don't touch the tests!\nAlways run go vet before committing."
	say1 := "I'll use a table-driven parser. It is faster."
	say3 := "Switching to a hand-written lexer instead of regexps."
	todos := []todo{{Content: "lexer", Status: "in_progress"}}
	tests := []struct {
		start, end int
		want       spanView
	}{
		{1, 3, spanView{Prompts: []string{}, Constraints: []string{}, Reads: []string{"parser.go"}, Written: []string{}, Edited: []string{},
			Errors: []string{"FAIL parser_test.go:12"}, Decisions: []string{"I'll use a table-driven parser"},
			Commands: []string{"go test ./..."}, Says: []string{say1}, Actions: map[string]string{"parser.go": "Read"},
			LastError: "FAIL parser_test.go:12", LastSay: say1, Todos: []todo{}}},
		{0, 6, spanView{Prompts: []string{prompt0, "Make sure the lexer has no globals."},
			Constraints: []string{"Don't touch the tests", "Always run go vet before committing", "Make sure the lexer has no globals"},
			Reads:       []string{"parser.go"}, Written: []string{"lexer.go"}, Edited: []string{"parser.go", "lexer.go"},
			Errors:    []string{"FAIL parser_test.go:12"},
			Decisions: []string{"I'll use a table-driven parser", "Switching to a hand-written lexer instead of regexps"},
			Commands:  []string{"go test ./..."}, Says: []string{say1, say3},
			Actions: map[string]string{"parser.go": "Modified", "lexer.go": "Created"}, LastSay: say3, Todos: todos}},
		{2, 6, spanView{Prompts: []string{"Make sure the lexer has no globals."}, Constraints: []string{"Make sure the lexer has no globals"},
			Reads: []string{}, Written: []string{"lexer.go"}, Edited: []string{"parser.go", "lexer.go"}, Errors: []string{"FAIL parser_test.go:12"},
			Decisions: []string{"Switching to a hand-written lexer instead of regexps"}, Commands: []string{}, Says: []string{say3},
			Actions: map[string]string{"parser.go": "Modified", "lexer.go": "Created"}, LastSay: say3, Todos: todos}},
	}
	tr := handTranscript()
	sh := NewShared(tr)
	for round := 0; round < 2; round++ {
		for _, tc := range tests {
			var recorded, copies []Item
			for o := tc.start; o < tc.end; o++ {
				m := tr.Messages[o]
				recorded = append(recorded, Item{Msg: &tr.Messages[o], Orig: o})
				copies = append(copies, Item{Msg: &m, Orig: o})
			}
			for name, items := range map[string][]Item{"recorded": recorded, "copies": copies} {
				if got := viewOf(gather(sh, items)); !reflect.DeepEqual(got, tc.want) {
					t.Errorf("round %d, [%d,%d) %s:\n got %+v\nwant %+v", round, tc.start, tc.end, name, got, tc.want)
				}
			}
		}
	}
	if sh.cues == nil || sh.cues[1] == nil || sh.cues[5] == nil {
		t.Fatal("the recorded messages' cues were not cached")
	}
}
