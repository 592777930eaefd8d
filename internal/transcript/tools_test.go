package transcript

import "testing"

func TestLookupTool(t *testing.T) {
	cases := []struct {
		format, name, input string
		want                ToolKind
		whole               bool
	}{
		{"claude-code", "Read", "", ToolRead, false},
		{"claude-code", "Edit", "", ToolModify, false},
		{"claude-code", "MultiEdit", "", ToolModify, false},
		{"claude-code", "NotebookEdit", "", ToolModify, false},
		{"claude-code", "Write", "", ToolModify, true},
		{"claude-code", "Grep", "", ToolSearch, false},
		{"claude-code", "Bash", "", ToolShell, false},
		{"claude-code", "WebFetch", "", ToolWeb, false},
		{"claude-code", "TodoWrite", "", ToolTodo, false},
		{"claude-code", "TaskUpdate", "", ToolTodo, false},
		{"claude-code", "Task", "", ToolSubagent, false},
		{"claude-code", "AskUserQuestion", "", ToolOther, false},
		{"claude-code", "mcp__github__search", "", ToolOther, false},
		{"codex", "shell_command", "", ToolShell, false},
		{"codex", "apply_patch", "", ToolModify, false},
		{"codex", "update_plan", "", ToolTodo, false},
		{"codex", "web_search", "", ToolWeb, false},
		// SWE-agent names a shell line by its first word.
		{"swe-agent", "open", "", ToolRead, false},
		{"swe-agent", "create", "", ToolModify, true},
		{"swe-agent", "find_file", "", ToolSearch, false},
		{"swe-agent", "rm", "", ToolShell, false},
		{"swe-agent", "submit", "", ToolOther, false},
		// The editor's kind is its sub-command's.
		{"openhands", "str_replace_editor", `{"command":"view","path":"/a"}`, ToolRead, false},
		{"openhands", "str_replace_editor", `{"command":"create","path":"/a"}`, ToolModify, true},
		{"openhands", "str_replace_editor", `{"command":"str_replace","path":"/a"}`, ToolModify, false},
		{"openhands", "str_replace_editor", `{"command":"nosuch"}`, ToolModify, false},
		{"openhands", "str_replace_editor", `not json "command"`, ToolModify, false},
		{"openhands", "execute_bash", "", ToolShell, false},
		{"openhands", "delegate", "", ToolSubagent, false},
		// OpenAI-style logs carry other harnesses' names.
		{"openai-chat", "str_replace_editor", `{"command":"view"}`, ToolRead, false},
		{"openai-chat", "execute_bash", "", ToolShell, false},
		{"openai-chat", "find_file", "", ToolSearch, false},
		{"openai-chat", "read_file", "", ToolRead, false},
		{"openai-chat", "write_file", "", ToolModify, true},
		{"openai-chat", "treon", "", ToolOther, false},
		{"chatgpt", "python", "", ToolShell, false},
		{"chatgpt", "browser", "", ToolWeb, false},
		{"claude-ai", "web_search", "", ToolWeb, false},
		{"claude-ai", "artifacts", "", ToolOther, false},
		// An unknown format looks in every table.
		{"", "Write", "", ToolModify, true},
		{"", "nosuch", "", ToolOther, false},
	}
	for _, c := range cases {
		got := LookupTool(c.format, c.name, c.input)
		if got.Kind != c.want || got.Whole != c.whole {
			t.Errorf("LookupTool(%q, %q, %q) = %v whole=%v, want %v whole=%v", c.format, c.name, c.input, got.Kind, got.Whole, c.want, c.whole)
		}
	}
}

// TestToolTablesAgree checks that no name has two answers in two tables:
// a lookup that falls back to every table must not depend on their order.
func TestToolTablesAgree(t *testing.T) {
	seen := map[string]Harness{}
	for _, h := range Harnesses {
		if h.Default == ToolUnknown {
			t.Errorf("%s: no default kind", h.Format)
		}
		for name, tool := range h.Tools {
			if tool.Kind == ToolUnknown {
				t.Errorf("%s: %s has no kind", h.Format, name)
			}
			if tool.Whole && tool.Kind != ToolModify {
				t.Errorf("%s: %s writes whole files but is %v", h.Format, name, tool.Kind)
			}
			prev, ok := seen[name]
			if !ok {
				seen[name] = h
				continue
			}
			p := prev.Tools[name]
			if p.Kind != tool.Kind || p.Whole != tool.Whole || (p.Commands == nil) != (tool.Commands == nil) {
				t.Errorf("%s is %v in %s but %v in %s", name, p.Kind, prev.Format, tool.Kind, h.Format)
			}
		}
	}
}

func TestClassifyTools(t *testing.T) {
	tr := &Transcript{Format: "openhands", Messages: []Message{
		prompt("look"),
		{Role: RoleAssistant, Blocks: []Block{
			{Kind: BlockToolUse, ToolID: "a", ToolName: "str_replace_editor", Input: `{"command":"view","path":"/x"}`},
			{Kind: BlockToolUse, ToolID: "b", ToolName: "str_replace_editor", Input: `{"command":"insert","path":"/x"}`},
			{Kind: BlockText, Text: "ok"}}},
		{Role: RoleTool, Blocks: []Block{
			{Kind: BlockToolResult, ToolID: "a", ToolName: "str_replace_editor"},
			{Kind: BlockToolResult, ToolID: "b", ToolName: "str_replace_editor"}}},
	}}
	tr.ClassifyTools()
	want := []ToolKind{ToolRead, ToolModify, ToolUnknown}
	for i, b := range tr.Messages[1].Blocks {
		if b.Tool != want[i] || b.ToolKind() != want[i] {
			t.Errorf("call %d: %v (stored %v), want %v", i, b.ToolKind(), b.Tool, want[i])
		}
	}
	// A result takes its call's kind, which the name alone cannot tell.
	for i, b := range tr.Messages[2].Blocks {
		if b.ToolKind() != want[i] {
			t.Errorf("result %d: %v, want %v", i, b.ToolKind(), want[i])
		}
	}
	turns := tr.Turns()
	if k := turns[0].ToolCalls[0].ToolKind(); k != ToolRead {
		t.Errorf("turn call 0: %v, want read", k)
	}
	if k := turns[0].ToolResults[1].Kind; k != ToolModify {
		t.Errorf("turn result 1: %v, want modify", k)
	}
	// Built by hand, unclassified: the name decides.
	if k := (&ToolCall{Name: "Write"}).ToolKind(); k != ToolModify {
		t.Errorf("hand-built Write: %v", k)
	}
}

func TestToolKindString(t *testing.T) {
	want := []string{"unknown", "read", "modify", "search", "shell", "web", "todo", "subagent", "other"}
	for k, w := range want {
		if got := ToolKind(k).String(); got != w {
			t.Errorf("%d: %q, want %q", k, got, w)
		}
	}
	if got := ToolKind(200).String(); got != "unknown" {
		t.Errorf("200: %q", got)
	}
}
