package transcript

import (
	"encoding/json"
	"strings"
)

// ToolKind is what a tool call does, whatever the harness names the tool:
// the one answer every consumer (anchor rules and features, strategies'
// file lists, need recall, evidence labels, reread checks) asks for
// instead of keeping its own list of names. The tables are in Harnesses;
// docs/formats.md lists them.
type ToolKind uint8

// Tool kinds. ToolUnknown is the zero value of a block the loader has not
// classified (a transcript built by hand); Block.ToolKind classifies such a
// block by name.
const (
	ToolUnknown ToolKind = iota
	// ToolRead reads a file (or a page of one) at its path.
	ToolRead
	// ToolModify changes the file at its path: an edit, a patch, or a
	// whole-file write (Tool.Whole).
	ToolModify
	// ToolSearch searches or lists a directory (its path is where to look,
	// not a file worked on).
	ToolSearch
	// ToolShell runs a shell command or code.
	ToolShell
	// ToolWeb searches or fetches the web.
	ToolWeb
	// ToolTodo updates the agent's own task list.
	ToolTodo
	// ToolSubagent starts or talks to another agent.
	ToolSubagent
	// ToolOther is every other tool (questions to the user, plan mode,
	// skills, MCP tools the tables do not know).
	ToolOther
)

var toolKindNames = [...]string{"unknown", "read", "modify", "search", "shell", "web", "todo", "subagent", "other"}

// String returns the kind's lower-case name.
func (k ToolKind) String() string {
	if int(k) < len(toolKindNames) {
		return toolKindNames[k]
	}
	return "unknown"
}

// Tool is one entry of a harness's tool table.
type Tool struct {
	Kind ToolKind
	// Whole marks a ToolModify tool that writes the whole file at its path,
	// creating or replacing it (Claude Code's Write), rather than editing
	// part of it.
	Whole bool
	// Commands, for a tool whose "command" input is a sub-command rather
	// than a shell line (str_replace_editor), gives each sub-command's
	// entry; a sub-command not listed takes the tool's own.
	Commands map[string]Tool
}

// Harness is the tool table of one input format (the loader's format name).
type Harness struct {
	Format string
	// Default is the kind of a name neither this table nor any other lists
	// (SWE-agent names a shell line by its first word, so its default is
	// ToolShell).
	Default ToolKind
	Tools   map[string]Tool
}

// The tool tables' recurring entries.
var (
	read      = Tool{Kind: ToolRead}
	modify    = Tool{Kind: ToolModify}
	writeFile = Tool{Kind: ToolModify, Whole: true}
	search    = Tool{Kind: ToolSearch}
	shell     = Tool{Kind: ToolShell}
	web       = Tool{Kind: ToolWeb}
	todo      = Tool{Kind: ToolTodo}
	subagent  = Tool{Kind: ToolSubagent}
	other     = Tool{Kind: ToolOther}
	// editor is the Anthropic and SWE-agent/OpenHands file editor: one tool
	// whose "command" says whether it views, creates or edits.
	editor = Tool{Kind: ToolModify, Commands: map[string]Tool{
		"view": read, "create": writeFile, "str_replace": modify, "insert": modify, "undo_edit": modify}}
)

// Harnesses are the tool tables, one per input format. A name is looked up
// in its format's table first, then in every other table (OpenAI-style logs
// carry whatever agent made them: SWE-agent, OpenHands, pi-mono), then
// takes the format's Default. No name has two different kinds in two tables
// (a test checks), so the order of the fallback does not matter.
var Harnesses = []Harness{
	{Format: "claude-code", Default: ToolOther, Tools: map[string]Tool{
		"Read": read, "NotebookRead": read,
		"Edit": modify, "MultiEdit": modify, "NotebookEdit": modify, "Write": writeFile,
		"Glob": search, "Grep": search, "LS": search,
		"Bash": shell, "BashOutput": shell, "KillShell": shell, "KillBash": shell,
		"WebFetch": web, "WebSearch": web,
		"TodoWrite": todo, "TodoRead": todo, "TaskCreate": todo, "TaskUpdate": todo, "TaskList": todo, "TaskGet": todo,
		"Task": subagent, "Agent": subagent, "TaskOutput": subagent, "AgentOutputTool": subagent,
		"SendMessage": subagent, "ListAgents": subagent,
	}},
	{Format: "codex", Default: ToolOther, Tools: map[string]Tool{
		"shell": shell, "shell_command": shell, "local_shell": shell, "container.exec": shell,
		"exec_command": shell, "write_stdin": shell,
		"apply_patch": modify,
		"view_image":  read,
		"list_dir":    search, "grep_files": search,
		"update_plan": todo,
		"web_search":  web,
	}},
	{Format: "swe-agent", Default: ToolShell, Tools: map[string]Tool{
		"open": read, "goto": read, "scroll_up": read, "scroll_down": read,
		"edit": modify, "insert": modify, "append": modify, "create": writeFile,
		"str_replace_editor": editor,
		"find_file":          search, "search_file": search, "search_dir": search,
		"bash":   shell,
		"submit": other, "exit_forfeit": other,
	}},
	{Format: "openhands", Default: ToolOther, Tools: map[string]Tool{
		"read": read,
		"edit": modify, "write": writeFile, "edit_file": modify, "str_replace_editor": editor,
		"run": shell, "execute_bash": shell, "run_ipython": shell, "execute_ipython_cell": shell,
		"browse": web, "browse_interactive": web, "browser": web, "web_read": web, "fetch": web,
		"delegate": subagent,
		"think":    other, "finish": other, "message": other,
	}},
	{Format: "openai-chat", Default: ToolOther, Tools: map[string]Tool{
		// Function-calling agents in general, pi-mono (seed 003's tools)
		// and the Anthropic text editor.
		"read_file": read, "view": read,
		"write_file": writeFile, "edit_file": modify, "str_replace": modify,
		"str_replace_based_edit_tool": editor,
		"grep":                        search, "find": search, "ls": search, "glob": search,
		"python": shell, "shell": shell,
		"web_search": web,
	}},
	{Format: "chatgpt", Default: ToolOther, Tools: map[string]Tool{
		"python": shell, "browser": web, "web": web, "web.run": web,
		"myfiles_browser": read, "file_search": search,
	}},
	{Format: "claude-ai", Default: ToolOther, Tools: map[string]Tool{
		"web_search": web, "web_fetch": web, "repl": shell,
		"google_drive_fetch": read, "google_drive_search": search, "conversation_search": search,
		"artifacts": other,
	}},
}

// toolIndex is every table's names, for names a format's own table lacks.
var toolIndex = func() map[string]Tool {
	idx := map[string]Tool{}
	for _, h := range Harnesses {
		for name, t := range h.Tools {
			if _, ok := idx[name]; !ok {
				idx[name] = t
			}
		}
	}
	return idx
}()

// harnessOf returns the table of a format, or nil.
func harnessOf(format string) *Harness {
	for i := range Harnesses {
		if Harnesses[i].Format == format {
			return &Harnesses[i]
		}
	}
	return nil
}

// LookupTool returns the table entry of a tool call: its format's table,
// then every table, then the format's default kind (ToolOther for an
// unknown format). input is the call's JSON input, read only for tools
// with sub-commands.
func LookupTool(format, name, input string) Tool {
	h := harnessOf(format)
	t, ok := Tool{}, false
	if h != nil {
		t, ok = h.Tools[name]
	}
	if !ok {
		t, ok = toolIndex[name]
	}
	if !ok {
		if h != nil {
			return Tool{Kind: h.Default}
		}
		return other
	}
	if t.Commands != nil {
		if sub, ok := t.Commands[subCommand(input)]; ok {
			return sub
		}
	}
	return t
}

// subCommand reads the "command" string of a JSON input.
func subCommand(input string) string {
	if !strings.Contains(input, `"command"`) {
		return ""
	}
	var in struct {
		Command string `json:"command"`
	}
	if json.Unmarshal([]byte(input), &in) != nil {
		return ""
	}
	return in.Command
}

// ToolKind returns what the tool call or result does: the kind the loader
// stored, or, for a block it did not classify, the kind of its name in the
// tables (format unknown). Blocks that are not tool blocks are ToolUnknown.
func (b *Block) ToolKind() ToolKind {
	if b.Kind != BlockToolUse && b.Kind != BlockToolResult {
		return ToolUnknown
	}
	if b.Tool != ToolUnknown {
		return b.Tool
	}
	return LookupTool("", b.ToolName, b.Input).Kind
}

// ClassifyTools stores in every tool block the kind of its tool, from the
// transcript's format's table; a result takes its call's kind (the call's
// input decides a sub-command's). The loader calls it on every transcript
// it reads.
func (t *Transcript) ClassifyTools() {
	var calls map[string]ToolKind
	for i := range t.Messages {
		for j := range t.Messages[i].Blocks {
			b := &t.Messages[i].Blocks[j]
			if b.Kind == BlockToolUse {
				b.Tool = LookupTool(t.Format, b.ToolName, b.Input).Kind
				if calls == nil {
					calls = map[string]ToolKind{}
				}
				calls[b.ToolID] = b.Tool
			}
		}
	}
	for i := range t.Messages {
		for j := range t.Messages[i].Blocks {
			b := &t.Messages[i].Blocks[j]
			if b.Kind != BlockToolResult {
				continue
			}
			if k, ok := calls[b.ToolID]; ok && b.ToolID != "" {
				b.Tool = k
			} else {
				b.Tool = LookupTool(t.Format, b.ToolName, "").Kind
			}
		}
	}
}

// ToolKind returns what the called tool does: Kind, or, for a call built
// without it, the kind of its name in the tables (format unknown).
func (c *ToolCall) ToolKind() ToolKind {
	if c.Kind != ToolUnknown {
		return c.Kind
	}
	return LookupTool("", c.Name, c.Input).Kind
}
