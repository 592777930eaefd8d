package tokens

import (
	"slices"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

func text(role transcript.Role, s string) transcript.Message {
	return transcript.Message{Role: role, Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: s}}}
}

func call(ctx int64, model string, blocks ...transcript.Block) transcript.Message {
	return transcript.Message{Role: transcript.RoleAssistant, Model: model, ID: "msg", Usage: &transcript.Usage{Input: 1, CacheRead: ctx - 1}, Blocks: blocks}
}

// session builds a transcript whose chars4 counts are easy to follow; the
// comments give each message's chars4 count.
func session(model1, model2 string) *transcript.Transcript {
	sonnet := model1
	msgs := []transcript.Message{
		text(transcript.RoleUser, "aaaaaaaa"), // 0: 2
		call(1000, sonnet, // 1: call 0; thinking 4, tool_use ceil((4+16)/4) = 5
			transcript.Block{Kind: transcript.BlockThinking, Text: strings.Repeat("t", 16), SignatureLen: 300},
			transcript.Block{Kind: transcript.BlockToolUse, ToolID: "t1", ToolName: "Bash", Input: `{"command":"ls"}`}),
		{Role: transcript.RoleTool, Blocks: []transcript.Block{{Kind: transcript.BlockToolResult, ToolID: "t1", Text: strings.Repeat("r", 40)}}}, // 2: 10
		call(1100, sonnet, transcript.Block{Kind: transcript.BlockText, Text: "dddddddd"}),                                                       // 3: call 1; 2
		text(transcript.RoleUser, "hi there"),                                                  // 4: 2 — a new turn
		call(1200, sonnet, transcript.Block{Kind: transcript.BlockText, Text: "cccccccccccc"}), // 5: call 2; 3
		// full compaction before 6, summary 20 chars: 5
		text(transcript.RoleUser, "more"), // 6: 1
		call(500, model2, transcript.Block{Kind: transcript.BlockToolUse, ToolID: "t2", ToolName: "Read", Input: `{}`}),                           // 7: call 3; ceil(6/4) = 2
		{Role: transcript.RoleTool, Blocks: []transcript.Block{{Kind: transcript.BlockToolResult, ToolID: "t2", Text: strings.Repeat("x", 400)}}}, // 8: 100
		// microcompaction before 9 clears t2: placeholder 33 chars → 9
		call(600, model2, transcript.Block{Kind: transcript.BlockText, Text: "done"}), // 9: call 4
	}
	return &transcript.Transcript{Path: "t.jsonl", ID: "t", Messages: msgs, Compactions: []transcript.Compaction{
		{Kind: transcript.CompactFull, Trigger: "auto", PreTokens: 1030, MessageIndex: 6, Summary: strings.Repeat("s", 20), Line: 50},
		{Kind: transcript.CompactMicro, Trigger: "auto", PreTokens: 620, MessageIndex: 9, CompactedToolIDs: []string{"t2", "missing"}, Line: 60},
	}}
}

func TestEstimateCalls(t *testing.T) {
	c4, _ := ByName(Chars4)
	for _, tc := range []struct {
		name           string
		model1, model2 string
		mode           Anchoring
		est            []int64
		anchors        []bool
		boundaryEst    []int64
	}{
		{
			// call 1: 2+4+5+10 = 21 → 998+21. call 2: thinking of turn 1 stripped (sonnet): 21−4+2+2 = 21.
			// boundary: 21 + 3 = 24. call 3 re-anchored: prompt 5+1 = 6, overhead 494.
			// call 4: 6 + 2 + placeholder 9 (not 100) = 17. The boundaries
			// estimate the context before the event: 24, then 6 + 2 + 100.
			name: "sonnet strips, segments", model1: "claude-sonnet-4-5-20250929", model2: "claude-sonnet-4-5-20250929", mode: AnchorSegments,
			est: []int64{1000, 1019, 1019, 500, 511}, anchors: []bool{true, false, false, true, false},
			boundaryEst: []int64{998 + 24, 494 + 108},
		},
		{
			name: "opus keeps thinking", model1: "claude-opus-4-6", model2: "claude-opus-4-6", mode: AnchorSegments,
			est: []int64{1000, 1019, 1023, 500, 511}, anchors: []bool{true, false, false, true, false},
			boundaryEst: []int64{998 + 28, 494 + 108},
		},
		{
			// One overhead for the whole transcript: call 3 = 998 + 6, call 4 = 998 + 17.
			name: "first anchor only", model1: "claude-sonnet-4-5-20250929", model2: "claude-sonnet-4-5-20250929", mode: AnchorFirst,
			est: []int64{1000, 1019, 1019, 1004, 1015}, anchors: []bool{true, false, false, false, false},
			boundaryEst: []int64{998 + 24, 998 + 108},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := session(tc.model1, tc.model2)
			got := EstimateCalls(tr, []*Ruler{c4}, tc.mode, nil)
			if len(got.Calls) != len(tc.est) {
				t.Fatalf("%d calls, want %d", len(got.Calls), len(tc.est))
			}
			for i, c := range got.Calls {
				if c.Est[0] != tc.est[i] || c.Anchor != tc.anchors[i] {
					t.Errorf("call %d: est %d anchor %v, want %d %v", i, c.Est[0], c.Anchor, tc.est[i], tc.anchors[i])
				}
				if c.Index != i || !c.Complete {
					t.Errorf("call %d: index %d complete %v", i, c.Index, c.Complete)
				}
			}
			if e := got.Calls[1].Err(0); e != float64(1019-1100)/1100 {
				t.Errorf("err = %v", e)
			}
			if len(got.Boundaries) != 2 {
				t.Fatalf("%d boundaries", len(got.Boundaries))
			}
			for i, b := range got.Boundaries {
				if b.Est[0] != tc.boundaryEst[i] {
					t.Errorf("boundary %d est %d, want %d", i, b.Est[0], tc.boundaryEst[i])
				}
			}
			if b := got.Boundaries[0]; b.LastCall != 2 || b.LastReal != 1200 {
				t.Errorf("boundary 0 last call %d real %d", b.LastCall, b.LastReal)
			}
		})
	}
}

func TestModelChangeReanchors(t *testing.T) {
	c4, _ := ByName(Chars4)
	tr := &transcript.Transcript{Messages: []transcript.Message{
		text(transcript.RoleUser, "aaaa"),
		call(100, "claude-opus-4-6", transcript.Block{Kind: transcript.BlockText, Text: "bbbb"}),
		text(transcript.RoleUser, "cccc"),
		call(900, "claude-haiku-4-5-20251001"),
		text(transcript.RoleUser, "dddd"),
		call(1000, "claude-haiku-4-5-20251001"),
	}}
	got := EstimateCalls(tr, []*Ruler{c4}, AnchorSegments, nil)
	want := []struct {
		est    int64
		anchor bool
	}{{100, true}, {900, true}, {900 + 1, false}} // call 2: the prompt grew by "dddd"
	for i, w := range want {
		if got.Calls[i].Est[0] != w.est || got.Calls[i].Anchor != w.anchor {
			t.Errorf("call %d: %d %v, want %d %v", i, got.Calls[i].Est[0], got.Calls[i].Anchor, w.est, w.anchor)
		}
	}
	got = EstimateCalls(tr, []*Ruler{c4}, AnchorFirst, nil)
	if got.Calls[1].Anchor || got.Calls[1].Est[0] != 99+3 {
		t.Errorf("first-anchor mode re-anchored at a model change: %+v", got.Calls[1])
	}
}

func TestCallsCompleteAndUnusable(t *testing.T) {
	c4, _ := ByName(Chars4)
	tr := &transcript.Transcript{
		Messages: []transcript.Message{
			text(transcript.RoleUser, "aaaa"),
			call(100, "m"),
			{Role: transcript.RoleAssistant, Usage: &transcript.Usage{}, Line: 5}, // zero usage: not a measurable call
			text(transcript.RoleUser, "bbbb"),
			call(200, "m"),
		},
		Problems: []transcript.Problem{{Line: 7, Reason: "malformed JSON"}},
	}
	tr.Messages[1].Line, tr.Messages[4].Line = 3, 9
	got := EstimateCalls(tr, []*Ruler{c4}, AnchorSegments, nil)
	if len(got.Calls) != 2 {
		t.Fatalf("%d calls, want 2 (zero usage skipped)", len(got.Calls))
	}
	if !got.Calls[0].Complete || got.Calls[1].Complete {
		t.Errorf("complete flags %v %v, want true false", got.Calls[0].Complete, got.Calls[1].Complete)
	}
	if got := EstimateCalls(&transcript.Transcript{}, []*Ruler{c4}, AnchorSegments, nil); len(got.Calls) != 0 {
		t.Error("calls from an empty transcript")
	}
}

// TestIncrementalMatchesRecount checks the invariant behind the incremental sums: at each
// call, est − overhead equals the ruler's count of the visible prompt built
// from scratch.
func TestIncrementalMatchesRecount(t *testing.T) {
	c4m, _ := ByName(Chars4Msg)
	tr := session("claude-opus-4-6", "claude-opus-4-6")
	got := EstimateCalls(tr, []*Ruler{c4m}, AnchorFirst, nil)
	overhead := got.Calls[0].Real - int64(c4m.Context(tr.Messages[:1]))
	// Call 1 and 2 precede any compaction; opus keeps thinking.
	for _, k := range []int{1, 2} {
		m := got.Calls[k].Message
		want := overhead + int64(c4m.Context(tr.Messages[:m]))
		if got.Calls[k].Est[0] != want {
			t.Errorf("call %d: incremental %d, recount %d", k, got.Calls[k].Est[0], want)
		}
	}
}

// TestPairedChars4MatchesAlone checks the pass that counts chars4 and
// chars4msg together: each ruler's estimates are the ones it gives alone,
// in either order and beside another ruler, on blocks where the two differ
// (a tool input split in name and input, a tool result with quotes,
// control bytes, non-ASCII and astral runes, whose JSON length is longer).
func TestPairedChars4MatchesAlone(t *testing.T) {
	c4, _ := ByName(Chars4)
	c4m, _ := ByName(Chars4Msg)
	other, _ := ByName(O200k)
	// Blocks cache their counts, so every estimate gets a fresh session.
	fresh := func() *transcript.Transcript {
		tr := session("claude-opus-4-6", "claude-sonnet-4-5-20250929")
		tr.Messages = append(tr.Messages,
			text(transcript.RoleUser, "größer 𝄞 \"quoted\""),
			call(700, "claude-sonnet-4-5-20250929", transcript.Block{Kind: transcript.BlockToolUse, ToolID: "t3", ToolName: "Bash", Input: `{"command":"echo \"é\""}`}),
			transcript.Message{Role: transcript.RoleTool, Blocks: []transcript.Block{{Kind: transcript.BlockToolResult, ToolID: "t3", Text: "line\n\ttab \"q\" \x01 ü 𝄞 <>&"}}},
			call(800, "claude-sonnet-4-5-20250929", transcript.Block{Kind: transcript.BlockText, Text: "ok"}),
		)
		return tr
	}
	for _, mode := range []Anchoring{AnchorFirst, AnchorSegments} {
		alone := map[*Ruler][]int64{}
		for _, r := range []*Ruler{c4, c4m} {
			for _, c := range EstimateCalls(fresh(), []*Ruler{r}, mode, nil).Calls {
				alone[r] = append(alone[r], c.Est[0])
			}
		}
		if slices.Equal(alone[c4], alone[c4m]) {
			t.Fatal("chars4 and chars4msg agree on every call: the session does not tell them apart")
		}
		for _, rulers := range [][]*Ruler{{c4, c4m}, {c4m, c4}, {other, c4m, c4}} {
			got := EstimateCalls(fresh(), rulers, mode, nil)
			for k, r := range rulers {
				if r == other {
					continue
				}
				for i, c := range got.Calls {
					if c.Est[k] != alone[r][i] {
						t.Errorf("mode %v, rulers %v: %s at call %d = %d, alone %d", mode, names(rulers), r.Name(), i, c.Est[k], alone[r][i])
					}
				}
			}
		}
	}
}

func names(rs []*Ruler) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name())
	}
	return out
}

// TestUnrecordedDropReanchors: the real context falls by 40,000 tokens with
// no compaction recorded (server-side clearing). With segment anchors the
// call after the drop re-bases the overhead, so the next call is measured
// from the recorded level, not from the cleared content; falls below the
// threshold (thinking stripping, cache jitter) and falls right after a
// recorded compaction are not drops.
func TestUnrecordedDropReanchors(t *testing.T) {
	c4, _ := ByName(Chars4)
	m := "claude-opus-4-6"
	tr := &transcript.Transcript{Messages: []transcript.Message{
		text(transcript.RoleUser, "aaaa"),
		call(100_000, m, transcript.Block{Kind: transcript.BlockText, Text: "bbbb"}),
		text(transcript.RoleUser, "cccc"),
		call(60_000, m), // a drop of 40 %
		text(transcript.RoleUser, "dddd"),
		call(60_001, m),
		text(transcript.RoleUser, "eeee"),
		call(57_000, m), // 3,001 tokens: under DropTokens
		text(transcript.RoleUser, "ffff"),
		call(20_000, m), // after a recorded microcompaction: explained
	}, Compactions: []transcript.Compaction{{Kind: transcript.CompactMicro, MessageIndex: 9}}}
	got := EstimateCalls(tr, []*Ruler{c4}, AnchorSegments, nil)
	wantDrop := []bool{false, true, false, false, false}
	wantAnchor := []bool{true, true, false, false, false}
	for i := range wantDrop {
		if c := got.Calls[i]; c.Drop != wantDrop[i] || c.Anchor != wantAnchor[i] {
			t.Errorf("call %d: drop %v anchor %v, want %v %v", i, c.Drop, c.Anchor, wantDrop[i], wantAnchor[i])
		}
	}
	if got.Drops() != 1 {
		t.Errorf("drops = %d, want 1", got.Drops())
	}
	if e := got.Calls[2].Err(0); e < 0 || e > 0.001 {
		t.Errorf("call after the drop: err %.4f, want ~0 (re-based at 60,000)", e)
	}
	first := EstimateCalls(tr, []*Ruler{c4}, AnchorFirst, nil)
	if !first.Calls[1].Drop || first.Calls[1].Anchor || first.Calls[2].Err(0) < 0.5 {
		t.Errorf("first-anchor mode: the drop is counted but not re-based: %+v", first.Calls[1:3])
	}
	for _, tc := range []struct {
		prev, cur int64
		want      bool
	}{{100_000, 96_000, true}, {100_000, 96_001, false}, {200_000, 194_500, false}, {0, 0, false}, {10_000, 5_000, true}, {5_000, 1_500, false}} {
		if IsDrop(tc.prev, tc.cur) != tc.want {
			t.Errorf("IsDrop(%d, %d) != %v", tc.prev, tc.cur, tc.want)
		}
	}
}
