package loader

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/compactbench/compactbench/internal/transcript"
)

// fixtures are the hand-written files under testdata, with the format
// detection must pick for each.
var fixtures = []struct {
	file, format string
}{
	{"claudeai/conversations.json", ClaudeAIFormat},
	{"codex/rollout-2025-10-01T10-00-00-0199a-fixture.jsonl", CodexFormat},
	{"codex/rollout-2025-04-01T12-00-00-legacy.jsonl", CodexFormat},
	{"chat/rows.jsonl", OpenAIChatFormat},
	{"chat/bare.json", OpenAIChatFormat},
	{"sweagent/calc-1.traj", SWEAgentFormat},
	{"sweagent/fc-2.traj", SWEAgentFormat},
	{"sweagent/steps-3.traj", SWEAgentFormat},
	{"openhands/session.json", OpenHandsFormat},
}

// TestFixturesGolden reads every fixture with detection and compares the
// transcripts with the reviewed golden dumps (go test -update rewrites them).
func TestFixturesGolden(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.file, func(t *testing.T) {
			ts := readPath(t, filepath.Join("testdata", fx.file), "")
			var sb strings.Builder
			ids := map[string]bool{}
			for _, tr := range ts {
				if tr.Format != fx.format {
					t.Errorf("%s read as %s, want %s", tr.ID, tr.Format, fx.format)
				}
				if tr.ID == "" || ids[tr.ID] {
					t.Errorf("transcript id %q is empty or repeated", tr.ID)
				}
				ids[tr.ID] = true
				sb.WriteString(dump(tr))
				sb.WriteString("\n")
			}
			golden(t, filepath.Join("testdata", "golden", strings.ReplaceAll(fx.file, "/", "_")+".txt"), sb.String())
		})
	}
}

// messageUUIDs lists the distinct message uuids in order.
func messageUUIDs(tr *transcript.Transcript) []string {
	var out []string
	for _, m := range tr.Messages {
		if len(out) == 0 || out[len(out)-1] != m.UUID {
			out = append(out, m.UUID)
		}
	}
	return out
}

func TestClaudeAIBranches(t *testing.T) {
	ts := readPath(t, "testdata/claudeai/conversations.json", "")
	if len(ts) != 6 {
		t.Fatalf("got %d transcripts, want 6 (one per array element)", len(ts))
	}
	wantIDs := []string{"conv-a", "conv-b", "conv-a#1", "bad", "conversations#4", "empty"}
	for i, tr := range ts {
		if tr.ID != wantIDs[i] {
			t.Errorf("transcript %d id %q, want %q", i, tr.ID, wantIDs[i])
		}
	}
	// Newest leaf (a-m7, 10:03) wins over the later array element a-m6
	// (10:02:05) and over the abandoned edit a-m3/a-m4.
	if got, want := strings.Join(messageUUIDs(ts[0]), ","), "a-m1,a-m2,a-m5,a-m7"; got != want {
		t.Errorf("conv-a path %s, want %s", got, want)
	}
	// current_leaf_message_uuid wins over the newest leaf; the dangling
	// parent of c-m3 is bridged to c-m2 and reported.
	if got, want := strings.Join(messageUUIDs(ts[2]), ","), "c-m1,c-m2,c-m3,c-m4"; got != want {
		t.Errorf("conv-a#1 path %s, want %s", got, want)
	}
	var reasons []string
	for _, p := range ts[2].Problems {
		reasons = append(reasons, p.Reason)
	}
	if !strings.Contains(strings.Join(reasons, "\n"), "parent_message_uuid gone-uuid of message c-m3 is not in the conversation; linked to the message before it (c-m2)") {
		t.Errorf("dangling parent not reported: %q", reasons)
	}
	// Server-side tool results split the assistant message.
	roles := ""
	for _, m := range ts[0].Messages {
		roles += m.Role.String()[:1]
	}
	if roles != "uuatauata" {
		t.Errorf("conv-a roles %s, want uuatauata", roles)
	}
	// The unnamed repl call and its unnamed result pair by tool name.
	res := ts[0].Messages[7].Blocks[0]
	if res.Kind != transcript.BlockToolResult || res.ToolID != ts[0].Messages[6].Blocks[0].ToolID || !res.IsError || res.ToolName != "repl" {
		t.Errorf("repl result not paired: %+v", res)
	}
	for _, tr := range ts {
		for _, m := range tr.Messages {
			if m.Usage != nil {
				t.Errorf("%s: exports carry no usage, got %+v", tr.ID, m.Usage)
			}
		}
	}
	if ts[3].Stats.BadLines != 1 || len(ts[3].Messages) != 0 {
		t.Errorf("malformed element: %+v", ts[3].Problems)
	}
}

// TestClaudeAIZipAndGzip reads the export from the zip it arrives in and
// gzipped, and checks both give the plain file's transcripts.
func TestClaudeAIZipAndGzip(t *testing.T) {
	data, err := os.ReadFile("testdata/claudeai/conversations.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	for _, m := range []struct{ name, body string }{
		{"users.json", `[{"uuid":"acct-1"}]`},
		{"projects.json", `[]`},
		{"data-2025-03-02/conversations.json", string(data)},
	} {
		w, err := zw.Create(m.name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(m.body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	zipPath := filepath.Join(dir, "conversations.zip")
	os.WriteFile(zipPath, zbuf.Bytes(), 0o644)

	var gbuf bytes.Buffer
	gw := gzip.NewWriter(&gbuf)
	gw.Write(data)
	gw.Close()
	gzPath := filepath.Join(dir, "conversations.json.gz")
	os.WriteFile(gzPath, gbuf.Bytes(), 0o644)

	plain := readPath(t, "testdata/claudeai/conversations.json", "")
	for _, p := range []string{zipPath, gzPath} {
		got := readPath(t, p, "")
		if len(got) != len(plain) {
			t.Fatalf("%s: %d transcripts, want %d", p, len(got), len(plain))
		}
		for i := range got {
			got[i].Path = plain[i].Path
			if dump(got[i]) != dump(plain[i]) {
				t.Errorf("%s: transcript %d differs:\n%s\nwant\n%s", p, i, dump(got[i]), dump(plain[i]))
			}
		}
	}

	// A zip without conversations.json is accounted for with a problem.
	zbuf.Reset()
	zw = zip.NewWriter(&zbuf)
	for _, n := range []string{"a.json", "b.json"} {
		w, _ := zw.Create(n)
		w.Write([]byte("[]"))
	}
	zw.Close()
	bad := filepath.Join(dir, "other.zip")
	os.WriteFile(bad, zbuf.Bytes(), 0o644)
	ts := readPath(t, bad, "")
	if len(ts) != 1 || ts[0].Format != "unknown" || !strings.Contains(ts[0].Problems[0].Reason, "no conversations.json") {
		t.Errorf("zip without conversations.json: %+v", ts[0])
	}
}

func TestCodexUsageAndCompaction(t *testing.T) {
	tr := readPath(t, "testdata/codex/rollout-2025-10-01T10-00-00-0199a-fixture.jsonl", "")[0]
	type call struct {
		line    int
		context int64
	}
	var calls []call
	for _, i := range tr.Calls() {
		m := tr.Messages[i]
		if !m.Measured() {
			continue
		}
		calls = append(calls, call{m.Line, m.Usage.Context()})
	}
	// Each new token_count total goes to the response recorded before it;
	// the null-info event and the repeated 3500 snapshots (after the
	// compaction, and one arriving while a response is open, line 38) give
	// nothing; Context() is input_tokens.
	want := []call{{9, 900}, {17, 1150}, {21, 1250}, {37, 400}, {41, 450}}
	if len(calls) != len(want) {
		t.Fatalf("calls %v, want %v", calls, want)
	}
	for i := range want {
		if calls[i] != want[i] {
			t.Errorf("call %d: %+v, want %+v", i, calls[i], want[i])
		}
	}
	if len(tr.Compactions) != 1 {
		t.Fatalf("compactions %+v", tr.Compactions)
	}
	c := tr.Compactions[0]
	if c.PreTokens != 1300 || c.Summary != "Fix the failing test in src\\parser.rs" || c.Line != 28 {
		t.Errorf("compaction %+v", c)
	}
	if tr.Stats.ToolCalls != 5 || tr.Stats.ToolErrors != 1 {
		t.Errorf("tool calls %d errors %d, want 5 and 1", tr.Stats.ToolCalls, tr.Stats.ToolErrors)
	}
}

func TestSniffDoesNotCrossClaim(t *testing.T) {
	// A Claude Code session must stay with the Claude Code reader and each
	// fixture with its own: detection must not depend on extensions.
	cc := `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s1","message":{"role":"user","content":"hi"}}` + "\n" +
		`{"type":"assistant","uuid":"u2","parentUuid":"u1","sessionId":"s1","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"yo"}]}}` + "\n"
	if f := Detect("x.json", []byte(cc)); f == nil || f.Name() != ClaudeCodeFormat {
		t.Errorf("Claude Code lines detected as %v", f)
	}
	for _, fx := range fixtures {
		head, err := os.ReadFile(filepath.Join("testdata", fx.file))
		if err != nil {
			t.Fatal(err)
		}
		if len(head) > sniffSize {
			head = head[:sniffSize]
		}
		for _, name := range []string{"data.json", "data.jsonl", "data.traj"} {
			if f := Detect(name, head); f == nil || f.Name() != fx.format {
				t.Errorf("%s named %s detected as %v, want %s", fx.file, name, f, fx.format)
			}
		}
		if f := Detect(fx.file, head); f.Name() == ClaudeCodeFormat {
			t.Errorf("%s claimed by the Claude Code reader", fx.file)
		}
	}
}

// TestSniffLongFirstRecord checks detection when the first record is
// longer than the sniff window, as real exports and rollouts can be.
func TestSniffLongFirstRecord(t *testing.T) {
	long := strings.Repeat("x", sniffSize+100)
	tests := []struct{ name, head, want string }{
		{"conversations.json", `[{"uuid":"c1","name":"n","chat_messages":[{"uuid":"m1","sender":"human","text":"` + long, ClaudeAIFormat},
		{"rollout-1.jsonl", `{"timestamp":"2025-10-01T00:00:00Z","type":"session_meta","payload":{"id":"s","base_instructions":{"text":"` + long, CodexFormat},
		{"s.jsonl", `{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"` + long, ClaudeCodeFormat},
		{"rows.jsonl", `{"id":"r","messages":[{"role":"user","content":"` + long, OpenAIChatFormat},
		{"x.traj", `{"environment":"swe_main","trajectory":[{"action":"ls","observation":"` + long, SWEAgentFormat},
		{"events.json", `[{"id":0,"timestamp":"t","source":"user","message":"hi","action":"message","args":{"content":"` + long, OpenHandsFormat},
	}
	for _, tt := range tests {
		head := []byte(tt.head)[:sniffSize]
		if f := Detect(tt.name, head); f == nil || f.Name() != tt.want {
			t.Errorf("%s: detected %v, want %s", tt.name, f, tt.want)
		}
	}
}

// TestChatLayouts reads the same two rows as JSON lines (including a row
// that is a bare message list on the first line), as a compact one-line
// array, and as a pretty-printed array.
func TestChatLayouts(t *testing.T) {
	rowA := `[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]`
	rowB := `{"id":"B","messages":[{"role":"user","content":"c"}]}`
	for name, content := range map[string]string{
		"lines.jsonl":   rowA + "\n" + rowB + "\n",
		"compact.json":  "[" + rowA + "," + rowB + "]",
		"pretty.json":   "[\n  " + rowA + ",\n  " + rowB + "\n]\n",
		"lines-b.jsonl": rowB + "\n" + rowA + "\n",
	} {
		ts := readString(t, name, content, "")
		if len(ts) != 2 {
			t.Errorf("%s: %d transcripts, want 2", name, len(ts))
			continue
		}
		msgs := len(ts[0].Messages) + len(ts[1].Messages)
		problems := len(ts[0].Problems) + len(ts[1].Problems)
		if msgs != 3 || problems != 0 || ts[0].Format != OpenAIChatFormat {
			t.Errorf("%s: %d messages, %d problems, format %s", name, msgs, problems, ts[0].Format)
		}
	}
}

func TestForcedFormat(t *testing.T) {
	// --input-format forces a reader even when another would be detected.
	ts := readPath(t, "testdata/chat/bare.json", OpenAIChatFormat)
	if len(ts) != 1 || ts[0].Format != OpenAIChatFormat || len(ts[0].Messages) != 3 {
		t.Fatalf("forced openai-chat: %+v", ts)
	}
	ts = readPath(t, "testdata/chat/bare.json", ClaudeAIFormat)
	if len(ts) != 3 {
		t.Fatalf("forced claude-ai on a message array: %d transcripts, want one per element", len(ts))
	}
	for _, tr := range ts {
		if tr.Format != ClaudeAIFormat || len(tr.Problems) != 1 || len(tr.Messages) != 0 {
			t.Errorf("forcing the wrong reader must report each element: %s", dump(tr))
		}
	}
}
