package loader

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

// fuzzRead runs a reader over data and checks what must hold for any input:
// no error and no panic, at least one transcript (the file is accounted
// for), ids present and distinct, every record parsed, ignored or bad
// (checkAccounting), compaction positions within the messages, and the
// same output on a second read. It returns the transcripts.
func fuzzRead(t *testing.T, name string, data []byte) []*transcript.Transcript {
	f, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	read := func() []*transcript.Transcript {
		var out []*transcript.Transcript
		src := &Source{Path: "fuzz/input.json", R: bufio.NewReaderSize(bytes.NewReader(data), sniffSize)}
		// As ReadFile reads: the lines eachLine skipped for a limit (too
		// long, too deep) are folded into the transcripts as bad records.
		if err := readSource(src, f, func(tr *transcript.Transcript) error {
			out = append(out, tr)
			return nil
		}); err != nil {
			t.Fatalf("Read returned %v", err)
		}
		return out
	}
	first := read()
	if len(first) == 0 {
		t.Fatal("no transcript: the input is not accounted for")
	}
	ids := map[string]bool{}
	for _, tr := range first {
		if tr.ID == "" || ids[tr.ID] {
			t.Fatalf("id %q empty or repeated", tr.ID)
		}
		ids[tr.ID] = true
		if tr.Format != name {
			t.Fatalf("format %q, want %q", tr.Format, name)
		}
		if err := checkAccounting(tr, textLines(data)); err != nil {
			t.Fatal(err)
		}
		for _, c := range tr.Compactions {
			if c.MessageIndex < 0 || c.MessageIndex > len(tr.Messages) {
				t.Fatalf("compaction at %d of %d messages", c.MessageIndex, len(tr.Messages))
			}
		}
		for _, p := range tr.Problems {
			if p.Line < 0 {
				t.Fatalf("problem line %d", p.Line)
			}
		}
		for _, m := range tr.Messages {
			if m.Usage != nil && m.Role != transcript.RoleAssistant {
				t.Fatalf("usage on a %s message", m.Role)
			}
		}
	}
	second := read()
	if len(second) != len(first) {
		t.Fatalf("second read: %d transcripts, first %d", len(second), len(first))
	}
	for i := range first {
		if a, b := dump(first[i]), dump(second[i]); a != b {
			t.Fatalf("reading twice differs:\n%s\n%s", a, b)
		}
	}
	return first
}

// addFixtures seeds a fuzz target with the files of one testdata folder
// (not its subfolders), and extra inputs.
func addFixtures(f *testing.F, dir string, extra ...string) {
	paths, _ := filepath.Glob(filepath.Join("testdata", dir, "*"))
	for _, p := range paths {
		if info, err := os.Stat(p); err == nil && info.IsDir() {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range extra {
		f.Add([]byte(s))
	}
}

// FuzzClaudeCode also checks that every line is a record, that no message
// is empty, and that the turns partition the messages.
func FuzzClaudeCode(f *testing.F) {
	addFixtures(f, "claudecode",
		"{\"type\":\"user\",\"uuid\":\"a\",\"parentUuid\":\"a\",\"message\":{\"content\":[{\"type\":\"tool_result\",\"content\":[1,{}]}]}}\n",
		"\n\n\r\n{}\n[]\nnull\n\"x\"\n{\"type\":null}")
	f.Fuzz(func(t *testing.T, data []byte) {
		tr := fuzzRead(t, ClaudeCodeFormat, data)[0]
		if tr.Stats.Lines != textLines(data) {
			t.Fatalf("%d records, the input has %d lines", tr.Stats.Lines, textLines(data))
		}
		for i, m := range tr.Messages {
			if len(m.Blocks) == 0 {
				t.Fatalf("message %d has no blocks", i)
			}
		}
		next := 0
		for _, turn := range transcript.GroupTurns(tr.Messages) {
			if turn.Start != next || turn.End <= turn.Start {
				t.Fatalf("turns do not partition the messages: %+v", turn)
			}
			next = turn.End
		}
		if next != len(tr.Messages) {
			t.Fatalf("turns cover %d of %d messages", next, len(tr.Messages))
		}
	})
}

func FuzzClaudeAI(f *testing.F) {
	addFixtures(f, "claudeai", `[]`, `{"uuid":"x","chat_messages":[{"uuid":"a","parent_message_uuid":"a","sender":"human","text":"loop"}]}`,
		`[{"chat_messages":[{"uuid":"a","parent_message_uuid":"b","sender":"human"},{"uuid":"b","parent_message_uuid":"a","sender":"assistant"}]}]`)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, ClaudeAIFormat, data) })
}

func FuzzCodex(f *testing.F) {
	addFixtures(f, "codex", `{"type":"compacted","payload":{"replacement_history":[{"type":"message","content":[{"text":"x"}]}]}}`,
		`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"total_tokens":1}}}}`)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, CodexFormat, data) })
}

func FuzzOpenAIChat(f *testing.F) {
	addFixtures(f, "chat", `{"messages":[{"role":"assistant","content":"<function=x><parameter=a>1"}]}`+"\n"+`{"role":"user"}`,
		`{"trajectory":[{"role":"ai","text":"`+"```\\nls\\n```"+`"},{"role":"user","text":"a"}]}`)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, OpenAIChatFormat, data) })
}

func FuzzSWEAgent(f *testing.F) {
	addFixtures(f, "sweagent", `{"history":[{"role":"tool","tool_call_ids":[1,"a"]}]}`, `{"trajectory":[{"action":"open"}]}`)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, SWEAgentFormat, data) })
}

func FuzzOpenHands(f *testing.F) {
	addFixtures(f, "openhands", `{"history":[{"id":1,"source":"agent","action":"run","args":{"command":"ls"}},{"cause":1,"observation":"run"}]}`,
		`[{"id":"x","source":"agent","action":"edit","tool_call_metadata":{"model_response":{"id":"r"}}},{"source":"agent","action":"finish","tool_call_metadata":{"model_response":{"id":"r"}},"args":{"thought":"t"}}]`)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, OpenHandsFormat, data) })
}
