package loader

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// tally sums the record counts of a file's transcripts.
type tally struct{ lines, parsed, ignored, bad int }

// TestFixtureAccounting checks every fixture of every reader: each
// transcript accounts for its records (checkAccounting), and the file's
// totals are the ones counted by hand from the fixture, in the unit of its
// format.
func TestFixtureAccounting(t *testing.T) {
	want := map[string]tally{
		// Chat messages: conv-a 7 read; conv-b 2 read + the "robot" sender;
		// the second conv-a 5 read; the malformed element of "bad"; the
		// number 42 (a conversation that is not an object); "empty" none.
		"claudeai/conversations.json": {17, 14, 0, 3},
		// Lines: session_meta, turn_context, 18 response items, the
		// compacted record and the 5 token_counts that give a call its
		// usage are read; 7 other events, 4 token_counts that give none,
		// future_record, ghost_snapshot and the blank line are ignored;
		// lines 34, 35, 36 and the truncated last line are bad.
		"codex/rollout-2025-10-01T10-00-00-0199a-fixture.jsonl": {44, 26, 14, 4},
		// The header, 5 items read, 2 record_type:state lines.
		"codex/rollout-2025-04-01T12-00-00-legacy.jsonl": {8, 6, 2, 0},
		// Messages of rows r1 (6), sg-1 (2 + "narrator"), oh-text (7),
		// swe-1 (5), the bare list (2); the malformed row 2 and the row
		// without a list are one bad record each.
		"chat/rows.jsonl": {25, 22, 0, 3},
		// Three single-message rows: one transcript of three messages.
		"chat/bare.json": {3, 3, 0, 0},
		// History entries: 7 read, the empty assistant entry, the "critic"
		// role and the number 7.
		"sweagent/calc-1.traj": {10, 7, 1, 2},
		"sweagent/fc-2.traj":   {6, 6, 0, 0},
		// No history: the three steps.
		"sweagent/steps-3.traj": {3, 3, 0, 0},
		// 24 events: 16 read; 2 state changes, the null and the empty recall
		// observations, the user's run and its observation ignored; the
		// malformed event and the one with neither action nor observation.
		"openhands/session.json": {24, 16, 6, 2},
	}
	for _, fx := range fixtures {
		t.Run(fx.file, func(t *testing.T) {
			path := filepath.Join("testdata", fx.file)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var got tally
			for _, tr := range readPath(t, path, "") {
				if err := checkAccounting(tr, textLines(data)); err != nil {
					t.Error(err)
				}
				s := tr.Stats
				got.lines += s.Lines
				got.parsed += s.ParsedLines
				got.ignored += s.IgnoredLines
				got.bad += s.BadLines
			}
			w, ok := want[fx.file]
			if !ok {
				t.Fatalf("no hand count for %s", fx.file)
			}
			if got != w {
				t.Errorf("lines/parsed/ignored/bad %+v, counted by hand %+v", got, w)
			}
			if fx.format == CodexFormat && got.lines != textLines(data) {
				t.Errorf("a rollout's records are its lines: %d, the file has %d", got.lines, textLines(data))
			}
		})
	}
	// Claude Code's records are its lines.
	for _, path := range ccFixtures(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		tr := readOne(t, path)
		if err := checkAccounting(tr, textLines(data)); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		if tr.Stats.Lines != textLines(data) {
			t.Errorf("%s: %d records, the file has %d lines", path, tr.Stats.Lines, textLines(data))
		}
	}
}

func TestElementLines(t *testing.T) {
	doc := []byte("{\"x\":1,\n\"h\":[\n1,\n\n[2,\n3],4],\n\"h\":[5]}")
	tests := []struct {
		data string
		key  string
		n    int
		want []int
	}{
		{string(doc), "h", 3, []int{7, 9, 10}}, // the first "h", as fastjson's Get
		{string(doc), "h", 4, nil},             // not the count the caller parsed
		{string(doc), "x", 1, nil},             // not an array
		{string(doc), "y", 0, nil},             // no such key
		{"[\n{},\n {}, {}\n]", "", 3, []int{6, 7, 7}},
		{"[{}, {}]", "", 2, nil}, // one line: every element is on line 5
		{"[1,\n", "", 1, nil},
	}
	for _, tt := range tests {
		got := elementLines([]byte(tt.data), 5, tt.key, tt.n)
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("elementLines(%q, %q) = %v, want %v", tt.data, tt.key, got, tt.want)
		}
	}
}

// TestRecordLinesAndLosses checks, on small documents, that records inside
// a row or a wrapping object carry their own line, and that only structure
// problems that lose input are bad records.
func TestRecordLinesAndLosses(t *testing.T) {
	event := func(id int) string {
		return fmt.Sprintf(`{"id":%d,"source":"user","action":"message","args":{"content":"m%d"}}`, id, id)
	}
	tests := []struct {
		name, format, content string
		want                  tally
		lines                 []int // of the messages, in order
		problems              int
	}{
		{"wrapped.json", OpenHandsFormat, "{\"history\": [\n" + event(1) + ",\n\n" + event(2) + "\n]}", tally{2, 2, 0, 0}, []int{2, 4}, 0},
		{"unclosed.json", OpenHandsFormat, "[" + event(1) + ",\n" + event(2), tally{2, 2, 0, 0}, []int{1, 2}, 1},
		{"cut.json", OpenHandsFormat, "[" + event(1) + ",\n" + `{"id":2,"sou`, tally{2, 1, 0, 1}, []int{1}, 1},
		{"trailing.json", OpenHandsFormat, "[" + event(1) + "]\nxx", tally{2, 1, 0, 1}, []int{1}, 1},
		{"rows.json", OpenAIChatFormat, "[\n {\"id\":\"A\",\"messages\":[\n  {\"role\":\"user\",\"content\":\"a\"},\n  {\"role\":\"assistant\",\"content\":\"b\"}]}\n]",
			tally{2, 2, 0, 0}, []int{3, 4}, 0},
		{"rows.jsonl", OpenAIChatFormat, "\n{\"messages\":[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"assistant\",\"content\":null}]}\n",
			tally{2, 1, 1, 0}, []int{2}, 0},
		{"conversations.json", ClaudeAIFormat, `[{"uuid":"c","chat_messages":[{"uuid":"m1","sender":"human","text":"hi"},{"uuid":"m2","sender":"assistant","content":[]},{"uuid":"m3","sender":"assistant","text":"yo"}]}]`,
			tally{3, 2, 1, 0}, []int{1, 1}, 0},
	}
	for _, tt := range tests {
		var got tally
		var lines []int
		problems := 0
		for _, tr := range readString(t, tt.name, tt.content, tt.format) {
			if err := checkAccounting(tr, textLines([]byte(tt.content))); err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			s := tr.Stats
			got.lines += s.Lines
			got.parsed += s.ParsedLines
			got.ignored += s.IgnoredLines
			got.bad += s.BadLines
			for _, m := range tr.Messages {
				lines = append(lines, m.Line)
			}
			problems += len(tr.Problems)
		}
		if got != tt.want || fmt.Sprint(lines) != fmt.Sprint(tt.lines) || problems != tt.problems {
			t.Errorf("%s: records %+v, lines %v, %d problems; want %+v, %v, %d", tt.name, got, lines, problems, tt.want, tt.lines, tt.problems)
		}
	}
}
