package loader

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/valyala/fastjson"

	"github.com/compactbench/compactbench/internal/transcript"
)

func ccFixtures(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir("testdata/claudecode", func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return err
	})
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	return files
}

// TestClaudeCodeGolden pins everything the reader makes of each fixture.
// The golden files were reviewed by hand against docs/formats.md.
func TestClaudeCodeGolden(t *testing.T) {
	for _, path := range ccFixtures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			tr := readOne(t, path)
			golden(t, strings.TrimSuffix(path, ".jsonl")+".golden", dump(tr))
		})
	}
}

// TestClaudeCodeBehaviour states the docs/formats.md rules the golden files
// encode, one assertion each, so a regression names the rule it breaks.
func TestClaudeCodeBehaviour(t *testing.T) {
	dir := "testdata/claudecode/"
	tests := []struct {
		file  string
		check func(t *testing.T, tr *transcript.Transcript)
	}{
		{"merge_usage.jsonl", func(t *testing.T, tr *transcript.Transcript) {
			// Three lines of msg_A are one message; usage comes from the last line, never summed.
			m := tr.Messages[1]
			if m.ID != "msg_A" || len(m.Blocks) != 3 || m.Usage == nil || m.Usage.Output != 95 || m.Usage.Context() != 20003 {
				t.Errorf("msg_A = %+v usage %+v; want 3 blocks and the last line's usage (out 95, ctx 20003)", m, m.Usage)
			}
			if m.Blocks[0].Kind != transcript.BlockThinking || m.Blocks[0].Text != "" || m.Blocks[0].SignatureLen != 24000 {
				t.Errorf("encrypted thinking = %+v, want empty text and signature length 24000", m.Blocks[0])
			}
			for _, mm := range tr.Messages {
				for _, b := range mm.Blocks {
					if strings.Contains(b.Text, "UI ONLY") {
						t.Errorf("toolUseResult leaked into context: %q", head(b.Text, 40))
					}
				}
			}
			if tr.Stats.IgnoredByType["progress"] != 2 || tr.Stats.IgnoredByType["future-record-type"] != 1 {
				t.Errorf("ignored types = %v", tr.Stats.IgnoredByType)
			}
			turns := tr.Turns()
			if len(turns) != 1 || len(turns[0].ToolResults) != 2 || turns[0].ToolResults[0].Success || turns[0].ToolResults[0].Name != "Bash" {
				t.Errorf("turns = %+v", turns)
			}
		}},
		{"parallel_old.jsonl", func(t *testing.T, tr *transcript.Transcript) {
			// The walk passes only t_b's line; the other lines of msg_P and their results are pulled in.
			if len(tr.Messages) != 6 {
				t.Fatalf("got %d messages, want prompt, msg_P, 3 results, msg_Q", len(tr.Messages))
			}
			var uses, results []string
			for _, b := range tr.Messages[1].Blocks {
				if b.Kind == transcript.BlockToolUse {
					uses = append(uses, b.ToolID)
				}
			}
			for _, m := range tr.Messages[2:5] {
				results = append(results, m.Blocks[0].ToolID)
			}
			if strings.Join(uses, ",") != "t_a,t_b,t_c" || strings.Join(results, ",") != "t_a,t_b,t_c" {
				t.Errorf("calls %v results %v, want both t_a,t_b,t_c", uses, results)
			}
			if tr.Messages[1].Usage.Output != 210 {
				t.Errorf("usage of msg_P from line %d, want the last line's (out 210)", tr.Messages[1].Line)
			}
		}},
		{"branches.jsonl", func(t *testing.T, tr *transcript.Transcript) {
			for _, m := range tr.Messages {
				if strings.Contains(m.Text(), "Rust") || strings.Contains(m.Text(), "Borrow") {
					t.Errorf("abandoned branch kept: %q", m.Text())
				}
			}
			if len(tr.Messages) != 4 || tr.Stats.APICalls != 3 {
				t.Errorf("messages %d api_calls %d, want 4 on the path and 3 calls in the file", len(tr.Messages), tr.Stats.APICalls)
			}
		}},
		{"compact.jsonl", func(t *testing.T, tr *transcript.Transcript) {
			if len(tr.Compactions) != 2 {
				t.Fatalf("compactions = %+v", tr.Compactions)
			}
			micro, full := tr.Compactions[0], tr.Compactions[1]
			if micro.Kind != transcript.CompactMicro || micro.MessageIndex != 5 || micro.TokensSaved != 2500 || len(micro.CompactedToolIDs) != 1 {
				t.Errorf("microcompaction = %+v", micro)
			}
			if full.Kind != transcript.CompactFull || full.PreTokens != 31500 || full.MessageIndex != 6 || !strings.Contains(full.Summary, "refactor parse.go") {
				t.Errorf("compaction = %+v", full)
			}
			for _, m := range tr.Messages {
				if strings.Contains(m.Text(), "being continued") {
					t.Error("the compact summary is a message; it must only be on the Compaction")
				}
			}
		}},
		{"bad_lines.jsonl", func(t *testing.T, tr *transcript.Transcript) {
			want := map[int]string{3: "malformed JSON", 5: "invalid UTF-8", 7: "JSON array", 8: `no "type"`, 9: `"type" is a number`,
				10: `"parentUuid" is a number`, 11: `"message.content" is a number`, 12: `"message" is a string`,
				14: `unknown content block type "mystery_block"`, 15: `invalid escape sequence \q`, 16: "truncated final line"}
			got := map[int]string{}
			for _, p := range tr.Problems {
				got[p.Line] += p.Reason + "|"
			}
			for line, frag := range want {
				if !strings.Contains(got[line], frag) {
					t.Errorf("line %d: problems %q, want one containing %q", line, got[line], frag)
				}
			}
			if !strings.Contains(got[4], "linked to the record on line 2") {
				t.Errorf("line 4 (parent lost with line 3): %q, want a bridge to line 2", got[4])
			}
			if tr.Stats.BadLines != 10 {
				t.Errorf("bad lines = %d, want 10", tr.Stats.BadLines)
			}
		}},
		{"cycle.jsonl", func(t *testing.T, tr *transcript.Transcript) {
			// u4 -> u3 -> u2 -> u1 -> u3: the link on line 1 closes the loop.
			if len(tr.Problems) != 1 || tr.Problems[0].Line != 1 || !strings.Contains(tr.Problems[0].Reason, "cycle") {
				t.Errorf("problems = %+v, want one cycle reported on line 1", tr.Problems)
			}
			if len(tr.Messages) != 4 {
				t.Errorf("got %d messages, want the 4 records walked before the loop closes", len(tr.Messages))
			}
		}},
		{"injected.jsonl", func(t *testing.T, tr *transcript.Transcript) {
			var kinds []string
			for _, m := range tr.Messages {
				for _, b := range m.Blocks {
					if b.Kind == transcript.BlockInjected {
						kinds = append(kinds, b.InjectedKind)
					}
				}
			}
			if strings.Join(kinds, ",") != "hook_additional_context,skill_listing,todo_reminder" {
				t.Errorf("injected = %v", kinds)
			}
			if tr.Stats.IgnoredByType["attachment:goal_status"] != 1 {
				t.Errorf("goal_status attachment not ignored: %v", tr.Stats.IgnoredByType)
			}
			turns := tr.Turns()
			if len(turns) != 2 || turns[0].UserMessage == "" || !strings.Contains(turns[1].UserMessage, "briefly") {
				t.Errorf("turns start at real prompts only; got %d turns: %+v", len(turns), turns)
			}
			for _, m := range tr.Messages {
				if m.Model == "<synthetic>" {
					t.Error("a <synthetic> line is in the context")
				}
			}
		}},
		{"proj/sess-main.jsonl", func(t *testing.T, tr *transcript.Transcript) {
			if tr.Kind != transcript.KindSession || tr.ID != "sess-main" || len(tr.Messages) != 4 {
				t.Errorf("kind %s id %s messages %d, want session sess-main with its 4 non-sidechain messages", tr.Kind, tr.ID, len(tr.Messages))
			}
		}},
		{"proj/sess-main/subagents/agent-a1.jsonl", func(t *testing.T, tr *transcript.Transcript) {
			if tr.Kind != transcript.KindSubagent || tr.ID != "agent-a1" || tr.ParentID != "sess-main" {
				t.Errorf("kind %s id %s parent %s", tr.Kind, tr.ID, tr.ParentID)
			}
		}},
		{"proj/sess-main/subagents/agent-acompact-c0ffee.jsonl", func(t *testing.T, tr *transcript.Transcript) {
			if tr.Kind != transcript.KindCompactionCall || tr.ParentID != "sess-main" || len(tr.Problems) != 0 {
				t.Errorf("kind %s parent %s problems %v", tr.Kind, tr.ParentID, tr.Problems)
			}
		}},
		{"proj/sess-main/subagents/agent-aside_question-beef.jsonl", func(t *testing.T, tr *transcript.Transcript) {
			if tr.Kind != transcript.KindSideQuestion || tr.ID != "agent-aside_question-beef" {
				t.Errorf("kind %s id %s", tr.Kind, tr.ID)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) { tc.check(t, readOne(t, dir+tc.file)) })
	}
}

// TestRenderAttachment checks the text of an injected attachment: its
// textual fields joined, or else its JSON without the type.
func TestRenderAttachment(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"type":"hook_success","content":"ok","stdout":["a",{"b":1}]}`, "ok\na\n{\"b\":1}"},
		{`{"type":"diagnostics","files":[{"uri":"x.go"}],"isNew":true}`, `{"files":[{"uri":"x.go"}],"isNew":true}`},
		{`{"type":"budget_usd"}`, `{}`},
	}
	for _, tt := range tests {
		if got := renderAttachment(fastjson.MustParse(tt.in)); got != tt.want {
			t.Errorf("renderAttachment(%s) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestScopeUnion checks the counts of a file that holds no conversation,
// whose two scopes are then both counted: a call, tool use or error id
// met in both scopes counts once, and the peak context is the largest of
// the calls counted.
func TestScopeUnion(t *testing.T) {
	usage := func(id string, side bool, in int) string {
		return fmt.Sprintf(`{"isSidechain":%t,"message":{"id":%q,"role":"assistant","model":"m","usage":{"input_tokens":%d,"output_tokens":1}}}`, side, id, in)
	}
	content := strings.Join([]string{
		usage("a", false, 10), usage("b", false, 20), usage("a", true, 10),
		usage("c", true, 500), usage("b", true, 20),
	}, "\n") + "\n"
	trs := readString(t, "usage.jsonl", content, ClaudeCodeFormat)
	if len(trs) != 1 {
		t.Fatalf("%d transcripts, want 1", len(trs))
	}
	s := trs[0].Stats
	if s.APICalls != 3 || s.PeakContextReal != 500 {
		t.Errorf("APICalls %d, PeakContextReal %d; want 3 and 500", s.APICalls, s.PeakContextReal)
	}
}

// oldKnown is keyCache.known as it was before it grew the cache to a
// record's size at once, kept as its oracle.
func oldKnown(c *keyCache, i int, k []byte, names map[string]string) bool {
	if i < len(*c) && (*c)[i] == string(k) {
		return true
	}
	name, ok := names[string(k)]
	if !ok {
		return false
	}
	if i < 64 {
		for len(*c) <= i {
			*c = append(*c, "")
		}
		(*c)[i] = name
	}
	return true
}

// TestKeyCacheOracle runs keyCache.known and its oracle on the same
// random records (known, unknown and empty keys, up to 80 a record) and
// compares answers and caches.
func TestKeyCacheOracle(t *testing.T) {
	names := map[string]string{"": "", "a": "a", "b": "b", "uuid": "uuid", "type": "type"}
	keys := []string{"", "a", "b", "uuid", "type", "zz", "unknown"}
	r := rand.New(rand.NewPCG(5, 6))
	var got, want keyCache
	for range 2000 {
		n := r.IntN(80)
		for i := range n {
			k := []byte(keys[r.IntN(len(keys))])
			if g, w := got.known(i, k, names), oldKnown(&want, i, k, names); g != w {
				t.Fatalf("known(%d, %q) = %v, want %v", i, k, g, w)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("cache %q, want %q", got, want)
		}
	}
}
