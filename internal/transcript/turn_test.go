package transcript

import (
	"strconv"
	"strings"
	"testing"
)

func prompt(s string) Message {
	return Message{Role: RoleUser, Blocks: []Block{{Kind: BlockText, Text: s}}}
}
func meta(s string) Message {
	return Message{Role: RoleUser, IsMeta: true, Blocks: []Block{{Kind: BlockText, Text: s}}}
}
func say(s string) Message {
	return Message{Role: RoleAssistant, Blocks: []Block{{Kind: BlockText, Text: s}}}
}
func call(id, name string) Message {
	return Message{Role: RoleAssistant, Blocks: []Block{{Kind: BlockToolUse, ToolID: id, ToolName: name}}}
}
func result(id string, failed bool, out string) Message {
	return Message{Role: RoleTool, Blocks: []Block{{Kind: BlockToolResult, ToolID: id, IsError: failed, Text: out}}}
}

// shape renders turns as "[start,end) user|resp|E" for compact expectations.
func shape(turns []Turn) string {
	var parts []string
	for _, t := range turns {
		s := "[" + strconv.Itoa(t.Start) + "," + strconv.Itoa(t.End) + ") " + t.UserMessage + "|" + t.AssistantResponse
		if t.PreviousError {
			s += "|E"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func TestGroupTurns(t *testing.T) {
	tests := []struct {
		name string
		msgs []Message
		want string
	}{
		{"empty", nil, ""},
		{"one exchange", []Message{prompt("hi"), say("hello")}, "[0,2) hi|hello"},
		{"harness content before the first prompt joins its turn",
			[]Message{meta("<system-reminder>x"), prompt("fix it"), say("done")}, "[0,3) fix it|done"},
		{"a leading assistant message opens a turn without prompt",
			[]Message{say("resumed"), prompt("next"), say("ok")}, "[0,1) |resumed; [1,3) next|ok"},
		{"tool results and meta messages never open a turn",
			[]Message{prompt("run it"), call("t1", "Bash"), result("t1", false, "ok"), meta("<task-notification>"), say("ran"), prompt("again"), say("fine")},
			"[0,5) run it|ran; [5,7) again|fine"},
		{"previous_error: the previous turn ended with a failed result",
			[]Message{prompt("test"), call("t1", "Bash"), result("t1", true, "FAIL"), say("failed"), prompt("fix"), say("fixed")},
			"[0,4) test|failed; [4,6) fix|fixed|E"},
		{"an error followed by a success is not an ending error",
			[]Message{prompt("a"), call("t1", "Bash"), result("t1", true, "FAIL"), call("t2", "Bash"), result("t2", false, "ok"), prompt("b"), say("x")},
			"[0,5) a|; [5,7) b|x"},
		{"an error does not carry over a turn without tools",
			[]Message{prompt("a"), call("t1", "Bash"), result("t1", true, "FAIL"), prompt("b"), say("hm"), prompt("c"), say("x")},
			"[0,3) a|; [3,5) b|hm|E; [5,7) c|x"},
		{"only harness messages", []Message{meta("m"), result("t9", false, "x")}, "[0,2) |"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := shape(GroupTurns(tc.msgs)); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestTurnPairsByID pairs results with calls by id, whatever their order.
func TestTurnPairsByID(t *testing.T) {
	msgs := []Message{
		prompt("read both"),
		{Role: RoleAssistant, Blocks: []Block{{Kind: BlockToolUse, ToolID: "a", ToolName: "Read", Path: "/x"}, {Kind: BlockToolUse, ToolID: "b", ToolName: "Grep"}}},
		result("b", false, "grep out"), result("a", true, "no such file"),
	}
	turns := GroupTurns(msgs)
	if len(turns) != 1 {
		t.Fatalf("%d turns", len(turns))
	}
	r := turns[0].ToolResults
	if len(r) != 2 || r[0].ID != "b" || r[0].Name != "Grep" || !r[0].Success || r[1].Name != "Read" || r[1].Success {
		t.Errorf("results = %+v", r)
	}
	if c := turns[0].ToolCalls; len(c) != 2 || c[0].Path != "/x" {
		t.Errorf("calls = %+v", c)
	}
}

func TestIsPrompt(t *testing.T) {
	img := Message{Role: RoleUser, Blocks: []Block{{Kind: BlockImage}}}
	blank := prompt("   ")
	withInjected := Message{Role: RoleUser, Blocks: []Block{{Kind: BlockText, Text: "x"}, {Kind: BlockInjected}}}
	for _, c := range []struct {
		m    Message
		want bool
	}{{prompt("go"), true}, {meta("go"), false}, {say("go"), false}, {result("t", false, "x"), false},
		{img, false}, {blank, false}, {withInjected, false}} {
		if got := c.m.IsPrompt(); got != c.want {
			t.Errorf("IsPrompt(%+v) = %v", c.m, got)
		}
	}
}

func TestBlockTokenCache(t *testing.T) {
	var b Block
	if _, ok := b.CachedTokens(3); ok {
		t.Fatal("empty cache reports a count")
	}
	b.SetCachedTokens(3, 0)
	if n, ok := b.CachedTokens(3); !ok || n != 0 {
		t.Errorf("cached zero = %d, %v", n, ok)
	}
	b.ResetTokenCache()
	if _, ok := b.CachedTokens(3); ok {
		t.Error("reset kept a count")
	}
}

func TestInputFields(t *testing.T) {
	for _, c := range []struct{ in, path, cmd string }{
		{`{"file_path":"/a.go","old_string":"x"}`, "/a.go", ""},
		{`{"notebook_path":"/n.ipynb"}`, "/n.ipynb", ""},
		{`{"path":"src","pattern":"x"}`, "src", ""},
		{`{"command":"go test ./..."}`, "", "go test ./..."},
		{`{"command":["bash","-lc","ls -la"]}`, "", "bash -lc ls -la"},
		{`not json`, "", ""},
	} {
		b := Block{Kind: BlockToolUse, Input: c.in}
		b.InputFields()
		if b.Path != c.path || b.Command != c.cmd {
			t.Errorf("%s: path %q cmd %q", c.in, b.Path, b.Command)
		}
	}
}

func TestFirstRunes(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"héllo wörld", 4, "héll"},
		{"héllo", 5, "héllo"},
		{"héllo", 9, "héllo"},
		{"日本語テキスト", 3, "日本語"},
		{"abc", 0, ""},
		{"", 3, ""},
	} {
		if got := FirstRunes(tc.s, tc.n); got != tc.want {
			t.Errorf("FirstRunes(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

// TestGroupTurnsTools: calls and results land in their turns, paired by id
// (a result without its call keeps no name), a turn without tools has nil
// lists, and appending to one turn's lists never writes into the next turn's
// (they are cut from shared arrays with their capacity clipped).
func TestGroupTurnsTools(t *testing.T) {
	msgs := []Message{
		prompt("a"), call("t1", "Bash"), call("t2", "Read"), result("t2", false, "r2"), result("t1", true, "r1"),
		prompt("b"), say("nothing"),
		prompt("c"), result("gone", false, "orphan"), call("t3", "Edit"), result("t3", false, "r3"),
	}
	turns := GroupTurns(msgs)
	type tr struct{ calls, results string }
	var got []tr
	for _, tn := range turns {
		var c, r []string
		for _, x := range tn.ToolCalls {
			c = append(c, x.ID+":"+x.Name)
		}
		for _, x := range tn.ToolResults {
			r = append(r, x.ID+":"+x.Name+":"+x.Output+":"+strconv.FormatBool(x.Success))
		}
		got = append(got, tr{strings.Join(c, ","), strings.Join(r, ",")})
	}
	want := []tr{
		{"t1:Bash,t2:Read", "t2:Read:r2:true,t1:Bash:r1:false"},
		{"", ""},
		{"t3:Edit", "gone::orphan:true,t3:Edit:r3:true"},
	}
	if len(got) != len(want) {
		t.Fatalf("turns: %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("turn %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if turns[1].ToolCalls != nil || turns[1].ToolResults != nil {
		t.Errorf("a turn without tools has lists %v %v", turns[1].ToolCalls, turns[1].ToolResults)
	}
	_ = append(turns[0].ToolCalls, ToolCall{ID: "x"})
	_ = append(turns[0].ToolResults, ToolResult{ID: "x"})
	if turns[2].ToolCalls[0].ID != "t3" || turns[2].ToolResults[0].ID != "gone" {
		t.Errorf("appending to turn 0 overwrote turn 2: %+v %+v", turns[2].ToolCalls, turns[2].ToolResults)
	}
}
