package compaction

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

func factList(facts []Fact) string {
	var out []string
	for _, f := range facts {
		out = append(out, f.Kind.String()+":"+f.Text)
	}
	sort.Strings(out)
	return strings.Join(out, " | ")
}

// TestExtractFacts pins the extractor on text shaped like real sessions:
// assistant prose, test-runner output, compiler errors, shell commands.
func TestExtractFacts(t *testing.T) {
	text := func(role transcript.Role, s string) transcript.Message {
		return transcript.Message{Role: role, Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: s}}}
	}
	result := func(failed bool, s string) transcript.Message {
		return transcript.Message{Role: transcript.RoleTool, Blocks: []transcript.Block{{Kind: transcript.BlockToolResult, IsError: failed, Text: s}}}
	}
	tests := []struct {
		name string
		msg  transcript.Message
		want string
	}{
		{"paths, bare file names, not fractions or versions",
			text(transcript.RoleAssistant, "Edit /home/u/proj/src/auth.go and src/db/schema.sql, see package.json (not v1.2.3, 3.14, e.g. and/or src/components)."),
			"path:/home/u/proj/src/auth.go | path:package.json | path:src/db/schema.sql"},
		{"Windows paths and URLs without trailing punctuation",
			text(transcript.RoleAssistant, `Saved C:\Users\me\proj\main.py; docs at https://docs.python.org/3/library/re.html.`),
			`path:C:\Users\me\proj\main.py | url:https://docs.python.org/3/library/re.html`},
		{"identifiers: camel, Pascal, snake, constants; not plain words",
			text(transcript.RoleAssistant, "Call parseConfig() then TokenRuler.Count; MAX_RETRIES=3, get_user_by_id, a Simple word, x_y."),
			"ident:MAX_RETRIES | ident:TokenRuler | ident:get_user_by_id | ident:parseConfig"},
		{"pytest failure: node id split at ::, error lines",
			result(true, "FAILED tests/test_auth.py::test_login - AssertionError: assert 401 == 200\n1 failed, 3 passed in 0.12s"),
			"error:1 failed, 3 passed in 0.12s | error:FAILED tests/test_auth.py::test_login - AssertionError: assert 401 == 200 | " +
				"ident:AssertionError | ident:test_login | path:tests/test_auth.py"},
		{"go test failure",
			result(true, "Error: Exit code 1\n--- FAIL: TestLogin (0.00s)\n    auth_test.go:42: got 401\nFAIL\tgithub.com/x/auth\t0.01s"),
			"error:--- FAIL: TestLogin (0.00s) | error:Error: Exit code 1 | error:FAIL\tgithub.com/x/auth\t0.01s | ident:TestLogin | path:auth_test.go"},
		{"cargo error, successful output keeps its error-looking lines",
			result(false, "error[E0308]: mismatched types\n --> src/main.rs:4:5"),
			"error:error[E0308]: mismatched types | path:src/main.rs"},
		{"user constraints are sentences that set rules",
			text(transcript.RoleUser, "Please fix the bug. Don't change the public API. Always run go vet before committing.\nThanks"),
			"constraint:Always run go vet before committing | constraint:Don't change the public API"},
		{"JSON keys of tool inputs are not facts; commands are",
			transcript.Message{Role: transcript.RoleAssistant, Blocks: []transcript.Block{{Kind: transcript.BlockToolUse, ToolName: "Bash",
				Input: `{"command":"npm test -- --watch=false\necho done","run_in_background":false}`, Command: "npm test -- --watch=false\necho done"}}},
			"command:npm test -- --watch=false"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := factList(ExtractFacts(&tc.msg)); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestNeedRecallByHand checks every event metric on a compaction worked out
// by hand.
func TestNeedRecallByHand(t *testing.T) {
	b := &builder{}
	b.user("Fix src/auth.go. Don't touch api.go.")                               // 0
	b.say("", "Read:r1:src/auth.go").result("r1", false, "func parseToken() {}") // 1 2
	b.say("parseToken is wrong.", "Bash:b1:go test ./...")                       // 3
	b.result("b1", true, "Error: Exit code 1\n--- FAIL: TestAuth")               // 4
	b.say("Fixing it.", "Edit:e1:src/auth.go").result("e1", false, "updated")    // 5 6
	b.user("Check parseToken again and rerun go test ./...")                     // 7
	b.say("", "Bash:b2:go test ./...").result("b2", false, "ok")                 // 8 9
	s := &Sim{Shared: NewShared(b.transcript()), Metric: ruler(t, "chars4")}
	s.append(7)
	before, beforeTok := slices.Clone(s.Ctx), s.Tokens() // replace rewrites the context in place
	out := Outcome{Summary: "The summary mentions parseToken."}
	s.replace([]Item{s.Synthetic(transcript.RoleUser, out.Summary), s.Original(5), s.Original(6)})
	var ev Event
	measure(s, &ev, before, beforeTok, &out)
	// Dropped (messages 0–4): src/auth.go, api.go, the constraint,
	// parseToken, TestAuth, "go test ./...", two error lines. Needed later
	// (messages 7–9): parseToken (message 7), the command (message 8), the
	// constraint (standing). Kept: parseToken, in the summary.
	if ev.NeedFacts != 3 || ev.NeedKept != 1 || ev.NeedDetail != "ident=1/1;command=0/1;constraint=0/1" {
		t.Errorf("need %d/%d %q", ev.NeedKept, ev.NeedFacts, ev.NeedDetail)
	}
	if ev.ErrorRecall == nil || *ev.ErrorRecall != 0 || ev.FileRecall != nil {
		t.Errorf("error recall %v file recall %v", ev.ErrorRecall, ev.FileRecall)
	}
	if ev.IntentKept == nil || *ev.IntentKept {
		t.Errorf("intent kept %v: the prompt is gone and the summary lacks \"Fix src/auth.go\"", ev.IntentKept)
	}
	if ev.KeptTurns != 1 || ev.SummarizedTurns != 0 || ev.OrphanResults != 0 || ev.DanglingCalls != 0 {
		t.Errorf("turns kept %d summarized %d, orphans %d dangling %d", ev.KeptTurns, ev.SummarizedTurns, ev.OrphanResults, ev.DanglingCalls)
	}
	wantTok := 0
	for _, it := range before {
		wantTok += ruler(t, "chars4").Message(it.Msg)
	}
	if ev.TokensBefore != wantTok || ev.TokensAfter != s.Tokens() || ev.CompressionRatio != float64(wantTok-s.Tokens())/float64(wantTok) {
		t.Errorf("tokens %d → %d, ratio %v", ev.TokensBefore, ev.TokensAfter, ev.CompressionRatio)
	}

	// Keeping message 4 without its call (3) makes an orphan result; keeping
	// the call without the result a dangling call.
	s2 := &Sim{Shared: NewShared(b.transcript()), Metric: ruler(t, "chars4")}
	s2.append(7)
	before = slices.Clone(s2.Ctx)
	s2.replace([]Item{s2.Original(4), s2.Original(5)})
	var ev2 Event
	measure(s2, &ev2, before, 100, &Outcome{})
	if ev2.OrphanResults != 1 || ev2.DanglingCalls != 1 {
		t.Errorf("orphans %d dangling %d, want 1 and 1", ev2.OrphanResults, ev2.DanglingCalls)
	}
	// A summary naming only the file keeps the path fact (file name rule).
	s3 := &Sim{Shared: NewShared(b.transcript()), Metric: ruler(t, "chars4")}
	s3.append(7)
	before = slices.Clone(s3.Ctx)
	s3.replace([]Item{s3.Synthetic(transcript.RoleUser, "Worked on auth.go")})
	var ev3 Event
	measure(s3, &ev3, before, 100, &Outcome{})
	if ev3.FileRecall == nil || *ev3.FileRecall != 1 {
		t.Errorf("file recall %v, want 1: src/auth.go is held as auth.go", ev3.FileRecall)
	}
}

// TestErrorLinesMatchesLineScan checks that errorLines, which jumps from
// error word to error word, finds the lines a plain line-by-line scan finds
// (every line, trimmed, of 8 to 300 bytes that holds an error word), in
// order, within the limit.
func TestErrorLinesMatchesLineScan(t *testing.T) {
	scan := func(text string, limit int) (facts, lines []string) {
		for _, line := range strings.Split(text, "\n") {
			line = strings.TrimSpace(line)
			if len(line) < 8 || len(line) > 300 || errorAt(line) < 0 {
				continue
			}
			lines = append(lines, line)
			if len(facts) < limit {
				facts = append(facts, line)
			}
		}
		return facts, lines
	}
	long := strings.Repeat("x", 300)
	for _, text := range []string{
		"",
		"error",
		"short err\nERROR: the build failed\n  \tTraceback (most recent call last):  \nok\n",
		"no newline at the end: panic: nil map",
		"fatal\nFAIL\nFailed to connect\n\n\nexception in thread main\n",
		"TypeError: x is undefined\r\n" + long + " error\nline with Error and fail twice: error\n",
		"eeee tttt pppp ffff fai\nfai l\npanicky but fine fatalistic\n",
		"a\nb\nc\nError at the last line",
	} {
		for _, limit := range []int{0, 1, 5} {
			var ex extractor
			var got []string
			ex.lineFn = func(l string) { got = append(got, l) }
			ex.gen, ex.seen = 1, map[Fact]uint32{}
			ex.errorLines(text, false, limit)
			var gotFacts []string
			for _, f := range ex.out {
				gotFacts = append(gotFacts, f.Text)
			}
			wantFacts, wantLines := scan(text, limit)
			if strings.Join(got, "\n") != strings.Join(wantLines, "\n") || strings.Join(gotFacts, "\n") != strings.Join(wantFacts, "\n") {
				t.Errorf("%q limit %d: lines %q facts %q, want %q %q", text, limit, got, gotFacts, wantLines, wantFacts)
			}
		}
	}
}

// TestPlainWordsHoldNoFact checks the shortcut of words: every word of up to
// five characters over an alphabet of letters, digits and path punctuation
// that has no identifier shape and is plain (plainWord) yields no fact when
// word looks at it.
func TestPlainWordsHoldNoFact(t *testing.T) {
	const alphabet = "aZgo_.:?/\\9-"
	var ex extractor
	ex.seen = map[Fact]uint32{}
	checked := 0
	var walk func(w []byte)
	walk = func(w []byte) {
		if len(w) >= 3 {
			var seen, prev uint16
			for _, c := range w {
				k := wordClass[c]
				seen |= k
				if k&classUpper != 0 && prev&classLower != 0 {
					seen |= classIdent
				}
				prev = k
			}
			if seen&classPath != 0 && seen&classIdent == 0 && plainWord(string(w)) {
				checked++
				ex.gen++
				ex.out = nil
				ex.word(string(w), seen)
				if len(ex.out) > 0 {
					t.Fatalf("%q is plain but holds %v", w, ex.out)
				}
			}
		}
		if len(w) == 5 {
			return
		}
		for i := 0; i < len(alphabet); i++ {
			walk(append(w, alphabet[i]))
		}
	}
	walk(nil)
	if checked == 0 {
		t.Fatal("no plain word checked")
	}
	for _, w := range []string{"main.go", "a/b.txt", "https://x.io", `C:\x`, "done.", "Note:", "e.g."} {
		if plainWord(w) != (w == "done." || w == "Note:") {
			t.Errorf("plainWord(%q) = %v", w, plainWord(w))
		}
	}
}

// TestColonsIsIndex checks colons against strings.Index.
func TestColonsIsIndex(t *testing.T) {
	for _, w := range []string{"", ":", "::", "a:b", "a::b", "a:b::c", ":::", "tests/a.py::test_x", "x:", "no colon"} {
		if got, want := colons(w), strings.Index(w, "::"); got != want {
			t.Errorf("colons(%q) = %d, want %d", w, got, want)
		}
	}
}

// eqBytesExact sets the high bit of exactly the bytes of x equal to c (the
// match the scans used before hasBytes).
func eqBytesExact(x uint64, c byte) uint64 {
	const low7 uint64 = 0x7f7f7f7f7f7f7f7f
	t := x ^ lsb*uint64(c)
	return ^((t&low7 + low7) | t) & msb
}

// TestHasBytes checks what the scans rely on: hasBytes marks every byte
// equal to c, and its lowest mark is the lowest such byte, on words rich in
// c, zero bytes, c±1 and high bytes (where borrows and carries run).
func TestHasBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 3))
	for range 200000 {
		c := byte(r.IntN(128))
		var x uint64
		for k := range 8 {
			b := byte(r.IntN(256))
			switch r.IntN(4) {
			case 0:
				b = c
			case 1:
				b = c + 1
			case 2:
				b = c - 1
			}
			x |= uint64(b) << (8 * k)
		}
		got, want := hasBytes(x, c), eqBytesExact(x, c)
		if got&want != want || bits.TrailingZeros64(got) != bits.TrailingZeros64(want) {
			t.Fatalf("hasBytes(%#016x, %#02x) = %#016x, exact %#016x", x, c, got, want)
		}
	}
}
