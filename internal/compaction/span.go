package compaction

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/compactbench/compactbench/internal/transcript"
)

// span gathers, from the messages a compaction summarizes, what the
// deterministic summarizers write: prompts, file operations, errors, todos,
// decisions. It reads messages as given (a summarizer that sees truncated
// messages gets truncated facts).
type span struct {
	prompts     []string
	constraints []string
	reads       orderedSet
	written     orderedSet
	edited      orderedSet
	// actions are per-file descriptions for tables: path -> last action.
	actions   map[string]string
	errors    orderedSet // first lines of failed tool results
	lastError string     // the last failed result's first line, "" if a later result succeeded
	todos     []todo
	decisions orderedSet
	commands  orderedSet
	says      []string // the assistant's texts, trimmed
	lastSay   string   // the last assistant text
	cues      cueText
}

// identifiers returns the first n identifiers the assistant named in its
// text, extracting no more than it needs.
func (sp *span) identifiers(n int) []string {
	var ids orderedSet
	var ex extractor
	ex.emit = func(f Fact) {
		if f.Kind == FactIdent && len(ids.list) < n {
			ids.add(f.Text)
		}
	}
	for _, t := range sp.says {
		if len(ids.list) == n {
			break
		}
		ex.words(t)
	}
	return ids.list
}

type todo struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

// orderedSet keeps first-seen order.
type orderedSet struct {
	list []string
	seen map[string]bool
}

func (o *orderedSet) add(s string) {
	if s == "" {
		return
	}
	if o.seen == nil {
		o.seen = map[string]bool{}
	}
	if !o.seen[s] {
		o.seen[s] = true
		o.list = append(o.list, s)
	}
}

func (o *orderedSet) has(s string) bool { return o.seen[s] }

var decisionCues = []string{"i'll use ", "i will use ", "we'll use ", "decided to ", "instead of ", "chose ",
	"going with ", "switch to ", "switching to ", "the approach is ", "let's use "}

// decisionCueBytes are decisionCues as bytes.
var decisionCueBytes = func() (out [][]byte) {
	for _, c := range decisionCues {
		out = append(out, []byte(c))
	}
	return out
}()

// gather reads the span's prompts, file operations, commands, errors,
// decisions and todos from the items, in order.
func gather(items []Item) *span {
	sp := &span{actions: map[string]string{}}
	var todoWrites []string // TodoWrite inputs: the last valid list is the todos
	for i := range items {
		m := items[i].Msg
		if m.IsPrompt() {
			sp.addPrompt(m.Text())
		}
		for _, b := range m.Blocks {
			switch {
			case b.Kind == transcript.BlockToolUse:
				sp.addToolUse(&b)
				if b.ToolKind() == transcript.ToolTodo {
					todoWrites = append(todoWrites, b.Input)
				}
			case b.Kind == transcript.BlockToolResult:
				sp.addResult(&b)
			case b.Kind == transcript.BlockText && m.Role == transcript.RoleAssistant:
				sp.addSay(b.Text)
			}
		}
	}
	sp.setTodos(todoWrites)
	return sp
}

// addPrompt adds a user prompt and the sentences of it that set a rule.
func (sp *span) addPrompt(p string) {
	sp.prompts = append(sp.prompts, p)
	for _, s := range sentences(p) {
		if sp.cues.hasWordCue(" ", s, " ") {
			sp.constraints = append(sp.constraints, clip(s, 200))
		}
	}
}

// addToolUse adds a tool call's file operation (read, created, modified)
// and the first line of the command it ran.
func (sp *span) addToolUse(b *transcript.Block) {
	kind := b.ToolKind()
	switch {
	case b.Path == "":
	case kind == transcript.ToolRead:
		sp.reads.add(b.Path)
		if _, ok := sp.actions[b.Path]; !ok {
			sp.actions[b.Path] = "Read"
		}
	case kind == transcript.ToolModify && transcript.LookupTool("", b.ToolName, b.Input).Whole:
		sp.written.add(b.Path)
		sp.actions[b.Path] = "Created"
	case kind == transcript.ToolModify:
		sp.edited.add(b.Path)
		if sp.actions[b.Path] != "Created" {
			sp.actions[b.Path] = "Modified"
		}
	}
	if c := firstLine(b.Command); c != "" {
		sp.commands.add(clip(c, 200))
	}
}

// addResult adds a failed tool result's first line as an error (the last
// error until a later result succeeds).
func (sp *span) addResult(b *transcript.Block) {
	if !b.IsError {
		sp.lastError = ""
		return
	}
	if l := firstLine(b.Text); l != "" {
		sp.errors.add(clip(l, 200))
		sp.lastError = clip(l, 200)
	}
}

// addSay adds assistant text and the sentences of it that state a decision.
func (sp *span) addSay(text string) {
	t := strings.TrimSpace(text)
	if t == "" {
		return
	}
	sp.lastSay = t
	sp.says = append(sp.says, t)
	for _, s := range sentences(t) {
		lower := sp.cues.lower("", s, "")
		for _, cue := range decisionCueBytes {
			if bytes.Contains(lower, cue) {
				sp.decisions.add(clip(s, 200))
				break
			}
		}
	}
}

// setTodos sets the todos from the last TodoWrite input that parses.
func (sp *span) setTodos(todoWrites []string) {
	for i := len(todoWrites) - 1; i >= 0; i-- {
		var in struct{ Todos []todo }
		if json.Unmarshal([]byte(todoWrites[i]), &in) == nil && in.Todos != nil {
			sp.todos = in.Todos
			return
		}
	}
}

// modified is edited ∪ written, sorted (seed 003).
func (sp *span) modified() []string {
	var out orderedSet
	for _, p := range sp.edited.list {
		out.add(p)
	}
	for _, p := range sp.written.list {
		out.add(p)
	}
	return sortedCopy(out.list)
}

// readOnly is read − modified, sorted (seed 003).
func (sp *span) readOnly() []string {
	var out []string
	for _, p := range sp.reads.list {
		if !sp.edited.has(p) && !sp.written.has(p) {
			out = append(out, p)
		}
	}
	return sortedCopy(out)
}

func (sp *span) openTodos() []todo {
	var out []todo
	for _, t := range sp.todos {
		if t.Status != "completed" {
			out = append(out, t)
		}
	}
	return out
}

func (sp *span) doneTodos() []string {
	var out []string
	for _, t := range sp.todos {
		if t.Status == "completed" {
			out = append(out, t.Content)
		}
	}
	return out
}

// firstSentence is the first sentence of s (sentences: split at . ! ? that
// end a word, and at newlines), at most n characters, whitespace collapsed.
// need recall's intent check uses the same definition.
func firstSentence(s string, n int) string {
	if ss := sentences(s); len(ss) > 0 {
		s = ss[0]
	}
	return transcript.FirstRunes(collapseSpace(s), n)
}
